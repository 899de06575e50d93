//! Claude Code's hooks: the events installed into its `settings.json`, and
//! what each means. A `Stop` is judged by the transcript as it is when the
//! hook runs (`verdict_given`); the other events mean what the shared
//! names mean ([`HookEvent::shared_verdict`]).

use super::home::ClaudeHome;
use super::ClaudeCode;
use crate::agent::AgentHooks;
use crate::hook::HookEvent;
use crate::transcript::TranscriptVerdict;
use crate::{Millis, State, Verdict};
use std::path::{Path, PathBuf};

/// The hook events installed by default. Every release we know accepts
/// them; an unknown key makes Claude Code reject the whole settings file
/// (2.1.39 does so for `StopFailure`).
pub const EVENTS: &[&str] = &[
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "Notification",
    "PermissionRequest",
];

/// Events only recent releases know; installed on request.
pub const RECENT_EVENTS: &[&str] = &["StopFailure"];

impl AgentHooks for ClaudeCode {
    fn hook_events(&self, recent: bool) -> Vec<&'static str> {
        let recent = if recent { RECENT_EVENTS } else { &[] };
        EVENTS.iter().chain(recent).copied().collect()
    }
    fn ends_a_turn(&self, event: &str) -> bool {
        event == "Stop"
    }
    fn hook_verdict(&self, event: &HookEvent, now: Millis, log: Option<&TranscriptVerdict>) -> Option<Verdict> {
        verdict_given(event, now, log)
    }
    /// `$CLAUDE_CONFIG_DIR/settings.json` (else `~/.claude/`), or the
    /// project's `.claude/settings.json`.
    fn hooks_file(&self, var: &dyn Fn(&str) -> Option<String>, project: Option<&Path>) -> Result<PathBuf, String> {
        if let Some(dir) = project {
            return Ok(dir.join(".claude/settings.json"));
        }
        let home = ClaudeHome::from_env(var).ok_or("neither CLAUDE_CONFIG_DIR nor HOME is set")?;
        Ok(home.settings())
    }
}

/// The verdict, checked against the transcript as read when the hook ran.
///
/// A `Stop` stays working while the transcript shows background agents
/// that have not reported back. Old releases (no `background_tasks` in
/// the payload) fire `Stop` also after launching a background agent and
/// may not have flushed the transcript yet: their `Stop` is a done only
/// when the transcript already shows the answer; otherwise the
/// transcript's own end markers confirm it a moment later.
fn verdict_given(event: &HookEvent, at: Millis, transcript: Option<&TranscriptVerdict>) -> Option<Verdict> {
    let mut verdict = event.shared_verdict(at)?;
    if event.hook_event_name != "Stop" {
        return Some(verdict);
    }
    let agents = transcript.map_or(0, |t| t.background_agents);
    let shows_answer = transcript.is_some_and(|t| t.state == State::Done || t.candidate == Some(State::Done));
    if agents > 0 {
        verdict.state = State::Working;
        verdict.reason = format!("Stop hook, but {agents} background agent(s) still run");
    } else if event.background_tasks.is_none() && !shows_answer {
        // The turn ended as far as Claude Code knows; the answer is still
        // on its way to the transcript (2.1.39 flushes late). The
        // candidate marks it: the answer confirms the end when it lands.
        verdict.state = State::Working;
        verdict.candidate = Some(State::Done);
        verdict.reason = "Stop hook of an old release; the transcript does not show the answer yet".into();
    }
    Some(verdict)
}

#[cfg(test)]
mod tests {
    use super::*;

    const STOP_2_1_332: &str = r#"{"session_id":"c103","transcript_path":"/t.jsonl","cwd":"/p","permission_mode":"bypassPermissions","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"Done: slept 3s.","background_tasks":[],"session_crons":[]}"#;

    fn transcript(state: State, candidate: Option<State>, background_agents: usize) -> TranscriptVerdict {
        TranscriptVerdict {
            state,
            candidate,
            background_agents,
            ..TranscriptVerdict::default()
        }
    }

    #[test]
    fn old_release_stop_is_done_only_when_the_transcript_shows_the_answer() {
        let old = HookEvent::parse(br#"{"hook_event_name":"Stop","stop_hook_active":false}"#).unwrap();
        let state = |t: Option<&TranscriptVerdict>| verdict_given(&old, 9, t).map(|v| v.state);
        let candidate = transcript(State::Working, Some(State::Done), 0);
        assert_eq!(state(Some(&candidate)), Some(State::Done));
        assert_eq!(state(None), Some(State::Working), "transcript not written yet");
        let preamble = transcript(State::Working, None, 0);
        assert_eq!(
            state(Some(&preamble)),
            Some(State::Working),
            "transcript not flushed yet"
        );
        let launched = transcript(State::Working, None, 1);
        assert_eq!(state(Some(&launched)), Some(State::Working), "a background agent runs");
    }

    #[test]
    fn recent_release_stop_trusts_its_background_tasks() {
        let e = HookEvent::parse(STOP_2_1_332.as_bytes()).unwrap();
        assert_eq!(verdict_given(&e, 9, None).map(|v| v.state), Some(State::Done));
        let launched = transcript(State::Working, None, 1);
        assert_eq!(
            verdict_given(&e, 9, Some(&launched)).map(|v| v.state),
            Some(State::Working),
            "the transcript still counts a launched agent"
        );
    }
}
