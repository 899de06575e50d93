//! The registry: every kind ([`AgentKind`], [`AgentKind::ALL`]) and the
//! matches that give each its implementation of the model's traits
//! ([`super::model`]). A new kind is its folder plus one arm in each match
//! here and its place in `ALL` (the tests below fail until it has them).

use super::model::{Agent, AgentHooks, AgentLog, LogClassifier, Paste};
use super::{claude, codex, copilot, gemini, kilo, opencode, program, qwen, user};
use crate::screen::{InputBox, ScreenVerdict};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
/// The one list of each built-in kind's implementation (a unit struct in
/// its folder, implementing every trait of the model): a new kind is one
/// line here and its place in [`AgentKind::ALL`]. Each registry function
/// below expands it for one trait, apart, so the plugin, which calls no
/// `log()`, links no log classifier.
macro_rules! implementation {
    ($kind:expr, $as:ty, $user:pat => $user_impl:expr) => {
        match $kind {
            AgentKind::Claude => &claude::ClaudeCode as $as,
            AgentKind::Codex => &codex::CodexCli as $as,
            AgentKind::Gemini => &gemini::GeminiCli as $as,
            AgentKind::Qwen => &qwen::QwenCode as $as,
            AgentKind::Copilot => &copilot::CopilotCli as $as,
            AgentKind::OpenCode => &opencode::OPENCODE as $as,
            AgentKind::Kilo => &kilo::KILO as $as,
            AgentKind::Program => &program::Program as $as,
            AgentKind::User($user) => $user_impl as $as,
        }
    };
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
    /// Kilo CLI (an OpenCode fork).
    Kilo,
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
    pub const ALL: [AgentKind; 8] = [
        AgentKind::Codex,
        AgentKind::Gemini,
        AgentKind::Qwen,
        AgentKind::Copilot,
        AgentKind::OpenCode,
        AgentKind::Kilo,
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
        implementation!(self, &'static dyn Agent, id => user::get(id))
    }

    /// The registry's other half: how this kind's log is read.
    pub fn log(self) -> &'static dyn AgentLog {
        implementation!(self, &'static dyn AgentLog, id => user::get(id))
    }

    /// The registry's third part: what this kind's hooks mean.
    pub fn hooks(self) -> &'static dyn AgentHooks {
        implementation!(self, &'static dyn AgentHooks, id => user::get(id))
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
            AgentKind::Kilo => 7,
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
            "claude (default), codex, gemini, qwen, copilot, opencode or kilo"
        );
        assert_eq!(
            AgentKind::names_for_help(false, true),
            "claude, codex, gemini, qwen, copilot, opencode, kilo or a rules file's agent"
        );
    }
}
