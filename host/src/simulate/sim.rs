//! One running simulated agent: its log, its session, its screen.

use super::input::Typed;
use super::{Outcome, SimOptions, Simulator};
use serde_json::{json, Value};
use std::cell::{Cell, RefCell};
use std::fs;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A running simulated agent: what a kind's [`Simulator`] plays its turns on.
pub struct Sim {
    kind: &'static dyn Simulator,
    /// Its name, shown in prompts and answers.
    pub name: String,
    pace: f64,
    rng: Cell<u64>,
    log: PathBuf,
    status_file: Option<PathBuf>,
    /// Its session id.
    pub session_id: String,
    /// Its working directory.
    pub cwd: String,
    /// The rows drawn above the input box, oldest first.
    pub history: Vec<String>,
    /// The last log line's id, for kinds whose lines chain to their parent.
    pub parent: RefCell<Option<String>>,
    title_frame: Cell<usize>,
    title_override: RefCell<Option<String>>,
}

impl Sim {
    /// The session's log.
    pub fn log(&self) -> &std::path::Path {
        &self.log
    }

    /// Starts a session: creates its log (with the kind's header), writes
    /// an idle status and draws the first frame.
    pub fn start(options: &SimOptions, kind: &'static dyn Simulator) -> io::Result<Sim> {
        let cwd = std::env::current_dir()?;
        let pid = std::process::id();
        let session_id = format!(
            "demo{pid:08x}-{:04x}-4000-8000-{:012x}",
            options.seed & 0xffff,
            now_ms()
        );
        let log = kind.log_path(&options.home, &cwd, &session_id, now_ms());
        let status_file = kind.status_file(&options.home, pid);
        if let Some(folder) = status_file.as_deref().and_then(|f| f.parent()) {
            fs::create_dir_all(folder)?;
        }
        let sim = Sim {
            kind,
            name: options.name.clone(),
            pace: options.pace.max(0.05),
            rng: Cell::new(options.seed.wrapping_mul(6364136223846793005).wrapping_add(pid as u64) | 1),
            log,
            status_file,
            session_id,
            cwd: cwd.display().to_string(),
            history: vec![
                format!(" ✻ turnstile demo agent · {}", options.name),
                format!("   {}", cwd.display()),
                String::new(),
            ],
            parent: RefCell::new(None),
            title_frame: Cell::new(0),
            title_override: RefCell::new(None),
        };
        kind.create_log(&sim.log, &cwd)?;
        if let Some(header) = kind.header(&sim) {
            sim.append(&header)?;
        }
        sim.status("idle", None);
        sim.draw(None, false, None);
        Ok(sim)
    }

    /// A pseudo-random number below `n`.
    pub fn rand(&self, n: u64) -> u64 {
        let mut x = self.rng.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng.set(x);
        x % n.max(1)
    }

    /// A turn's outcome when no script says: mostly done.
    pub fn random_outcome(&self) -> Outcome {
        match self.rand(10) {
            0 => Outcome::Fail,
            1 => Outcome::Interrupt,
            2 => Outcome::Wait,
            _ => Outcome::Done,
        }
    }

    /// A verb of its own invention: `Zorbling…` while working, `Zorbled` when done.
    pub fn verb_stem(&self) -> String {
        const HEADS: &[&str] = &[
            "Flib", "Zor", "Quan", "Mer", "Bli", "Tro", "Spla", "Gron", "Wib", "Skee",
        ];
        const TAILS: &[&str] = &["bert", "dl", "ticul", "vor", "zinn", "mp", "gl", "rk"];
        let head = HEADS[self.rand(HEADS.len() as u64) as usize];
        let tail = TAILS[self.rand(TAILS.len() as u64) as usize];
        format!("{head}{tail}")
    }

    /// The final answer of turn `n` (naming the characters it was sent).
    pub fn answer(&self, n: u32, received: Option<usize>) -> String {
        match received {
            Some(chars) => format!("Answer {n} from {}: read your {chars} characters.", self.name),
            None => format!("Answer {n} from {}: all {} checks pass.", self.name, 3 + n),
        }
    }

    /// Waits `secs` (paced) for a prompt; a draft typed meanwhile is
    /// drawn in the box.
    pub(super) fn idle(&self, prompts: Option<&Receiver<Typed>>, secs: f64) -> Option<String> {
        let until = Instant::now() + Duration::from_secs_f64(secs * self.pace);
        let Some(rx) = prompts else {
            std::thread::sleep(until.saturating_duration_since(Instant::now()));
            return None;
        };
        loop {
            match rx.recv_timeout(until.saturating_duration_since(Instant::now())).ok()? {
                Typed::Prompt(prompt) => return Some(prompt),
                Typed::Draft(draft) => self.draw(None, false, Some(draft.lines().next().unwrap_or(""))),
            }
        }
    }

