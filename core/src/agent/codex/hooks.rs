//! Codex CLI's hooks (`$CODEX_HOME/hooks.json`, shaped like Claude
//! Code's): a `Stop` fires only for a turn that ended well, with the
//! answer; an interrupt or a failed turn fires none.

use super::home::CodexHome;
use super::CodexCli;
use crate::agent::AgentHooks;
use crate::hook::HookEvent;
use crate::transcript::TranscriptVerdict;
use crate::{Millis, Verdict};
use std::path::{Path, PathBuf};

/// The hook events installed.
pub const EVENTS: &[&str] = &["SessionStart", "UserPromptSubmit", "Stop", "PermissionRequest"];

impl AgentHooks for CodexCli {
    fn hook_events(&self, _recent: bool) -> Vec<&'static str> {
        EVENTS.to_vec()
    }
    /// None: its `Stop` is a done as it stands (a few ms before the
    /// rollout says so).
    fn ends_a_turn(&self, _event: &str) -> bool {
        false
    }
    fn hook_verdict(&self, event: &HookEvent, now: Millis, _log: Option<&TranscriptVerdict>) -> Option<Verdict> {
        event.shared_verdict(now)
    }
    fn hooks_file(&self, var: &dyn Fn(&str) -> Option<String>, project: Option<&Path>) -> Result<PathBuf, String> {
        if project.is_some() {
            return Err("Codex reads hooks from $CODEX_HOME/hooks.json only: drop --project".into());
        }
        let home = CodexHome::from_env(var).ok_or("neither CODEX_HOME nor HOME is set")?;
        Ok(home.hooks_file())
    }
}
