//! Codex CLI's home (`$CODEX_HOME`, else `~/.codex`): rollouts by day,
//! `hooks.json`.

use std::path::PathBuf;

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

    /// The folder itself.
    pub fn root(&self) -> &std::path::Path {
        &self.0
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

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
}
