//! Which transcript belongs to which agent pane.
//!
//! Several agents often share one project folder (a planner and a coder in
//! one repository), so "the newest transcript of the folder" may well be a
//! neighbour's. Best first:
//!
//! 1. **exact**: the agent's own session id — from its session status file
//!    (`sessions/<pid>.json`, live, so it wins over an older hook record), a
//!    hook's record for the pane, or the transcript the process holds open —
//!    names the file, even before it exists (an agent never prompted has
//!    none: the pane is idle until it appears);
//! 2. **sole**: the newest transcript of the folder written since the agent
//!    started, when every other live agent of that folder is bound exactly
//!    (to other files);
//! 3. **ambiguous**: another agent of the folder could own it and nothing
//!    tells them apart: no transcript at all (the pane shows its screen
//!    only, which is never routed on), rather than a neighbour's.

use super::discovery::AgentProcess;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;
use turnstile_core::agent::AgentLog;
use turnstile_core::hook::HookEvent;
use turnstile_core::Millis;

/// What a hook tells about its pane's agent, kept per pane in the
/// session's state folder (`<pane>.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookRecord {
    /// The agent's session id.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Its transcript (after `/clear`, the new session's, maybe not written yet).
    pub transcript_path: PathBuf,
    /// Its working directory.
    #[serde(default)]
    pub cwd: Option<String>,
    /// The hook event that wrote the record.
    #[serde(default)]
    pub event: String,
    /// When (ms since the epoch).
    #[serde(default)]
    pub at: Millis,
}

impl HookRecord {
    /// Where the record of one pane is kept.
    pub fn path(session: &str, pane: u32) -> Option<PathBuf> {
        let folder = super::state::session_folder(session).ok()?;
        Some(HookRecord::path_in(&folder, pane))
    }

    /// The pane's record file in a session's state folder already made and
    /// checked (the watcher's: it reads records on every report).
    pub fn path_in(folder: &Path, pane: u32) -> PathBuf {
        folder.join(format!("{pane}.json"))
    }

    /// Records what `event` says about the pane's agent (atomically); a
    /// session's end removes the record, so a later agent in the pane does
    /// not inherit it.
    pub fn record(session: &str, pane: u32, event: &HookEvent, now: Millis) {
        let Some(path) = HookRecord::path(session, pane) else {
            return;
        };
        if event.ends_session() {
            let _ = fs::remove_file(&path);
            return;
        }
        let Some(transcript) = &event.transcript_path else {
            return;
        };
        let record = HookRecord {
            session_id: event.session_id.clone(),
            transcript_path: PathBuf::from(transcript),
            cwd: event.cwd.clone(),
            event: event.hook_event_name.clone(),
            at: now,
        };
        if let Ok(json) = serde_json::to_vec(&record) {
            // Not flushed to disk: it lives as long as the zellij session, and
            // the hook must not wait on a busy disk.
            let _ = super::files::replace(&path, &json, 0o600);
        }
    }

    /// Removes the records (hooks' and programs' reports) that an earlier
    /// zellij session of the same name left in `folder`: those last written
    /// before this session's server started, at `started`.
    pub fn forget_earlier_sessions(folder: &Path, started: Millis) {
        let Ok(entries) = fs::read_dir(folder) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let pane = name.strip_suffix(".report.json").or_else(|| name.strip_suffix(".json"));
            if pane.is_none_or(|p| p.parse::<u32>().is_err()) {
                continue;
            }
            let written = entry.metadata().ok().and_then(|m| m.modified().ok());
            let written = written
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map(|d| d.as_millis() as Millis);
            if written.is_some_and(|w| w < started) {
                let _ = fs::remove_file(entry.path());
            }
        }
    }

    /// The pane's record, if a hook wrote a readable one.
    pub fn read(session: &str, pane: u32) -> Option<HookRecord> {
        HookRecord::read_file(&HookRecord::path(session, pane)?)
    }

    /// The pane's record in a session's state folder already made and
    /// checked (the watcher's, a `status` run's).
    pub fn read_in(folder: &Path, pane: u32) -> Option<HookRecord> {
        HookRecord::read_file(&HookRecord::path_in(folder, pane))
    }

    /// The record in this file, if a hook wrote a readable one.
    pub fn read_file(path: &Path) -> Option<HookRecord> {
        let bytes = super::files::read_capped(path, 1 << 20).ok()?;
        serde_json::from_slice(&bytes).ok()
    }
}

/// How one pane's agent is bound to its transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Binding {
    /// Named by the agent's own session (the file may not exist yet).
    Exact(PathBuf),
    /// The folder's newest transcript, which no other live agent can own.
    Sole(PathBuf),
    /// Other agents of the folder could own its transcripts.
    Ambiguous,
    /// No transcript yet.
    Unbound,
}

impl Binding {
    /// The bound transcript, owned.
    pub fn into_path(self) -> Option<PathBuf> {
        match self {
            Binding::Exact(p) | Binding::Sole(p) => Some(p),
            Binding::Ambiguous | Binding::Unbound => None,
        }
    }
}

