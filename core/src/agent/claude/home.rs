//! Claude Code's home (`$CLAUDE_CONFIG_DIR`, else `~/.claude`, or a
//! simulated agent's own folder): session status files, the project
//! folders of transcripts, settings.

use std::path::{Path, PathBuf};

/// One Claude home folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaudeHome(PathBuf);

impl ClaudeHome {
    /// The home at `root`.
    pub fn at(root: impl Into<PathBuf>) -> ClaudeHome {
        ClaudeHome(root.into())
    }

    /// The home a process with this environment uses: `$CLAUDE_CONFIG_DIR`,
    /// else `$HOME/.claude`.
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Option<ClaudeHome> {
        match var("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
            Some(dir) => Some(ClaudeHome::at(dir)),
            None => Some(ClaudeHome::at(PathBuf::from(var("HOME")?).join(".claude"))),
        }
    }

    /// The home of the user running turnstile.
    pub fn of_user() -> Option<ClaudeHome> {
        ClaudeHome::from_env(|name| std::env::var(name).ok())
    }

    /// The simulated agents' default home, under `tmpdir` (default: the
    /// system's temporary folder), never the user's real `~/.claude`.
    pub fn demo(tmpdir: Option<&Path>) -> ClaudeHome {
        let tmp = tmpdir.map(Path::to_path_buf).unwrap_or_else(std::env::temp_dir);
        ClaudeHome::at(tmp.join("turnstile-demo").join(".claude"))
    }

    /// The folder itself.
    pub fn root(&self) -> &Path {
        &self.0
    }

    /// Where the live processes' status files are.
    pub fn sessions(&self) -> PathBuf {
        self.0.join("sessions")
    }

    /// The status file of agent process `pid`.
    pub fn status_file(&self, pid: u32) -> PathBuf {
        self.sessions().join(format!("{pid}.json"))
    }

    /// Where the project folders of transcripts are.
    pub fn projects(&self) -> PathBuf {
        self.0.join("projects")
    }

    /// The transcripts' folder of the project in `cwd`.
    pub fn project(&self, cwd: &Path) -> PathBuf {
        self.projects().join(project_folder_name(cwd))
    }

    /// The user's settings file (where hooks are installed).
    pub fn settings(&self) -> PathBuf {
        self.0.join("settings.json")
    }
}

/// Claude Code's project folder name for a working directory.
pub fn project_folder_name(cwd: &Path) -> String {
    crate::agent::naming::dashed(cwd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_dir_wins_over_home() {
        let env = |dir: Option<&'static str>| {
            move |name: &str| match name {
                "CLAUDE_CONFIG_DIR" => dir.map(str::to_owned),
                "HOME" => Some("/home/u".to_owned()),
                _ => None,
            }
        };
        assert_eq!(
            ClaudeHome::from_env(env(Some("/cfg"))).unwrap().root(),
            Path::new("/cfg")
        );
        let home = ClaudeHome::from_env(env(None)).unwrap();
        assert_eq!(home.status_file(7), Path::new("/home/u/.claude/sessions/7.json"));
        assert_eq!(
            home.project(Path::new("/w/a")),
            Path::new("/home/u/.claude/projects/-w-a")
        );
    }
}
