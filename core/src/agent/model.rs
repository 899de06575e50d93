//! The agent model's traits: what a kind is. [`Agent`] (recognition,
//! screen, title, input box), [`AgentLog`] (which log files are its, and
//! their classifiers), [`AgentHooks`] (what its hooks mean and how they are
//! installed), and the small types they share. The registry that maps each
//! [`AgentKind`] to its implementation is [`super::registry`].

use super::{AgentKind, SessionStatus};
use crate::hook::HookEvent;
use crate::screen::{InputBox, ScreenVerdict};
use crate::transcript::TranscriptVerdict;
use crate::{Millis, Verdict};
use serde::{Deserialize, Serialize};
use std::fmt::Debug;
use std::io::{self, Read, Seek};
use std::path::{Path, PathBuf};

/// What is true of one coding agent, for everything downstream of it: how
/// its process and its pane are recognised, what its screen and title say,
/// and how its log is classified. One implementation per kind, in
/// `agent/<kind>/`; [`AgentKind::agent`] is the registry. Pure: the plugin
/// runs it too.
pub trait Agent: Sync {
    /// Its kind.
    fn kind(&self) -> AgentKind;
    /// Its name in JSON and on the command line.
    fn name(&self) -> &'static str;
    /// Its short tag in the bar.
    fn tag(&self) -> &'static str;
    /// True when a process's argv runs this agent (not its helpers).
    fn runs(&self, argv: &[String]) -> bool;
    /// True when a pane's command, as zellij reports it, runs this agent.
    fn runs_command(&self, command: &str) -> bool;
    /// Classifies the pane's screen (rows) and terminal title.
    fn classify_screen<'a>(&self, rows: &'a [String], title: &str) -> ScreenVerdict<'a>;
    /// What the pane's input box holds (say `Empty` or `Draft` only when
    /// certain), so a routed answer is not pasted onto a person's draft and
    /// a lost paste can be told from a swallowed Enter.
    fn input_box(&self, rows: &[String]) -> InputBox;
    /// True when the agent may show a suggestion in its empty input box at
    /// any moment, which Enter submits: a routed answer then gets no Enter
    /// onto a box that reads empty, and is never pasted again.
    fn suggests_in_its_box(&self) -> bool {
        false
    }
    /// True when answers may be routed to it (pasted and submitted): false
    /// for a pane that runs no agent that reads them.
    fn takes_prompts(&self) -> bool {
        true
    }
    /// True when a screen rule names the rows of its answer: a confirmed
    /// done that brings no answer of its own then waits a moment for the
    /// screen to show it (the screen and the confirming source race).
    fn shows_its_answer(&self) -> bool {
        false
    }
    /// How it takes a routed answer ([`Paste`]).
    fn paste(&self) -> Paste {
        Paste::Bracketed
    }
}

/// How an agent takes a routed answer typed into its terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Paste {
    /// A bracketed paste (its markers written apart, as zellij pastes, so
    /// zellij drops them for a program that never asked for them), then
    /// Enter: every terminal UI, whose box keeps the answer's line breaks.
    #[default]
    Bracketed,
    /// One line, its line breaks made spaces and cut to [`LINE_PASTE_BYTES`]
    /// (a terminal's line buffer), then Enter: a program that reads its
    /// input line by line, where each line break would submit a prompt.
    Line,
}

/// Longest answer a [`Paste::Line`] agent gets (Linux's canonical-mode
/// line buffer holds 4095 bytes and a newline).
pub const LINE_PASTE_BYTES: usize = 4000;

/// Where one agent keeps its files and how its log is classified: the
/// other half of a kind, apart from [`Agent`] so that the plugin, which
/// reads no log, does not carry the classifiers ([`AgentKind::log`] is the
/// registry). Paths only: the host reads them.
pub trait AgentLog: Sync {
    /// Its home folder for a process with the environment `var`.
    fn home(&self, var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf>;
    /// The session status file process `pid` writes (`None`: it writes none).
    fn status_file(&self, _home: &Path, _pid: u32) -> Option<PathBuf> {
        None
    }
    /// Reads its session status file (`None`: unreadable, or it keeps none).
    fn read_status(&self, _bytes: &[u8]) -> Option<SessionStatus> {
        None
    }
    /// The project folder of the agents started in `cwd`: agents of one
    /// project may own each other's logs (where logs are filed otherwise, a
    /// key that names the project).
    fn project_folder(&self, home: &Path, cwd: &Path) -> PathBuf;
    /// The folders its logs of the project in `cwd` may be in, around `now`.
    fn log_folders(&self, home: &Path, cwd: &Path, _now: Millis) -> Vec<PathBuf> {
        vec![self.project_folder(home, cwd)]
    }
    /// True when a log in [`AgentLog::log_folders`] is of the project in
    /// `cwd`; `first_line` reads the log's first line (only where the
    /// folder does not tell).
    fn log_of_project(&self, _first_line: &dyn Fn() -> Option<Vec<u8>>, _cwd: &Path) -> bool {
        true
    }
    /// True when the agent process holds its own log open (so the open
    /// file names it); false where another process holds every log.
    fn holds_its_log_open(&self) -> bool {
        true
    }
    /// True when the innermost of the agent's processes in a pane is the
    /// one that writes and holds its files (it relaunches itself), not the
    /// first.
    fn innermost_process_is_the_agent(&self) -> bool {
        false
    }
    /// True when a file of that name in one of its log folders may be one
    /// of its logs (by default a `.jsonl` file).
    fn is_log_name(&self, file_name: &str) -> bool {
        file_name.ends_with(".jsonl")
    }
    /// The log of its project folder `folder` that a file the agent process
    /// holds open names (`None`: none): by default the file itself, when it
    /// is a log ([`AgentLog::is_log_name`]) right in that folder.
    fn log_held_open(&self, folder: &Path, open_file: &Path) -> Option<PathBuf> {
        let name = open_file.file_name().and_then(|n| n.to_str());
        let log = open_file.parent() == Some(folder) && name.is_some_and(|n| self.is_log_name(n));
        log.then(|| open_file.to_path_buf())
    }
    /// The log of session `session_id`, for a hook whose payload names the
    /// session but not its log.
    fn log_of_session(&self, _home: &Path, _session_id: &str) -> Option<PathBuf> {
        None
    }
    /// The folders the watcher watches for its status file and logs.
    fn watched_folders(&self, home: &Path, cwd: Option<&Path>, now: Millis) -> Vec<PathBuf> {
        cwd.map(|cwd| self.log_folders(home, cwd, now)).unwrap_or_default()
    }
    /// True when a log file is this agent's: its name, its folder's name,
    /// and its first bytes.
    fn owns_log(&self, name: &str, folder: &str, head: &[u8]) -> bool;
    /// True when its classifier's positions are records of a database (a
    /// row's `seq` + 1), not byte offsets.
    fn positions_are_rows(&self) -> bool {
        false
    }
    /// The database every session of this kind shares, when its logs are
    /// rows of one (`None`: a file per log).
    fn shared_database(&self) -> Option<&'static SharedDatabase> {
        None
    }
    /// A fresh incremental classifier of its log.
    fn log_classifier(&self) -> Box<dyn LogClassifier>;
    /// Classifies a log cold, reading a bounded tail (`count_lines`: name
    /// line numbers in reasons, which reads the whole file); the classifier
    /// goes on from the end of the last complete line.
    fn classify_log(&self, file: &mut dyn LogFile, count_lines: bool) -> io::Result<Box<dyn LogClassifier>>;
}

