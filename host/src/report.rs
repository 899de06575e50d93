//! Reports from the agents' sources: for one zellij session, the agent of
//! each pane (through /proc), its transcript and Claude Code's session
//! status file, classified and answered for all panes in one run (`status`,
//! `wait`); one pane's report from sources classified cold from the tail or
//! incrementally (`watch`).

use super::binding::{self, Binding, HookRecord};
use super::clock::now_ms;
use super::discovery::{find_agents, AgentProcess};
use super::files;
use crate::error::{bail, Context, Result};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use turnstile_core::agent::{AgentKind, LogClassifier, SessionStatus};
use turnstile_core::protocol::{capped_answer, HostReport, PaneReport};
use turnstile_core::transcript::TranscriptVerdict;
use turnstile_core::{Millis, Verdict};

/// How long one `status` run waits for the panes' sources: a pane whose
/// files take longer is reported without them (its reason says so), and
/// never holds up the others.
pub const READ_BUDGET: Duration = Duration::from_secs(3);

/// Builds the report for `session`, for `wanted` panes (all agent panes when empty).
pub fn host_report(session: Option<String>, wanted: &[u32]) -> Result<HostReport> {
    let Some(session) = session.or_else(|| std::env::var("ZELLIJ_SESSION_NAME").ok()) else {
        bail!("no zellij session: pass --session or run inside zellij");
    };
    let agents = find_agents(&session, super::discovery::Origin::Here);
    let state = super::state::session_folder(&session).ok();
    let mut bindings = binding::bind_all(state.as_deref(), &agents);
    let at = now_ms();
    let mut panes: Vec<u32> = wanted.to_vec();
    panes.extend(agents.keys().filter(|p| wanted.is_empty() || wanted.contains(p)));
    panes.sort_unstable();
    panes.dedup();
    let jobs = panes.into_iter().map(|pane| match agents.get(&pane) {
        Some(agent) => Job::Agent(
            agent.clone(),
            bindings.remove(&pane).and_then(Binding::into_path),
            state.as_deref().and_then(|folder| record_mark_in(folder, agent)),
        ),
        // A pane no agent runs in may be a program that reports itself.
        None => Job::Plain(super::reported::last_report(&session, pane).unwrap_or(PaneReport {
            pane,
            ..PaneReport::default()
        })),
    });
    let jobs: Vec<Job> = jobs.collect();
    Ok(HostReport {
        session: Some(session),
        at,
        panes: read_all(jobs, at, Instant::now() + READ_BUDGET),
        seq: None,
    })
}

/// One pane of a `status` run.
enum Job {
    Agent(AgentProcess, Option<PathBuf>, Option<Verdict>),
    Plain(PaneReport),
}

/// Every pane's report, each agent pane's sources read on its own thread;
/// a pane not read by `deadline` gets a report without them.
fn read_all(jobs: Vec<Job>, at: Millis, deadline: Instant) -> Vec<PaneReport> {
    let (tx, rx) = mpsc::channel();
    let mut reports: Vec<Option<PaneReport>> = Vec::with_capacity(jobs.len());
    let mut late: Vec<(usize, AgentProcess)> = Vec::new();
    for (index, job) in jobs.into_iter().enumerate() {
        match job {
            Job::Plain(report) => reports.push(Some(report)),
            Job::Agent(agent, transcript, mark) => {
                // A pane whose thread cannot start stays unread.
                reports.push(None);
                late.push((index, agent.clone()));
                let tx = tx.clone();
                let _ = std::thread::Builder::new()
                    .name(format!("turnstile-pane-{}", agent.pane))
                    .spawn(move || {
                        let _ = tx.send((index, pane_report(&agent, transcript, mark, at)));
                    });
            }
        }
    }
    drop(tx);
    while reports.iter().any(Option::is_none) {
        let Some(left) = deadline.checked_duration_since(Instant::now()) else {
            break;
        };
        match rx.recv_timeout(left) {
            Ok((index, report)) => reports[index] = Some(report),
            Err(_) => break,
        }
    }
    for (index, agent) in late {
        reports[index].get_or_insert_with(|| unread(&agent, at));
    }
    reports.into_iter().flatten().collect()
}

/// The kind of agent a transcript file belongs to, by its name, its
/// folder's name and its first bytes ([`turnstile_core::agent::AgentLog::owns_log`]).
pub fn kind_of_transcript(path: &Path) -> AgentKind {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let folder = path
        .parent()
        .and_then(Path::file_name)
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let mut head = [0u8; 512];
    let n = files::open_regular(path)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    AgentKind::of_log(name, folder, &head[..n])
}

