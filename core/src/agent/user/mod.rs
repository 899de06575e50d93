//! User-defined agents as kinds of the agent model (`AgentKind::User`): the
//! registry of the agents a rules file describes, and their [`Agent`],
//! [`AgentLog`] and [`AgentHooks`] parts, read from their rules.
//!
//! A user kind is one more kind, not a side path: its screen rules answer a
//! [`ScreenVerdict`] like a built-in matcher's (so a screen done stays a
//! guess the arbiter never routes), its hook rules answer hook verdicts
//! (`turnstile hook --agent <name>`), and its log rules, when it has them,
//! make its logs' classifier (bound and read like any kind's logs).
//!
//! The registry lives for the process: a name keeps its number for good
//! (so an `AgentKind` stays `Copy` and a pane's kind never dangles), and
//! loading a rules file again replaces each name's definition. Names are
//! what travels in JSON; a name the plugin has not loaded rules for yet
//! (a report of the watcher's) becomes a bare kind: its tag, no rules.

pub mod file;
pub mod log;
pub mod pattern;
pub mod rules;

use super::{Agent, AgentHooks, AgentKind, AgentLog, LogClassifier, LogFile};
use crate::hook::HookEvent;
use crate::screen::{InputBox, Rule, ScreenVerdict};
use crate::transcript::lines::LineClassifier;
use crate::transcript::lines::NoLog;
use crate::transcript::TranscriptVerdict;
use crate::{Millis, Source, State, Verdict};
use rules::{Rules, UserAgent};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{PoisonError, RwLock};

/// Most user kinds one process knows (names are never forgotten).
pub const MAX_KINDS: usize = 256;

/// Longest user kind name.
pub const MAX_NAME_CHARS: usize = 32;

/// One user-defined agent, registered: its number and its rules.
#[derive(Debug)]
pub struct UserKind {
    id: u16,
    name: &'static str,
    tag: &'static str,
    rules: UserAgent,
}

struct Registry {
    /// Every name ever registered, its newest definition, by number.
    kinds: Vec<&'static UserKind>,
    /// The loaded rules file's agents, in its order (recognition order).
    loaded: Vec<u16>,
}

static REGISTRY: RwLock<Registry> = RwLock::new(Registry {
    kinds: Vec::new(),
    loaded: Vec::new(),
});

fn read<T>(f: impl FnOnce(&Registry) -> T) -> T {
    f(&REGISTRY.read().unwrap_or_else(PoisonError::into_inner))
}

fn write<T>(f: impl FnOnce(&mut Registry) -> T) -> T {
    f(&mut REGISTRY.write().unwrap_or_else(PoisonError::into_inner))
}

fn leak(text: &str) -> &'static str {
    Box::leak(text.to_owned().into_boxed_str())
}

/// True for a name a user kind may have: one short word (letters, digits,
/// `-`, `_`, `.`), not a built-in's. A rules file is held to it too.
pub fn is_valid_name(name: &str) -> bool {
    let is_word = |c: char| c.is_alphanumeric() || matches!(c, '-' | '_' | '.');
    !name.is_empty()
        && name.chars().count() <= MAX_NAME_CHARS
        && name.chars().all(is_word)
        && AgentKind::built_in(name).is_none()
}

impl Registry {
    fn find(&self, name: &str) -> Option<u16> {
        self.kinds.iter().find(|k| k.name == name).map(|k| k.id)
    }

    /// Registers `agent` under its name (a new number, or its old one);
    /// `None` when the registry is full.
    fn define(&mut self, agent: UserAgent) -> Option<u16> {
        let id = match self.find(&agent.name) {
            Some(id) => id,
            None if self.kinds.len() < MAX_KINDS => self.kinds.len() as u16,
            None => return None,
        };
        let kind: &'static UserKind = Box::leak(Box::new(UserKind {
            id,
            name: leak(&agent.name),
            tag: leak(&agent.tag),
            rules: agent,
        }));
        match self.kinds.get_mut(id as usize) {
            Some(slot) => *slot = kind,
            None => self.kinds.push(kind),
        }
        Some(id)
    }
}

/// Loads a rules file's agents: each becomes (or stays) a user kind with
/// these rules, recognised in this order. A name the file no longer
/// describes is recognised no more; a pane already of its kind keeps its
/// last rules. Returns how many were loaded.
pub fn load(rules: &Rules) -> usize {
    write(|registry| {
        let loaded: Vec<u16> = rules.agents.iter().filter_map(|a| registry.define(a.clone())).collect();
        registry.loaded = loaded;
        registry.loaded.len()
    })
}

