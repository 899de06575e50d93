//! The agents' homes and the paths turnstile reads and writes in them, the
//! one place they are resolved: the Claude home (`$CLAUDE_CONFIG_DIR`, else
//! `~/.claude`, or a simulated agent's own folder: session status files,
//! project folders of transcripts, settings) and the Codex home
//! (`$CODEX_HOME`, else `~/.codex`: rollouts by day, `hooks.json`).

use crate::agent::AgentKind;
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

/// Codex CLI's home folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodexHome(PathBuf);

impl CodexHome {
    /// The home at `root`.
    pub fn at(root: impl Into<PathBuf>) -> CodexHome {
        CodexHome(root.into())
    }

    /// The home a process with this environment uses: `$CODEX_HOME`, else
    /// `$HOME/.codex`.
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Option<CodexHome> {
        match var("CODEX_HOME").filter(|d| !d.is_empty()) {
            Some(dir) => Some(CodexHome::at(dir)),
            None => Some(CodexHome::at(PathBuf::from(var("HOME")?).join(".codex"))),
        }
    }

    /// The home of the user running turnstile.
    pub fn of_user() -> Option<CodexHome> {
        CodexHome::from_env(|name| std::env::var(name).ok())
    }

    /// Where rollouts are kept (`sessions/YYYY/MM/DD/rollout-….jsonl`).
    pub fn sessions(&self) -> PathBuf {
        self.0.join("sessions")
    }

    /// Its hooks file.
    pub fn hooks_file(&self) -> PathBuf {
        self.0.join("hooks.json")
    }

    /// The day folders a rollout started around `now_ms` lands in: Codex
    /// names them by its local date, so the UTC day and both neighbours.
    pub fn day_folders(&self, now_ms: u64) -> Vec<PathBuf> {
        let today = (now_ms / 86_400_000) as i64;
        [today - 1, today, today + 1]
            .into_iter()
            .map(|day| {
                let (y, m, d) = civil_date(day);
                self.sessions()
                    .join(format!("{y:04}"))
                    .join(format!("{m:02}"))
                    .join(format!("{d:02}"))
            })
            .collect()
    }
}

/// The (year, month, day) of a day counted from 1970-01-01 (Howard
/// Hinnant's `civil_from_days`).
fn civil_date(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

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

/// The simulated agents' default home of `kind`, under `tmpdir` (default:
/// the system's temporary folder), never the user's real one.
pub fn demo_home(kind: AgentKind, tmpdir: Option<&Path>) -> PathBuf {
    match kind {
        AgentKind::Claude => ClaudeHome::demo(tmpdir).root().to_path_buf(),
        AgentKind::Codex | AgentKind::Gemini => {
            let tmp = tmpdir.map(Path::to_path_buf).unwrap_or_else(std::env::temp_dir);
            tmp.join("turnstile-demo").join(format!(".{}", kind.name()))
        }
    }
}

/// An agent's home, by kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentHome {
    /// Claude Code's.
    Claude(ClaudeHome),
    /// Codex CLI's.
    Codex(CodexHome),
    /// Gemini CLI's.
    Gemini(GeminiHome),
}

/// Claude Code's project folder name for a working directory.
pub fn project_folder_name(cwd: &Path) -> String {
    cwd.to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_folder_names_replace_every_non_alphanumeric() {
        assert_eq!(
            project_folder_name(Path::new("/home/u/wrk/a/2.1.332-tool/proj")),
            "-home-u-wrk-a-2-1-332-tool-proj"
        );
    }

    #[test]
    fn codex_day_folders_surround_the_utc_day() {
        let home = CodexHome::at("/c");
        // 2026-12-03T17:47Z
        let folders = home.day_folders(1_796_320_050_000);
        assert_eq!(folders[1], Path::new("/c/sessions/2026/12/03"));
        assert_eq!(folders[0], Path::new("/c/sessions/2026/12/02"));
        assert_eq!(folders[2], Path::new("/c/sessions/2026/12/04"));
        assert_eq!(civil_date(0), (1970, 1, 1));
        assert_eq!(civil_date(11_016), (2000, 2, 29));
    }

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
