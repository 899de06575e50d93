//! The agent model: one place per agent kind. A kind knows how to recognise
//! its process, read its screen and title, and classify its transcript;
//! everything downstream (verdicts, the arbiter, routing, the bar) is the
//! same for every kind. Each kind is one folder ([`claude`], [`codex`],
//! [`gemini`], [`qwen`], [`copilot`], [`opencode`], [`program`]) implementing
//! [`Agent`]; [`AgentKind::agent`] lists them. A rules file adds kinds of
//! its own ([`user`]: `AgentKind::User`), through the same traits.

pub mod claude;
pub mod codex;
pub mod copilot;
pub mod gemini;
pub mod opencode;
pub mod program;
pub mod question;
pub mod qwen;
#[cfg(test)]
pub mod replay;
pub mod user;

/// What a session status file says (Claude Code keeps one per process;
/// a kind that keeps one reads it into this).
pub use claude::session::SessionStatus;

use crate::hook::HookEvent;
use crate::screen::{InputBox, ScreenVerdict};
use crate::transcript::TranscriptVerdict;
use crate::{Millis, Verdict};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
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
    /// A fresh incremental classifier of its log.
    fn log_classifier(&self) -> Box<dyn LogClassifier>;
    /// Classifies a log cold, reading a bounded tail (`count_lines`: name
    /// line numbers in reasons, which reads the whole file); the classifier
    /// goes on from the end of the last complete line.
    fn classify_log(&self, file: &mut dyn LogFile, count_lines: bool) -> io::Result<Box<dyn LogClassifier>>;
    /// Where its logs are kept when they are not files of their own (a
    /// database): the host reads them through this (`None`: files).
    #[cfg(feature = "cli")]
    fn store(&self) -> Option<&'static dyn LogStore> {
        None
    }
}

/// Logs kept inside a database rather than a file each (OpenCode's
/// sessions share one SQLite file): a log is then named by a path inside
/// the database's (not a file), and its records are read by position, each
/// rendered as one JSONL line for the kind's classifier. Host only.
#[cfg(feature = "cli")]
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

/// The coding agents turnstile understands: the registry's keys. In JSON
/// a kind is its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum AgentKind {
    /// Anthropic's Claude Code (the kind assumed when nothing tells).
    #[default]
    Claude,
    /// OpenAI's Codex CLI.
    Codex,
    /// Google's Gemini CLI.
    Gemini,
    /// Alibaba's Qwen Code.
    Qwen,
    /// GitHub Copilot CLI.
    Copilot,
    /// OpenCode.
    OpenCode,
    /// Any program that reports its own state (`turnstile report`).
    Program,
    /// An agent a rules file describes: its number in [`user`]'s registry.
    User(u16),
}

impl Serialize for AgentKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

/// A built-in kind's name, or a user kind's (registered bare when this
/// process has not loaded its rules).
impl<'de> Deserialize<'de> for AgentKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        AgentKind::built_in(&name)
            .or_else(|| user::intern(&name))
            .ok_or_else(|| serde::de::Error::custom(format!("unknown agent kind {name:?}")))
    }
}

impl AgentKind {
    /// Every built-in kind, the most specific recognition first (the default last).
    pub const ALL: [AgentKind; 7] = [
        AgentKind::Codex,
        AgentKind::Gemini,
        AgentKind::Qwen,
        AgentKind::Copilot,
        AgentKind::OpenCode,
        AgentKind::Program,
        AgentKind::Claude,
    ];

    /// The built-in kinds that are coding agents (every one but `program`),
    /// the default first: the order help texts and docs list them in.
    pub fn built_in_agents() -> impl Iterator<Item = AgentKind> {
        let others = AgentKind::ALL
            .into_iter()
            .filter(|k| *k != AgentKind::Claude && k.agent().takes_prompts());
        std::iter::once(AgentKind::Claude).chain(others)
    }

