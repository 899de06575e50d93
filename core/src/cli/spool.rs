//! Hook reports handed to the session's watcher through files.
//!
//! A hook that finds a live watcher for its zellij session writes its report
//! into the session's state folder (`<pane>-<nanos>-<pid>.push`, written
//! aside and renamed into place) instead of starting a `zellij pipe`: the
//! watcher, which watches that folder anyway, forwards it through its one
//! long-lived channel and deletes the file. No client connects to zellij for
//! a hook then (each connect makes zellij send pane and tab updates to every
//! plugin of every tab). Without a live watcher the hook pipes as before.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};
use turnstile_core::protocol::PaneReport;

const EXTENSION: &str = "push";

/// The session's state folder (where hook bindings and the watcher's lock live).
pub fn state_folder(session: &str) -> PathBuf {
    super::state::session_folder(session)
}

/// The watcher's lock file of a session.
pub fn lock_path(session: &str) -> PathBuf {
    state_folder(session).join("watcher.pid")
}

/// The pid of the live watcher of `session`, other than this process.
pub fn live_watcher(session: &str) -> Option<u32> {
    let pid: u32 = fs::read_to_string(lock_path(session)).ok()?.trim().parse().ok()?;
    (pid != std::process::id() && Path::new(&format!("/proc/{pid}")).exists()).then_some(pid)
}

/// Hands a report to the session's live watcher; false when none runs (or
/// the file cannot be written): the caller pipes it itself then.
pub fn hand_over(session: &str, report: &PaneReport) -> bool {
    if live_watcher(session).is_none() {
        return false;
    }
    let Ok(json) = serde_json::to_vec(report) else {
        return false;
    };
    let dir = state_folder(session);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let name = format!("{}-{nanos}-{}", report.pane, std::process::id());
    let tmp = dir.join(format!("{name}.tmp"));
    let path = dir.join(format!("{name}.{EXTENSION}"));
    fs::write(&tmp, json).is_ok() && fs::rename(&tmp, &path).is_ok()
}

/// True for a handed-over report's file.
pub fn is_spooled(path: &Path) -> bool {
    path.extension().is_some_and(|x| x == EXTENSION)
}

/// Takes a handed-over report: reads it and removes the file. `None` when
/// it is gone already (taken) or unreadable (removed all the same).
pub fn take(path: &Path) -> Option<PaneReport> {
    let bytes = fs::read(path).ok()?;
    let _ = fs::remove_file(path);
    serde_json::from_slice(&bytes).ok()
}

/// Reports waiting in the session's folder, oldest first.
pub fn waiting(session: &str) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(state_folder(session)) else {
        return Vec::new();
    };
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| is_spooled(p))
        .map(|p| (fs::metadata(&p).and_then(|m| m.modified()).unwrap_or(UNIX_EPOCH), p))
        .collect();
    found.sort();
    found.into_iter().map(|(_, p)| p).collect()
}

/// Removes reports left by hooks while no watcher ran: they are stale.
pub fn discard_stale(session: &str) {
    for path in waiting(session) {
        let _ = fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_push_files_are_spooled_reports() {
        assert!(is_spooled(Path::new("/s/3-17-99.push")));
        assert!(!is_spooled(Path::new("/s/3-17-99.tmp")));
        assert!(!is_spooled(Path::new("/s/3.json")));
    }

    #[test]
    fn a_taken_report_is_gone_and_garbage_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("1-2-3.push");
        fs::write(&path, r#"{"pane":4}"#).unwrap();
        assert_eq!(take(&path).map(|r| r.pane), Some(4));
        assert!(!path.exists());
        assert!(take(&path).is_none());
        fs::write(&path, "not json").unwrap();
        assert!(take(&path).is_none());
        assert!(!path.exists(), "unreadable reports are removed too");
    }
}
