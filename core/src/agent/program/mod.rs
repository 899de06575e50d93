//! Any program that reports its own state (`turnstile report working`,
//! `turnstile report done --answer-file out.md`): a build script, a test
//! run, an agent with hooks of its own. It has no screen rules, no log and
//! nothing to install: its reports are its only source, authoritative as a
//! hook's. Its pane may send answers along a flow, never receive them (a
//! shell would run a pasted answer).

use super::{Agent, AgentHooks, AgentKind, AgentLog, LogClassifier, LogFile};
use crate::hook::HookEvent;
use crate::screen::{InputBox, Rule, ScreenVerdict};
use crate::transcript::lines::{LineClassifier, NoLog};
use crate::transcript::TranscriptVerdict;
use crate::{Millis, Source, State, Verdict};
use std::io;
use std::path::{Path, PathBuf};

/// A program reporting itself, for the agent model.
pub struct Program;

impl Agent for Program {
    fn kind(&self) -> AgentKind {
        AgentKind::Program
    }
    fn name(&self) -> &'static str {
        "program"
    }
    fn tag(&self) -> &'static str {
        "pr"
    }
    /// Never recognised by its process: its first report makes it known.
    fn runs(&self, _argv: &[String]) -> bool {
        false
    }
    fn runs_command(&self, _command: &str) -> bool {
        false
    }
    /// Its screen says nothing turnstile could read.
    fn classify_screen<'a>(&self, _rows: &'a [String], _title: &str) -> ScreenVerdict<'a> {
        ScreenVerdict::decided(State::Unknown, Rule::NoStatus, None, false)
    }
    fn input_box(&self, _rows: &[String]) -> InputBox {
        InputBox::Unknown
    }
    fn takes_prompts(&self) -> bool {
        false
    }
}

impl AgentLog for Program {
    fn home(&self, _var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
        None
    }
    fn project_folder(&self, _home: &Path, cwd: &Path) -> PathBuf {
        cwd.to_path_buf()
    }
    fn owns_log(&self, _name: &str, _folder: &str, _head: &[u8]) -> bool {
        false
    }
    fn log_classifier(&self) -> Box<dyn LogClassifier> {
        Box::<LineClassifier<NoLog>>::default()
    }
    fn classify_log(&self, _file: &mut dyn LogFile, _count_lines: bool) -> io::Result<Box<dyn LogClassifier>> {
        Ok(self.log_classifier())
    }
}

/// The message a report's reason carries (`reported waiting: approve
/// deploy?` → `approve deploy?`), for the bar.
pub fn reported_message(reason: &str) -> Option<&str> {
    reason
        .strip_prefix("reported ")?
        .split_once(": ")
        .map(|(_, message)| message)
}

impl AgentHooks for Program {
    fn hook_events(&self, _recent: bool) -> Vec<&'static str> {
        Vec::new()
    }
    fn ends_a_turn(&self, _event: &str) -> bool {
        false
    }
    /// A report's event is its state's name; its message the reason.
    fn hook_verdict(&self, event: &HookEvent, now: Millis, _log: Option<&TranscriptVerdict>) -> Option<Verdict> {
        let state = State::from_word(&event.hook_event_name)?;
        let reason = match event.message.as_deref().map(str::trim).filter(|m| !m.is_empty()) {
            Some(message) => format!("reported {}: {message}", event.hook_event_name),
            None => format!("reported {}", event.hook_event_name),
        };
        let mut verdict = Verdict::new(state, Source::Hook, reason, now);
        verdict.key = Some(format!("report@{now}"));
        Some(verdict)
    }
    fn hooks_file(&self, _var: &dyn Fn(&str) -> Option<String>, _project: Option<&Path>) -> Result<PathBuf, String> {
        Err("a program reports its state itself with `turnstile report`: there is nothing to install".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turnstiles_state_names_and_the_program_status_protocols() {
        let names = [
            "idle",
            "working",
            "done",
            "blocked",
            "error",
            "waiting",
            "failed",
            "interrupted",
        ];
        let states: Vec<Option<State>> = names.iter().map(|n| State::from_word(n)).collect();
        use State::*;
        let expected = [Idle, Working, Done, Waiting, Failed, Waiting, Failed, Interrupted];
        assert_eq!(states, expected.map(Some));
        assert_eq!(State::from_word("clear"), None);
        assert_eq!(State::from_word("DONE"), Some(Done));
    }

    #[test]
    fn a_report_is_an_authoritative_verdict_with_its_message() {
        let payload = br#"{"message": "approve deploy?"}"#;
        let event = HookEvent::parse_named(payload, Some("blocked")).unwrap();
        let v = Program.hook_verdict(&event, 5, None).unwrap();
        assert_eq!((v.state, v.source), (State::Waiting, Source::Hook));
        assert_eq!(v.reason, "reported blocked: approve deploy?");
        assert!(!Program.takes_prompts());
    }
}
