//! Hook reports handed to the session's watcher through files.
//!
//! A hook that finds a live watcher for its zellij session writes its report
//! into the session's state folder (`<pane>-<nanos>-<pid>.push`, written
//! aside and renamed into place) instead of starting a `zellij pipe`: the
//! watcher, which watches that folder anyway, forwards it through its one
//! long-lived channel and deletes the file. No client connects to zellij for
//! a hook then (each connect makes zellij send pane and tab updates to every
//! plugin of every tab). Without a live watcher the hook pipes as before.

use super::files;
use std::fs::{self, File};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};
use turnstile_core::protocol::PaneReport;

const EXTENSION: &str = "push";

/// Largest spooled report read: one capped answer, even if JSON escapes
/// every byte of it (`\u00XX`), fits.
const MAX_REPORT_BYTES: u64 = 16 << 20;

/// The session's private state folder (where hook bindings and the
/// watcher's lock live), created and checked.
pub fn state_folder(session: &str) -> io::Result<PathBuf> {
    super::state::session_folder(session)
}

/// The watcher's lock: an open file description of `watcher.lock` holding
/// an exclusive advisory lock (`F_OFD_SETLK`) for the watcher's life. The
/// kernel releases it when the watcher dies, so a stale file never blocks,
/// and two watchers started at once cannot both hold it.
pub struct WatcherLock {
    _file: File,
}

impl WatcherLock {
    /// Takes the session's lock; `None` when a live watcher holds it.
    pub fn take(session: &str) -> io::Result<Option<WatcherLock>> {
        let file = open_lock_file(session)?;
        match ofd_lock(&file, libc::F_OFD_SETLK) {
            Ok(_) => Ok(Some(WatcherLock { _file: file })),
            Err(e) if matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::EACCES)) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// True when a live watcher holds `session`'s lock (asked, not taken).
pub fn watcher_runs(session: &str) -> io::Result<bool> {
    let file = open_lock_file(session)?;
    let lock = ofd_lock(&file, libc::F_OFD_GETLK)?;
    Ok(lock.l_type != libc::F_UNLCK as libc::c_short)
}

fn open_lock_file(session: &str) -> io::Result<File> {
    files::open_lock(&state_folder(session)?.join("watcher.lock"))
}

/// Runs `F_OFD_SETLK` (take a write lock) or `F_OFD_GETLK` (ask whether one
/// could be taken: the answer's type is `F_UNLCK` then) on the whole file.
fn ofd_lock(file: &File, command: libc::c_int) -> io::Result<libc::flock> {
    // SAFETY: a zeroed flock is a valid value; fcntl only reads and writes it.
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = libc::F_WRLCK as libc::c_short;
    lock.l_whence = libc::SEEK_SET as libc::c_short;
    // SAFETY: the descriptor is open for the call; `lock` outlives it.
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), command, &mut lock) };
    if rc == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(lock)
}

/// True when a live watcher serves `session` (asked without taking the
/// lock, so a watcher starting at the same moment is never turned away).
pub fn watcher_is_live(session: &str) -> bool {
    let Ok(file) = open_lock_file(session) else {
        return false;
    };
    ofd_lock(&file, libc::F_OFD_GETLK).is_ok_and(|l| l.l_type != libc::F_UNLCK as libc::c_short)
}

/// Hands a report to the session's live watcher; false when none runs (or
/// the file cannot be written): the caller pipes it itself then.
pub fn hand_over(session: &str, report: &PaneReport) -> bool {
    if !watcher_is_live(session) {
        return false;
    }
    let (Ok(json), Ok(dir)) = (serde_json::to_vec(report), state_folder(session)) else {
        return false;
    };
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let path = dir.join(format!("{}-{nanos}-{}.{EXTENSION}", report.pane, std::process::id()));
    // Never flushed to disk: the watcher takes it within milliseconds, and an
    // fsync on a busy disk can stall for seconds, past the hook's budget.
    files::replace(&path, &json, 0o600).is_ok()
}

/// True for a handed-over report's file.
pub fn is_spooled(path: &Path) -> bool {
    path.extension().is_some_and(|x| x == EXTENSION)
}

/// Takes a handed-over report: reads it and removes the file. `None` when
/// it is gone already (taken), or not a regular file of this user's (a
/// symlink, a FIFO, anyone else's), too large or unreadable: removed all
/// the same, never followed.
pub fn take(path: &Path) -> Option<PaneReport> {
    let meta = fs::symlink_metadata(path).ok()?;
    let mine = meta.file_type().is_file() && meta.uid() == unsafe { libc::geteuid() };
    let bytes = mine.then(|| files::read_capped(path, MAX_REPORT_BYTES).ok()).flatten();
    let _ = fs::remove_file(path);
    serde_json::from_slice(&bytes?).ok()
}

/// Reports waiting in the session's folder, oldest first.
pub fn waiting(session: &str) -> Vec<PathBuf> {
    let Ok(entries) = state_folder(session).and_then(fs::read_dir) else {
        return Vec::new();
    };
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| is_spooled(p))
        .map(|p| {
            (
                fs::symlink_metadata(&p)
                    .and_then(|m| m.modified())
                    .unwrap_or(UNIX_EPOCH),
                p,
            )
        })
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

    #[test]
    fn a_spooled_symlink_is_removed_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let path = dir.path().join("1-2-3.push");
        std::os::unix::fs::symlink(&fifo, &path).unwrap();
        assert!(take(&path).is_none());
        assert!(fs::symlink_metadata(&path).is_err(), "the link is gone");
        std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
        assert!(take(&path).is_none());
    }
}
