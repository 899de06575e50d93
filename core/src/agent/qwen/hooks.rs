//! Qwen Code's hooks (`settings.json` under `~/.qwen`), Claude-shaped:
//! `Stop` fires only on a done (with the answer), `StopFailure` on an HTTP
//! 4xx. Traps: `UserPromptSubmit` fires again with an empty prompt when a
//! turn goes on after a tool round, and nothing like `Stop` fires on an
//! Escape: a running tool's `PostToolUseFailure` says `is_interrupt`, and
//! `Notification` `idle_prompt` follows every turn's end, so one that finds
//! the log's turn unfinished (an Escape while text streamed or an HTTP 500
//! was retried) is the Escape.

use super::home::QwenHome;
use super::QwenCode;
use crate::agent::AgentHooks;
use crate::hook::{record_mark, HookEvent};
use crate::transcript::TranscriptVerdict;
use crate::{Millis, Source, State, Verdict};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The hook events installed.
pub const EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PermissionRequest",
    "PostToolUseFailure",
    "Notification",
    "Stop",
    "StopFailure",
    "SessionEnd",
];

impl AgentHooks for QwenCode {
    fn hook_events(&self, _recent: bool) -> Vec<&'static str> {
        EVENTS.to_vec()
    }
    /// `Stop` (its answer) and `Notification` (an `idle_prompt` is judged
    /// by the log).
    fn ends_a_turn(&self, event: &str) -> bool {
        matches!(event, "Stop" | "Notification")
    }
    fn hook_verdict(&self, event: &HookEvent, now: Millis, log: Option<&TranscriptVerdict>) -> Option<Verdict> {
        let (state, reason) = match event.hook_event_name.as_str() {
            "UserPromptSubmit" if event.prompt.as_deref() == Some("") => (
                State::Working,
                "UserPromptSubmit hook with an empty prompt: the turn goes on after a tool round",
            ),
            "Stop" => (State::Done, "Stop hook: the turn ended"),
            "PostToolUseFailure" if event.is_interrupt == Some(true) => (
                State::Interrupted,
                "PostToolUseFailure hook: the tool was interrupted (Escape)",
            ),
            "PostToolUseFailure" => return None,
            "Notification" if event.notification_type.as_deref() == Some("idle_prompt") => {
                return idle_prompt(event, now, log);
            }
            _ => return event.shared_verdict(now),
        };
        Some(event.verdict_of(state, reason.to_owned(), now))
    }
    /// `Stop` fires on a done only: its record marks the end.
    fn record_verdict(&self, event: &str, at: Millis) -> Option<Verdict> {
        (event == "Stop").then(|| record_mark(event, at))
    }
    /// Every group has a matcher; timeouts are in seconds.
    fn hook_entry(&self, command: &str, _event: &str) -> Value {
        json!({"matcher": "*", "hooks": [{"type": "command", "command": command, "timeout": 5}]})
    }
    /// `~/.qwen/settings.json`, or the project's `.qwen/settings.json`.
    fn hooks_file(&self, var: &dyn Fn(&str) -> Option<String>, project: Option<&Path>) -> Result<PathBuf, String> {
        if let Some(dir) = project {
            return Ok(dir.join(".qwen/settings.json"));
        }
        let home = QwenHome::from_env(var).ok_or("HOME is not set")?;
        Ok(home.settings())
    }
}

/// `idle_prompt` follows every turn's end. After `Stop` it marks that end
/// again (a report lost on its way is made good; one already seen stays:
/// the mark carries its key); after `StopFailure` it adds nothing. After
/// anything else, over a log whose turn never ended (the answer, written
/// before `Stop`, would be there), it is an Escape: Qwen Code fires
/// nothing else for one.
fn idle_prompt(event: &HookEvent, now: Millis, log: Option<&TranscriptVerdict>) -> Option<Verdict> {
    match event.previous.as_ref() {
        Some((name, at)) if name == "Stop" => QwenCode.record_verdict(name, *at),
        Some((name, _)) if name == "StopFailure" => None,
        _ => {
            let unfinished = log.is_some_and(|l| l.state == State::Working && l.candidate.is_none());
            unfinished.then(|| {
                let reason = "idle_prompt hook while the log's turn never ended: cancelled (Escape)";
                let mut verdict = Verdict::new(State::Interrupted, Source::Hook, reason.to_owned(), now);
                verdict.key = Some(format!("idle_prompt@{now}"));
                verdict
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(json: &str) -> HookEvent {
        HookEvent::parse(json.as_bytes()).unwrap()
    }

    fn log(state: State, candidate: Option<State>) -> TranscriptVerdict {
        TranscriptVerdict {
            state,
            candidate,
            ..TranscriptVerdict::default()
        }
    }

    #[test]
    fn real_hook_payloads_say_what_the_turn_did() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/qwen/");
        let text = std::fs::read_to_string(format!("{dir}0.24.4-tool/hooks.jsonl")).unwrap();
        let states: Vec<(String, Option<State>)> = text
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["hook"].clone())
            .map(|h| serde_json::from_value::<HookEvent>(h).unwrap())
            .map(|e| {
                let v = QwenCode.hook_verdict(&e, 1, Some(&log(State::Working, Some(State::Done))));
                (e.hook_event_name, v.map(|v| v.state))
            })
            .collect();
        let expected = [
            ("SessionStart", Some(State::Idle)),
            ("UserPromptSubmit", Some(State::Working)),
            ("PreToolUse", None),
            ("PostToolUse", None),
            ("UserPromptSubmit", Some(State::Working)),
            ("Stop", Some(State::Done)),
            ("Notification", None),
            ("SessionEnd", None),
        ];
        let expected: Vec<(String, Option<State>)> = expected.iter().map(|(n, s)| (n.to_string(), *s)).collect();
        assert_eq!(states, expected);
    }

    #[test]
    fn idle_prompt_over_an_unfinished_turn_is_the_escape_nothing_else_fires() {
        let mut idle = event(r#"{"hook_event_name":"Notification","notification_type":"idle_prompt"}"#);
        let verdict = |idle: &HookEvent, l| QwenCode.hook_verdict(idle, 5, Some(&l)).map(|v| (v.state, v.key));
        let interrupted = Some((State::Interrupted, Some("idle_prompt@5".to_owned())));
        assert_eq!(verdict(&idle, log(State::Working, None)), interrupted);
        assert_eq!(verdict(&idle, log(State::Working, Some(State::Done))), None);
        assert_eq!(verdict(&idle, log(State::Failed, None)), None);
        // Seen live: Stop fired before the answer reached the log.
        idle.previous = Some(("Stop".into(), 3));
        let mark = Some((State::Working, Some("Stop@3".to_owned())));
        assert_eq!(verdict(&idle, log(State::Working, None)), mark, "the end marked again");
        idle.previous = Some(("StopFailure".into(), 3));
        assert_eq!(verdict(&idle, log(State::Working, None)), None);
        idle.previous = Some(("UserPromptSubmit".into(), 3));
        assert_eq!(
            verdict(&idle, log(State::Working, None)),
            interrupted,
            "Escape while it streamed"
        );
        let interrupt = event(r#"{"hook_event_name":"PostToolUseFailure","is_interrupt":true}"#);
        assert_eq!(
            QwenCode.hook_verdict(&interrupt, 5, None).map(|v| v.state),
            Some(State::Interrupted)
        );
        assert!(QwenCode
            .record_verdict("Stop", 9)
            .is_some_and(|m| m.candidate == Some(State::Done)));
        assert!(QwenCode.record_verdict("Notification", 9).is_none());
    }
}
