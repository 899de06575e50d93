//! The lock file copies of the bar take turns under to ask zellij for
//! permissions (see `turnstile_core::controller::permits`), in zellij's
//! `/tmp`: private to the user, shared by every session.

use std::fs::{self, OpenOptions};
use std::io::{self, Read, Write};
use std::path::PathBuf;
use turnstile_core::controller::permits::{lock_in, AskLock};

/// Longest stamp read back (a longer file is not one of ours).
const MAX_STAMP: u64 = 64;

/// The lock file, as this plugin sees it.
pub struct FileLock {
    path: PathBuf,
}

impl Default for FileLock {
    fn default() -> Self {
        FileLock {
            path: lock_in(std::path::Path::new("/tmp")),
        }
    }
}

impl FileLock {
    /// The stamp the lock holds; an error for anything but a small regular
    /// file (a FIFO would block zellij's plugin thread).
    fn held(&self) -> io::Result<String> {
        let (file, _) = super::open_small_regular(&self.path, "the permission lock", MAX_STAMP)?;
        let mut stamp = String::new();
        file.take(MAX_STAMP).read_to_string(&mut stamp)?;
        Ok(stamp)
    }
}

impl AskLock for FileLock {
    fn take(&mut self, stamp: &str) -> io::Result<Option<String>> {
        if let Some(folder) = self.path.parent() {
            fs::create_dir_all(folder)?;
        }
        match OpenOptions::new().write(true).create_new(true).open(&self.path) {
            Ok(mut file) => file.write_all(stamp.as_bytes()).map(|()| None),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => self.held().map(Some),
            Err(e) => Err(e),
        }
    }

    fn release(&mut self, stamp: &str) {
        if self.held().is_ok_and(|held| held == stamp) {
            let _ = fs::remove_file(&self.path);
        }
    }
}
