//! Files that other programs write or hand us (transcripts, rollouts, chat
//! logs, session status files, spooled reports, settings), read without ever
//! blocking: only regular files are read, the open itself never waits (a
//! FIFO without a writer would), and whole-file reads are capped in bytes.
//! Work that may still take long on a huge file runs under a deadline.
//!
//! Private files turnstile writes itself are created here too: exclusively,
//! mode 0600, never through a symlink, then renamed into place.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Opens `path` for reading when it is a regular file (a symlink to one is
/// followed). A FIFO, device, socket or folder is refused with a one-line
/// reason, and the open never blocks.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let kind = file.metadata()?.file_type();
    if kind.is_file() {
        return Ok(file);
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("it is {}, not a regular file", describe(kind)),
    ))
}

fn describe(kind: fs::FileType) -> &'static str {
    if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_dir() {
        "a folder"
    } else {
        "not a file"
    }
}

/// The whole of a regular file of at most `max` bytes; a larger one is an
/// error that says so (nothing is cut silently).
pub fn read_capped(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    let file = open_regular(path)?;
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{} is larger than {max} bytes", path.display()),
        ));
    }
    Ok(bytes)
}

/// Runs `work` on its own thread and waits at most `budget` for it. `None`
/// when it did not finish in time (it is left to finish or to die with the
/// process) or panicked.
pub fn within<T: Send + 'static>(budget: Duration, work: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("turnstile-bounded".into())
        .spawn(move || {
            let _ = tx.send(work());
        })
        .ok()?;
    rx.recv_timeout(budget).ok()
}

/// Writes `bytes` to `path` atomically: a fresh temporary file beside it
/// (created exclusively, mode `mode`), then a rename over `path`. A symlink
/// at `path` is replaced, never written through.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    write_renamed(path, bytes, mode, true)
}

/// [`write_atomic`] without the flush to disk: for state a crash may lose
/// (rewritten many times a second).
pub fn replace(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    write_renamed(path, bytes, mode, false)
}

fn write_renamed(path: &Path, bytes: &[u8], mode: u32, durable: bool) -> io::Result<()> {
    let (tmp, mut file) = create_temp_beside(path, mode)?;
    let written = file
        .write_all(bytes)
        .and_then(|()| if durable { file.sync_all() } else { Ok(()) });
    let renamed = written.and_then(|()| fs::rename(&tmp, path));
    if renamed.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    renamed
}

/// Opens `path` to hold an advisory lock on it: created (0600) unless it
/// exists, never through a symlink, never truncated.
pub fn open_lock(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

/// Creates `path` for writing with `mode`; an error when anything is there
/// already (a planted symlink included).
pub fn create_new(path: &Path, mode: u32) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

/// A new temporary file in `path`'s folder, named after it and unique to
/// this process and moment, created exclusively (`O_EXCL`, so never through
/// a planted symlink) with `mode`.
pub fn create_temp_beside(path: &Path, mode: u32) -> io::Result<(PathBuf, File)> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let dir = path.parent().unwrap_or(Path::new("."));
    for attempt in 0..16u32 {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let tmp = dir.join(format!(".{name}.{}-{nanos}-{attempt}.tmp", std::process::id()));
        match create_new(&tmp, mode) {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("cannot create a temporary file beside {}", path.display()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_fifo_is_refused_at_once_with_its_kind() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("t.jsonl");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let err = open_regular(&fifo).unwrap_err();
        assert!(err.to_string().contains("it is a FIFO, not a regular file"), "{err}");
        let err = open_regular(Path::new("/dev/zero")).unwrap_err();
        assert!(err.to_string().contains("character device"), "{err}");
        let err = open_regular(dir.path()).unwrap_err();
        assert!(err.to_string().contains("folder"), "{err}");
    }

    #[test]
    fn capped_reads_refuse_what_is_larger() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        fs::write(&path, b"12345").unwrap();
        assert_eq!(read_capped(&path, 5).unwrap(), b"12345");
        assert!(read_capped(&path, 4).unwrap_err().to_string().contains("larger than 4"));
    }

    #[test]
    fn atomic_writes_replace_a_symlink_and_keep_the_mode() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, b"mine").unwrap();
        let path = dir.path().join("state.json");
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        write_atomic(&path, b"new", 0o600).unwrap();
        assert_eq!(fs::read(&victim).unwrap(), b"mine", "never written through the link");
        assert_eq!(fs::read(&path).unwrap(), b"new");
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let left: Vec<_> = fs::read_dir(dir.path()).unwrap().flatten().collect();
        assert_eq!(left.len(), 2, "no temporary file left behind");
    }

    #[test]
    fn work_past_its_budget_is_given_up() {
        assert_eq!(within(Duration::from_secs(5), || 7), Some(7));
        let slow = within(Duration::from_millis(20), || std::thread::sleep(Duration::from_secs(2)));
        assert!(slow.is_none());
    }
}
