//! Editing an agent's settings file safely (`install-hooks`,
//! `uninstall-hooks`): the user's file is theirs.
//!
//! - One edit at a time: an advisory lock (`flock`) on a lock file beside
//!   the settings serializes the read-modify-write of concurrent runs.
//! - A symlinked settings file (stow, chezmoi, home-manager) is edited at
//!   its target: the link stays.
//! - The new text is written to a fresh temporary file beside the target,
//!   with the file's own mode, and renamed into place.
//! - The bytes it had are kept in a new backup per change, mode 0600
//!   (settings may hold keys), never overwritten.
//! - Numbers keep their text and keys their order (serde_json's
//!   `arbitrary_precision` and `preserve_order`).

use super::files;
use crate::error::{bail, Context, Result};
use serde_json::Value;
use std::fs::{self, File};
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Largest settings file read.
pub const MAX_SETTINGS_BYTES: u64 = 16 << 20;

/// A settings file opened for one edit, holding the edit lock.
pub struct SettingsEdit {
    /// The file edited (a symlink's target).
    pub target: PathBuf,
    /// Its bytes now (`None`: it does not exist yet).
    pub original: Option<Vec<u8>>,
    _lock: File,
}

impl SettingsEdit {
    /// Resolves `path` (following symlinks), takes the edit lock and reads
    /// the file.
    pub fn begin(path: &Path) -> Result<SettingsEdit> {
        let target = resolve(path)?;
        let dir = target.parent().unwrap_or(Path::new("."));
        fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let lock = lock_beside(&target)?;
        let original = match files::read_capped(&target, MAX_SETTINGS_BYTES) {
            Ok(bytes) => Some(bytes),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", target.display())),
        };
        Ok(SettingsEdit {
            target,
            original,
            _lock: lock,
        })
    }

    /// The settings as JSON: `{}` for a missing or blank file; an error for
    /// anything but an object (the file is not touched then).
    pub fn parse(&self) -> Result<Value> {
        let value = match &self.original {
            Some(bytes) if !bytes.iter().all(u8::is_ascii_whitespace) => serde_json::from_slice(bytes)
                .with_context(|| format!("{} is not valid JSON; not touching it", self.target.display()))?,
            _ => Value::Object(serde_json::Map::new()),
        };
        if !value.is_object() {
            bail!("{} does not hold a JSON object; not touching it", self.target.display());
        }
        Ok(value)
    }

    /// Backs up the original bytes (a new 0600 file per change) and replaces
    /// the file atomically with `text`, keeping its mode. Returns the backup.
    pub fn commit(self, text: &str) -> Result<Option<PathBuf>> {
        let mode = fs::metadata(&self.target).map_or(0o600, |m| m.mode() & 0o7777);
        let backup = match &self.original {
            Some(bytes) => Some(write_backup(&self.target, bytes)?),
            None => None,
        };
        files::write_atomic(&self.target, text.as_bytes(), mode)
            .with_context(|| format!("cannot replace {}", self.target.display()))?;
        Ok(backup)
    }

    /// Replaces the file atomically with `text`, keeping its mode, and no
    /// backup: for `setup`, whose undo record keeps the original.
    pub fn commit_unbacked(self, text: &str) -> Result<()> {
        let mode = fs::metadata(&self.target).map_or(0o600, |m| m.mode() & 0o7777);
        files::write_atomic(&self.target, text.as_bytes(), mode)
            .with_context(|| format!("cannot replace {}", self.target.display()))
    }

    /// Backs up the original bytes and removes the file. Returns the backup.
    pub fn remove(self) -> Result<Option<PathBuf>> {
        let backup = match &self.original {
            Some(bytes) => Some(write_backup(&self.target, bytes)?),
            None => None,
        };
        fs::remove_file(&self.target).with_context(|| format!("cannot remove {}", self.target.display()))?;
        Ok(backup)
    }
}

/// `path`, or the file a symlink at `path` points to (through any chain).
/// A dangling link is an error: its target's folder may not be ours to make.
pub fn resolve(path: &Path) -> Result<PathBuf> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => fs::canonicalize(path)
            .with_context(|| format!("{} is a symlink whose target cannot be reached", path.display())),
        _ => Ok(path.to_path_buf()),
    }
}

/// Takes the edit lock of `target`: `flock` on `.<name>.turnstile-lock`
/// beside it, held until the returned file is dropped.
fn lock_beside(target: &Path) -> Result<File> {
    let path = lock_path(target);
    let file = files::open_lock(&path).with_context(|| format!("cannot open the lock {}", path.display()))?;
    // SAFETY: the descriptor is open for the call.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(io::Error::last_os_error()).with_context(|| format!("cannot lock {}", path.display()));
    }
    Ok(file)
}

/// The edit lock's file beside `target` (`.<name>.turnstile-lock`).
pub fn lock_path(target: &Path) -> PathBuf {
    let name = target.file_name().and_then(|n| n.to_str()).unwrap_or("settings");
    target.with_file_name(format!(".{name}.turnstile-lock"))
}

/// A new backup of `target` holding `bytes`: `<name>.turnstile-backup-<time>`,
/// created exclusively, mode 0600.
fn write_backup(target: &Path, bytes: &[u8]) -> Result<PathBuf> {
    let name = target.file_name().and_then(|n| n.to_str()).unwrap_or("settings");
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros());
    for attempt in 0..100u32 {
        let backup = target.with_file_name(format!("{name}.turnstile-backup-{stamp}-{attempt}"));
        match files::create_new(&backup, 0o600) {
            Ok(mut file) => {
                file.write_all(bytes)
                    .and_then(|()| file.sync_all())
                    .with_context(|| format!("cannot write the backup {}", backup.display()))?;
                return Ok(backup);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot create the backup {}", backup.display())),
        }
    }
    bail!("cannot find a free backup name beside {}", target.display())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn an_edit_keeps_the_link_the_mode_and_every_original() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("dotfiles/settings.json");
        fs::create_dir_all(real.parent().unwrap()).unwrap();
        fs::write(&real, br#"{"n": 12345678901234567890123, "z": 1, "a": 2}"#).unwrap();
        fs::set_permissions(&real, fs::Permissions::from_mode(0o600)).unwrap();
        let link = dir.path().join("settings.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();

        let edit = SettingsEdit::begin(&link).unwrap();
        let mut value = edit.parse().unwrap();
        value["hooks"] = serde_json::json!({});
        let text = serde_json::to_string(&value).unwrap();
        assert_eq!(text, r#"{"n":12345678901234567890123,"z":1,"a":2,"hooks":{}}"#);
        let first = edit.commit(&text).unwrap().unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(fs::read_to_string(&real).unwrap(), text);
        assert_eq!(fs::metadata(&real).unwrap().mode() & 0o777, 0o600);
        assert_eq!(fs::metadata(&first).unwrap().mode() & 0o777, 0o600);

        let second = SettingsEdit::begin(&link).unwrap().commit("{}").unwrap().unwrap();
        assert_ne!(first, second, "a backup per change");
        assert!(fs::read_to_string(&first).unwrap().contains("12345678901234567890123"));
    }

    #[test]
    fn odd_files_are_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        fs::write(&path, "[1, 2]").unwrap();
        let err = SettingsEdit::begin(&path).unwrap().parse().unwrap_err();
        assert!(err.to_string().contains("not touching it"), "{err}");
    }
}
