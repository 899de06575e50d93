//! The event-database family: agents that keep every session as rows of
//! one SQLite database's append-only `event` table, draw one TUI (the
//! `▣` end lines, the bouncing footer, `△ Permission required`) and load
//! JavaScript plugins from their config folder. OpenCode is one; its forks
//! (Kilo CLI) are others. Neutral: no kind is named here. A kind of the
//! family is an [`App`] (its names and folders) in its own folder, handed to
//! [`EventDbAgent`], which implements the model's traits for it:
//!
//! - [`screen`]: the TUI's shape;
//! - [`events`]: a session's rows, one JSON line each, as the host's log
//!   store renders them (`turnstile-host`'s `store::eventdb`);
//! - [`hooks`]: the plugin that hands bus events to `turnstile hook`;
//! - [`home`]: the data home, the database, a session's log path.

pub mod events;
pub mod home;
pub mod hooks;
pub mod screen;

use super::{Agent, AgentKind, AgentLog, LogClassifier, LogFile, SharedDatabase};
use crate::screen::{InputBox, ScreenVerdict};
use home::DataHome;
use std::io;
use std::path::{Path, PathBuf};

/// What tells one kind of the family from another: its names and folders.
#[derive(Debug)]
pub struct App {
    /// Its kind in the registry.
    pub kind: AgentKind,
    /// Its name (`--agent`, JSON), also its executable's.
    pub name: &'static str,
    /// Its short tag on the bar.
    pub tag: &'static str,
    /// How people call it, in the plugin's first line.
    pub title: &'static str,
    /// Other names of its executable (a launcher's).
    pub aliases: &'static [&'static str],
    /// The npm package folder whose launcher node may run (`opencode-ai/`).
    pub package: &'static str,
    /// Its folder under the XDG data and config homes (`opencode`).
    pub folder: &'static str,
    /// Its database (`opencode.db`).
    pub database: SharedDatabase,
    /// The project folder it loads plugins from (`.opencode`).
    pub project_folder: &'static str,
}

impl App {
    /// True when `program` (an executable's file name) is this kind's.
    fn is_executable(&self, program: &str) -> bool {
        program == self.name || self.aliases.contains(&program)
    }
}

/// The subcommands of the family's executables that are no TUI.
const NOT_A_TUI: &[&str] = &[
    "serve",
    "run",
    "web",
    "acp",
    "mcp",
    "models",
    "auth",
    "upgrade",
    "uninstall",
    "debug",
    "stats",
    "export",
    "import",
    "session",
    "db",
    "plugin",
    "completion",
    "--version",
    "-v",
    "--help",
    "-h",
];

/// A kind of the family, for the agent model.
pub struct EventDbAgent(pub &'static App);

impl EventDbAgent {
    /// Its names and folders.
    pub fn app(&self) -> &'static App {
        self.0
    }

    /// True when a process's argv runs the TUI: its executable (the
    /// platform package's binary, or the npm wrapper's launcher), or node
    /// running that launcher; not its subcommands that are no TUI.
    pub fn is_tui_argv(&self, argv: &[String]) -> bool {
        let program = |arg: &String| arg.rsplit('/').next().unwrap_or(arg).to_owned();
        let rest = match argv.first().map(program).as_deref() {
            Some(p) if self.0.is_executable(p) => &argv[1..],
            Some("node" | "nodejs" | "bun") => {
                let script = argv.iter().skip(1).position(|a| !a.starts_with('-')).map(|i| i + 1);
                match script {
                    Some(i) if self.0.is_executable(&program(&argv[i])) || argv[i].contains(self.0.package) => {
                        &argv[i + 1..]
                    }
                    _ => return false,
                }
            }
            _ => return false,
        };
        !rest.first().is_some_and(|a| NOT_A_TUI.contains(&a.as_str()))
    }

    fn home_at(&self, root: &Path) -> DataHome {
        DataHome::at(self.0, root)
    }
}

