//! The host's reader of OpenCode's database (native only: SQLite through
//! rusqlite, never in the plugin). A session's log is its rows of the
//! append-only `event` table in `seq` order, each rendered as one JSON line
//! (`{"aggregate_id":…,"seq":…,"type":…,"data":<the row's JSON>}`), so the
//! same classifier reads a live session and an exported fixture. Reads are
//! read-only, wait at most 200 ms for a lock, and open only a regular file
//! (a FIFO or a device where the database should be is refused at once).

use super::home::{self, DATABASE};
use crate::agent::LogStore;
use rusqlite::{Connection, OpenFlags};
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// OpenCode's log store.
pub struct OpenCodeStore;

/// Opens the database of `log` (`…/opencode.db/<session>`) read-only.
fn open(database: &Path) -> io::Result<Connection> {
    // Refuses what is not a regular file without blocking on it.
    crate::host::files::open_regular(database)?;
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let db = Connection::open_with_flags(database, flags).map_err(io::Error::other)?;
    db.busy_timeout(Duration::from_millis(200)).map_err(io::Error::other)?;
    Ok(db)
}

/// The database and the session a log path names.
fn parts(log: &Path) -> io::Result<(&Path, &str)> {
    let session = home::session_of_log(log)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not an OpenCode session log"))?;
    Ok((log.parent().unwrap_or(log), session))
}

/// One row as a JSON line.
fn render(out: &mut Vec<u8>, session: &str, seq: u64, kind: &str, data: &str) {
    let text = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
    // JSON text never holds a raw line break; one would split the line.
    let data = if data.is_empty() {
        "null".into()
    } else {
        data.replace('\n', " ")
    };
    out.extend_from_slice(
        format!(
            "{{\"aggregate_id\":{},\"seq\":{seq},\"type\":{},\"data\":{data}}}\n",
            text(session),
            text(kind)
        )
        .as_bytes(),
    );
}

impl LogStore for OpenCodeStore {
    fn keeps(&self, log: &Path) -> bool {
        home::session_of_log(log).is_some()
    }

    fn read_from(&self, log: &Path, from: u64, max_rows: usize) -> io::Result<(Vec<u8>, u64)> {
        let (database, session) = parts(log)?;
        let db = open(database)?;
        let mut query = db
            .prepare("SELECT seq, type, data FROM event WHERE aggregate_id = ?1 AND seq >= ?2 ORDER BY seq LIMIT ?3")
            .map_err(io::Error::other)?;
        let rows = query
            .query_map(rusqlite::params![session, from as i64, max_rows as i64], |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                ))
            })
            .map_err(io::Error::other)?;
        let (mut out, mut next) = (Vec::new(), from);
        for row in rows {
            let (seq, kind, data) = row.map_err(io::Error::other)?;
            let seq = seq.max(0) as u64;
            render(&mut out, session, seq, &kind, &data);
            next = next.max(seq + 1);
        }
        Ok((out, next))
    }

    fn cold_start(&self, log: &Path, rows: u64) -> io::Result<u64> {
        let (database, session) = parts(log)?;
        let db = open(database)?;
        let last: Option<i64> = db
            .query_row("SELECT max(seq) FROM event WHERE aggregate_id = ?1", [session], |r| {
                r.get(0)
            })
            .map_err(io::Error::other)?;
        Ok(last.map_or(0, |last| (last.max(0) as u64 + 1).saturating_sub(rows)))
    }

    /// The database and its write-ahead log: every session's rows land there.
    fn changed_by(&self, log: &Path, file: &Path) -> bool {
        let Some(database) = log.parent() else {
            return false;
        };
        file == database
            || (file.parent() == database.parent() && file.file_name().is_some_and(|n| n == "opencode.db-wal"))
    }

    fn logs_of_project(&self, home: &Path, cwd: &Path) -> Vec<(PathBuf, u64)> {
        let database = home.join(DATABASE);
        let Ok(db) = open(&database) else {
            return Vec::new();
        };
        let Ok(mut query) = db.prepare("SELECT id, time_updated FROM session WHERE directory = ?1") else {
            return Vec::new();
        };
        let cwd = cwd.to_string_lossy();
        let rows = query.query_map([cwd.as_ref()], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?))
        });
        rows.map(|rows| {
            rows.flatten()
                .map(|(id, updated)| (database.join(id), updated.max(0) as u64))
                .filter(|(log, _)| home::session_of_log(log).is_some())
                .collect()
        })
        .unwrap_or_default()
    }
}
