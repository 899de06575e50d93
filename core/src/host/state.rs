//! turnstile's own state on the host: `$XDG_STATE_HOME/turnstile` (default
//! `~/.local/state/turnstile`), one folder per zellij session holding the
//! hook bindings, the watcher's lock and the spooled hook reports.
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

/// The folder name of a session: ASCII letters, digits and `-` stay, every
/// other byte becomes `_` and two hex digits (so `x.y` → `x_2ey`, `x_y` →
/// `x_5fy`): one session, one folder.
pub fn folder_name(session: &str) -> String {
    let mut name = String::with_capacity(session.len());
    for byte in session.bytes() {
        match byte {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' => name.push(byte as char),
            other => name.push_str(&format!("_{other:02x}")),
        }
    }
    if name.is_empty() {
        name.push('_');
    }
    name
}

/// The private folder of one zellij session, created (0700) and checked.
pub fn session_folder(session: &str) -> io::Result<PathBuf> {
    let root = state_dir()?;
    let bindings = root.join("bindings");
    let folder = bindings.join(folder_name(session));
    if let Some(parent) = root.parent() {
        DirBuilder::new().recursive(true).mode(0o700).create(parent)?;
    }
    for dir in [&root, &bindings, &folder] {
        ensure_private(dir)?;
    }
    Ok(folder)
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
    fn session_names_map_to_folders_one_to_one() {
        assert_eq!(folder_name("x.y"), "x_2ey");
        assert_eq!(folder_name("x_y"), "x_5fy");
        assert_ne!(folder_name("x.y"), folder_name("x_y"));
        assert_eq!(folder_name("plain-Name9"), "plain-Name9");
        assert_eq!(folder_name("../up"), "_2e_2e_2fup");
        assert_eq!(folder_name("é"), "_c3_a9");
    }

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
