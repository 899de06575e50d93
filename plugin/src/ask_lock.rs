//! The lock file copies of the bar take turns under to ask zellij for
//! permissions (see `turnstile_core::controller::permits`), in zellij's
//! `/tmp`: private to the user, shared by every session.
//!
//! Whatever else stands at the lock's path (a FIFO, a link, a folder, a
//! file too long to be a stamp) is not a lock: it is taken away and the
//! lock made, so that copies still ask one at a time.

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

    /// Frees the lock's path of what is not a lock; true when the path may
    /// be taken or read again: it is free now (its holder let go), it holds
    /// a lock another copy made meanwhile, or what stood there was taken
    /// away. False when that could not be done (a folder with files).
    fn clear_foreign(&self) -> bool {
        match fs::symlink_metadata(&self.path) {
            Err(e) => e.kind() == io::ErrorKind::NotFound,
            Ok(meta) if super::is_small_regular(&meta, MAX_STAMP) => true,
            Ok(meta) if meta.is_dir() => fs::remove_dir(&self.path).is_ok(),
            Ok(_) => fs::remove_file(&self.path).is_ok(),
        }
    }
}

impl AskLock for FileLock {
    fn take(&mut self, stamp: &str) -> io::Result<Option<String>> {
        if let Some(folder) = self.path.parent() {
            fs::create_dir_all(folder)?;
        }
        let mut last = None;
        for _ in 0..2 {
            match OpenOptions::new().write(true).create_new(true).open(&self.path) {
                Ok(mut file) => return file.write_all(stamp.as_bytes()).map(|()| None),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => match self.held() {
                    Ok(held) => return Ok(Some(held)),
                    Err(e) if self.clear_foreign() => last = Some(e),
                    Err(e) => return Err(e),
                },
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::other("the permission lock kept changing")))
    }

    fn release(&mut self, stamp: &str) {
        if self.held().is_ok_and(|held| held == stamp) {
            let _ = fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock_in_temp() -> (tempfile::TempDir, FileLock) {
        let dir = tempfile::tempdir().unwrap();
        let path = lock_in(dir.path());
        (dir, FileLock { path })
    }

    #[test]
    fn the_first_taker_holds_the_lock_and_the_next_reads_its_stamp() {
        let (_dir, mut lock) = lock_in_temp();
        assert_eq!(lock.take("1000 1").unwrap(), None);
        assert_eq!(lock.take("1010 2").unwrap(), Some("1000 1".to_owned()));
        lock.release("1010 2");
        assert_eq!(
            lock.take("1020 2").unwrap(),
            Some("1000 1".to_owned()),
            "only the holder lets go"
        );
        lock.release("1000 1");
        assert_eq!(lock.take("1030 2").unwrap(), None);
    }

    #[test]
    fn a_fifo_at_the_lock_path_is_replaced_by_the_lock() {
        let (_dir, mut lock) = lock_in_temp();
        fs::create_dir_all(lock.path.parent().unwrap()).unwrap();
        let status = std::process::Command::new("mkfifo").arg(&lock.path).status().unwrap();
        assert!(status.success());
        assert_eq!(lock.take("1000 1").unwrap(), None);
        assert_eq!(fs::read_to_string(&lock.path).unwrap(), "1000 1");
        assert_eq!(
            lock.take("1010 2").unwrap(),
            Some("1000 1".to_owned()),
            "the next copy waits its turn"
        );
    }

    #[test]
    fn a_link_folder_or_long_file_at_the_lock_path_is_replaced_and_a_links_target_kept() {
        let (dir, mut lock) = lock_in_temp();
        fs::create_dir_all(lock.path.parent().unwrap()).unwrap();
        let target = dir.path().join("kept");
        fs::write(&target, "someone's file").unwrap();
        std::os::unix::fs::symlink(&target, &lock.path).unwrap();
        assert_eq!(lock.take("1000 1").unwrap(), None);
        assert_eq!(fs::read_to_string(&target).unwrap(), "someone's file");
        lock.release("1000 1");

        fs::create_dir(&lock.path).unwrap();
        assert_eq!(lock.take("1010 1").unwrap(), None);
        lock.release("1010 1");

        fs::write(&lock.path, "x".repeat(MAX_STAMP as usize + 1)).unwrap();
        assert_eq!(lock.take("1020 1").unwrap(), None);
        assert_eq!(fs::read_to_string(&lock.path).unwrap(), "1020 1");
    }

    #[test]
    fn a_lock_made_while_a_fifo_was_cleared_is_read_not_removed() {
        let (_dir, mut lock) = lock_in_temp();
        assert_eq!(lock.take("1000 1").unwrap(), None);
        assert!(lock.clear_foreign(), "another copy's fresh lock: read it again");
        assert_eq!(fs::read_to_string(&lock.path).unwrap(), "1000 1");
    }

    #[test]
    fn a_folder_with_files_at_the_lock_path_is_an_error_and_left_alone() {
        let (_dir, mut lock) = lock_in_temp();
        fs::create_dir_all(lock.path.join("inside")).unwrap();
        assert!(lock.take("1000 1").is_err(), "the copy then asks at once");
        assert!(lock.path.join("inside").is_dir());
    }
}
