//! Gemini CLI's home (`~/.gemini`): chat logs per project, settings.

use std::path::{Path, PathBuf};

/// Gemini CLI's home folder (`~/.gemini`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeminiHome(PathBuf);

impl GeminiHome {
    /// The home at `root`.
    pub fn at(root: impl Into<PathBuf>) -> GeminiHome {
        GeminiHome(root.into())
    }

    /// The home a process with this environment uses: `$HOME/.gemini`.
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Option<GeminiHome> {
        Some(GeminiHome::at(PathBuf::from(var("HOME")?).join(".gemini")))
    }

    /// The folder itself.
    pub fn root(&self) -> &std::path::Path {
        &self.0
    }

    /// The home of the user running turnstile.
    pub fn of_user() -> Option<GeminiHome> {
        GeminiHome::from_env(|name| std::env::var(name).ok())
    }

    /// The chat logs of the project in `cwd` (`tmp/<folder name>/chats`).
    pub fn chats(&self, cwd: &Path) -> PathBuf {
        let name = cwd
            .file_name()
            .map_or_else(|| "root".into(), |n| n.to_string_lossy().into_owned());
        self.0.join("tmp").join(name).join("chats")
    }

    /// Its settings file (where hooks are installed).
    pub fn settings(&self) -> PathBuf {
        self.0.join("settings.json")
    }
}
