//! Screen verdicts, shared by every agent kind: what a pane's visible rows
//! (and its terminal title) say, and the [`Rule`] that decided, for
//! `explain` and tests. Each kind's matcher lives in `agent/<kind>/screen.rs`.

use crate::verdict::State;

/// The rule that decided a screen verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rule {
    /// An approval dialog is open (a question over numbered options:
    /// Claude Code's `Do you want to proceed?`, Codex's `Would you like to
    /// run the following command?`, Gemini CLI's `Allow execution of …?`).
    PermissionDialog,
    /// The agent says it waits for an approval (`Waiting for permission…`,
    /// `Waiting for user confirmation...`).
    PermissionWait,
    /// A question or plan dialog's footer (`Enter to select · ↑/↓ to
    /// navigate · Esc to cancel`): the agent asks its user.
    QuestionDialog,
    /// The footer shows the agent at work (`esc to interrupt`, a bouncing
    /// bar) below the deciding line.
    FooterActivity,
    /// An in-progress spinner line or title (`✽ Pondering… (1s · ↓ 20
    /// tokens)`, `⠸ Thinking... (esc to cancel, 3s)`, `• Working (7s …)`).
    Spinner,
    /// A line about retrying an API call.
    Retrying,
    /// The agent waits for its background agents (`Waiting for N
    /// background agent(s) to finish`).
    BackgroundAgents,
    /// A prompt was submitted below the last status line: a new turn runs.
    PromptEcho,
    /// A turn's finished mark (`✻ Brewed for 4s · done 7:23 PM`, `Worked
    /// for 9s`, an answer with the title back to ready).
    Banner,
    /// An Escape's mark (`⎿  Interrupted · …`, `■ Conversation interrupted`,
    /// `ℹ Request cancelled.`).
    Interrupted,
    /// An API error ended the turn (`API Error`, `Prompt is too long`, `✕ [API Error …]`).
    ApiError,
    /// A user-defined agent's screen rule, written on this line of its rules file.
    User(u32),
    /// No status line on screen.
    NoStatus,
}

impl Rule {
    /// Stable id used in JSON and `explain`.
    pub fn id(self) -> &'static str {
        match self {
            Rule::PermissionDialog => "permission-dialog",
            Rule::PermissionWait => "permission-wait",
            Rule::QuestionDialog => "question-dialog",
            Rule::FooterActivity => "footer-activity",
            Rule::Spinner => "spinner",
            Rule::Retrying => "retrying",
            Rule::BackgroundAgents => "background-agents",
            Rule::PromptEcho => "prompt-echo",
            Rule::Banner => "banner",
            Rule::Interrupted => "interrupted",
            Rule::ApiError => "api-error",
            Rule::User(_) => "user-rule",
            Rule::NoStatus => "no-status",
        }
    }
}

/// What the screen says, and which row said it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScreenVerdict<'a> {
    /// The state the screen shows.
    pub state: State,
    /// The rule that decided.
    pub rule: Rule,
    /// The deciding row, trimmed (`None` for [`Rule::NoStatus`]).
    pub line: Option<&'a str>,
    /// Index of the deciding row in the input.
    pub row: Option<usize>,
    /// True when a sign of activity (footer, spinner, prompt echo) is on screen.
    pub active: bool,
    /// The answer the screen shows, where a rule names its region (a rules
    /// file's agents only): routed only when a confirmed done brings none.
    pub answer: Option<String>,
}

impl<'a> ScreenVerdict<'a> {
    /// A verdict decided by `rule` at `row` (its index and text), if any.
    pub fn decided(state: State, rule: Rule, row: Option<(usize, &'a str)>, active: bool) -> Self {
        ScreenVerdict {
            state,
            rule,
            line: row.map(|(_, line)| line),
            row: row.map(|(i, _)| i),
            active,
            answer: None,
        }
    }

    /// True when the screen shows no sign that a turn is running.
    pub fn is_quiet(&self) -> bool {
        !self.active && self.state != State::Waiting
    }
}

/// What an agent's input box holds, as far as its screen tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputBox {
    /// Certainly empty (or showing only its placeholder).
    Empty,
    /// Text a person typed, or stray bytes.
    Draft(String),
    /// Text that may be a draft or a dimmed suggestion the agent submits on
    /// Enter (plugins get no colours to tell them apart).
    Unsure(String),
    /// Cannot be told: no box on screen, or a dialog in its place.
    Unknown,
}

impl InputBox {
    /// The draft, when there certainly is one.
    pub fn draft(&self) -> Option<&str> {
        match self {
            InputBox::Draft(text) => Some(text),
            _ => None,
        }
    }
}
