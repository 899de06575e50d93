//! OpenCode's folders: its data home (`$XDG_DATA_HOME/opencode`, one SQLite
//! database for every session and project) and its config folder
//! (`$XDG_CONFIG_HOME/opencode`, where plugins are loaded from).
//!
//! A session's log is named by a path that is not a file: the database's
//! path joined with the session id (`…/opencode/opencode.db/ses_…`). The
//! host reads it through the kind's log store.

use std::path::{Path, PathBuf};

/// The database's file name.
pub const DATABASE: &str = "opencode.db";

/// OpenCode's data home (`~/.local/share/opencode`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenCodeHome(PathBuf);

impl OpenCodeHome {
    /// The home at `root`.
    pub fn at(root: impl Into<PathBuf>) -> OpenCodeHome {
        OpenCodeHome(root.into())
    }

    /// The home a process with this environment uses:
    /// `$XDG_DATA_HOME/opencode`, else `$HOME/.local/share/opencode`.
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Option<OpenCodeHome> {
        Some(OpenCodeHome::at(
            xdg(&var, "XDG_DATA_HOME", ".local/share")?.join("opencode"),
        ))
    }

    /// The folder itself.
    pub fn root(&self) -> &Path {
        &self.0
    }

    /// The database of every session.
    pub fn database(&self) -> PathBuf {
        self.0.join(DATABASE)
    }

    /// The log of session `id`: the database's path joined with the id.
    pub fn log(&self, id: &str) -> PathBuf {
        self.database().join(id)
    }
}

/// The config folder plugins are loaded from: `$XDG_CONFIG_HOME/opencode`,
/// else `$HOME/.config/opencode`.
pub fn config_folder(var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    Some(xdg(var, "XDG_CONFIG_HOME", ".config")?.join("opencode"))
}

/// An XDG base folder: the variable when absolute, else `$HOME/<fallback>`.
fn xdg(var: &dyn Fn(&str) -> Option<String>, name: &str, fallback: &str) -> Option<PathBuf> {
    match var(name).filter(|v| v.starts_with('/')) {
        Some(dir) => Some(PathBuf::from(dir)),
        None => Some(PathBuf::from(var("HOME")?).join(fallback)),
    }
}

/// The first bytes of every SQLite database (OpenCode's is one).
pub const SQLITE_HEADER: &[u8] = b"SQLite format 3\0";

/// The session id a log path names (`…/opencode.db/<id>`), if it is one.
pub fn session_of_log(log: &Path) -> Option<&str> {
    let database = log.parent()?;
    let id = log.file_name()?.to_str()?;
    let plain = id.starts_with("ses_") && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    (database.file_name()? == DATABASE && plain).then_some(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sessions_log_is_named_inside_the_database() {
        let env = |name: &str| match name {
            "HOME" => Some("/h".to_owned()),
            "XDG_DATA_HOME" => Some("relative".to_owned()),
            _ => None,
        };
        let home = OpenCodeHome::from_env(env).unwrap();
        assert_eq!(home.root(), Path::new("/h/.local/share/opencode"));
        let log = home.log("ses_ab12");
        assert_eq!(log, PathBuf::from("/h/.local/share/opencode/opencode.db/ses_ab12"));
        assert_eq!(session_of_log(&log), Some("ses_ab12"));
        assert_eq!(session_of_log(Path::new("/h/opencode.db/../x")), None);
        assert_eq!(session_of_log(Path::new("/h/other.db/ses_ab12")), None);
        assert_eq!(config_folder(&env), Some(PathBuf::from("/h/.config/opencode")));
    }
}
