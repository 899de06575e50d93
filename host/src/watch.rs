//! `turnstile watch`: one long-lived native process per zellij session that
//! posts verdict changes to the session's mailbox as they happen; the bar's
//! leader pulls them (`turnstile pull`).
//!
//! It watches (inotify, through `notify`) the folders of the bound
//! transcripts, Claude Code's session status folders, the project folders
//! and the hook binding folder, and finds agents that start later with a
//! cheap once-a-second look at /proc (only processes it has not seen).
//!
//! - a transcript append feeds the appended bytes to that transcript's
//!   incremental classifier (O(appended bytes));
//! - a known agent's status file or a pane's hook binding re-reads that pane
//!   only (a new session id after `/clear` re-binds it);
//! - a created, removed or renamed file it does not know (a new transcript, a
//!   new agent's status file) and a new or exited agent process re-bind every
//!   pane from /proc.
//!
//! Changed reports go to the mailbox ([`super::mailbox`]), written once per
//! round of changes. Nothing runs while nothing changes except that
//! once-a-second look, which also checks that the parent (the zellij
//! server) is alive.

use super::clock::now_ms;
use super::discovery::{find_agents, find_ssh_sessions, is_ssh_cmdline, AgentProcess, Origin};
use super::link::{LinkNews, Links};
use super::mailbox::Mailbox;
use super::outbox::Outbox;
use super::{binding, files, report, spool};
use crate::error::{Context, Result};
use notify::event::ModifyKind;
use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::time::{Duration, Instant};
use turnstile_core::agent::{AgentKind, LogClassifier};
use turnstile_core::protocol::PaneReport;
use turnstile_core::Source;

/// How often /proc is looked at for agents that started or exited.
const SCAN_EVERY: Duration = Duration::from_secs(1);

/// Exit code when another watcher already serves the session: the plugin's
/// handshake (it then counts the watcher as running).
pub const EXIT_ALREADY_RUNNING: i32 = turnstile_core::controller::EXIT_ANOTHER_WATCHER;

/// Largest append fed to a classifier at once; more is read cold from the tail.
const MAX_APPEND_BYTES: u64 = 16 << 20;

/// One watched transcript, classified incrementally.
struct Tracked {
    classifier: Box<dyn LogClassifier>,
    kind: AgentKind,
    /// Where the next read starts (a byte offset; for a log kept in a
    /// database, a record's position).
    next: report::LogPosition,
}

impl Tracked {
    /// Reads a log of `kind` cold from its tail.
    fn open(path: &Path, kind: AgentKind) -> Option<Tracked> {
        let (classifier, next) = report::read_cold(path, kind, false).ok()?;
        Some(Tracked { classifier, kind, next })
    }

    /// Feeds what was appended; a shrunk or replaced file is read afresh.
    fn update(&mut self, path: &Path) -> bool {
        if let Some(store) = crate::store::of(self.kind).filter(|s| s.keeps(path)) {
            return match store.read_from(path, self.next, report::STORE_ROWS) {
                Ok((rows, next)) if next != self.next => {
                    self.next = next;
                    self.classifier.feed(&rows);
                    true
                }
                _ => false,
            };
        }
        let Ok(mut file) = files::open_regular(path) else {
            return false;
        };
        let Ok(len) = file.metadata().map(|m| m.len()) else {
            return false;
        };
        // A shrunk file was replaced; a huge append is read cold from its
        // tail (bounded) rather than whole.
        if len < self.next || len - self.next > MAX_APPEND_BYTES {
            return match Tracked::open(path, self.kind) {
                Some(fresh) => {
                    *self = fresh;
                    true
                }
                None => false,
            };
        }
        if len == self.next || file.seek(SeekFrom::Start(self.next)).is_err() {
            return false;
        }
        let mut appended = Vec::new();
        if file.take(len - self.next).read_to_end(&mut appended).is_err() {
            return false;
        }
        self.next += appended.len() as u64;
        self.classifier.feed(&appended);
        true
    }
}

