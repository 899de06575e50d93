//! Qwen Code's home (`~/.qwen`): chat logs per project, a status file per
//! running process, settings.

use std::path::{Path, PathBuf};

/// Qwen Code's home folder (`~/.qwen`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QwenHome(PathBuf);

impl QwenHome {
    /// The home at `root`.
    pub fn at(root: impl Into<PathBuf>) -> QwenHome {
        QwenHome(root.into())
    }

    /// The home a process with this environment uses: `$HOME/.qwen`.
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Option<QwenHome> {
        Some(QwenHome::at(PathBuf::from(var("HOME")?).join(".qwen")))
    }

    /// The folder itself.
    pub fn root(&self) -> &Path {
        &self.0
    }

    /// The chat logs of the project in `cwd`:
    /// `projects/<cwd, every byte but ASCII letters and digits as '-'>/chats`.
    pub fn chats(&self, cwd: &Path) -> PathBuf {
        let key: String = cwd
            .to_string_lossy()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        self.0.join("projects").join(key).join("chats")
    }

    /// The status file of the process `pid` (`sessions/<pid>.json`: its
    /// session id, written at start-up).
    pub fn status_file(&self, pid: u32) -> PathBuf {
        self.0.join("sessions").join(format!("{pid}.json"))
    }

    /// Its settings file (where hooks are installed).
    pub fn settings(&self) -> PathBuf {
        self.0.join("settings.json")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_projects_chats_are_filed_under_its_path_with_dashes() {
        let home = QwenHome::at("/h/.qwen");
        assert_eq!(
            home.chats(Path::new("/tmp/my_proj.x")),
            PathBuf::from("/h/.qwen/projects/-tmp-my-proj-x/chats")
        );
        assert_eq!(home.status_file(7), PathBuf::from("/h/.qwen/sessions/7.json"));
    }
}
