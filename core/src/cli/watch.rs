//! `turnstile watch`: one long-lived native process per zellij session that
//! pushes verdict changes to the plugin as they happen.
//!
//! It watches (inotify, through `notify`) the folders of the bound
//! transcripts, Claude Code's session status folders, the project folders
//! and the hook binding folder. A transcript event feeds the appended bytes
//! to that transcript's incremental classifier; a status, binding or
//! new-transcript event re-binds panes from /proc. Whatever changed is pushed
//! with `zellij pipe … verdict`. Nothing runs while nothing changes, except a
//! once-a-second check that its parent (the zellij server) is still there.

use super::status::{find_agents, now_ms, AgentProcess};
use anyhow::{Context, Result};
use notify::event::ModifyKind;
use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::time::Duration;
use turnstile_core::protocol::PaneReport;
use turnstile_core::transcript::{classify_tail, Classifier, TailOptions};
use turnstile_core::Source;

/// Exit code when another watcher already serves the session.
pub const EXIT_ALREADY_RUNNING: i32 = 0;

/// One watched transcript, classified incrementally.
struct Tracked {
    classifier: Classifier,
    len: u64,
}

impl Tracked {
    /// Reads the file cold from its tail.
    fn open(path: &Path) -> Option<Tracked> {
        let mut file = File::open(path).ok()?;
        let tail = classify_tail(&mut file, TailOptions::default()).ok()?;
        let len = tail.classifier.offset() + tail.classifier.pending_bytes() as u64;
        Some(Tracked {
            classifier: tail.classifier,
            len,
        })
    }

    /// Feeds what was appended; a shrunk or replaced file is read afresh.
    fn update(&mut self, path: &Path) -> bool {
        let Ok(mut file) = File::open(path) else {
            return false;
        };
        let Ok(len) = file.metadata().map(|m| m.len()) else {
            return false;
        };
        if len < self.len {
            return match Tracked::open(path) {
                Some(fresh) => {
                    *self = fresh;
                    true
                }
                None => false,
            };
        }
        if len == self.len || file.seek(SeekFrom::Start(self.len)).is_err() {
            return false;
        }
        let mut appended = Vec::new();
        if file.take(len - self.len).read_to_end(&mut appended).is_err() {
            return false;
        }
        self.len += appended.len() as u64;
        self.classifier.feed(&appended);
        true
    }
}

/// What the watcher knows about the session.
struct Session {
    name: String,
    zellij: PathBuf,
    agents: BTreeMap<u32, AgentProcess>,
    transcripts: BTreeMap<u32, PathBuf>,
    tracked: BTreeMap<PathBuf, Tracked>,
    pushed: BTreeMap<u32, PaneReport>,
    watched: BTreeSet<PathBuf>,
}

/// Runs until the zellij server (the parent) goes away.
pub fn run(session: Option<String>) -> Result<i32> {
    let name = session
        .or_else(|| std::env::var("ZELLIJ_SESSION_NAME").ok())
        .context("no zellij session: pass --session or run inside zellij")?;
    let Some(_lock) = Lock::take(&name)? else {
        eprintln!("turnstile: a watcher already serves session {name}");
        return Ok(EXIT_ALREADY_RUNNING);
    };
    let parent = std::os::unix::process::parent_id();
    let (tx, rx) = channel();
    let mut watcher = notify::recommended_watcher(move |event| {
        let _ = tx.send(event);
    })
    .context("cannot start inotify")?;
    let mut state = Session {
        name,
        zellij: super::hooks::zellij_binary(),
        agents: BTreeMap::new(),
        transcripts: BTreeMap::new(),
        tracked: BTreeMap::new(),
        pushed: BTreeMap::new(),
        watched: BTreeSet::new(),
    };
    state.rebind(&mut watcher);
    loop {
        let first = match rx.recv_timeout(Duration::from_secs(1)) {
            Ok(event) => event,
            Err(RecvTimeoutError::Timeout) => {
                if std::os::unix::process::parent_id() != parent {
                    return Ok(0); // the zellij server is gone
                }
                continue;
            }
            Err(RecvTimeoutError::Disconnected) => return Ok(0),
        };
        // Let a burst of appends settle into one round.
        std::thread::sleep(Duration::from_millis(5));
        let mut paths: BTreeSet<PathBuf> = BTreeSet::new();
        for event in std::iter::once(first).chain(rx.try_iter()).flatten() {
            if changes_content(&event.kind) {
                paths.extend(event.paths);
            }
        }
        if paths.is_empty() {
            continue;
        }
        state.on_paths(&paths, &mut watcher);
    }
}