/// The user kind named `name`, if one is registered.
pub fn find(name: &str) -> Option<AgentKind> {
    read(|r| r.find(name)).map(AgentKind::User)
}

/// The user kind named `name`, registered bare (no rules, its tag from its
/// name) when it is new: a name in a report from a process that loaded
/// rules this one has not. `None` for a name no user kind may have, or
/// when the registry is full.
pub fn intern(name: &str) -> Option<AgentKind> {
    if let Some(kind) = find(name) {
        return Some(kind);
    }
    if !is_valid_name(name) {
        return None;
    }
    let tag: String = name.chars().take(2).collect();
    write(|r| r.find(name).or_else(|| r.define(UserAgent::bare(name, &tag)))).map(AgentKind::User)
}

/// The registered user kind number `id`.
pub fn get(id: u16) -> &'static UserKind {
    read(|r| r.kinds.get(id as usize).copied()).unwrap_or(&UNKNOWN)
}

/// What a number no registry holds reads as (never reached: numbers come
/// from the registry).
static UNKNOWN: UserKind = UserKind {
    id: u16::MAX,
    name: "user",
    tag: "us",
    rules: UserAgent::BARE,
};

/// The loaded agents, in the file's order: first those that replace a
/// built-in kind (`replacing`), else the others.
pub fn loaded(replacing: bool) -> Vec<&'static UserKind> {
    read(|r| {
        r.loaded
            .iter()
            .map(|id| r.kinds[*id as usize])
            .filter(|k| k.rules.replaces.is_some() == replacing)
            .collect()
    })
}

/// The loaded agent whose title rule matches `title`, if any.
pub fn of_title(title: &str) -> Option<AgentKind> {
    read(|r| {
        r.loaded
            .iter()
            .map(|id| r.kinds[*id as usize])
            .find(|k| k.rules.title.as_ref().is_some_and(|t| t.is_match(title)))
            .map(|k| AgentKind::User(k.id))
    })
}

impl UserKind {
    /// Its rules, as its file wrote them.
    pub fn rules(&self) -> &UserAgent {
        &self.rules
    }
}

impl Agent for UserKind {
    fn kind(&self) -> AgentKind {
        AgentKind::User(self.id)
    }
    fn name(&self) -> &'static str {
        self.name
    }
    fn tag(&self) -> &'static str {
        self.tag
    }
    fn runs(&self, argv: &[String]) -> bool {
        self.rules.runs(argv)
    }
    /// zellij's pane command, read as a command line.
    fn runs_command(&self, command: &str) -> bool {
        let argv: Vec<String> = command.split_whitespace().map(str::to_owned).collect();
        self.rules.runs(&argv)
    }
    /// The first of its screen rules that matches; a working rule is a sign
    /// of activity. No match: no status.
    fn classify_screen<'a>(&self, rows: &'a [String], title: &str) -> ScreenVerdict<'a> {
        match self.rules.classify(rows, title) {
            Some(hit) => {
                let row = hit.row.map(|i| (i, rows[i].trim()));
                let rule = Rule::User(hit.line as u32);
                ScreenVerdict {
                    answer: hit.answer,
                    ..ScreenVerdict::decided(hit.state, rule, row, hit.state == State::Working)
                }
            }
            None => ScreenVerdict::decided(State::Unknown, Rule::NoStatus, None, false),
        }
    }
    /// A done rule with `answer=N`.
    fn shows_its_answer(&self) -> bool {
        self.rules.screen.iter().any(|rule| rule.answer.is_some())
    }
    /// Its `paste` rule.
    fn paste(&self) -> crate::agent::Paste {
        self.rules.paste
    }
    /// Its `input` pattern's first capture group: blank, empty; text, a
    /// draft; no box on screen, or no group, unknown.
    fn input_box(&self, rows: &[String]) -> InputBox {
        match self.rules.input_text(rows) {
            Some(text) if text.trim().is_empty() => InputBox::Empty,
            Some(text) => InputBox::Draft(text.trim().to_owned()),
            None => InputBox::Unknown,
        }
    }
}

