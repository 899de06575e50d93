//! Hook events, in neutral terms: an agent runs `turnstile hook` with one
//! JSON object on stdin, which becomes a [`HookEvent`] (the event's name,
//! session, log, folder, and the fields some events carry). What an event
//! *means* is its kind's (`AgentHooks::hook_verdict`, in
//! `agent/<kind>/hooks.rs`); [`HookEvent::shared_verdict`] is the meaning
//! of the event names several agents share (Claude Code's, which Codex and
//! Qwen Code adopted). Pure: the caller passes the time.

use crate::verdict::{Millis, Source, State, Verdict};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The fields of a hook payload turnstile uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct HookEvent {
    /// `UserPromptSubmit`, `Stop`, `StopFailure`, `Notification`, …
    pub hook_event_name: String,
    /// The agent's session id.
    #[serde(default, alias = "sessionId")]
    pub session_id: Option<String>,
    /// The session's transcript.
    #[serde(default, alias = "transcriptPath")]
    pub transcript_path: Option<String>,
    /// The agent's working directory.
    #[serde(default)]
    pub cwd: Option<String>,
    /// `Notification`: `permission_prompt`, `idle_prompt`, …
    #[serde(default)]
    pub notification_type: Option<String>,
    /// `Notification`: the message shown.
    #[serde(default)]
    pub message: Option<String>,
    /// `Stop` (recent releases): the turn's final answer.
    #[serde(default)]
    pub last_assistant_message: Option<String>,
    /// Gemini CLI's `AfterAgent`: the turn's answer (also sent on cancel and error).
    #[serde(default)]
    pub prompt_response: Option<String>,
    /// `UserPromptSubmit`: the prompt (Qwen Code sends an empty one when a
    /// turn goes on after a tool round).
    #[serde(default)]
    pub prompt: Option<String>,
    /// `PostToolUseFailure` (Qwen Code): the tool was interrupted.
    #[serde(default)]
    pub is_interrupt: Option<bool>,
    /// The event this pane's agent (same session) fired before this one,
    /// and when: not in the payload, the host fills it in from the pane's
    /// hook record.
    #[serde(skip)]
    pub previous: Option<(String, Millis)>,
    /// `Stop` (recent releases): background tasks still running.
    #[serde(default)]
    pub background_tasks: Option<Vec<Value>>,
    /// `PermissionRequest` / `PreToolUse`: the tool asked about.
    #[serde(default)]
    pub tool_name: Option<String>,
    /// Its input (a question tool's holds what it asks).
    #[serde(default)]
    pub tool_input: Option<Value>,
    /// `SessionStart`: startup / resume / clear / compact.
    #[serde(default)]
    pub source: Option<String>,
    /// When the agent fired the event (ms since the epoch), where it says
    /// (OpenCode's plugin stamps it): events a few ms apart run as hook
    /// processes that may finish in either order.
    #[serde(default)]
    pub event_at: Option<Millis>,
}

impl HookEvent {
    /// The time of the event: when the agent fired it, if it said so and
    /// that is within a minute of `now`, else `now` (the hook's run).
    pub fn time(&self, now: Millis) -> Millis {
        self.event_at.filter(|at| at.abs_diff(now) < 60_000).unwrap_or(now)
    }
}

/// The mark of a turn's end that a pane's hook record of `event` (written
/// at `at`) leaves when the event's own report is lost: working with a done
/// candidate, keyed as the report is (`<event>@<at>`), so the report, once
/// seen, is never replaced by it.
pub fn record_mark(event: &str, at: Millis) -> Verdict {
    let reason = format!("{event} hook ran (its record says so; its report is not in)");
    let mut mark = Verdict::new(State::Working, Source::Hook, reason, at);
    mark.candidate = Some(State::Done);
    mark.key = Some(format!("{event}@{at}"));
    mark
}

impl HookEvent {
    /// Parses a hook payload; a clear message for anything else.
    pub fn parse(bytes: &[u8]) -> Result<HookEvent, crate::Error> {
        HookEvent::parse_named(bytes, None)
    }

    /// Parses a hook payload of the event `name` (for agents whose payloads
    /// do not name their event: Copilot CLI's hook command names it).
    pub fn parse_named(bytes: &[u8], name: Option<&str>) -> Result<HookEvent, crate::Error> {
        let mut payload: Value = serde_json::from_slice(bytes).map_err(crate::Error::unreadable("hook payload"))?;
        if let (Some(name), Some(object)) = (name, payload.as_object_mut()) {
            object.insert("hook_event_name".into(), Value::String(name.to_owned()));
        }
        serde_json::from_value(payload).map_err(crate::Error::unreadable("hook payload"))
    }

    /// True when the agent process is gone (the pane's binding ends).
    pub fn ends_session(&self) -> bool {
        self.hook_event_name == "SessionEnd"
    }

    /// The verdict `state` of this event, observed at `at`, keyed by the
    /// event and its time (a later report of the same event replaces it).
    pub fn verdict_of(&self, state: State, reason: String, at: Millis) -> Verdict {
        let mut verdict = Verdict::new(state, Source::Hook, reason, at);
        verdict.key = Some(format!("{}@{at}", self.hook_event_name));
        verdict
    }