impl Session {
    fn on_paths(&mut self, paths: &BTreeSet<PathBuf>, watcher: &mut RecommendedWatcher) {
        let known: BTreeSet<&PathBuf> = self.transcripts.values().collect();
        let mut rebind = false;
        let mut touched = BTreeSet::new();
        for path in paths {
            if known.contains(path) {
                touched.insert(path.clone());
            } else {
                // A new transcript (`/clear`, `--resume`, a new agent), a new
                // project folder, a session status file or a hook binding:
                // which transcript each pane shows may have changed.
                rebind = true;
            }
        }
        if rebind {
            self.rebind(watcher);
            return;
        }
        for path in &touched {
            if let Some(tracked) = self.tracked.get_mut(path) {
                tracked.update(path);
            }
        }
        // Only the panes of the appended transcripts can have changed.
        let panes: BTreeSet<u32> = self
            .transcripts
            .iter()
            .filter(|(_, path)| touched.contains(*path))
            .map(|(pane, _)| *pane)
            .collect();
        self.push_changes(Some(&panes));
    }

    /// Re-reads which agent runs in which pane and what it is bound to.
    fn rebind(&mut self, watcher: &mut RecommendedWatcher) {
        self.agents = find_agents(&self.name);
        self.transcripts.clear();
        for (pane, agent) in &self.agents {
            let status = agent.status();
            if let Some(path) = agent.transcript(&self.name, status.as_ref()) {
                self.transcripts.insert(*pane, path);
            }
        }
        let live: BTreeSet<PathBuf> = self.transcripts.values().cloned().collect();
        self.tracked.retain(|path, _| live.contains(path));
        for path in live {
            if let Some(tracked) = self.tracked.get_mut(&path) {
                tracked.update(&path);
            } else if let Some(tracked) = Tracked::open(&path) {
                self.tracked.insert(path, tracked);
            }
        }
        for dir in self.folders_to_watch() {
            if !self.watched.contains(&dir) && watcher.watch(&dir, RecursiveMode::NonRecursive).is_ok() {
                self.watched.insert(dir);
            }
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
            super::hooks::push_with(
                &self.zellij,
                &self.name,
                &PaneReport {
                    pane,
                    ..PaneReport::default()
                },
            );
        }
        self.push_changes(None);
    }

    fn folders_to_watch(&self) -> BTreeSet<PathBuf> {
        let mut dirs: BTreeSet<PathBuf> = self
            .transcripts
            .values()
            .filter_map(|t| t.parent().map(Path::to_path_buf))
            .collect();
        for agent in self.agents.values() {
            dirs.insert(agent.claude_home.join("sessions"));
            dirs.insert(agent.claude_home.join("projects"));
        }
        let bindings = super::hooks::binding_path(&self.name, 0);
        if let Some(dir) = bindings.parent() {
            let _ = fs::create_dir_all(dir);
            dirs.insert(dir.to_path_buf());
        }
        dirs.retain(|d| d.is_dir());
        dirs
    }

    /// Pushes every pane (or only these) whose report changed since it was
    /// last pushed. Each report reads the agent's session status file.
    fn push_changes(&mut self, only: Option<&BTreeSet<u32>>) {
        let now = now_ms();
        for (pane, agent) in self.agents.iter().filter(|(p, _)| only.is_none_or(|o| o.contains(p))) {
            let report = self.report(*pane, agent, now);
            let unchanged = self.pushed.get(pane).is_some_and(|old| same_report(old, &report));
            if !unchanged {
                super::hooks::push_with(&self.zellij, &self.name, &report);
                self.pushed.insert(*pane, report);
            }
        }
    }

    fn report(&self, pane: u32, agent: &AgentProcess, now: u64) -> PaneReport {
        let path = self.transcripts.get(&pane);
        let verdict = path.and_then(|p| self.tracked.get(p)).map(|t| t.classifier.verdict());
        super::status::assemble(agent, agent.status(), path.map(PathBuf::as_path), verdict, now)
    }
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

/// Equal for the plugin: same states and candidates, same answer, and for
/// turn ends and session statuses the same evidence (a session that went
/// busy and back to idle between two reads is a new idle: the turn it ran
/// ended). A working turn moving to its next line is not pushed: every push
/// starts a `zellij pipe` process.
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

/// A pid file that makes the watcher one per session.
struct Lock {
    path: PathBuf,
}

impl Lock {
    /// Takes the lock, or `None` when a live watcher holds it.
    fn take(session: &str) -> Result<Option<Lock>> {
        let path = super::hooks::binding_path(session, 0).with_file_name("watcher.pid");
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let holder = fs::read_to_string(&path)
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok());
        let alive = holder.is_some_and(|pid| pid != std::process::id() && Path::new(&format!("/proc/{pid}")).exists());
        if alive {
            return Ok(None);
        }
        fs::write(&path, std::process::id().to_string()).with_context(|| format!("cannot write {}", path.display()))?;
        Ok(Some(Lock { path }))
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}
