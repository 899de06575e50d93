//! The newest report a program made of its pane (`turnstile report`), kept
//! in the session's private state folder (`<pane>.report.json`, 0600): what
//! `status` answers for a pane no agent runs in.

use super::{files, state};
use crate::error::{Context, Result};
use std::path::PathBuf;
use turnstile_core::protocol::PaneReport;

/// Where a pane's newest report is kept.
fn record_path(session: &str, pane: u32) -> Option<PathBuf> {
    Some(state::session_folder(session).ok()?.join(format!("{pane}.report.json")))
}

/// Keeps `report` as its pane's newest (atomically, 0600).
pub fn keep(session: &str, report: &PaneReport) -> Result<()> {
    let path = record_path(session, report.pane).context("cannot use turnstile's state folder")?;
    let json = serde_json::to_vec(report)?;
    files::replace(&path, &json, 0o600).with_context(|| format!("cannot write {}", path.display()))
}

/// Forgets the pane's report (`clear`).
pub fn forget(session: &str, pane: u32) {
    if let Some(path) = record_path(session, pane) {
        let _ = std::fs::remove_file(path);
    }
}

/// The newest report a program made in `pane`, if any.
pub fn last_report(session: &str, pane: u32) -> Option<PaneReport> {
    let bytes = files::read_capped(&record_path(session, pane)?, 8 << 20).ok()?;
    serde_json::from_slice::<PaneReport>(&bytes)
        .ok()
        .filter(|r| r.pane == pane)
}