/// The log `path` names for `kind`: itself, or, when it is the database
/// the kind keeps its logs in (OpenCode's `opencode.db`), its newest main
/// session's.
pub fn log_named(path: &Path, kind: AgentKind) -> Result<PathBuf> {
    let Some(store) = crate::store::of(kind).filter(|s| !s.keeps(path)) else {
        return Ok(path.to_owned());
    };
    let newest = store
        .newest_log(path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    Ok(newest.unwrap_or_else(|| path.to_owned()))
}

/// Classifies a transcript file of `kind` cold, from its tail.
pub fn classify_file(path: &Path, kind: AgentKind, count_lines: bool) -> Result<TranscriptVerdict> {
    Ok(read_cold(path, kind, count_lines)?.0.verdict())
}

/// Records of a log kept in a database read at once (cold, or appended).
pub const STORE_ROWS: usize = 2_000;

/// Where the next read of a log starts: a byte offset in a file, or a
/// position among a database's records.
pub type LogPosition = u64;

/// Reads a log of `kind` cold: a file from its tail, a log kept in a
/// database from its last [`STORE_ROWS`] records; with the classifier and
/// the position where the next read starts.
pub fn read_cold(path: &Path, kind: AgentKind, count_lines: bool) -> Result<(Box<dyn LogClassifier>, LogPosition)> {
    let log = kind.log();
    if let Some(store) = crate::store::of(kind).filter(|s| s.keeps(path)) {
        let start = store
            .cold_start(path, STORE_ROWS as u64)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let (rows, next) = store
            .read_from(path, start, STORE_ROWS)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let classifier = log.classify_log(&mut std::io::Cursor::new(rows), count_lines)?;
        return Ok((classifier, next));
    }
    let mut file = files::open_regular(path).with_context(|| format!("cannot open {}", path.display()))?;
    let classifier = log
        .classify_log(&mut file, count_lines)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let next = classifier.consumed();
    Ok((classifier, next))
}

/// The report of an agent pane whose sources were not read in time: the
/// agent is known, its state is not.
fn unread(agent: &AgentProcess, at: Millis) -> PaneReport {
    let reason = format!(
        "its files were not read within {} s (a huge or blocked file?)",
        READ_BUDGET.as_secs()
    );
    PaneReport {
        pane: agent.pane,
        agent: Some(agent.binding(None, None)),
        verdicts: vec![turnstile_core::Verdict::new(
            turnstile_core::State::Unknown,
            turnstile_core::Source::Transcript,
            reason,
            at,
        )],
        answer: None,
        since: None,
    }
}

/// One pane's report, reading its sources now.
fn pane_report(agent: &AgentProcess, transcript: Option<PathBuf>, mark: Option<Verdict>, at: Millis) -> PaneReport {
    let status = agent.status();
    let verdict = transcript
        .as_deref()
        .and_then(|p| classify_file(p, agent.kind, false).ok());
    assemble(agent, status, transcript.as_deref(), verdict, mark, at)
}

/// The mark of a turn's end that the pane's hook record leaves, for an
/// agent whose turn-end report may be lost on its way
/// ([`turnstile_core::agent::AgentHooks::record_verdict`]); `folder`: the session's
/// state folder, made and checked.
pub fn record_mark_in(folder: &Path, agent: &AgentProcess) -> Option<Verdict> {
    let record = HookRecord::read_in(folder, agent.pane)?;
    agent.kind.hooks().record_verdict(&record.event, record.at)
}

/// One pane's report from its agent, session status, transcript verdict
/// and hook record's mark (shared by `status`, which classifies cold, and `watch`, incrementally).
pub fn assemble(
    agent: &AgentProcess,
    status: Option<SessionStatus>,
    transcript: Option<&Path>,
    verdict: Option<TranscriptVerdict>,
    mark: Option<Verdict>,
    at: Millis,
) -> PaneReport {
    let mut verdicts: Vec<_> = verdict.iter().map(|v| v.to_verdict(at)).collect();
    verdicts.extend(status.as_ref().and_then(|s| s.to_verdict(at)));
    verdicts.extend(mark);
    let session_id = status
        .and_then(|s| s.session_id)
        .or_else(|| verdict.as_ref().and_then(|v| v.session_id.clone()));
    let (answer, since) = verdict.map_or((None, None), |v| (v.answer.map(capped_answer), v.since));
    PaneReport {
        pane: agent.pane,
        agent: Some(agent.binding(session_id, transcript)),
        verdicts,
        answer,
        since,
    }
}
