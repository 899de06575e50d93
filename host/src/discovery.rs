//! Agent discovery through /proc: for one zellij session, the agent process
//! of each pane (its environment holds `ZELLIJ_PANE_ID` and
//! `ZELLIJ_SESSION_NAME`), with its kind, working directory and home; and
//! the `ssh` sessions the panes run ([`find_ssh_sessions`]), which the
//! watcher follows through relays.
//!
//! An agent that came in over `ssh` (its `SSH_CONNECTION` is not this
//! process's) runs in a pane of another machine's session, whose relay
//! reports it: the session's own watcher leaves it alone ([`Origin::Here`]).

use super::home::demo_home;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use turnstile_core::agent::{AgentKind, SessionStatus};
use turnstile_core::protocol::AgentBinding;
use turnstile_core::ssh::SshCommand;

/// The environment variable that marks a relay link's own `ssh` (the
/// watcher's, not a pane's).
pub const LINK_MARK: &str = "TURNSTILE_RELAY_LINK";

/// Which agents a look at /proc keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Those started on this machine's panes: not those that came in over
    /// `ssh` (another machine's relay reports them).
    Here,
    /// All, wherever their pane is (a relay: its agents all came over `ssh`).
    Anywhere,
}

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
            remote: None,
        }
    }
}

/// One agent process per pane: the oldest (lowest pid) agent in that pane,
/// or the newest for a kind whose innermost process is the agent
/// ([`turnstile_core::agent::AgentLog::innermost_process_is_the_agent`]).
pub fn find_agents(session: &str, origin: Origin) -> BTreeMap<u32, AgentProcess> {
    let mut found: BTreeMap<u32, AgentProcess> = BTreeMap::new();
    let Ok(entries) = fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if let Some(agent) = agent_process(pid, session, origin) {
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

fn agent_process(pid: u32, session: &str, origin: Origin) -> Option<AgentProcess> {
    let proc_dir = PathBuf::from(format!("/proc/{pid}"));
    let argv = split_nul(&fs::read(proc_dir.join("cmdline")).ok()?);
    let kind = AgentKind::of_argv(&argv)?;
    let env = environment(pid)?;
    let pane = pane_of(&env, session)?;
    if origin == Origin::Here && came_over_ssh(&env) {
        return None;
    }
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

/// A process's environment.
fn environment(pid: u32) -> Option<BTreeMap<String, String>> {
    let env = split_nul(&fs::read(format!("/proc/{pid}/environ")).ok()?)
        .into_iter()
        .filter_map(|kv| kv.split_once('=').map(|(k, v)| (k.to_owned(), v.to_owned())))
        .collect();
    Some(env)
}

/// The pane of session `session` an environment names.
fn pane_of(env: &BTreeMap<String, String>, session: &str) -> Option<u32> {
    if env.get("ZELLIJ_SESSION_NAME").map(String::as_str) != Some(session) {
        return None;
    }
    env.get("ZELLIJ_PANE_ID")?.trim().parse().ok()
}

/// True when a process came in over an `ssh` connection this one did not.
fn came_over_ssh(env: &BTreeMap<String, String>) -> bool {
    let ours = std::env::var("SSH_CONNECTION").ok();
    env.get("SSH_CONNECTION")
        .is_some_and(|theirs| Some(theirs) != ours.as_ref())
}

/// The `ssh` sessions session `session`'s panes run, by link
/// ([`SshCommand::link_key`]): the command and the panes that run it.
/// `pids` are the processes to look at (the `ssh` ones a scan found).
pub fn find_ssh_sessions(session: &str, pids: &BTreeSet<u32>) -> BTreeMap<String, (SshCommand, BTreeSet<u32>)> {
    let mut found: BTreeMap<String, (SshCommand, BTreeSet<u32>)> = BTreeMap::new();
    for &pid in pids {
        let Ok(cmdline) = fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let Some(ssh) = SshCommand::parse(&split_nul(&cmdline)) else {
            continue;
        };
        let Some(env) = environment(pid).filter(|env| !env.contains_key(LINK_MARK)) else {
            continue;
        };
        let Some(pane) = pane_of(&env, session) else {
            continue;
        };
        let entry = found.entry(ssh.link_key()).or_insert_with(|| (ssh, BTreeSet::new()));
        entry.1.insert(pane);
    }
    found
}

/// True when a command line (NUL-separated) runs an `ssh` session.
pub fn is_ssh_cmdline(cmdline: &[u8]) -> bool {
    let program = cmdline.split(|&b| b == 0).next().unwrap_or_default();
    program.rsplit(|&b| b == b'/').next() == Some(b"ssh") && SshCommand::parse(&split_nul(cmdline)).is_some()
}

fn split_nul(bytes: &[u8]) -> Vec<String> {
    bytes
        .split(|&b| b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect()
}
