//! The engine of the simulated agents (`turnstile demo-agent`), for the
//! demo and the tests: no account, no network. It paces turns, draws
//! frames in place, sets the terminal title, listens for prompts typed or
//! pasted into the pane, and appends to the agent's log. What a turn *is*
//! (its log lines, its screen, its title) is the kind's own
//! [`Simulator`], one file per kind here.

mod claude;
mod codex;
mod copilot;
mod eventdb;
mod gemini;
mod input;
mod program;
mod qwen;
mod sim;

pub use input::take_prompt;
pub use sim::{clock, now_ms, terminal_rows, Sim};

use std::io;
use std::path::{Path, PathBuf};
use turnstile_core::agent::{self as kinds, AgentKind};

/// The simulated agent of `kind`, for the demo and the tests. A user kind
/// has none (`demo-agent` loads no rules): it plays a plain program's.
pub fn of(kind: AgentKind) -> &'static dyn Simulator {
    match kind {
        AgentKind::Claude => &kinds::claude::ClaudeCode,
        AgentKind::Codex => &kinds::codex::CodexCli,
        AgentKind::Gemini => &kinds::gemini::GeminiCli,
        AgentKind::Qwen => &kinds::qwen::QwenCode,
        AgentKind::Copilot => &kinds::copilot::CopilotCli,
        AgentKind::OpenCode => &kinds::opencode::OPENCODE,
        AgentKind::Kilo => &kinds::kilo::KILO,
        AgentKind::Program | AgentKind::User(_) => &kinds::program::Program,
    }
}

/// What one turn ends with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A normal answer.
    Done,
    /// An API error after retries.
    Fail,
    /// The user pressed Escape.
    Interrupt,
    /// A permission dialog first, approved after a while, then an answer.
    Wait,
}

impl Outcome {
    fn parse(word: &str) -> Option<Outcome> {
        match word.trim() {
            "done" => Some(Outcome::Done),
            "fail" | "failed" => Some(Outcome::Fail),
            "interrupt" | "interrupted" => Some(Outcome::Interrupt),
            "wait" | "waiting" => Some(Outcome::Wait),
            _ => None,
        }
    }
}

/// Parses `done,fail,…`; a clear error for an unknown word.
pub fn parse_script(script: &str) -> crate::error::Result<Vec<Outcome>> {
    script
        .split(',')
        .filter(|w| !w.trim().is_empty())
        .map(|w| {
            Outcome::parse(w).ok_or_else(|| {
                crate::error::Error::msg(format!("unknown outcome `{w}` (use done, fail, interrupt, wait)"))
            })
        })
        .collect()
}

/// What one kind's simulated agent does: where its log goes, what a turn
/// writes and draws, its title. Implemented in this folder, one file per kind.
pub trait Simulator: Sync {
    /// The log of a new session `session_id` started in `cwd` at `now`.
    fn log_path(&self, home: &Path, cwd: &Path, session_id: &str, now: u64) -> PathBuf;
    /// The session status file of process `pid`, for kinds that write one.
    fn status_file(&self, _home: &Path, _pid: u32) -> Option<PathBuf> {
        None
    }
    /// Creates the session's empty log (a file, by default).
    fn create_log(&self, log: &Path, _cwd: &Path) -> io::Result<()> {
        if let Some(folder) = log.parent() {
            std::fs::create_dir_all(folder)?;
        }
        std::fs::write(log, b"")
    }
    /// Appends one record to the log (a JSON line, by default).
    fn append(&self, log: &Path, line: &serde_json::Value) -> io::Result<()> {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new().append(true).open(log)?;
        file.write_all(format!("{line}\n").as_bytes())
    }
    /// The log's first line, for kinds that start with a header.
    fn header(&self, _sim: &Sim) -> Option<serde_json::Value> {
        None
    }
    /// Plays turn `n` (its `prompt` typed or pasted, else an invented one).
    fn turn(&self, sim: &mut Sim, n: u32, outcome: Outcome, prompt: Option<String>) -> io::Result<()>;
    /// The rows of a frame: `history` (its tail), the `spinner` line,
    /// the input box showing `input` (a draft, a hint) or its placeholder.
    fn frame(&self, history: &[String], spinner: Option<&str>, busy: bool, input: Option<&str>) -> Vec<String>;
    /// The terminal title; `frame` counts the titles set so far.
    fn title(&self, name: &str, busy: bool, frame: usize) -> String;
    /// The spinner line `i` of a turn running for `secs`, with the
    /// invented verb `stem`.
    fn spinner(&self, stem: &str, i: usize, secs: u64) -> String;
    /// How many rows of history stand above a dialog of `dialog` rows.
    fn room_above_dialog(&self, dialog: usize) -> usize {
        terminal_rows().saturating_sub(dialog + 1).max(1)
    }
}