    /// What the event names several agents share mean, observed at `at`:
    /// `UserPromptSubmit`, `Stop`, `StopFailure`, `PermissionRequest`, a
    /// permission `Notification`, `SessionStart` (Claude Code's names, which
    /// Codex and Qwen Code use too); `None` for events that say nothing
    /// about the turn (tool hooks, `SubagentStop`, …) and for other names.
    pub fn shared_verdict(&self, at: Millis) -> Option<Verdict> {
        let (state, reason) = match self.hook_event_name.as_str() {
            "UserPromptSubmit" => (State::Working, "UserPromptSubmit hook: a turn started".to_owned()),
            "Stop" => match self.background_tasks.as_ref().map_or(0, Vec::len) {
                0 => (State::Done, "Stop hook: the turn ended".to_owned()),
                n => (
                    State::Working,
                    format!("Stop hook with {n} background task(s) still running"),
                ),
            },
            "StopFailure" => (
                State::Failed,
                "StopFailure hook: an API error ended the turn".to_owned(),
            ),
            "PermissionRequest" => {
                let tool = self.tool_name.as_deref().unwrap_or_default();
                match crate::question::asks(tool, self.tool_input.as_ref()) {
                    Some(asks) => (State::Waiting, format!("{asks} (PermissionRequest hook)")),
                    None => (State::Waiting, "PermissionRequest hook".to_owned()),
                }
            }
            "Notification" if self.notification_type.as_deref() == Some("permission_prompt") => {
                (State::Waiting, "Notification hook: permission prompt".to_owned())
            }
            "Notification" if self.is_permission_message() => {
                (State::Waiting, "Notification hook: needs permission".to_owned())
            }
            "SessionStart" => (
                State::Idle,
                format!("SessionStart hook ({})", self.source.as_deref().unwrap_or("startup")),
            ),
            _ => return None,
        };
        Some(self.verdict_of(state, reason, at))
    }

    /// Old releases send no `notification_type`; their message names the wait.
    fn is_permission_message(&self) -> bool {
        self.notification_type.is_none() && self.message.as_deref().is_some_and(|m| m.contains("permission"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_events_own_time_orders_it_when_it_is_plausible() {
        let event = |at: Option<Millis>| HookEvent {
            event_at: at,
            ..HookEvent::default()
        };
        assert_eq!(event(Some(99_000)).time(100_000), 99_000);
        assert_eq!(event(None).time(100_000), 100_000);
        assert_eq!(event(Some(1)).time(100_000), 100_000, "a clock far off is not believed");
    }

    const STOP_2_1_332: &str = r#"{"session_id":"c103","transcript_path":"/t.jsonl","cwd":"/p","permission_mode":"bypassPermissions","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"Done: slept 3s.","background_tasks":[],"session_crons":[]}"#;

    fn state_of(json: &str) -> Option<State> {
        HookEvent::parse(json.as_bytes())
            .unwrap()
            .shared_verdict(5)
            .map(|v| v.state)
    }

    #[test]
    fn stop_is_an_authoritative_done_with_the_answer() {
        let e = HookEvent::parse(STOP_2_1_332.as_bytes()).unwrap();
        let v = e.shared_verdict(7).unwrap();
        assert!(v.is_confirmed_done());
        assert_eq!(v.key.as_deref(), Some("Stop@7"));
        assert_eq!(e.last_assistant_message.as_deref(), Some("Done: slept 3s."));
    }

    #[test]
    fn stop_with_background_tasks_is_still_working() {
        let json = STOP_2_1_332.replace(r#""background_tasks":[]"#, r#""background_tasks":[{"id":"a1"}]"#);
        assert_eq!(state_of(&json), Some(State::Working));
    }

    #[test]
    fn events_map_to_states() {
        assert_eq!(
            state_of(r#"{"hook_event_name":"UserPromptSubmit","prompt":"x"}"#),
            Some(State::Working)
        );
        assert_eq!(state_of(r#"{"hook_event_name":"StopFailure"}"#), Some(State::Failed));
        assert_eq!(
            state_of(r#"{"hook_event_name":"PermissionRequest"}"#),
            Some(State::Waiting)
        );
        // Both releases recorded ask through PermissionRequest for a question.
        let asks = HookEvent::parse(
            br#"{"hook_event_name":"PermissionRequest","tool_name":"AskUserQuestion","tool_input":{"questions":[{"question":"Which database?"}]}}"#,
        )
        .unwrap()
        .shared_verdict(1)
        .unwrap();
        assert_eq!(asks.reason, "asks: Which database? (PermissionRequest hook)");
        assert_eq!(
            state_of(r#"{"hook_event_name":"Notification","notification_type":"permission_prompt"}"#),
            Some(State::Waiting)
        );
        assert_eq!(
            state_of(r#"{"hook_event_name":"Notification","message":"Claude needs your permission to use Bash"}"#),
            Some(State::Waiting)
        );
        assert_eq!(
            state_of(r#"{"hook_event_name":"Notification","notification_type":"idle_prompt"}"#),
            None
        );
        assert_eq!(
            state_of(r#"{"hook_event_name":"SubagentStop"}"#),
            None,
            "2.1.39 fires it after Stop"
        );
        assert_eq!(state_of(r#"{"hook_event_name":"PreToolUse","tool_name":"Bash"}"#), None);
        assert_eq!(
            state_of(r#"{"hook_event_name":"SessionStart","source":"clear"}"#),
            Some(State::Idle)
        );
    }

    #[test]
    fn garbage_is_a_clear_error() {
        assert!(HookEvent::parse(b"not json")
            .unwrap_err()
            .to_string()
            .contains("unreadable hook payload"));
        assert!(HookEvent::parse(b"{}").is_err(), "the event name is required");
    }
}
