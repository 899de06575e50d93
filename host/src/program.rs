//! `turnstile report`: any program reports its own state from inside its
//! pane (a build script, a test run, an agent with hooks of its own). It
//! goes the hooks' way (handed to the session's watcher, else piped to the
//! plugin) as the [`turnstile_core::agent::program::Program`] kind, and its newest
//! report is kept ([`super::reported`]), so a `status` run (a new leader
//! filling its table) shows the pane as it was reported.
//! `clear` takes the pane off the bar.

use super::clock::now_ms;
use super::reported::{forget, keep};
use super::{files, hooks, push, spool};
use crate::error::{bail, Context, Result};
use std::io::Read;
use std::path::{Path, PathBuf};
use turnstile_core::agent::AgentKind;
use turnstile_core::hook::HookEvent;
use turnstile_core::protocol::PaneReport;

/// Largest answer file read (the routed answer is capped further).
const MAX_ANSWER_BYTES: u64 = 4 << 20;

/// What a program reports.
pub struct Report {
    /// A state's name (turnstile's or the Program Status Protocol's), or `clear`.
    pub state: String,
    /// The turn's answer, from this file (`-`: standard input).
    pub answer_file: Option<PathBuf>,
    /// Why, shown by `explain` and in the bar's reason.
    pub message: Option<String>,
}

/// Sends the report of the pane this process runs in.
pub fn report(report: &Report) -> Result<()> {
    let pane: u32 = std::env::var("ZELLIJ_PANE_ID")
        .ok()
        .and_then(|p| p.trim().parse().ok())
        .context("not inside a zellij pane (ZELLIJ_PANE_ID is not set)")?;
    let session =
        std::env::var("ZELLIJ_SESSION_NAME").context("not inside a zellij session (ZELLIJ_SESSION_NAME is not set)")?;
    let pane_report = if report.state == "clear" {
        forget(&session, pane);
        PaneReport {
            pane,
            ..PaneReport::default()
        }
    } else {
        let built = build(pane, report)?;
        keep(&session, &built)?;
        built
    };
    if !spool::hand_over(&session, &pane_report) {
        push::push_to_plugin(&session, &pane_report);
    }
    Ok(())
}

/// The pane report of a program's report.
fn build(pane: u32, report: &Report) -> Result<PaneReport> {
    if turnstile_core::State::from_word(&report.state).is_none() {
        bail!(
            "unknown state {:?}: say working, done, failed, interrupted, waiting or idle \
             (or idle, working, done, blocked, error), or clear",
            report.state
        );
    }
    let answer = report.answer_file.as_deref().map(read_answer).transpose()?;
    let event = HookEvent {
        hook_event_name: report.state.to_ascii_lowercase(),
        message: report.message.clone(),
        last_assistant_message: answer,
        cwd: std::env::current_dir().ok().map(|d| d.display().to_string()),
        ..HookEvent::default()
    };
    hooks::hook_report(pane, &event, now_ms(), AgentKind::Program).context("no verdict for this report")
}

fn read_answer(path: &Path) -> Result<String> {
    let bytes = if path == Path::new("-") {
        let mut bytes = Vec::new();
        std::io::stdin()
            .take(MAX_ANSWER_BYTES)
            .read_to_end(&mut bytes)
            .context("cannot read stdin")?;
        bytes
    } else {
        files::read_capped(path, MAX_ANSWER_BYTES).with_context(|| format!("cannot read {}", path.display()))?
    };
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