/// What the watcher knows about the session.
struct Session {
    name: String,
    agents: BTreeMap<u32, AgentProcess>,
    /// The session's state folder: hook bindings, handed-over reports, the lock.
    state_folder: PathBuf,
    /// Each agent's session status file, to its pane.
    status_files: HashMap<PathBuf, u32>,
    transcripts: BTreeMap<u32, PathBuf>,
    tracked: HashMap<PathBuf, Tracked>,
    pushed: BTreeMap<u32, PaneReport>,
    watched: BTreeSet<PathBuf>,
    /// Where its reports go: the session's mailbox, or a relay's stdout.
    mailbox: Box<dyn Outbox>,
    processes: ProcessScan,
    /// Which agents are its own (a relay's are all that came over ssh).
    origin: Origin,
    /// Its links to relays on the machines its panes reach over `ssh`
    /// (none for a relay: links are the session's own watcher's).
    links: Option<Links>,
}

/// What wakes the watcher's loop.
enum Input {
    /// File events.
    Files(notify::Result<notify::Event>),
    /// A link's news.
    Link(LinkNews),
}

/// What a batch of file events asks for.
#[derive(Default)]
struct Changes {
    /// Bound transcripts that were appended to (or replaced).
    transcripts: BTreeSet<PathBuf>,
    /// Panes whose status file or hook binding changed.
    panes: BTreeSet<u32>,
    /// Something appeared, vanished or moved that no pane is bound to.
    rebind: bool,
    /// Look up the transcripts of panes that have none yet.
    recheck_unbound: bool,
    /// Reports hooks handed over, in order.
    spooled: Vec<PathBuf>,
}

/// What a changed file is to the watcher.
enum PathRole {
    /// A bound transcript, or a file the bound logs kept inside a database
    /// change with: these logs.
    Transcript(Vec<PathBuf>),
    /// A known agent's status file or a pane's hook binding.
    PaneFile(u32),
    /// A file no pane is bound to that could become a binding.
    Unbound,
    /// A report a hook handed over.
    Spooled,
    /// Temporary files, the lock, anything else.
    Ignored,
}

/// Runs until the zellij server (the parent) goes away, posting to the
/// session's mailbox.
pub fn run(session: Option<String>, rules: super::rules::Reloader) -> Result<i32> {
    let name = session_name(session)?;
    let mailbox = |name: &str| -> Result<Box<dyn Outbox>> {
        let mailbox = super::state::mailbox_folder(name)
            .and_then(|folder| Mailbox::open(&folder))
            .context("cannot open the mailbox")?;
        Ok(Box::new(mailbox))
    };
    serve(name, rules, mailbox, Parent::ZellijServer)
}

/// What the watcher's parent process is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parent {
    /// The zellij server of the session: it started with the session, so
    /// pane records older than it are a session of the same name that ran
    /// before.
    ZellijServer,
    /// sshd's session of a relay: it started with the link, after agents
    /// that keep running across links.
    SshSession,
}

/// The session named, or this pane's.
pub fn session_name(session: Option<String>) -> Result<String> {
    session
        .or_else(|| std::env::var("ZELLIJ_SESSION_NAME").ok())
        .context("no zellij session: pass --session or run inside zellij")
}