/// Its logs are those its log rules name (a folder under its home, its
/// working directory or the root, and a file-name glob), classified by
/// their line rules; without log rules it keeps none: its home is only
/// where discovery says the process lives, and nothing is watched or bound.
impl AgentLog for UserKind {
    fn home(&self, var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
        Some(PathBuf::from(var("HOME").unwrap_or_else(|| "/".to_owned())))
    }
    fn project_folder(&self, home: &Path, cwd: &Path) -> PathBuf {
        match &self.rules.log {
            Some(log) => log.glob.folder(home, cwd),
            None => cwd.to_path_buf(),
        }
    }
    fn log_folders(&self, home: &Path, cwd: &Path, _now: Millis) -> Vec<PathBuf> {
        match &self.rules.log {
            Some(log) => vec![log.glob.folder(home, cwd)],
            None => Vec::new(),
        }
    }
    fn is_log_name(&self, file_name: &str) -> bool {
        self.rules.log.as_ref().is_some_and(|log| log.glob.names(file_name))
    }
    /// A log of its name in a folder of its folder's name.
    fn owns_log(&self, name: &str, folder: &str, _head: &[u8]) -> bool {
        let glob = self.rules.log.as_ref().map(|log| &log.glob);
        glob.is_some_and(|g| g.names(name) && g.folder_name().is_none_or(|f| f == folder))
    }
    fn log_classifier(&self) -> Box<dyn LogClassifier> {
        match &self.rules.log {
            Some(log) => Box::new(log.classifier(0)),
            None => Box::<LineClassifier<NoLog>>::default(),
        }
    }
    fn classify_log(&self, file: &mut dyn LogFile, _count_lines: bool) -> io::Result<Box<dyn LogClassifier>> {
        match &self.rules.log {
            Some(log) => Ok(Box::new(log.classify_tail(file)?)),
            None => Ok(self.log_classifier()),
        }
    }
}

impl AgentHooks for UserKind {
    fn hook_events(&self, _recent: bool) -> Vec<&'static str> {
        Vec::new()
    }
    fn ends_a_turn(&self, _event: &str) -> bool {
        false
    }
    /// The state its hook rules give the event (authoritative, as any
    /// hook's); an event they do not name says nothing.
    fn hook_verdict(&self, event: &HookEvent, now: Millis, _log: Option<&TranscriptVerdict>) -> Option<Verdict> {
        let name = &event.hook_event_name;
        let rule = self.rules.hooks.iter().find(|h| &h.event == name)?;
        let reason = format!("hook {name} (rule on line {})", rule.line);
        let mut verdict = Verdict::new(rule.state, Source::Hook, reason, now);
        verdict.key = Some(format!("hook {name}@{now}"));
        Some(verdict)
    }
    fn hooks_file(&self, _var: &dyn Fn(&str) -> Option<String>, _project: Option<&Path>) -> Result<PathBuf, String> {
        Err(format!(
            "turnstile installs no hooks for a user-defined agent: have {} run `turnstile hook --agent {} --event <event>`",
            self.name, self.name
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::rules::{Pattern, Region, ScreenRule};
    use super::*;

    fn agent(name: &str, screen: Vec<ScreenRule>) -> UserAgent {
        UserAgent {
            process: Some(Pattern::new(&format!("^{name}$"), 2).unwrap()),
            screen,
            ..UserAgent::bare(name, "xy")
        }
    }

    #[test]
    fn a_name_keeps_its_number_and_a_reload_replaces_its_rules() {
        let rule = |state| ScreenRule {
            state,
            region: Region::Last(1),
            pattern: Pattern::new("^>$", 4).unwrap(),
            answer: None,
        };
        let first = Rules {
            agents: vec![agent("reg-a", vec![rule(State::Done)]), agent("reg-b", Vec::new())],
        };
        load(&first);
        let a = find("reg-a").unwrap();
        assert_eq!(a.name(), "reg-a");
        let rows = vec!["answer".to_owned(), "> ".to_owned()];
        assert_eq!(a.classify_screen(&rows, "").state, State::Done);
        load(&Rules {
            agents: vec![agent("reg-a", vec![rule(State::Waiting)])],
        });
        assert_eq!(find("reg-a"), Some(a), "the same number");
        assert_eq!(a.classify_screen(&rows, "").state, State::Waiting);
        let b = find("reg-b").unwrap();
        assert_eq!(b.tag(), "xy", "gone from the file: known by name still");
    }

    #[test]
    fn an_unknown_name_is_interned_bare_and_a_built_in_name_never() {
        let kind = intern("from-the-watcher").unwrap();
        assert_eq!((kind.name(), kind.tag()), ("from-the-watcher", "fr"));
        assert_eq!(kind.classify_screen(&["> ".to_owned()], "").rule, Rule::NoStatus);
        assert_eq!(intern("claude"), None);
        assert_eq!(intern("two words"), None);
        assert_eq!(intern(&"x".repeat(MAX_NAME_CHARS + 1)), None);
    }
}