    /// Their names as a help text lists them, `… or` the last: `claude
    /// (default), codex, …` with `default`, and `or a rules file's agent`
    /// last with `user_kinds`. Derived from [`AgentKind::ALL`], never
    /// written by hand.
    pub fn names_for_help(default: bool, user_kinds: bool) -> String {
        let mut names: Vec<String> = AgentKind::built_in_agents().map(|k| k.name().to_owned()).collect();
        if default {
            names[0].push_str(" (default)");
        }
        if user_kinds {
            names.push("a rules file's agent".into());
        }
        let last = names.pop().unwrap_or_default();
        format!("{} or {last}", names.join(", "))
    }

    /// The registry: what is true of this kind.
    pub fn agent(self) -> &'static dyn Agent {
        match self {
            AgentKind::Claude => &claude::ClaudeCode,
            AgentKind::Codex => &codex::CodexCli,
            AgentKind::Gemini => &gemini::GeminiCli,
            AgentKind::Qwen => &qwen::QwenCode,
            AgentKind::Copilot => &copilot::CopilotCli,
            AgentKind::OpenCode => &opencode::OpenCode,
            AgentKind::Program => &program::Program,
            AgentKind::User(id) => user::get(id),
        }
    }

    /// The registry's other half: how this kind's log is read.
    pub fn log(self) -> &'static dyn AgentLog {
        match self {
            AgentKind::Claude => &claude::ClaudeCode,
            AgentKind::Codex => &codex::CodexCli,
            AgentKind::Gemini => &gemini::GeminiCli,
            AgentKind::Qwen => &qwen::QwenCode,
            AgentKind::Copilot => &copilot::CopilotCli,
            AgentKind::OpenCode => &opencode::OpenCode,
            AgentKind::Program => &program::Program,
            AgentKind::User(id) => user::get(id),
        }
    }

    /// The registry's third part: what this kind's hooks mean.
    pub fn hooks(self) -> &'static dyn AgentHooks {
        match self {
            AgentKind::Claude => &claude::ClaudeCode,
            AgentKind::Codex => &codex::CodexCli,
            AgentKind::Gemini => &gemini::GeminiCli,
            AgentKind::Qwen => &qwen::QwenCode,
            AgentKind::Copilot => &copilot::CopilotCli,
            AgentKind::OpenCode => &opencode::OpenCode,
            AgentKind::Program => &program::Program,
            AgentKind::User(id) => user::get(id),
        }
    }

    /// Its simulated agent, for the demo and the tests (native only).
    #[cfg(feature = "cli")]
    pub fn simulator(self) -> &'static dyn crate::simulate::Simulator {
        match self {
            AgentKind::Claude => &claude::ClaudeCode,
            AgentKind::Codex => &codex::CodexCli,
            AgentKind::Gemini => &gemini::GeminiCli,
            AgentKind::Qwen => &qwen::QwenCode,
            AgentKind::Copilot => &copilot::CopilotCli,
            AgentKind::OpenCode => &opencode::OpenCode,
            AgentKind::Program => &program::Program,
            // A user kind has no simulated agent: `demo-agent` loads no rules.
            AgentKind::User(_) => &program::Program,
        }
    }

    /// Every kind's agent, in recognition order: the user kinds that
    /// replace a built-in one, the built-in kinds (the most specific first),
    /// then the other user kinds.
    pub fn agents() -> impl Iterator<Item = &'static dyn Agent> {
        let first = user::loaded(true).into_iter().map(|k| k as &'static dyn Agent);
        let last = user::loaded(false).into_iter().map(|k| k as &'static dyn Agent);
        first
            .chain(AgentKind::ALL.into_iter().map(AgentKind::agent))
            .chain(last)
    }

    /// The kind a process's argv runs (`None`: not an agent).
    pub fn of_argv(argv: &[String]) -> Option<AgentKind> {
        simulated_kind(argv).or_else(|| AgentKind::agents().find(|a| a.runs(argv)).map(|a| a.kind()))
    }

    /// The kind a pane's command (as zellij reports it) runs.
    pub fn of_command(command: &str) -> Option<AgentKind> {
        AgentKind::agents().find(|a| a.runs_command(command)).map(|a| a.kind())
    }

    /// The user kind a pane's title names (built-in kinds are never
    /// recognised by their title alone).
    pub fn of_title(title: &str) -> Option<AgentKind> {
        user::of_title(title)
    }

    /// The kind a log file belongs to: a loaded user kind whose log rules
    /// name it, else a built-in kind (the default kind when none claims it).
    pub fn of_log(name: &str, folder: &str, head: &[u8]) -> AgentKind {
        let user = [true, false].into_iter().flat_map(user::loaded).map(|k| k.kind());
        user.chain(AgentKind::ALL)
            .find(|k| k.log().owns_log(name, folder, head))
            .unwrap_or_default()
    }

    /// Its name in JSON and on the command line.
    pub fn name(self) -> &'static str {
        self.agent().name()
    }

    /// Its short tag in the bar.
    pub fn tag(self) -> &'static str {
        self.agent().tag()
    }

    /// Parses [`AgentKind::name`]: a built-in kind, or a user kind this
    /// process has registered.
    pub fn parse(name: &str) -> Option<AgentKind> {
        AgentKind::built_in(name).or_else(|| user::find(name))
    }

    /// The built-in kind named `name`.
    pub fn built_in(name: &str) -> Option<AgentKind> {
        AgentKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// True for a kind a rules file describes.
    pub fn is_user(self) -> bool {
        matches!(self, AgentKind::User(_))
    }

    /// Classifies the pane's screen (rows) and terminal title.
    pub fn classify_screen<'a>(self, rows: &'a [String], title: &str) -> ScreenVerdict<'a> {
        self.agent().classify_screen(rows, title)
    }

    /// What the pane's input box holds ([`Agent::input_box`]).
    pub fn input_box(self, rows: &[String]) -> InputBox {
        self.agent().input_box(rows)
    }

    /// [`Agent::paste`].
    pub fn paste(self) -> Paste {
        self.agent().paste()
    }

    /// [`Agent::suggests_in_its_box`].
    pub fn suggests_in_its_box(self) -> bool {
        self.agent().suggests_in_its_box()
    }

    /// A fresh incremental classifier of this kind's log.
    pub fn transcript_classifier(self) -> Box<dyn LogClassifier> {
        self.log().log_classifier()
    }
}

