//! A family kind's folders: its data home (`$XDG_DATA_HOME/<folder>`, one
//! SQLite database for every session and project) and its config folder
//! (`$XDG_CONFIG_HOME/<folder>`, where plugins are loaded from).
//!
//! A session's log is named by a path that is not a file: the database's
//! path joined with the session id (`…/opencode/opencode.db/ses_…`), see
//! [`crate::agent::SharedDatabase`]. The host reads it through its log store.

use super::App;
use std::path::{Path, PathBuf};

pub use crate::agent::SQLITE_HEADER;

/// A family kind's data home (`~/.local/share/<folder>`).
#[derive(Debug, Clone)]
pub struct DataHome {
    app: &'static App,
    root: PathBuf,
}

impl DataHome {
    /// The home of `app` at `root`.
    pub fn at(app: &'static App, root: impl Into<PathBuf>) -> DataHome {
        DataHome { app, root: root.into() }
    }

    /// The home a process with this environment uses:
    /// `$XDG_DATA_HOME/<folder>`, else `$HOME/.local/share/<folder>`.
    pub fn from_env(app: &'static App, var: impl Fn(&str) -> Option<String>) -> Option<DataHome> {
        let root = xdg(&var, "XDG_DATA_HOME", ".local/share")?.join(app.folder);
        Some(DataHome::at(app, root))
    }

    /// The folder itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The database of every session.
    pub fn database(&self) -> PathBuf {
        self.root.join(self.app.database.file_name)
    }

    /// The log of session `id`: the database's path joined with the id.
    pub fn log(&self, id: &str) -> PathBuf {
        self.database().join(id)
    }
}

/// The config folder plugins are loaded from: `$XDG_CONFIG_HOME/<folder>`,
/// else `$HOME/.config/<folder>`.
pub fn config_folder(app: &App, var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    Some(xdg(var, "XDG_CONFIG_HOME", ".config")?.join(app.folder))
}

/// An XDG base folder: the variable when absolute, else `$HOME/<fallback>`.
fn xdg(var: &dyn Fn(&str) -> Option<String>, name: &str, fallback: &str) -> Option<PathBuf> {
    match var(name).filter(|v| v.starts_with('/')) {
        Some(dir) => Some(PathBuf::from(dir)),
        None => Some(PathBuf::from(var("HOME")?).join(fallback)),
    }
}

/// The session id a log path of `app` names (`…/<database>/<id>`), if it is one.
pub fn session_of_log<'a>(app: &App, log: &'a Path) -> Option<&'a str> {
    app.database.session_of_log(log)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::eventdb::tests::TEST_APP;

    #[test]
    fn a_sessions_log_is_named_inside_the_database() {
        let env = |name: &str| match name {
            "HOME" => Some("/h".to_owned()),
            "XDG_DATA_HOME" => Some("relative".to_owned()),
            _ => None,
        };
        let home = DataHome::from_env(&TEST_APP, env).unwrap();
        assert_eq!(home.root(), Path::new("/h/.local/share/evdb"));
        let log = home.log("ses_ab12");
        assert_eq!(log, PathBuf::from("/h/.local/share/evdb/evdb.db/ses_ab12"));
        assert_eq!(session_of_log(&TEST_APP, &log), Some("ses_ab12"));
        assert_eq!(session_of_log(&TEST_APP, Path::new("/h/evdb.db/../x")), None);
        assert_eq!(session_of_log(&TEST_APP, Path::new("/h/other.db/ses_ab12")), None);
        assert_eq!(config_folder(&TEST_APP, &env), Some(PathBuf::from("/h/.config/evdb")));
    }
}
