//! Claude Code's hooks: the events installed into its `settings.json`, and
//! what each means. A `Stop` is judged by the transcript as it is when the
//! hook runs ([`HookEvent::verdict_given`]).

use super::home::ClaudeHome;
use super::ClaudeCode;
use crate::agent::AgentHooks;
use crate::hook::HookEvent;
use crate::transcript::TranscriptVerdict;
use crate::{Millis, Verdict};
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
        event.verdict_given(now, log)
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
