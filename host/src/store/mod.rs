//! Logs kept in a database rather than in files of their own: the kinds
//! whose sessions share one file (a [`SharedDatabase`]: OpenCode's SQLite
//! database) are read through a [`LogStore`]; every other kind's log is a
//! file.

mod eventdb;

use std::io;
use std::path::{Path, PathBuf};
use turnstile_core::agent::{AgentKind, SharedDatabase};

/// Where `kind` keeps its logs when they are not files of their own
/// (`None`: files, read through the kind's classifier directly).
pub fn of(kind: AgentKind) -> Option<&'static dyn LogStore> {
    let database: &'static SharedDatabase = kind.log().shared_database()?;
    Some(database)
}

/// Logs kept inside a database rather than a file each (OpenCode's
/// sessions share one SQLite file): a log is then named by a path inside
/// the database's (not a file), and its records are read by position, each
/// rendered as one JSONL line for the kind's classifier.
pub trait LogStore: Sync {
    /// True when `log` names a log inside a database (an exported copy of
    /// one is a plain file, read as such).
    fn keeps(&self, log: &Path) -> bool;
    /// The records of `log` from position `from` on (at most `max_rows`),
    /// as JSONL, and the position after the last one read.
    fn read_from(&self, log: &Path, from: u64, max_rows: usize) -> io::Result<(Vec<u8>, u64)>;
    /// Where a cold read of `log` starts: `rows` records before its end.
    fn cold_start(&self, log: &Path, rows: u64) -> io::Result<u64>;
    /// True when a change of `file` (inotify) may have added records to `log`.
    fn changed_by(&self, log: &Path, file: &Path) -> bool;
    /// The logs of the project in `cwd` (its home `home`), each with when it
    /// was last written (ms since the epoch); never a subordinate one.
    fn logs_of_project(&self, home: &Path, cwd: &Path) -> Vec<(PathBuf, u64)>;
    /// True when `log` is a subordinate session's (a subagent's, which the
    /// pane's own turn started): its events and rows are not the pane's turn.
    fn is_subordinate(&self, _log: &Path) -> bool {
        false
    }
    /// The log a person means by naming the store's file itself (`turnstile
    /// transcript ~/.local/share/opencode/opencode.db`): its newest main
    /// session's. `None` when `file` is not such a store (an exported copy).
    fn newest_log(&self, _file: &Path) -> io::Result<Option<PathBuf>> {
        Ok(None)
    }
}