/// Watches session `name`'s agents on this machine and hands what changes
/// to the outbox `open` makes (once this watcher holds the session's lock:
/// a mailbox is emptied as it opens), until the parent goes away or the
/// outbox ends.
pub fn serve(
    name: String,
    rules: super::rules::Reloader,
    open: impl FnOnce(&str) -> Result<Box<dyn Outbox>>,
    kind: Parent,
) -> Result<i32> {
    let mut rules = rules;
    let state_folder = spool::state_folder(&name).context("cannot use turnstile's state folder")?;
    let Some(_lock) = take_lock(&name)? else {
        eprintln!("turnstile: a watcher already serves session {name}");
        return Ok(EXIT_ALREADY_RUNNING);
    };
    let parent = std::os::unix::process::parent_id();
    // A session of this name that ran before left its panes' records here:
    // a new agent in pane 3 must not inherit them.
    if let Some(started) = binding::process_start_ms(parent).filter(|_| kind == Parent::ZellijServer) {
        binding::HookRecord::forget_earlier_sessions(&state_folder, started.saturating_sub(2_000));
    }
    let (tx, rx) = channel();
    let news = tx.clone();
    let mut watcher = notify::recommended_watcher(move |event| {
        let _ = tx.send(Input::Files(event));
    })
    .context("cannot start inotify")?;
    let outbox = open(&name)?;
    let links = (kind == Parent::ZellijServer).then(|| {
        let news = std::sync::Mutex::new(news);
        let out = move |n| news.lock().is_ok_and(|tx| tx.send(Input::Link(n)).is_ok());
        Links::new(&name, std::sync::Arc::new(out), &state_folder)
    });
    let mut state = Session {
        origin: match kind {
            Parent::ZellijServer => Origin::Here,
            Parent::SshSession => Origin::Anywhere,
        },
        links,
        mailbox: outbox,
        state_folder,
        name,
        agents: BTreeMap::new(),
        status_files: HashMap::new(),
        transcripts: BTreeMap::new(),
        tracked: HashMap::new(),
        pushed: BTreeMap::new(),
        watched: BTreeSet::new(),
        processes: ProcessScan::default(),
    };
    state.processes.changed();
    state.rebind(&mut watcher);
    // Reports handed over before the folder was watched.
    let waiting = spool::waiting(&state.name);
    state.apply(
        Changes {
            spooled: waiting,
            ..Changes::default()
        },
        &mut watcher,
    );
    state.follow_links(true);
    // What it knows goes out at once (a relay says it all before its first beat).
    state.mailbox.flush();
    let mut last_scan = Instant::now();
    loop {
        let inputs: Vec<Input> = match rx.recv_timeout(SCAN_EVERY) {
            Ok(first) => {
                // Let a burst of appends settle into one round.
                std::thread::sleep(Duration::from_millis(5));
                std::iter::once(first).chain(rx.try_iter()).collect()
            }
            Err(RecvTimeoutError::Timeout) => Vec::new(),
            Err(RecvTimeoutError::Disconnected) => return Ok(0),
        };
        let mut events = Vec::new();
        for input in inputs {
            match input {
                Input::Files(Ok(event)) => events.push(event),
                Input::Files(Err(_)) => {}
                Input::Link(news) => state.hear_link(news),
            }
        }
        let mut changes = state.classify(&events);
        if last_scan.elapsed() >= SCAN_EVERY {
            last_scan = Instant::now();
            if std::os::unix::process::parent_id() != parent {
                return Ok(0); // the zellij server is gone
            }
            state.mailbox.tick();
            if let Some(end) = state.mailbox.ended() {
                return end;
            }
            if rules.reload_if_changed() {
                // Agents of kinds the file adds (or drops) are looked at anew.
                state.processes = ProcessScan::default();
                changes.rebind = true;
            }
            changes.rebind |= state.processes.changed();
            let follow = state.processes.ssh_changed || state.links.as_ref().is_some_and(Links::any);
            state.follow_links(follow);
            // A safety net under inotify: panes still without a transcript
            // are looked up again each second, and logs kept in a database
            // read again (a read that met a lock waits for no other change).
            changes.recheck_unbound = true;
            changes.transcripts.extend(state.logs_in_a_database());
        }
        state.apply(changes, &mut watcher);
        state.mailbox.flush();
    }
}

impl Session {
    /// Opens and closes links as the panes' `ssh` sessions come and go
    /// (`changed`: some did), and ticks them.
    fn follow_links(&mut self, changed: bool) {
        let Some(links) = &mut self.links else {
            return;
        };
        let mut posts = match changed {
            true => links.follow(find_ssh_sessions(&self.name, self.processes.ssh_cmdlines())),
            false => Vec::new(),
        };
        posts.extend(links.tick());
        self.post(posts);
    }

    /// Takes a link's news: what its relay reports, checked, is posted.
    fn hear_link(&mut self, news: LinkNews) {
        if let Some(links) = &mut self.links {
            let posts = links.hear(news);
            self.post(posts);
        }
    }

    fn post(&mut self, posts: super::link::Posts) {
        for (report, hook) in posts {
            match hook {
                true => self.mailbox.send_hook(report),
                false => self.mailbox.send(report),
            }
        }
    }