/// The kind turnstile's own simulated agents play (`turnstile demo-agent
/// --kind codex`, `turnstile replay`); `None` for any other process.
fn simulated_kind(argv: &[String]) -> Option<AgentKind> {
    let program = argv.first()?.rsplit('/').next()?;
    if program != "turnstile" || !matches!(argv.get(1).map(String::as_str), Some("demo-agent" | "replay")) {
        return None;
    }
    let kind = argv.windows(2).find(|w| w[0] == "--kind").map(|w| w[1].as_str());
    Some(kind.and_then(AgentKind::parse).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every variant, numbered: a new variant does not compile until it is
    /// numbered here, and then fails the test below until it is in `ALL`.
    fn number(kind: AgentKind) -> usize {
        match kind {
            AgentKind::Claude => 0,
            AgentKind::Codex => 1,
            AgentKind::Gemini => 2,
            AgentKind::Qwen => 3,
            AgentKind::Copilot => 4,
            AgentKind::OpenCode => 5,
            AgentKind::Program => 6,
            AgentKind::User(_) => usize::MAX,
        }
    }

    #[test]
    fn all_holds_every_built_in_variant_once_with_the_default_last() {
        let mut numbers: Vec<usize> = AgentKind::ALL.into_iter().map(number).collect();
        numbers.sort_unstable();
        assert_eq!(numbers, (0..AgentKind::ALL.len()).collect::<Vec<_>>());
        assert_eq!(
            AgentKind::ALL.last(),
            Some(&AgentKind::Claude),
            "the default is recognised last"
        );
        for kind in AgentKind::ALL {
            assert_eq!(
                AgentKind::parse(kind.name()),
                Some(kind),
                "{kind:?} is found by its name"
            );
        }
    }

    #[test]
    fn help_lists_every_agent_kind_from_all() {
        assert_eq!(
            AgentKind::names_for_help(true, false),
            "claude (default), codex, gemini, qwen, copilot or opencode"
        );
        assert_eq!(
            AgentKind::names_for_help(false, true),
            "claude, codex, gemini, qwen, copilot, opencode or a rules file's agent"
        );
    }
}
