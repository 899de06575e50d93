//! Gemini CLI's hooks (`settings.json` under `~/.gemini`): `AfterAgent`
//! fires on every turn end, also on cancel and error, with no status:
//! the chat log, read when it runs, says which.

use super::home::GeminiHome;
use super::GeminiCli;
use crate::agent::AgentHooks;
use crate::hook::{record_mark, HookEvent};
use crate::transcript::TranscriptVerdict;
use crate::{Millis, Source, State, Verdict};
use std::path::{Path, PathBuf};

/// The hook events installed.
pub const EVENTS: &[&str] = &[
    "SessionStart",
    "BeforeAgent",
    "AfterAgent",
    "Notification",
    "SessionEnd",
];

impl AgentHooks for GeminiCli {
    fn hook_events(&self, _recent: bool) -> Vec<&'static str> {
        EVENTS.to_vec()
    }
    fn ends_a_turn(&self, event: &str) -> bool {
        event == "AfterAgent"
    }
    fn hook_verdict(&self, event: &HookEvent, now: Millis, log: Option<&TranscriptVerdict>) -> Option<Verdict> {
        let (state, reason) = match event.hook_event_name.as_str() {
            name if self.ends_a_turn(name) => return Some(turn_end(now, log)),
            "BeforeAgent" => (State::Working, "BeforeAgent hook: a turn started"),
            "Notification" if event.notification_type.as_deref() == Some("ToolPermission") => {
                (State::Waiting, "Notification hook: tool permission")
            }
            _ => return event.shared_verdict(now),
        };
        Some(event.verdict_of(state, reason.to_owned(), now))
    }
    /// `AfterAgent` fires on every turn end: its record marks the end (the
    /// chat log's answer confirms it; its cancel or error is a turn end
    /// itself).
    fn record_verdict(&self, event: &str, at: Millis) -> Option<Verdict> {
        self.ends_a_turn(event).then(|| record_mark(event, at))
    }
    /// Gemini CLI wants a matcher on every group, and counts its timeouts
    /// in milliseconds (5 would kill the hook at once).
    fn hook_entry(&self, command: &str, _event: &str) -> serde_json::Value {
        serde_json::json!({"matcher": "*", "hooks": [{"type": "command", "command": command, "timeout": 5_000}]})
    }
    /// `~/.gemini/settings.json`, or the project's `.gemini/settings.json`.
    fn hooks_file(&self, var: &dyn Fn(&str) -> Option<String>, project: Option<&Path>) -> Result<PathBuf, String> {
        if let Some(dir) = project {
            return Ok(dir.join(".gemini/settings.json"));
        }
        let home = GeminiHome::from_env(var).ok_or("HOME is not set")?;
        Ok(home.settings())
    }
}

/// `AfterAgent` judged by the chat log: its cancel or error, else the
/// answer it holds is the turn's end. A log not read in time, or whose
/// answer is not written yet, leaves a mark of the end (working with a
/// done candidate): the answer, seen before or after it, confirms it.
fn turn_end(now: Millis, log: Option<&TranscriptVerdict>) -> Verdict {
    let (state, reason) = match log.map(|t| (t.state, t.candidate)) {
        Some((State::Interrupted | State::Failed, _)) => {
            let state = log.map_or(State::Unknown, |t| t.state);
            (state, format!("AfterAgent hook; the chat log says {state}"))
        }
        Some((State::Done, _) | (_, Some(State::Done))) => (State::Done, "AfterAgent hook: the answer is final".into()),
        _ => (
            State::Working,
            "AfterAgent hook; the chat log does not show the answer yet".into(),
        ),
    };
    let mut verdict = Verdict::new(state, Source::Hook, reason, now);
    if state == State::Working {
        verdict.candidate = Some(State::Done);
    }
    verdict.key = Some(format!("AfterAgent@{now}"));
    verdict
}
