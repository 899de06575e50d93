//! A simulated kind of the event-database family (OpenCode, Kilo CLI), for
//! the demo and the tests: its rows in a SQLite database shaped like theirs (`session` and the append-only `event`
//! table: a user message, a tool round finished `tool-calls`, the answer
//! finished `stop`), its footer, approval dialog and message end lines.

use crate::simulate::{now_ms, rows_above, terminal_rows, Outcome, Sim, Simulator};
use rusqlite::Connection;
use serde_json::{json, Value};
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use turnstile_core::agent::eventdb::home::DataHome;
use turnstile_core::agent::eventdb::EventDbAgent;

/// The simulated database's tables (the columns turnstile reads).
const SCHEMA: &str = "PRAGMA journal_mode=WAL;
CREATE TABLE IF NOT EXISTS session (id TEXT PRIMARY KEY, parent_id TEXT, directory TEXT NOT NULL,
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS event (id TEXT PRIMARY KEY, aggregate_id TEXT NOT NULL,
  seq INTEGER NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL);";

fn database(log: &Path) -> rusqlite::Result<Connection> {
    let db = Connection::open(log.parent().unwrap_or(log))?;
    db.busy_timeout(Duration::from_secs(2))?;
    Ok(db)
}

/// How long a write waits out other writers of the same database.
const BUSY_PATIENCE: Duration = Duration::from_secs(20);

/// Runs `write` again while the database is busy, for up to [`BUSY_PATIENCE`]:
/// SQLite answers "database is locked" at once, not after its busy timeout,
/// when two connections switch one database to WAL together or a reader
/// would have to become a writer (two simulated panes of one folder start
/// together, CI under load).
fn patiently<T>(mut write: impl FnMut() -> rusqlite::Result<T>) -> io::Result<T> {
    let started = Instant::now();
    loop {
        match write() {
            Err(e) if is_busy(&e) && started.elapsed() < BUSY_PATIENCE => {
                std::thread::sleep(Duration::from_millis(25));
            }
            other => return other.map_err(io::Error::other),
        }
    }
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

fn session_of(log: &Path) -> String {
    log.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

impl Simulator for EventDbAgent {
    fn log_path(&self, home: &Path, _cwd: &Path, session_id: &str, _now: u64) -> PathBuf {
        let id: String = session_id.chars().filter(char::is_ascii_alphanumeric).collect();
        DataHome::at(self.app(), home).log(&format!("ses_{id}"))
    }

    fn create_log(&self, log: &Path, cwd: &Path) -> io::Result<()> {
        if let Some(folder) = log.parent().and_then(Path::parent) {
            std::fs::create_dir_all(folder)?;
        }
        patiently(|| {
            let db = database(log)?;
            db.execute_batch(SCHEMA)?;
            let now = now_ms() as i64;
            db.execute(
                "INSERT OR REPLACE INTO session (id, directory, time_created, time_updated) VALUES (?1, ?2, ?3, ?3)",
                rusqlite::params![session_of(log), cwd.to_string_lossy(), now],
            )?;
            Ok(())
        })
    }

    /// One row: `line` is `{"type": …, "data": …}`.
    fn append(&self, log: &Path, line: &Value) -> io::Result<()> {
        let session = session_of(log);
        let kind = line["type"].as_str().unwrap_or("message.updated.1");
        let data = line["data"].to_string();
        patiently(|| {
            let mut db = database(log)?;
            let tx = db.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let seq: i64 = tx.query_row(
                "SELECT coalesce(max(seq) + 1, 0) FROM event WHERE aggregate_id = ?1",
                [&session],
                |r| r.get(0),
            )?;
            tx.execute(
                "INSERT INTO event (id, aggregate_id, seq, type, data) VALUES (?1, ?2, ?3, ?4, ?5)",
                rusqlite::params![format!("evt_{session}_{seq}"), session, seq, kind, data],
            )?;
            tx.execute(
                "UPDATE session SET time_updated = ?2 WHERE id = ?1",
                rusqlite::params![session, now_ms() as i64],
            )?;
            tx.commit()
        })
    }

    fn turn(&self, sim: &mut Sim, n: u32, outcome: Outcome, prompt: Option<String>) -> io::Result<()> {
        let started = Instant::now();
        let received = prompt.as_ref().map(|p| p.chars().count());
        let prompt = prompt.unwrap_or_else(|| format!("task {n} for {}", sim.name));
        let user = format!("msg_demo_{n}_user");
        sim.history
            .extend([String::new(), format!("┃  {}", prompt.lines().next().unwrap_or(""))]);
        sim.append(&message(&user, json!({"role": "user"})))?;
        sim.append(&part(&user, "p0", json!({"type": "text", "text": prompt})))?;
        let round = format!("msg_demo_{n}_a");
        sim.append(&message(&round, json!({"role": "assistant", "parentID": user})))?;
        sim.spin("", 1.5, started);
        let preamble = "Let me look at that first.";
        sim.append(&part(&round, "p1", json!({"type": "text", "text": preamble})))?;
        sim.append(&part(
            &round,
            "p2",
            json!({"type": "tool", "tool": "bash", "state": {"status": "running"}}),
        ))?;
        sim.history
            .extend([String::new(), format!("   {preamble}"), "   $ sleep 2".into()]);
        if outcome == Outcome::Wait {
            let dialog = [
                "┃  △ Permission required",
                "┃    # Shell command",
                "┃  $ sleep 2",
                "┃   Allow once   Allow always   Reject",
            ];
            sim.dialog(&dialog, None, 4.0);
        }
        sim.spin("", 2.0, started);
        if outcome == Outcome::Interrupt {
            let aborted = json!({"name": "MessageAbortedError", "data": {"message": "aborted"}});
            sim.append(&message(
                &round,
                json!({"role": "assistant", "parentID": user, "error": aborted, "time": {"completed": now_ms()}}),
            ))?;
            sim.history.push("   ▣  Build · Demo Model · interrupted".into());
            sim.draw(None, false, None);
            return Ok(());
        }
        sim.append(&part(
            &round,
            "p2",
            json!({"type": "tool", "tool": "bash", "state": {"status": "completed"}}),
        ))?;
        if outcome == Outcome::Fail {
            let error = json!({"name": "APIError", "data": {"message": "quota exceeded (demo)", "statusCode": 400}});
            sim.append(&message(
                &round,
                json!({"role": "assistant", "parentID": user, "error": error, "time": {"completed": now_ms()}}),
            ))?;
            sim.history
                .extend(["┃  quota exceeded (demo)".into(), "   ▣  Build · Demo Model".into()]);
            sim.draw(None, false, None);
            return Ok(());
        }
        let done = |finish: &str| json!({"role": "assistant", "parentID": user, "finish": finish, "time": {"completed": now_ms()}});
        sim.append(&message(&round, done("tool-calls")))?;
        sim.spin("", 1.0, started);
        let answer = sim.answer(n, received);
        let last = format!("msg_demo_{n}_b");
        sim.append(&message(&last, json!({"role": "assistant", "parentID": user})))?;
        sim.append(&part(&last, "p3", json!({"type": "text", "text": answer})))?;
        sim.append(&message(&last, done("stop")))?;
        let secs = started.elapsed().as_secs_f64();
        sim.history
            .extend([format!("   {answer}"), format!("   ▣  Build · Demo Model · {secs:.1}s")]);
        sim.draw(None, false, None);
        Ok(())
    }

    fn frame(&self, history: &[String], spinner: Option<&str>, _busy: bool, input: Option<&str>) -> Vec<String> {
        let keep = terminal_rows().saturating_sub(7).max(1);
        let mut lines = rows_above(history, None, keep);
        let footer = spinner.map_or_else(
            || "   ~/demo                                ctrl+p commands".to_owned(),
            str::to_owned,
        );
        lines.extend([
            String::new(),
            "  ┃".into(),
            format!("  ┃  {}", input.unwrap_or("")),
            "  ┃".into(),
            "  ┃  Build · Demo Model".into(),
            format!("  ╹{}", "▀".repeat(40)),
            footer,
        ]);
        lines
    }

    fn title(&self, name: &str, _busy: bool, _frame: usize) -> String {
        format!("{} | {name}", self.app().tag.to_uppercase())
    }

    fn spinner(&self, _stem: &str, i: usize, _secs: u64) -> String {
        let bar: String = (0..8).map(|k| if (k + i) % 8 < 3 { '■' } else { '⬝' }).collect();
        format!("   {bar}  esc interrupt")
    }
}

/// A `message.updated` row of message `id`.
fn message(id: &str, info: Value) -> Value {
    let mut info = info;
    info["id"] = json!(id);
    json!({"type": "message.updated.1", "data": {"info": info}})
}

/// A `message.part.updated` row of message `id`.
fn part(id: &str, part_id: &str, part: Value) -> Value {
    let mut part = part;
    part["id"] = json!(format!("prt_{id}_{part_id}"));
    part["messageID"] = json!(id);
    json!({"type": "message.part.updated.1", "data": {"part": part}})
}