    /// Sorts file events by what they ask for.
    fn classify(&self, events: &[notify::Event]) -> Changes {
        let mut changes = Changes::default();
        for event in events.iter().filter(|e| changes_content(&e.kind)) {
            for path in &event.paths {
                match self.role_of(path) {
                    PathRole::Transcript(logs) => changes.transcripts.extend(logs),
                    PathRole::PaneFile(pane) => {
                        changes.panes.insert(pane);
                    }
                    PathRole::Unbound => changes.rebind |= is_structural(&event.kind),
                    PathRole::Spooled => changes.spooled.push(path.clone()),
                    PathRole::Ignored => {}
                }
            }
        }
        changes
    }

    /// The bound logs a change of `file` may have appended to (itself, or
    /// the logs a database it belongs to keeps).
    ///
    /// Every write of every agent asks this, so a log file is matched by its
    /// name first, and another log's kind is its pane's agent's (a lookup by
    /// pane id: no path is hashed per bound log per event).
    fn logs_changed_by(&self, file: &Path) -> Vec<PathBuf> {
        let name = file.file_name();
        let changed = |(pane, log): &(&u32, &PathBuf)| {
            if log.file_name() == name && log.as_path() == file {
                return true;
            }
            let kind = self.agents.get(pane).map(|agent| agent.kind);
            let store = crate::store::of(kind.unwrap_or_else(|| report::kind_of_transcript(log)));
            store.is_some_and(|s| s.changed_by(log, file))
        };
        self.transcripts
            .iter()
            .filter(changed)
            .map(|(_, log)| log.clone())
            .collect()
    }

    /// The tracked logs that are kept in a database.
    fn logs_in_a_database(&self) -> Vec<PathBuf> {
        let in_a_database =
            |(log, tracked): &(&PathBuf, &Tracked)| crate::store::of(tracked.kind).is_some_and(|s| s.keeps(log));
        self.tracked
            .iter()
            .filter(in_a_database)
            .map(|(log, _)| log.clone())
            .collect()
    }

    /// What a changed path is to this watcher.
    fn role_of(&self, path: &Path) -> PathRole {
        let logs = self.logs_changed_by(path);
        if !logs.is_empty() {
            return PathRole::Transcript(logs);
        }
        if let Some(pane) = self.status_files.get(path) {
            return PathRole::PaneFile(*pane);
        }
        if path.parent() == Some(self.state_folder.as_path()) {
            if spool::is_spooled(path) {
                return PathRole::Spooled;
            }
            // Hook bindings (written through a temporary file) and the lock.
            let pane = path
                .file_name()
                .and_then(|n| n.to_str()?.strip_suffix(".json")?.parse::<u32>().ok());
            return match pane.filter(|p| self.agents.contains_key(p)) {
                Some(pane) => PathRole::PaneFile(pane),
                None => PathRole::Ignored,
            };
        }
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let in_sessions = path.parent().and_then(Path::file_name).is_some_and(|n| n == "sessions");
        let new_agent_status = in_sessions && name.strip_suffix(".json").is_some_and(|p| p.parse::<u32>().is_ok());
        // A new transcript (`/clear`, `--resume`, a first prompt), a new
        // project folder, a new agent's status file.
        let new_binding = name.ends_with(".jsonl")
            || (!in_sessions && path.extension().is_none())
            || self.agents.values().any(|a| a.kind.log().is_log_name(name));
        if new_agent_status || new_binding {
            PathRole::Unbound
        } else {
            PathRole::Ignored
        }
    }

    fn apply(&mut self, changes: Changes, watcher: &mut RecommendedWatcher) {
        for path in &changes.spooled {
            if let Some(report) = spool::take(path) {
                self.mailbox.send_hook(report);
            }
        }
        if changes.rebind {
            self.rebind(watcher);
            return;
        }
        if changes.recheck_unbound && !self.unbound_panes().is_empty() {
            let before = self.transcripts.clone();
            self.bind_all();
            if before != self.transcripts {
                self.watch_folders(watcher);
                self.push_changes(None);
            }
        }
        for path in &changes.transcripts {
            // Appended to, or created at last (an exact binding named it first).
            self.track(path);
        }
        let mut panes = changes.panes;
        if panes.iter().any(|pane| self.binding_moved(*pane)) {
            // A new session id (`/clear`, `/resume`) may also settle which
            // file a neighbour in the same folder owns: bind them all.
            self.bind_all();
            self.watch_folders(watcher);
            panes.extend(self.agents.keys());
        }
        // Only the panes of the appended transcripts can have changed.
        panes.extend(
            self.transcripts
                .iter()
                .filter(|(_, path)| changes.transcripts.contains(*path))
                .map(|(pane, _)| *pane),
        );
        if !panes.is_empty() {
            self.push_changes(Some(&panes));
        }
    }

