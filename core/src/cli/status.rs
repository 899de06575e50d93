//! `turnstile status`: the host side of the plugin. For one zellij session,
//! finds the agent process of each pane through /proc (its environment holds
//! `ZELLIJ_PANE_ID` and `ZELLIJ_SESSION_NAME`), its transcript and Claude
//! Code's session status file, classifies them and answers for all panes in
//! one run.

use super::binding::Binding;
use anyhow::{bail, Result};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;
use turnstile_core::protocol::{AgentBinding, HostReport, PaneReport};
use turnstile_core::session::SessionStatus;
use turnstile_core::transcript::TranscriptVerdict;
use turnstile_core::{panes, Millis};

/// Milliseconds since the epoch, now.
pub fn now_ms() -> Millis {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as Millis)
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
    /// Its Claude home (`~/.claude`, `$CLAUDE_CONFIG_DIR`, a demo home).
    pub claude_home: PathBuf,
}

impl AgentProcess {
    /// Its session status file.
    pub fn status_file(&self) -> PathBuf {
        self.claude_home.join("sessions").join(format!("{}.json", self.pid))
    }

    /// Its session status, when the file exists and parses.
    pub fn status(&self) -> Option<SessionStatus> {
        fs::read(self.status_file())
            .ok()
            .and_then(|b| SessionStatus::parse(&b).ok())
    }

    /// The binding reported to the plugin.
    pub fn binding(&self, session_id: Option<String>, transcript: Option<&Path>) -> AgentBinding {
        AgentBinding {
            pid: self.pid,
            cwd: self.cwd.as_ref().map(|c| c.display().to_string()),
            session_id,
            transcript: transcript.map(|t| t.display().to_string()),
        }
    }
}

/// Builds the report for `session`, for `wanted` panes (all agent panes when empty).
pub fn report(session: Option<String>, wanted: &[u32]) -> Result<HostReport> {
    let Some(session) = session.or_else(|| std::env::var("ZELLIJ_SESSION_NAME").ok()) else {
        bail!("no zellij session: pass --session or run inside zellij");
    };
    let agents = find_agents(&session);
    let mut bindings = super::binding::bind_all(&session, &agents);
    let at = now_ms();
    let mut panes: Vec<u32> = wanted.to_vec();
    panes.extend(agents.keys().filter(|p| wanted.is_empty() || wanted.contains(p)));
    panes.sort_unstable();
    panes.dedup();
    let panes = panes
        .into_iter()
        .map(|pane| match agents.get(&pane) {
            Some(agent) => pane_report(agent, bindings.remove(&pane).and_then(Binding::into_path), at),
            None => PaneReport {
                pane,
                ..PaneReport::default()
            },
        })
        .collect();
    Ok(HostReport {
        session: Some(session),
        at,
        panes,
    })
}

/// One agent process per pane: the oldest (lowest pid) agent in that pane.
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
            let keep_old = found.get(&agent.pane).is_some_and(|old| old.pid < pid);
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
    if !panes::is_agent_argv(&argv) {
        return None;
    }
    let env: BTreeMap<String, String> = split_nul(&fs::read(proc_dir.join("environ")).ok()?)
        .into_iter()
        .filter_map(|kv| kv.split_once('=').map(|(k, v)| (k.to_owned(), v.to_owned())))
        .collect();
    if env.get("ZELLIJ_SESSION_NAME").map(String::as_str) != Some(session) {
        return None;
    }
    let pane = env.get("ZELLIJ_PANE_ID")?.trim().parse().ok()?;
    let claude_home = match (simulated_home(&argv, &env), env.get("CLAUDE_CONFIG_DIR")) {
        (Some(home), _) => home,
        (None, Some(dir)) => PathBuf::from(dir),
        (None, None) => PathBuf::from(env.get("HOME")?).join(".claude"),
    };
    Some(AgentProcess {
        pid,
        pane,
        cwd: fs::read_link(proc_dir.join("cwd")).ok(),
        claude_home,
    })
}

/// The Claude home of `turnstile demo-agent` / `turnstile replay`: its
/// `--home` argument, else the demo agent's default under its TMPDIR.
fn simulated_home(argv: &[String], env: &BTreeMap<String, String>) -> Option<PathBuf> {
    let program = argv.first()?.rsplit('/').next()?;
    if program != "turnstile" {
        return None;
    }
    let home = argv.windows(2).find(|w| w[0] == "--home").map(|w| PathBuf::from(&w[1]));
    match (home, argv.get(1).map(String::as_str)) {
        (Some(home), _) => Some(home),
        (None, Some("demo-agent")) => {
            let tmp = env.get("TMPDIR").map(PathBuf::from);
            Some(super::demo_agent::default_demo_home(tmp.as_deref()))
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

fn pane_report(agent: &AgentProcess, transcript: Option<PathBuf>, at: Millis) -> PaneReport {
    let status = agent.status();
    let verdict = transcript.as_deref().and_then(|p| super::classify_file(p, false).ok());
    assemble(agent, status, transcript.as_deref(), verdict, at)
}

/// One pane's report from its agent, session status and transcript verdict
/// (shared by `status`, which classifies cold, and `watch`, incrementally).
pub fn assemble(
    agent: &AgentProcess,
    status: Option<SessionStatus>,
    transcript: Option<&Path>,
    verdict: Option<TranscriptVerdict>,
    at: Millis,
) -> PaneReport {
    let mut verdicts: Vec<_> = verdict.iter().map(|v| v.to_verdict(at)).collect();
    verdicts.extend(status.as_ref().and_then(|s| s.to_verdict(at)));
    let session_id = status
        .and_then(|s| s.session_id)
        .or_else(|| verdict.as_ref().and_then(|v| v.session_id.clone()));
    let (answer, since) = verdict.map_or((None, None), |v| (v.answer, v.since));
    PaneReport {
        pane: agent.pane,
        agent: Some(agent.binding(session_id, transcript)),
        verdicts,
        answer,
        since,
    }
}

/// Claude Code's project folder name for a working directory.
pub fn project_folder_name(cwd: &Path) -> String {
    cwd.to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_folder_names_replace_every_non_alphanumeric() {
        assert_eq!(
            project_folder_name(Path::new("/home/u/wrk/a/2.1.332-tool/proj")),
            "-home-u-wrk-a-2-1-332-tool-proj"
        );
    }
}
