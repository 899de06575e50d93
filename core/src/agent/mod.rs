//! The agent model: one place per agent kind. A kind knows how to recognise
//! its process, read its screen and title, and classify its transcript;
//! everything downstream (verdicts, the arbiter, routing, the bar) is the
//! same for every kind. Claude Code's rules live in [`crate::screen`] and
//! [`crate::transcript`]; Codex CLI's in [`codex`]; Gemini CLI's in [`gemini`].

pub mod claude;
pub mod codex;
pub mod gemini;

use crate::screen::{InputBox, ScreenVerdict};
use crate::transcript::TranscriptVerdict;
use claude::transcript::Classifier;
use serde::{Deserialize, Serialize};

/// The coding agents turnstile understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AgentKind {
    /// Anthropic's Claude Code.
    #[default]
    Claude,
    /// OpenAI's Codex CLI.
    Codex,
    /// Google's Gemini CLI.
    Gemini,
}

impl AgentKind {
    /// Every kind.
    pub const ALL: [AgentKind; 3] = [AgentKind::Claude, AgentKind::Codex, AgentKind::Gemini];

    /// The kind a process's argv runs (`None`: not an agent).
    pub fn of_argv(argv: &[String]) -> Option<AgentKind> {
        if let Some(kind) = simulated_kind(argv) {
            return Some(kind);
        }
        if codex::is_codex_argv(argv) {
            Some(AgentKind::Codex)
        } else if gemini::is_gemini_argv(argv) {
            Some(AgentKind::Gemini)
        } else if claude::is_claude_argv(argv) {
            Some(AgentKind::Claude)
        } else {
            None
        }
    }

    /// The kind a pane's command (as zellij reports it) runs.
    pub fn of_command(command: &str) -> Option<AgentKind> {
        if codex::is_codex_command(command) {
            Some(AgentKind::Codex)
        } else if gemini::is_gemini_command(command) {
            Some(AgentKind::Gemini)
        } else if claude::is_claude_command(command) {
            Some(AgentKind::Claude)
        } else {
            None
        }
    }

    /// Its name in JSON and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            AgentKind::Claude => "claude",
            AgentKind::Codex => "codex",
            AgentKind::Gemini => "gemini",
        }
    }

    /// Its short tag in the bar.
    pub fn tag(self) -> &'static str {
        match self {
            AgentKind::Claude => "cc",
            AgentKind::Codex => "cx",
            AgentKind::Gemini => "gm",
        }
    }

    /// Parses [`AgentKind::name`].
    pub fn parse(name: &str) -> Option<AgentKind> {
        AgentKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Classifies the pane's screen (rows) and terminal title.
    pub fn classify_screen<'a, S: AsRef<str>>(self, rows: &'a [S], title: &str) -> ScreenVerdict<'a> {
        match self {
            AgentKind::Claude => claude::screen::classify(rows),
            AgentKind::Codex => codex::screen::classify(rows, title),
            AgentKind::Gemini => gemini::screen::classify(rows, title),
        }
    }

    /// What the pane's input box holds (a person's draft, stray bytes), so
    /// a routed answer is not pasted onto it and a lost paste can be told
    /// from a swallowed Enter.
    pub fn input_box<S: AsRef<str>>(self, rows: &[S]) -> InputBox {
        match self {
            AgentKind::Claude => claude::screen::input_box(rows),
            AgentKind::Codex => codex::screen::input_box(rows),
            AgentKind::Gemini => gemini::screen::input_box(rows),
        }
    }

    /// True when the agent may show a suggestion in its empty input box
    /// at any moment, which Enter submits: Claude Code 2.1.39 does once a
    /// turn is done. A routed answer then gets no Enter onto a box that
    /// reads empty, and is never pasted again (it would land before the
    /// suggestion).
    pub fn suggests_in_its_box(self) -> bool {
        matches!(self, AgentKind::Claude)
    }

    /// A fresh incremental classifier of this kind's transcript.
    pub fn transcript_classifier(self) -> TranscriptClassifier {
        match self {
            AgentKind::Claude => TranscriptClassifier::Claude(Box::default()),
            AgentKind::Codex => TranscriptClassifier::Codex(Box::default()),
            AgentKind::Gemini => TranscriptClassifier::Gemini(Box::default()),
        }
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

/// An incremental transcript classifier of some kind.
#[derive(Debug, Clone)]
pub enum TranscriptClassifier {
    /// A Claude Code JSONL transcript.
    Claude(Box<Classifier>),
    /// A Codex rollout.
    Codex(Box<codex::rollout::RolloutClassifier>),
    /// A Gemini CLI chat log.
    Gemini(Box<gemini::chat::ChatClassifier>),
}

impl TranscriptClassifier {
    /// Feeds bytes appended to the file.
    pub fn feed(&mut self, bytes: &[u8]) {
        match self {
            TranscriptClassifier::Claude(c) => c.feed(bytes),
            TranscriptClassifier::Codex(c) => c.feed(bytes),
            TranscriptClassifier::Gemini(c) => c.feed(bytes),
        }
    }

    /// The verdict after everything fed so far.
    pub fn verdict(&self) -> TranscriptVerdict {
        match self {
            TranscriptClassifier::Claude(c) => c.verdict(),
            TranscriptClassifier::Codex(c) => c.verdict(),
            TranscriptClassifier::Gemini(c) => c.verdict(),
        }
    }
}