    fn unbound_panes(&self) -> Vec<u32> {
        self.agents
            .keys()
            .filter(|p| !self.transcripts.contains_key(p))
            .copied()
            .collect()
    }

    /// True when one pane's binding would move (its session id changed).
    fn binding_moved(&self, pane: u32) -> bool {
        let path = binding::bind_one(Some(&self.state_folder), pane, &self.agents).into_path();
        path.as_ref() != self.transcripts.get(&pane)
    }

    /// Binds every known agent afresh and follows the bound transcripts.
    fn bind_all(&mut self) {
        self.transcripts = binding::bind_all(Some(&self.state_folder), &self.agents)
            .into_iter()
            .filter_map(|(pane, binding)| Some((pane, binding.into_path()?)))
            .collect();
        let live: BTreeSet<PathBuf> = self.transcripts.values().cloned().collect();
        self.tracked.retain(|path, _| live.contains(path));
        for path in live {
            self.track(&path);
        }
    }

    /// Reads what was appended to a bound log, or reads it cold if it is
    /// new: as a log of the kind of the agent it is bound to.
    fn track(&mut self, path: &Path) {
        if let Some(tracked) = self.tracked.get_mut(path) {
            tracked.update(path);
            return;
        }
        let bound_to = self.transcripts.iter().find(|(_, log)| log.as_path() == path);
        let kind = bound_to
            .and_then(|(pane, _)| self.agents.get(pane))
            .map_or_else(|| report::kind_of_transcript(path), |agent| agent.kind);
        if let Some(tracked) = Tracked::open(path, kind) {
            self.tracked.insert(path.to_path_buf(), tracked);
        }
    }

    /// Re-reads which agent runs in which pane and what it is bound to.
    fn rebind(&mut self, watcher: &mut RecommendedWatcher) {
        self.agents = find_agents(&self.name, self.origin);
        self.status_files = self
            .agents
            .iter()
            .filter_map(|(pane, a)| Some((a.status_file()?, *pane)))
            .collect();
        self.bind_all();
        if self.watch_folders(watcher) && !self.unbound_panes().is_empty() {
            // A transcript created before its folder was watched is found now.
            self.bind_all();
        }
        // Panes whose agent is gone get one empty report: the bar drops them.
        let gone: Vec<u32> = self
            .pushed
            .keys()
            .filter(|p| !self.agents.contains_key(p))
            .copied()
            .collect();
        for pane in gone {
            self.pushed.remove(&pane);
            self.mailbox.send(PaneReport {
                pane,
                ..PaneReport::default()
            });
        }
        self.push_changes(None);
    }

    /// Watches the folders bindings may appear in; true when one was added.
    /// A log bound before its folder was watched was read before the watch
    /// began: what was appended between that read and the watch is read
    /// now (no event will ever tell of it).
    fn watch_folders(&mut self, watcher: &mut RecommendedWatcher) -> bool {
        let mut added = false;
        for dir in self.folders_to_watch() {
            if !self.watched.contains(&dir) && watcher.watch(&dir, RecursiveMode::NonRecursive).is_ok() {
                self.watched.insert(dir);
                added = true;
            }
        }
        if added {
            let bound: Vec<PathBuf> = self.transcripts.values().cloned().collect();
            for path in bound {
                self.track(&path);
            }
        }
        added
    }

    fn folders_to_watch(&self) -> BTreeSet<PathBuf> {
        let mut dirs: BTreeSet<PathBuf> = self
            .transcripts
            .values()
            .filter_map(|t| t.parent().map(Path::to_path_buf))
            .collect();
        for agent in self.agents.values() {
            dirs.extend(agent.transcript_folders(now_ms()));
        }
        dirs.insert(self.state_folder.clone());
        // A folder that does not exist yet (an agent's first prompt creates
        // its project folder, maybe `~/.claude` itself): watch its nearest
        // existing ancestor, whose new entry triggers a re-bind.
        dirs.into_iter().filter_map(|d| nearest_existing(&d)).collect()
    }

