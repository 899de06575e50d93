//! Copilot CLI's hooks (`~/.copilot/hooks/hooks.json`, `{"version": 1,
//! "hooks": {"<event>": [{"type": "command", "bash": …, "timeoutSec": …}]}}`).
//! Its payloads name no event (camelCase `sessionId`, `cwd`; `agentStop` adds
//! `transcriptPath`): each entry runs `turnstile hook --agent copilot --event
//! <event>`. `agentStop` fires only on a done, before the turn's last lines
//! reach the log; `userPromptSubmitted` starts a turn; a `notification` of
//! type `permission_prompt` is a dialog really shown. An Escape fires no
//! hook, a 400 only `errorOccurred` (as each retried 500 does): the log's
//! `abort` and `session.error` lines tell those.

use super::home::CopilotHome;
use super::CopilotCli;
use crate::agent::AgentHooks;
use crate::hook::{record_mark, HookEvent};
use crate::transcript::TranscriptVerdict;
use crate::{Millis, State, Verdict};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The hook events installed.
pub const EVENTS: &[&str] = &["userPromptSubmitted", "notification", "agentStop", "sessionEnd"];

impl AgentHooks for CopilotCli {
    fn hook_events(&self, _recent: bool) -> Vec<&'static str> {
        EVENTS.to_vec()
    }
    fn ends_a_turn(&self, event: &str) -> bool {
        event == "agentStop"
    }
    fn hook_verdict(&self, event: &HookEvent, now: Millis, _log: Option<&TranscriptVerdict>) -> Option<Verdict> {
        let (state, reason) = match event.hook_event_name.as_str() {
            "userPromptSubmitted" => (State::Working, "userPromptSubmitted hook: a turn started"),
            "agentStop" => (State::Done, "agentStop hook: the turn ended"),
            "notification" if event.notification_type.as_deref() == Some("permission_prompt") => {
                (State::Waiting, "notification hook: permission prompt")
            }
            _ => return None,
        };
        Some(event.verdict_of(state, reason.to_owned(), now))
    }
    /// `agentStop` fires on a done only: its record marks the end.
    fn record_verdict(&self, event: &str, at: Millis) -> Option<Verdict> {
        self.ends_a_turn(event).then(|| record_mark(event, at))
    }
    /// A flat entry naming its event on the command line (payloads do not).
    fn hook_entry(&self, command: &str, event: &str) -> Value {
        json!({"type": "command", "bash": format!("{command} --event {event}"), "timeoutSec": 5})
    }
    fn prepare_hooks_file(&self, settings: &mut Value) {
        if let Some(root) = settings.as_object_mut() {
            root.entry("version").or_insert(json!(1));
        }
    }
    /// `~/.copilot/hooks/hooks.json`, or the project's
    /// `.github/hooks/turnstile.json`.
    fn hooks_file(&self, var: &dyn Fn(&str) -> Option<String>, project: Option<&Path>) -> Result<PathBuf, String> {
        if let Some(dir) = project {
            return Ok(dir.join(".github/hooks/turnstile.json"));
        }
        let home = CopilotHome::from_env(var).ok_or("neither COPILOT_HOME nor HOME is set")?;
        Ok(home.hooks())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_hook_payloads_with_their_event_names() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/copilot/");
        let text = std::fs::read_to_string(format!("{dir}1.0.102-perm/hooks.jsonl")).unwrap();
        let mut said = Vec::new();
        for line in text.lines() {
            let record: Value = serde_json::from_str(line).unwrap();
            let name = record["argv"][0].as_str().unwrap();
            let event = HookEvent::parse_named(record["hook"].to_string().as_bytes(), Some(name)).unwrap();
            assert!(event.session_id.is_some(), "{line}");
            if let Some(v) = CopilotCli.hook_verdict(&event, 1, None) {
                said.push((name.to_owned(), v.state));
            }
        }
        let expected = [
            ("userPromptSubmitted", State::Working),
            ("notification", State::Waiting),
            ("agentStop", State::Done),
        ];
        let expected: Vec<(String, State)> = expected.iter().map(|(n, s)| (n.to_string(), *s)).collect();
        assert_eq!(said, expected);
    }
}