/// A SQLite database every session of a kind shares (an append-only
/// `event` table, a `session` table). A session's log is named by a path
/// that is no file: the database's path joined with the session id
/// (`…/opencode.db/ses_…`); the host reads it through its log store.
#[derive(Debug)]
pub struct SharedDatabase {
    /// The database's file name (`opencode.db`).
    pub file_name: &'static str,
}

/// The first bytes of every SQLite database.
pub const SQLITE_HEADER: &[u8] = b"SQLite format 3\0";

impl SharedDatabase {
    /// The session id a log path names (`…/<file_name>/<id>`), if it is one.
    pub fn session_of_log<'a>(&self, log: &'a Path) -> Option<&'a str> {
        let database = log.parent()?;
        let id = log.file_name()?.to_str()?;
        let plain = id.starts_with("ses_") && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        (database.file_name()? == self.file_name && plain).then_some(id)
    }
}

/// What one agent's hooks mean and where they are installed: the third
/// part of a kind ([`AgentKind::hooks`]), used by the host only.
pub trait AgentHooks: Sync {
    /// The events `install-hooks` adds (`recent`: also those only recent
    /// releases know).
    fn hook_events(&self, recent: bool) -> Vec<&'static str>;
    /// True when `event` ends a turn: the hook then reads the log to judge it.
    fn ends_a_turn(&self, event: &str) -> bool;
    /// The verdict of a hook event at `now`, given the log as it is then
    /// (read for the events that end a turn).
    fn hook_verdict(&self, event: &HookEvent, now: Millis, log: Option<&TranscriptVerdict>) -> Option<Verdict>;
    /// What a pane's hook record alone says of the `event` that wrote it at
    /// `at`, should that event's report be lost on its way (a hook killed
    /// past its budget): only a mark of the turn's end, for an event whose
    /// report is never less than that. None by default.
    fn record_verdict(&self, _event: &str, _at: Millis) -> Option<Verdict> {
        None
    }
    /// The entry `install-hooks` adds to `event`'s list, running `command`
    /// (Claude Code's shape: a group of one hook, a 5 s timeout, no matcher).
    fn hook_entry(&self, command: &str, _event: &str) -> serde_json::Value {
        serde_json::json!({"hooks": [{"type": "command", "command": command, "timeout": 5}]})
    }
    /// What `install-hooks` adds to the hooks file besides the entries.
    fn prepare_hooks_file(&self, _settings: &mut serde_json::Value) {}
    /// For a kind whose hooks are a plugin file (OpenCode's) rather than
    /// entries in a settings file: the whole file, running `command`.
    fn plugin(&self, _command: &str) -> Option<String> {
        None
    }
    /// The settings file `install-hooks` edits: the user's, under the home
    /// the environment `var` names, or the project's in `project`; an error
    /// says why there is none.
    fn hooks_file(&self, var: &dyn Fn(&str) -> Option<String>, project: Option<&Path>) -> Result<PathBuf, String>;
}

/// A log being read: any seekable reader.
pub trait LogFile: Read + Seek {}

impl<T: Read + Seek> LogFile for T {}

/// An incremental classifier of one agent's log.
pub trait LogClassifier: Debug + Send {
    /// Feeds bytes appended to the log.
    fn feed(&mut self, bytes: &[u8]);
    /// The verdict after everything fed so far.
    fn verdict(&self) -> TranscriptVerdict;
    /// Bytes of the log consumed so far, the incomplete last line included
    /// (where the next append starts).
    fn consumed(&self) -> u64;
}

impl<R: crate::transcript::lines::LineRules> LogClassifier for crate::transcript::lines::LineClassifier<R> {
    fn feed(&mut self, bytes: &[u8]) {
        crate::transcript::lines::LineClassifier::feed(self, bytes);
    }
    fn verdict(&self) -> TranscriptVerdict {
        crate::transcript::lines::LineClassifier::verdict(self)
    }
    fn consumed(&self) -> u64 {
        self.offset() + self.pending_bytes() as u64
    }
}