    /// Posts every pane (or only these) whose report changed since it was
    /// last posted. Each report reads the agent's session status file.
    fn push_changes(&mut self, only: Option<&BTreeSet<u32>>) {
        let now = now_ms();
        let reports: Vec<PaneReport> = self
            .agents
            .iter()
            .filter(|(p, _)| only.is_none_or(|o| o.contains(p)))
            .map(|(pane, agent)| self.report(*pane, agent, now))
            .collect();
        for report in reports {
            let unchanged = self
                .pushed
                .get(&report.pane)
                .is_some_and(|old| same_report(old, &report));
            if !unchanged {
                self.mailbox.send(report.clone());
                self.pushed.insert(report.pane, report);
            }
        }
    }

    fn report(&self, pane: u32, agent: &AgentProcess, now: u64) -> PaneReport {
        let path = self.transcripts.get(&pane);
        let verdict = path.and_then(|p| self.tracked.get(p)).map(|t| t.classifier.verdict());
        let mark = report::record_mark_in(&self.state_folder, agent);
        report::assemble(agent, agent.status(), path.map(PathBuf::as_path), verdict, mark, now)
    }
}

fn nearest_existing(dir: &Path) -> Option<PathBuf> {
    dir.ancestors().find(|d| d.is_dir()).map(Path::to_path_buf)
}

/// Processes whose command line names an agent, looked up incrementally:
/// only a process not seen before (or whose command line changed, after an
/// `exec`) is examined.
#[derive(Default)]
struct ProcessScan {
    cmdlines: HashMap<u32, Vec<u8>>,
    agents: BTreeSet<u32>,
    /// The `ssh` sessions' processes.
    ssh: BTreeSet<u32>,
    /// True when the last look found an `ssh` session start or end.
    ssh_changed: bool,
}

impl ProcessScan {
    /// The `ssh` sessions' processes with their command lines.
    fn ssh_cmdlines(&self) -> impl Iterator<Item = (u32, &[u8])> {
        let cmdline = |pid: &u32| Some((*pid, self.cmdlines.get(pid)?.as_slice()));
        self.ssh.iter().filter_map(cmdline)
    }

    /// Looks at /proc; true when an agent process appeared or exited.
    fn changed(&mut self) -> bool {
        let Ok(entries) = fs::read_dir("/proc") else {
            return false;
        };
        let mut alive = HashMap::with_capacity(self.cmdlines.len());
        let mut agents = BTreeSet::new();
        let mut ssh = BTreeSet::new();
        for pid in entries
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        {
            let Ok(cmdline) = fs::read(format!("/proc/{pid}/cmdline")) else {
                continue;
            };
            let known = self.cmdlines.get(&pid) == Some(&cmdline);
            if (known && self.agents.contains(&pid)) || (!known && is_agent_cmdline(&cmdline)) {
                agents.insert(pid);
            }
            if (known && self.ssh.contains(&pid)) || (!known && is_ssh_cmdline(&cmdline)) {
                ssh.insert(pid);
            }
            alive.insert(pid, cmdline);
        }
        self.cmdlines = alive;
        self.ssh_changed = ssh != self.ssh;
        self.ssh = ssh;
        let changed = agents != self.agents;
        self.agents = agents;
        changed
    }
}

