//! turnstile's own state on the host: `$XDG_STATE_HOME/turnstile` (default
//! `~/.local/state/turnstile`), one folder per zellij session holding the
//! hook bindings, the watcher's lock and the spooled hook reports; and the
//! session's mailbox folder, in zellij's temporary folder (where the bar's
//! plugin reads it).
//!
//! The state is private: every folder of it is created 0700 and checked
//! before use (a real folder, not a symlink, owned by this user; one of ours
//! left group- or world-accessible by an older release is closed to 0700,
//! anyone else's is refused). Session names map to folder names
//! injectively, so two sessions never share a folder.

use std::fs::{self, DirBuilder};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// `$XDG_STATE_HOME/turnstile` (default `~/.local/state/turnstile`); an
/// error when neither that nor `HOME` is set (never the current folder).
pub fn state_dir() -> io::Result<PathBuf> {
    let nonempty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = nonempty("XDG_STATE_HOME") {
        return Ok(PathBuf::from(dir).join("turnstile"));
    }
    match nonempty("HOME") {
        Some(home) => Ok(PathBuf::from(home).join(".local/state/turnstile")),
        None => Err(io::Error::new(
            io::ErrorKind::NotFound,
            "HOME is not set (nor XDG_STATE_HOME): no place for turnstile's state",
        )),
    }
}

/// The private folder of one zellij session, created (0700) and checked.
pub fn session_folder(session: &str) -> io::Result<PathBuf> {
    let root = state_dir()?;
    let bindings = root.join("bindings");
    let folder = bindings.join(turnstile_core::mailbox::session_folder_name(session));
    if let Some(parent) = root.parent() {
        DirBuilder::new().recursive(true).mode(0o700).create(parent)?;
    }
    for dir in [&root, &bindings, &folder] {
        ensure_private(dir)?;
    }
    Ok(folder)
}

/// The mailbox folder of a session, created (0700) and checked level by
/// level: in zellij's temporary folder (`$TMPDIR/zellij-<uid>`, named as
/// zellij names it), which zellij shows the bar's plugin as `/tmp`, so the
/// bar's leader reads it without running a command.
pub fn mailbox_folder(session: &str) -> io::Result<PathBuf> {
    let root = zellij_temp_dir();
    let folder = turnstile_core::mailbox::folder_in(&root, session);
    let ours = folder.strip_prefix(&root).map_err(io::Error::other)?;
    let mut dir = root.clone();
    ensure_private(&dir)?;
    for part in ours {
        dir.push(part);
        ensure_private(&dir)?;
    }
    Ok(folder)
}

/// zellij's temporary folder for this user (`$TMPDIR/zellij-<uid>`).
fn zellij_temp_dir() -> PathBuf {
    std::env::temp_dir().join(format!("zellij-{}", unsafe { libc::getuid() }))
}

/// Creates `dir` (0700) unless it exists, then checks it: a folder (not a
/// symlink) owned by this user. Group or other access on one of ours is
/// removed; anyone else's folder is refused with a message naming it.
pub fn ensure_private(dir: &Path) -> io::Result<()> {
    match DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = fs::symlink_metadata(dir)?;
    let refuse = |why: String| {
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("refusing the state folder {}: {why}", dir.display()),
        ))
    };
    if meta.file_type().is_symlink() {
        return refuse("it is a symlink".into());
    }
    if !meta.is_dir() {
        return refuse("it is not a folder".into());
    }
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return refuse(format!("it belongs to user {}, not to you ({me})", meta.uid()));
    }
    if meta.mode() & 0o077 != 0 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_are_made_private_and_foreign_ones_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mine = dir.path().join("mine");
        ensure_private(&mine).unwrap();
        assert_eq!(fs::metadata(&mine).unwrap().mode() & 0o777, 0o700);
        fs::set_permissions(&mine, fs::Permissions::from_mode(0o777)).unwrap();
        ensure_private(&mine).unwrap();
        assert_eq!(fs::metadata(&mine).unwrap().mode() & 0o777, 0o700, "closed again");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&mine, &link).unwrap();
        let err = ensure_private(&link).unwrap_err();
        assert!(err.to_string().contains("symlink"), "{err}");
    }
}