/// What is known of one agent for binding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// Its pane.
    pub pane: u32,
    /// Its project folder of transcripts.
    pub folder: Option<PathBuf>,
    /// The transcript its own session names, if known.
    pub exact: Option<PathBuf>,
    /// When the process started (ms since the epoch), if known.
    pub started: Option<u64>,
}

/// A transcript file in a project folder and when it was last written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The file.
    pub path: PathBuf,
    /// Its modification time (ms since the epoch).
    pub modified: u64,
}

/// Binds every agent of the session; `state`: the session's state folder,
/// made and checked (its hook records; `None`: there are none to read).
pub fn bind_all(state: Option<&Path>, agents: &BTreeMap<u32, AgentProcess>) -> BTreeMap<u32, Binding> {
    let claims: Vec<Claim> = agents.values().map(|a| claim(state, a)).collect();
    claims
        .iter()
        .zip(agents.values())
        .map(|(c, agent)| {
            let files = match c.exact {
                Some(_) => Vec::new(),
                None => candidates_of(agent),
            };
            (c.pane, decide(c, &claims, &files))
        })
        .collect()
}

/// Binds one agent, given every agent of the session. Its own session
/// usually names its transcript: the neighbours are read only when not.
pub fn bind_one(state: Option<&Path>, pane: u32, agents: &BTreeMap<u32, AgentProcess>) -> Binding {
    let Some(agent) = agents.get(&pane) else {
        return Binding::Unbound;
    };
    let own = claim(state, agent);
    if let Some(path) = own.exact {
        return Binding::Exact(path);
    }
    let claims: Vec<Claim> = agents.values().map(|a| claim(state, a)).collect();
    let Some(me) = claims.iter().find(|c| c.pane == pane) else {
        return Binding::Unbound;
    };
    decide(me, &claims, &candidates_of(agent))
}

/// The decision, from facts alone.
pub fn decide(me: &Claim, all: &[Claim], files: &[Candidate]) -> Binding {
    if let Some(path) = &me.exact {
        return Binding::Exact(path.clone());
    }
    let Some(folder) = &me.folder else {
        return Binding::Unbound;
    };
    let neighbours: Vec<&Claim> = all
        .iter()
        .filter(|c| c.pane != me.pane && c.folder.as_ref() == Some(folder))
        .collect();
    if neighbours.iter().any(|c| c.exact.is_none()) {
        return Binding::Ambiguous;
    }
    let claimed = |p: &PathBuf| neighbours.iter().any(|c| c.exact.as_ref() == Some(p));
    // A file last written before the agent started is an earlier session's.
    let recent = |f: &&Candidate| me.started.is_none_or(|s| f.modified + 2_000 >= s);
    files
        .iter()
        .filter(|f| !claimed(&f.path))
        .filter(recent)
        .max_by_key(|f| f.modified)
        .map_or(Binding::Unbound, |f| Binding::Sole(f.path.clone()))
}

/// What the agent's own session says about its transcript: its status
/// file's session id, a hook's record (in the session's state folder
/// `state`), or the log the process holds open.
pub fn claim(state: Option<&Path>, agent: &AgentProcess) -> Claim {
    let folder = agent.project_folder();
    let session_id = agent.status().and_then(|s| s.session_id);
    let by_session = folder
        .as_ref()
        .zip(session_id.as_ref())
        .map(|(f, id)| f.join(format!("{id}.jsonl")));
    let by_hook = state
        .and_then(|folder| HookRecord::read_in(folder, agent.pane))
        .map(|r| r.transcript_path);
    let held_open = || match agent.kind.log().holds_its_log_open() {
        true => folder.as_deref().and_then(|f| open_transcript(agent, f)),
        false => None,
    };
    let exact = match (by_session, by_hook) {
        // The status file is rewritten by the live process: after `/clear`
        // it names the new session before any hook record does.
        (Some(live), _) => Some(live),
        (None, Some(hooked)) => Some(hooked),
        (None, None) => held_open(),
    };
    Claim {
        pane: agent.pane,
        folder,
        // Only a claim without its own session is decided by time.
        started: exact.is_none().then(|| process_start_ms(agent.pid)).flatten(),
        exact,
    }
}

/// The logs that could be the agent's: those of its log folders that are
/// of its project.
fn candidates_of(agent: &AgentProcess) -> Vec<Candidate> {
    let Some(cwd) = agent.cwd.as_deref() else {
        return Vec::new();
    };
    let log = agent.kind.log();
    if let Some(store) = crate::store::of(agent.kind) {
        let logs = store.logs_of_project(&agent.home, cwd).into_iter();
        return logs.map(|(path, modified)| Candidate { path, modified }).collect();
    }
    log.log_folders(&agent.home, cwd, super::clock::now_ms())
        .iter()
        .flat_map(|folder| candidates(folder, log))
        .filter(|c| log.log_of_project(&|| first_line(&c.path), cwd))
        .collect()
}