/// True when a command line runs an agent of any kind the agent model
/// knows (an agent typed into a shell after the watcher started included).
fn is_agent_cmdline(cmdline: &[u8]) -> bool {
    let argv: Vec<String> = cmdline
        .split(|&b| b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect();
    AgentKind::of_argv(&argv).is_some()
}

/// Creations, writes, removals and renames. Opens, reads and metadata
/// changes are ignored: the watcher's own reads would otherwise wake it up
/// again, in a loop.
fn changes_content(kind: &EventKind) -> bool {
    matches!(
        kind,
        EventKind::Create(_)
            | EventKind::Remove(_)
            | EventKind::Modify(ModifyKind::Data(_) | ModifyKind::Name(_) | ModifyKind::Any)
    )
}

/// A file appeared, vanished or was renamed (a write to a file no pane is
/// bound to is not: another session's agent may be writing it).
fn is_structural(kind: &EventKind) -> bool {
    matches!(
        kind,
        EventKind::Create(_) | EventKind::Remove(_) | EventKind::Modify(ModifyKind::Name(_))
    )
}

/// Equal for the plugin: same states and candidates, same answer, and for
/// turn ends and session statuses the same evidence (a session that went
/// busy and back to idle between two reads is a new idle: the turn it ran
/// ended). A working turn moving to its next line is not posted: every
/// post wakes the bar's leader.
fn same_report(a: &PaneReport, b: &PaneReport) -> bool {
    let key = |r: &PaneReport| {
        r.verdicts
            .iter()
            .map(|v| {
                let evidence = v.state.is_turn_end() || v.source == Source::Session;
                (v.state, v.source, v.candidate, evidence.then(|| v.key.clone()))
            })
            .collect::<Vec<_>>()
    };
    a.agent == b.agent && a.answer == b.answer && key(a) == key(b)
}

/// Takes the session's watcher lock, or `None` when a live watcher holds it.
/// Reports hooks left while no watcher ran are stale: from the lock on,
/// hooks hand theirs to this watcher.
fn take_lock(session: &str) -> Result<Option<spool::WatcherLock>> {
    let lock = spool::WatcherLock::take(session).context("cannot take the watcher lock")?;
    if lock.is_some() {
        spool::discard_stale(session);
    }
    Ok(lock)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A session in `dir` with one transcript (one user line) bound to
    /// pane 1, read once (as a bind reads it), its folder not watched yet;
    /// and the transcript's path.
    fn session_bound_in(dir: &Path) -> (Session, PathBuf) {
        let (logs, state) = (dir.join("project"), dir.join("state"));
        fs::create_dir_all(&logs).unwrap();
        fs::create_dir_all(state.join("mailbox")).unwrap();
        let transcript = logs.join("s.jsonl");
        fs::write(&transcript, b"{\"type\":\"user\"}\n").unwrap();
        let mut session = Session {
            name: "watch-test".into(),
            agents: BTreeMap::new(),
            mailbox: Box::new(Mailbox::open(&state.join("mailbox")).unwrap()),
            state_folder: state,
            status_files: HashMap::new(),
            transcripts: BTreeMap::from([(1, transcript.clone())]),
            tracked: HashMap::new(),
            pushed: BTreeMap::new(),
            watched: BTreeSet::new(),
            processes: ProcessScan::default(),
            origin: Origin::Here,
            links: None,
        };
        session.track(&transcript);
        (session, transcript)
    }

    fn read_up_to(session: &Session, transcript: &Path) -> u64 {
        session.tracked[transcript].next
    }

    #[test]
    fn a_log_appended_before_its_folder_is_watched_is_read_when_the_watch_begins() {
        let dir = tempfile::tempdir().unwrap();
        let (mut session, transcript) = session_bound_in(dir.path());
        let first_read = read_up_to(&session, &transcript);
        // The agent appends between the bind's read and the watch: no
        // inotify event will ever tell of it.
        let mut file = fs::OpenOptions::new().append(true).open(&transcript).unwrap();
        file.write_all(b"{\"type\":\"assistant\"}\n").unwrap();
        let mut watcher = notify::recommended_watcher(|_| {}).unwrap();

        assert!(
            session.watch_folders(&mut watcher),
            "the project folder is newly watched"
        );
        assert!(session.watched.contains(transcript.parent().unwrap()));
        let length = fs::metadata(&transcript).unwrap().len();
        assert!(first_read < length);
        assert_eq!(read_up_to(&session, &transcript), length, "the append is read");
    }

    #[test]
    fn a_folder_already_watched_is_not_watched_twice() {
        let dir = tempfile::tempdir().unwrap();
        let (mut session, _) = session_bound_in(dir.path());
        let mut watcher = notify::recommended_watcher(|_| {}).unwrap();

        assert!(session.watch_folders(&mut watcher));
        assert!(!session.watch_folders(&mut watcher), "nothing new to watch");
    }
}
