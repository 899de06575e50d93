//! Copilot CLI's home (`$COPILOT_HOME`, else `~/.copilot`): one folder per
//! session under `session-state/` (its `events.jsonl`, and `inuse.<pid>.*`
//! files the running process holds), hooks in `hooks/hooks.json`.

use std::path::{Path, PathBuf};

/// Copilot CLI's home folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopilotHome(PathBuf);

impl CopilotHome {
    /// The home at `root`.
    pub fn at(root: impl Into<PathBuf>) -> CopilotHome {
        CopilotHome(root.into())
    }

    /// The home a process with this environment uses: `$COPILOT_HOME`, else
    /// `$HOME/.copilot`.
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Option<CopilotHome> {
        if let Some(home) = var("COPILOT_HOME").filter(|h| !h.is_empty()) {
            return Some(CopilotHome::at(home));
        }
        Some(CopilotHome::at(PathBuf::from(var("HOME")?).join(".copilot")))
    }

    /// The folder itself.
    pub fn root(&self) -> &Path {
        &self.0
    }

    /// Where its sessions' folders are.
    pub fn sessions(&self) -> PathBuf {
        self.0.join("session-state")
    }

    /// The log of session `id`.
    pub fn events(&self, id: &str) -> PathBuf {
        self.sessions().join(id).join("events.jsonl")
    }

    /// Its hooks file.
    pub fn hooks(&self) -> PathBuf {
        self.0.join("hooks").join("hooks.json")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copilot_home_and_a_sessions_log() {
        let env = |k: &str| (k == "HOME").then(|| "/h".to_owned());
        let home = CopilotHome::from_env(env).unwrap();
        assert_eq!(
            home.events("s1"),
            PathBuf::from("/h/.copilot/session-state/s1/events.jsonl")
        );
        let moved = |k: &str| (k == "COPILOT_HOME").then(|| "/c".to_owned());
        assert_eq!(
            CopilotHome::from_env(moved).unwrap().hooks(),
            PathBuf::from("/c/hooks/hooks.json")
        );
    }
}