impl Agent for EventDbAgent {
    fn kind(&self) -> AgentKind {
        self.0.kind
    }
    fn name(&self) -> &'static str {
        self.0.name
    }
    fn tag(&self) -> &'static str {
        self.0.tag
    }
    fn runs(&self, argv: &[String]) -> bool {
        self.is_tui_argv(argv)
    }
    fn runs_command(&self, command: &str) -> bool {
        let argv: Vec<String> = command.split_whitespace().map(str::to_owned).collect();
        self.is_tui_argv(&argv)
    }
    fn classify_screen<'a>(&self, rows: &'a [String], title: &str) -> ScreenVerdict<'a> {
        screen::classify(rows, title)
    }
    fn input_box(&self, rows: &[String]) -> InputBox {
        screen::input_box(rows)
    }
}

impl AgentLog for EventDbAgent {
    fn home(&self, var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
        Some(DataHome::from_env(self.0, var)?.root().to_path_buf())
    }
    /// Every session is in one database, filed by its folder: the key of
    /// the project in `cwd` names that folder inside the database.
    fn project_folder(&self, home: &Path, cwd: &Path) -> PathBuf {
        let key: String = cwd
            .to_string_lossy()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        self.home_at(home).database().join("projects").join(key)
    }
    /// The database's folder (its `-wal` file changes with every row).
    fn log_folders(&self, home: &Path, _cwd: &Path, _now: crate::Millis) -> Vec<PathBuf> {
        vec![home.to_path_buf()]
    }
    /// It holds the database every session shares: that names none.
    fn holds_its_log_open(&self) -> bool {
        false
    }
    /// The npm wrapper starts the binary: the innermost process is it.
    fn innermost_process_is_the_agent(&self) -> bool {
        true
    }
    fn log_of_session(&self, home: &Path, session_id: &str) -> Option<PathBuf> {
        let log = self.home_at(home).log(session_id);
        home::session_of_log(self.0, &log).is_some().then_some(log)
    }
    /// A session inside its database, or its rows exported (a fixture).
    fn owns_log(&self, _name: &str, folder: &str, head: &[u8]) -> bool {
        folder == self.0.database.file_name
            || head.starts_with(br#"{"aggregate_id":"ses_"#)
            || head.starts_with(home::SQLITE_HEADER)
    }
    fn positions_are_rows(&self) -> bool {
        true
    }
    fn shared_database(&self) -> Option<&'static SharedDatabase> {
        Some(&self.0.database)
    }
    fn log_classifier(&self) -> Box<dyn LogClassifier> {
        Box::<events::EventsClassifier>::default()
    }
    fn classify_log(&self, mut file: &mut dyn LogFile, _count_lines: bool) -> io::Result<Box<dyn LogClassifier>> {
        Ok(Box::new(events::classify_events_tail(&mut file)?))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A kind of the family as tests name it (not in the registry).
    pub static TEST_APP: App = App {
        kind: AgentKind::Program,
        name: "evdb",
        tag: "ev",
        title: "EvDb",
        aliases: &["evdb-cli"],
        package: "evdb-pkg/",
        folder: "evdb",
        database: SharedDatabase { file_name: "evdb.db" },
        project_folder: ".evdb",
    };

    fn argv(s: &str) -> Vec<String> {
        s.split(' ').map(str::to_owned).collect()
    }

    #[test]
    fn its_tui_but_not_its_servers() {
        let agent = EventDbAgent(&TEST_APP);
        assert!(agent.is_tui_argv(&argv("/c/node_modules/x/bin/evdb")));
        assert!(agent.is_tui_argv(&argv("evdb-cli /work/proj")));
        assert!(agent.is_tui_argv(&argv("node /usr/lib/node_modules/evdb-pkg/bin/launch")));
        assert!(!agent.is_tui_argv(&argv("evdb serve --port 4096")));
        assert!(!agent.is_tui_argv(&argv("evdb run hello")));
        assert!(!agent.is_tui_argv(&argv("node server.js")));
        assert!(!agent.runs_command("vim evdb.json"));
    }

    #[test]
    fn a_sessions_log_is_inside_its_database() {
        let agent = EventDbAgent(&TEST_APP);
        let home = Path::new("/h/.local/share/evdb");
        assert_eq!(
            agent.log_of_session(home, "ses_1"),
            Some(PathBuf::from("/h/.local/share/evdb/evdb.db/ses_1"))
        );
        assert_eq!(agent.log_of_session(home, "../x"), None);
        assert!(agent.owns_log("ses_1", "evdb.db", b""));
        assert!(!agent.owns_log("ses_1", "opencode.db", b"{}"));
    }
}