    /// Shows the spinner for `secs` (paced), redrawing every 100 ms.
    pub fn spin(&self, stem: &str, secs: f64, started: Instant) {
        let end = Instant::now() + Duration::from_secs_f64(secs * self.pace);
        let mut i = 0;
        while Instant::now() < end {
            let line = self.kind.spinner(stem, i, started.elapsed().as_secs());
            self.draw(Some(&line), true, None);
            std::thread::sleep(Duration::from_millis(100));
            i += 1;
        }
    }

    /// Waits `secs` (paced).
    pub fn pause(&self, secs: f64) {
        std::thread::sleep(Duration::from_secs_f64(secs * self.pace));
    }

    /// Redraws: the kind's frame of the history, a spinner line and the
    /// input box (showing `input`, else its placeholder); sets the title.
    pub fn draw(&self, spinner: Option<&str>, busy: bool, input: Option<&str>) {
        let rows = self.kind.frame(&self.history, spinner, busy, input);
        self.set_title(busy);
        paint(&rows);
    }

    /// Shows a dialog below the history for `secs` (paced), with `title`
    /// as the terminal title meanwhile.
    pub fn dialog(&self, rows: &[&str], title: Option<String>, secs: f64) {
        let room = self.kind.room_above_dialog(rows.len());
        let mut lines: Vec<String> = self.history.iter().rev().take(room).rev().cloned().collect();
        lines.extend(rows.iter().map(|l| l.to_string()));
        self.title_override.replace(title);
        self.set_title(false);
        paint(&lines);
        self.pause(secs);
        self.title_override.replace(None);
    }

    fn set_title(&self, busy: bool) {
        let frame = self.title_frame.get().wrapping_add(1);
        self.title_frame.set(frame);
        let title = match self.title_override.borrow().clone() {
            Some(title) => title,
            None => self.kind.title(&self.name, busy, frame),
        };
        let _ = write!(io::stdout().lock(), "\x1b]0;{title}\x07");
    }

    /// Writes the session status file (for kinds that keep one).
    pub fn status(&self, status: &str, waiting_for: Option<&str>) {
        let Some(path) = &self.status_file else {
            return;
        };
        let mut value = json!({
            "pid": std::process::id(), "sessionId": self.session_id, "cwd": self.cwd,
            "status": status, "statusUpdatedAt": now_ms(), "kind": "interactive",
        });
        if let Some(w) = waiting_for {
            value["waitingFor"] = json!(w);
        }
        let _ = fs::write(path, value.to_string());
    }

    /// Appends one line to the log: one write, newline included, as the
    /// agents append.
    pub fn append(&self, line: &Value) -> io::Result<()> {
        self.kind.append(&self.log, line)
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        if let Some(path) = &self.status_file {
            let _ = fs::remove_file(path);
        }
    }
}

/// Milliseconds since the epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Draws rows in place (no full clear: a clear would push every frame into
/// the pane's scrollback).
fn paint(lines: &[String]) {
    let mut out = io::stdout().lock();
    let body = lines.join("\x1b[K\r\n");
    let _ = write!(out, "\x1b[H{body}\x1b[K\x1b[J");
    let _ = out.flush();
}

/// The terminal's height (24 when unknown).
pub fn terminal_rows() -> usize {
    // SAFETY: TIOCGWINSZ fills a winsize we own; a failure leaves it zeroed.
    let mut size: libc::winsize = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut size) } == 0;
    if ok && size.ws_row > 0 {
        size.ws_row as usize
    } else {
        24
    }
}

/// `7:23 PM` (UTC; the simulated agents read no time zone).
pub fn clock() -> String {
    let secs = now_ms() / 1000;
    let (h, m) = ((secs / 3600) % 24, (secs / 60) % 60);
    let (h12, half) = match h {
        0 => (12, "AM"),
        1..=11 => (h, "AM"),
        12 => (12, "PM"),
        _ => (h - 12, "PM"),
    };
    format!("{h12}:{m:02} {half}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_is_twelve_hour() {
        let c = clock();
        assert!(c.ends_with("AM") || c.ends_with("PM"), "{c}");
    }
}
