//! Agent discovery through /proc: for one zellij session, the agent process
//! of each pane (its environment holds `ZELLIJ_PANE_ID` and
//! `ZELLIJ_SESSION_NAME`), with its kind, working directory and home.

use super::home::demo_home;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use turnstile_core::agent::{AgentKind, SessionStatus};
use turnstile_core::protocol::AgentBinding;

/// An agent process found in /proc.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentProcess {
    /// Its process id.
    pub pid: u32,
    /// The zellij pane it runs in.
    pub pane: u32,
    /// Its working directory.
    pub cwd: Option<PathBuf>,
    /// Which agent it is.
    pub kind: AgentKind,
    /// Its home (`~/.claude`, `$CLAUDE_CONFIG_DIR`, `~/.codex`, a
    /// simulated agent's `--home`, …).
    pub home: PathBuf,
}

impl AgentProcess {
    /// Its session status file (Claude Code writes one per process).
    pub fn status_file(&self) -> Option<PathBuf> {
        self.kind.log().status_file(&self.home, self.pid)
    }

    /// The project folder its logs are grouped by ([`turnstile_core::agent::AgentLog::project_folder`]).
    pub fn project_folder(&self) -> Option<PathBuf> {
        Some(self.kind.log().project_folder(&self.home, self.cwd.as_deref()?))
    }

    /// Where its status file and logs appear around `now` (the watcher
    /// watches them, or their nearest existing ancestor).
    pub fn transcript_folders(&self, now: u64) -> Vec<PathBuf> {
        self.kind.log().watched_folders(&self.home, self.cwd.as_deref(), now)
    }

    /// Its session status, when the file exists and parses.
    pub fn status(&self) -> Option<SessionStatus> {
        super::files::read_capped(&self.status_file()?, 1 << 20)
            .ok()
            .and_then(|b| self.kind.log().read_status(&b))
    }

    /// The binding reported to the plugin.
    pub fn binding(&self, session_id: Option<String>, transcript: Option<&Path>) -> AgentBinding {
        AgentBinding {
            pid: self.pid,
            kind: self.kind,
            cwd: self.cwd.as_ref().map(|c| c.display().to_string()),
            session_id,
            transcript: transcript.map(|t| t.display().to_string()),
        }
    }
}

/// One agent process per pane: the oldest (lowest pid) agent in that pane,
/// or the newest for a kind whose innermost process is the agent
/// ([`turnstile_core::agent::AgentLog::innermost_process_is_the_agent`]).
pub fn find_agents(session: &str) -> BTreeMap<u32, AgentProcess> {
    let mut found: BTreeMap<u32, AgentProcess> = BTreeMap::new();
    let Ok(entries) = fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if let Some(agent) = agent_process(pid, session) {
            let keep_old = found.get(&agent.pane).is_some_and(|old| {
                let innermost = old.kind == agent.kind && old.kind.log().innermost_process_is_the_agent();
                (old.pid < pid) != innermost
            });
            if !keep_old {
                found.insert(agent.pane, agent);
            }
        }
    }
    found
}

fn agent_process(pid: u32, session: &str) -> Option<AgentProcess> {
    let proc_dir = PathBuf::from(format!("/proc/{pid}"));
    let argv = split_nul(&fs::read(proc_dir.join("cmdline")).ok()?);
    let kind = AgentKind::of_argv(&argv)?;
    let env: BTreeMap<String, String> = split_nul(&fs::read(proc_dir.join("environ")).ok()?)
        .into_iter()
        .filter_map(|kv| kv.split_once('=').map(|(k, v)| (k.to_owned(), v.to_owned())))
        .collect();
    if env.get("ZELLIJ_SESSION_NAME").map(String::as_str) != Some(session) {
        return None;
    }
    let pane = env.get("ZELLIJ_PANE_ID")?.trim().parse().ok()?;
    let var = |name: &str| env.get(name).cloned();
    let home = match simulated_home(&argv, &env, kind) {
        Some(home) => home,
        None => kind.log().home(&var)?,
    };
    Some(AgentProcess {
        pid,
        pane,
        cwd: fs::read_link(proc_dir.join("cwd")).ok(),
        kind,
        home,
    })
}

/// The home of `turnstile demo-agent` / `turnstile replay`: its
/// `--home` argument, else the demo agent's default under its TMPDIR.
fn simulated_home(argv: &[String], env: &BTreeMap<String, String>, kind: AgentKind) -> Option<PathBuf> {
    let program = argv.first()?.rsplit('/').next()?;
    if program != "turnstile" {
        return None;
    }
    let home = argv.windows(2).find(|w| w[0] == "--home").map(|w| PathBuf::from(&w[1]));
    match (home, argv.get(1).map(String::as_str)) {
        (Some(home), _) => Some(home),
        (None, Some("demo-agent")) => {
            let tmp = env.get("TMPDIR").map(PathBuf::from);
            Some(demo_home(kind, tmp.as_deref()))
        }
        _ => None,
    }
}

fn split_nul(bytes: &[u8]) -> Vec<String> {
    bytes
        .split(|&b| b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect()
}
