//! The host's reader of a database every session of a kind shares (the
//! event-database family's: OpenCode's `opencode.db`, Kilo's `kilo.db`;
//! native only: SQLite through rusqlite, never in the plugin). A session's log is its rows of the
//! append-only `event` table in `seq` order, each rendered as one JSON line
//! (`{"aggregate_id":…,"seq":…,"type":…,"data":<the row's JSON>}`), so the
//! same classifier reads a live session and an exported fixture. Reads are
//! read-only, wait at most 200 ms for a lock, and open only a regular file
//! (a FIFO or a device where the database should be is refused at once).

use super::LogStore;
use rusqlite::{Connection, OpenFlags};
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;
use turnstile_core::agent::{SharedDatabase, SQLITE_HEADER};

/// Opens the database of `log` (`…/opencode.db/<session>`) read-only.
fn open(database: &Path) -> io::Result<Connection> {
    // Refuses what is not a regular file (a FIFO, a device) before SQLite
    // opens it, which would block on a FIFO: `stat` never does.
    if !std::fs::metadata(database)?.is_file() {
        let why = format!("{} is not a regular file", database.display());
        return Err(io::Error::new(io::ErrorKind::InvalidInput, why));
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let db = Connection::open_with_flags(database, flags).map_err(io::Error::other)?;
    db.busy_timeout(Duration::from_millis(200)).map_err(io::Error::other)?;
    Ok(db)
}

/// True when `file` is an SQLite database (its header), read without
/// blocking: a FIFO or a device is refused.
fn is_sqlite(file: &Path) -> io::Result<bool> {
    use std::io::Read;
    let mut head = [0u8; 16];
    let n = crate::files::open_regular(file)?.read(&mut head)?;
    Ok(head[..n].starts_with(SQLITE_HEADER))
}

/// The database and the session a log path names.
fn parts<'a>(store: &SharedDatabase, log: &'a Path) -> io::Result<(&'a Path, &'a str)> {
    let session = store.session_of_log(log).ok_or_else(|| {
        let why = format!("not a session of {}", store.file_name);
        io::Error::new(io::ErrorKind::InvalidInput, why)
    })?;
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

/// The shared database's log store.
impl LogStore for SharedDatabase {
    fn keeps(&self, log: &Path) -> bool {
        self.session_of_log(log).is_some()
    }

    fn read_from(&self, log: &Path, from: u64, max_rows: usize) -> io::Result<(Vec<u8>, u64)> {
        let (database, session) = parts(self, log)?;
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
        let (database, session) = parts(self, log)?;
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
            || (file.parent() == database.parent()
                && file
                    .file_name()
                    .is_some_and(|n| *n == *format!("{}-wal", self.file_name)))
    }

    /// A subagent's session (the `task` tool's) has a parent.
    fn is_subordinate(&self, log: &Path) -> bool {
        let Ok((database, session)) = parts(self, log) else {
            return false;
        };
        let Ok(db) = open(database) else {
            return false;
        };
        let parent = db.query_row("SELECT parent_id FROM session WHERE id = ?1", [session], |r| {
            r.get::<_, Option<String>>(0)
        });
        matches!(parent, Ok(Some(_)))
    }

    fn newest_log(&self, file: &Path) -> io::Result<Option<PathBuf>> {
        if !is_sqlite(file)? {
            return Ok(None);
        }
        let db = open(file)?;
        let newest = "SELECT id FROM session WHERE parent_id IS NULL ORDER BY time_updated DESC LIMIT 1";
        let id: Option<String> = db.query_row(newest, [], |r| r.get(0)).map(Some).or_else(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => Ok(None),
            e => Err(io::Error::other(e)),
        })?;
        let log = id
            .map(|id| file.join(id))
            .filter(|log| self.session_of_log(log).is_some());
        match log {
            Some(log) => Ok(Some(log)),
            None => Err(io::Error::new(io::ErrorKind::NotFound, "the database holds no session")),
        }
    }

    fn logs_of_project(&self, home: &Path, cwd: &Path) -> Vec<(PathBuf, u64)> {
        let database = home.join(self.file_name);
        let Ok(db) = open(&database) else {
            return Vec::new();
        };
        let sql = "SELECT id, time_updated FROM session WHERE directory = ?1 AND parent_id IS NULL";
        let Ok(mut query) = db.prepare(sql) else {
            return Vec::new();
        };
        let cwd = cwd.to_string_lossy();
        let rows = query.query_map([cwd.as_ref()], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?))
        });
        rows.map(|rows| {
            rows.flatten()
                .map(|(id, updated)| (database.join(id), updated.max(0) as u64))
                .filter(|(log, _)| self.session_of_log(log).is_some())
                .collect()
        })
        .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DATABASE: &str = "evdb.db";
    static STORE: SharedDatabase = SharedDatabase { file_name: DATABASE };

    fn database(dir: &Path) -> PathBuf {
        let path = dir.join(DATABASE);
        let db = Connection::open(&path).unwrap();
        db.execute_batch(
            r#"CREATE TABLE session (id TEXT PRIMARY KEY, parent_id TEXT, directory TEXT, time_created INTEGER, time_updated INTEGER);
               CREATE TABLE event (id TEXT PRIMARY KEY, aggregate_id TEXT, seq INTEGER, type TEXT, data TEXT);
               INSERT INTO session VALUES ('ses_root', NULL, '/p', 1, 5), ('ses_child', 'ses_root', '/p', 2, 9);
               INSERT INTO event VALUES ('e0', 'ses_root', 0, 'message.updated.1', '{"info":{"id":"u1","role":"user"}}'),
                                        ('e1', 'ses_root', 1, 'session.updated.1', '{"a":
"b"}'),
                                        ('e2', 'ses_child', 0, 'message.updated.1', '{}');"#,
        )
        .unwrap();
        path
    }

    #[test]
    fn a_sessions_rows_are_read_by_position_and_a_subagents_session_is_no_projects_log() {
        let dir = tempfile::tempdir().unwrap();
        let db = database(dir.path());
        let root = db.join("ses_root");
        let (rows, next) = STORE.read_from(&root, 0, 10).unwrap();
        let text = String::from_utf8(rows).unwrap();
        assert_eq!(text.lines().count(), 2, "a raw line break never splits a row: {text}");
        assert!(text.starts_with(r#"{"aggregate_id":"ses_root","seq":0,"type":"message.updated.1","data":{"info""#));
        assert_eq!(next, 2);
        assert_eq!(STORE.read_from(&root, next, 10).unwrap(), (Vec::new(), 2));
        assert_eq!(STORE.cold_start(&root, 1).unwrap(), 1);
        let logs = STORE.logs_of_project(dir.path(), Path::new("/p"));
        assert_eq!(logs, [(root.clone(), 5)]);
        assert!(STORE.is_subordinate(&db.join("ses_child")));
        assert!(!STORE.is_subordinate(&root));
        assert!(STORE.changed_by(&root, &dir.path().join("evdb.db-wal")));
        assert!(!STORE.changed_by(&root, &dir.path().join("other.db-wal")));
    }

    #[test]
    fn the_database_itself_names_its_newest_main_session() {
        let dir = tempfile::tempdir().unwrap();
        let db = database(dir.path());
        assert_eq!(STORE.newest_log(&db).unwrap(), Some(db.join("ses_root")));
        let export = dir.path().join("export.jsonl");
        std::fs::write(&export, "{}\n").unwrap();
        assert_eq!(
            STORE.newest_log(&export).unwrap(),
            None,
            "an exported copy is read as a file"
        );
        let empty = dir.path().join("empty").join(DATABASE);
        std::fs::create_dir(empty.parent().unwrap()).unwrap();
        Connection::open(&empty)
            .unwrap()
            .execute_batch("CREATE TABLE session (id TEXT, parent_id TEXT, time_updated INTEGER);")
            .unwrap();
        let why = STORE.newest_log(&empty).unwrap_err();
        assert!(why.to_string().contains("no session"), "{why}");
    }

    #[test]
    fn a_fifo_where_the_database_should_be_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join(DATABASE);
        assert!(std::process::Command::new("mkfifo")
            .arg(&db)
            .status()
            .unwrap()
            .success());
        let started = std::time::Instant::now();
        assert!(STORE.read_from(&db.join("ses_x"), 0, 10).is_err());
        assert!(STORE.logs_of_project(dir.path(), Path::new("/p")).is_empty());
        assert!(started.elapsed() < Duration::from_secs(1));
    }
}