/// The last rows of `history` (14 at most) and the `spinner` line, cut to
/// `keep` rows from the top: what stands above an input box kept at the
/// bottom of the pane.
pub fn rows_above(history: &[String], spinner: Option<&str>, keep: usize) -> Vec<String> {
    let mut lines: Vec<String> = history.iter().rev().take(14).rev().cloned().collect();
    lines.extend(spinner.map(str::to_owned));
    lines.drain(..lines.len().saturating_sub(keep));
    lines
}

/// Options of the simulated agent.
pub struct SimOptions {
    /// Shown in prompts and answers.
    pub name: String,
    /// The agent's home to write into.
    pub home: PathBuf,
    /// Outcomes of the turns, in order (`done,fail,wait,interrupt`); empty: random.
    pub script: String,
    /// Seed of the random outcomes and verbs.
    pub seed: u64,
    /// Time scale: 1.0 is the default pace, 0.5 twice as fast.
    pub pace: f64,
    /// Stop after this many turns (then stay at the prompt).
    pub turns: Option<u32>,
    /// Take prompts typed or pasted into the terminal (routed answers).
    pub listen: bool,
    /// Enters to swallow first (the prompt stays as a draft until the next).
    pub drop_enters: u32,
    /// Input dropped for this long after start (ms).
    pub deaf_ms: u64,
}

/// Runs the agent until killed (or `turns` are done, then idles).
pub fn run(options: &SimOptions, kind: &'static dyn Simulator) -> crate::error::Result<()> {
    use crate::error::Context;
    let script = parse_script(&options.script)?;
    let mut sim = Sim::start(options, kind).context("cannot start the simulated agent")?;
    if options.listen {
        input::ask_for_bracketed_paste().context("cannot write to the terminal")?;
    }
    let prompts = options
        .listen
        .then(|| input::listen_to_stdin(options.drop_enters, std::time::Duration::from_millis(options.deaf_ms)));
    let mut turn = 0u32;
    let played = "cannot write the agent's log";
    loop {
        let scripted_done =
            options.turns.is_some_and(|n| turn >= n) || (!script.is_empty() && turn as usize >= script.len());
        let outcome = (!scripted_done).then(|| {
            script
                .get(turn as usize)
                .copied()
                .unwrap_or_else(|| sim.random_outcome())
        });
        if let Some(outcome) = outcome {
            turn += 1;
            kind.turn(&mut sim, turn, outcome, None).context(played)?;
        }
        let rest = if outcome.is_some() {
            4.0 + sim.rand(4) as f64
        } else {
            3600.0
        };
        if let Some(prompt) = sim.idle(prompts.as_ref(), rest) {
            turn += 1;
            kind.turn(&mut sim, turn, Outcome::Done, Some(prompt)).context(played)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_parse_and_reject_unknown_words() {
        assert_eq!(parse_script("done, fail,wait,interrupt").unwrap().len(), 4);
        assert!(parse_script("done,explode")
            .unwrap_err()
            .to_string()
            .contains("explode"));
        assert!(parse_script("").unwrap().is_empty());
    }
}