/// A log's first line (at most 4 MiB of it).
fn first_line(path: &Path) -> Option<Vec<u8>> {
    use std::io::{BufRead, BufReader, Read};
    let file = super::files::open_regular(path).ok()?;
    let mut first = Vec::new();
    BufReader::new(file.take(4 << 20)).read_until(b'\n', &mut first).ok()?;
    Some(first)
}

/// The logs of a project folder (by their names).
fn candidates(folder: &Path, log: &dyn AgentLog) -> Vec<Candidate> {
    let Ok(entries) = fs::read_dir(folder) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.file_name().to_str().is_some_and(|n| log.is_log_name(n)))
        .filter_map(|e| {
            // A FIFO or a device is no log; a symlink to one (a dotfile
            // kept elsewhere) is read as its target.
            let target = fs::metadata(e.path()).ok().filter(fs::Metadata::is_file)?;
            let modified = target.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
            Some(Candidate {
                path: e.path(),
                modified: modified.as_millis() as u64,
            })
        })
        .collect()
}

/// A log under `folder` that a file the process holds open right now names
/// ([`turnstile_core::agent::AgentLog::log_held_open`]).
fn open_transcript(agent: &AgentProcess, folder: &Path) -> Option<PathBuf> {
    let log = agent.kind.log();
    fs::read_dir(format!("/proc/{}/fd", agent.pid))
        .ok()?
        .flatten()
        .filter_map(|fd| fs::read_link(fd.path()).ok())
        .find_map(|target| log.log_held_open(folder, &target))
}

/// When a process started, from /proc (ms since the epoch).
pub fn process_start_ms(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let ticks: u64 = stat.rsplit_once(')')?.1.split_whitespace().nth(19)?.parse().ok()?;
    let boot: u64 = fs::read_to_string("/proc/stat")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Some(boot * 1000 + ticks * 1000 / hz)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(pane: u32, folder: &str, exact: Option<&str>) -> Claim {
        Claim {
            pane,
            folder: Some(PathBuf::from(folder)),
            exact: exact.map(PathBuf::from),
            started: Some(10_000),
        }
    }

    fn file(path: &str, modified: u64) -> Candidate {
        Candidate {
            path: PathBuf::from(path),
            modified,
        }
    }

    #[test]
    fn records_of_an_earlier_session_of_the_same_name_are_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, at: u64| {
            let file = fs::File::create(dir.path().join(name)).unwrap();
            file.set_modified(UNIX_EPOCH + std::time::Duration::from_millis(at))
                .unwrap();
        };
        write("3.json", 1_000);
        write("3.report.json", 1_000);
        write("4.json", 9_000);
        write("watcher.lock", 1_000);
        HookRecord::forget_earlier_sessions(dir.path(), 5_000);
        let mut left: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["4.json", "watcher.lock"]);
    }

    #[test]
    fn a_known_session_binds_exactly_even_before_its_file_exists() {
        let coder = claim(1, "/p", Some("/p/coder.jsonl"));
        let planner = claim(0, "/p", Some("/p/planner.jsonl"));
        let files = [file("/p/planner.jsonl", 20_000)];
        let all = [planner, coder.clone()];
        assert_eq!(decide(&coder, &all, &files), Binding::Exact("/p/coder.jsonl".into()));
    }

    #[test]
    fn a_neighbours_transcript_is_never_borrowed() {
        let planner = claim(0, "/p", Some("/p/planner.jsonl"));
        let coder = claim(1, "/p", None);
        let files = [file("/p/planner.jsonl", 20_000)];
        let all = [planner, coder.clone()];
        assert_eq!(decide(&coder, &all, &files), Binding::Unbound);
    }

    #[test]
    fn two_agents_that_cannot_be_told_apart_are_ambiguous() {
        let a = claim(0, "/p", None);
        let b = claim(1, "/p", None);
        let files = [file("/p/x.jsonl", 20_000)];
        let all = [a.clone(), b];
        assert_eq!(decide(&a, &all, &files), Binding::Ambiguous);
    }

    #[test]
    fn alone_in_its_folder_the_newest_recent_transcript_is_its_own() {
        let a = claim(0, "/p", None);
        let elsewhere = claim(1, "/q", None);
        let files = [
            file("/p/old.jsonl", 1_000),
            file("/p/new.jsonl", 30_000),
            file("/p/mid.jsonl", 20_000),
        ];
        let all = [a.clone(), elsewhere];
        assert_eq!(decide(&a, &all, &files), Binding::Sole("/p/new.jsonl".into()));
        let stale = [file("/p/old.jsonl", 1_000)];
        assert_eq!(decide(&a, &all, &stale), Binding::Unbound, "an earlier session's file");
    }

    #[test]
    fn the_newest_file_a_neighbour_owns_is_skipped() {
        let a = claim(0, "/p", None);
        let b = claim(1, "/p", Some("/p/b.jsonl"));
        let files = [file("/p/b.jsonl", 40_000), file("/p/a.jsonl", 30_000)];
        let all = [a.clone(), b];
        assert_eq!(decide(&a, &all, &files), Binding::Sole("/p/a.jsonl".into()));
    }
}
