//! OpenCode (`opencode`, a Bun single-file binary): its screen ([`screen`]),
//! its session log ([`events`]: rows of its SQLite database, read by the
//! host through its log store, `turnstile-host`'s `store::opencode`), its
//! plugin ([`hooks`]).

pub mod events;
pub mod home;
pub mod hooks;
pub mod screen;
use super::{Agent, AgentKind, AgentLog, LogClassifier, LogFile};
use crate::screen::{InputBox, ScreenVerdict};
use home::OpenCodeHome;
use std::io;
use std::path::{Path, PathBuf};

/// True when a process's argv runs OpenCode: its executable `opencode`
/// (the platform package's binary, or the npm wrapper's launcher), or node
/// running that launcher; not its subcommands that are no TUI (`serve`,
/// `run`, `--version`).
pub fn is_opencode_argv(argv: &[String]) -> bool {
    let program = |arg: &String| arg.rsplit('/').next().unwrap_or(arg).to_owned();
    let (launcher, rest) = match argv.first().map(program).as_deref() {
        Some("opencode") => (true, &argv[1..]),
        Some("node" | "nodejs" | "bun") => {
            let script = argv.iter().skip(1).position(|a| !a.starts_with('-'));
            match script.map(|i| i + 1) {
                Some(i) if program(&argv[i]) == "opencode" || argv[i].contains("opencode-ai/") => {
                    (true, &argv[i + 1..])
                }
                _ => (false, &argv[..0]),
            }
        }
        _ => (false, &argv[..0]),
    };
    let not_a_tui = [
        "serve",
        "run",
        "web",
        "acp",
        "mcp",
        "models",
        "auth",
        "upgrade",
        "--version",
        "-v",
        "--help",
        "-h",
    ];
    launcher && !rest.first().is_some_and(|a| not_a_tui.contains(&a.as_str()))
}

/// True when a command line zellij reports for a pane runs OpenCode.
pub fn is_opencode_command(command: &str) -> bool {
    let argv: Vec<String> = command.split_whitespace().map(str::to_owned).collect();
    is_opencode_argv(&argv)
}

/// OpenCode, for the agent model.
pub struct OpenCode;

impl Agent for OpenCode {
    fn kind(&self) -> AgentKind {
        AgentKind::OpenCode
    }
    fn name(&self) -> &'static str {
        "opencode"
    }
    fn tag(&self) -> &'static str {
        "oc"
    }
    fn runs(&self, argv: &[String]) -> bool {
        is_opencode_argv(argv)
    }
    fn runs_command(&self, command: &str) -> bool {
        is_opencode_command(command)
    }
    fn classify_screen<'a>(&self, rows: &'a [String], title: &str) -> ScreenVerdict<'a> {
        screen::classify(rows, title)
    }
    fn input_box(&self, rows: &[String]) -> InputBox {
        screen::input_box(rows)
    }
}

impl AgentLog for OpenCode {
    fn home(&self, var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
        Some(OpenCodeHome::from_env(var)?.root().to_path_buf())
    }
    /// Every session is in one database, filed by its folder: the key of
    /// the project in `cwd` names that folder inside the database.
    fn project_folder(&self, home: &Path, cwd: &Path) -> PathBuf {
        let key: String = cwd
            .to_string_lossy()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        OpenCodeHome::at(home).database().join("projects").join(key)
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
        let log = OpenCodeHome::at(home).log(session_id);
        home::session_of_log(&log).is_some().then_some(log)
    }
    /// A session inside `opencode.db`, or its rows exported (a fixture).
    fn owns_log(&self, _name: &str, folder: &str, head: &[u8]) -> bool {
        folder == home::DATABASE
            || head.starts_with(br#"{"aggregate_id":"ses_"#)
            || head.starts_with(home::SQLITE_HEADER)
    }
    fn positions_are_rows(&self) -> bool {
        true
    }
    fn log_classifier(&self) -> Box<dyn LogClassifier> {
        Box::<events::EventsClassifier>::default()
    }
    fn classify_log(&self, mut file: &mut dyn LogFile, _count_lines: bool) -> io::Result<Box<dyn LogClassifier>> {
        Ok(Box::new(events::classify_events_tail(&mut file)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opencode_processes_but_not_its_servers() {
        let argv = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
        assert!(is_opencode_argv(&argv(
            "/c/node_modules/opencode-linux-x64/bin/opencode"
        )));
        assert!(is_opencode_argv(&argv("opencode /work/proj")));
        assert!(is_opencode_argv(&argv(
            "node /usr/lib/node_modules/opencode-ai/bin/opencode"
        )));
        assert!(!is_opencode_argv(&argv("opencode serve --port 4096")));
        assert!(!is_opencode_argv(&argv("opencode run hello")));
        assert!(!is_opencode_argv(&argv("node server.js")));
        assert!(!is_opencode_command("vim opencode.json"));
        let home = Path::new("/h/.local/share/opencode");
        assert_eq!(
            OpenCode.log_of_session(home, "ses_1"),
            Some(PathBuf::from("/h/.local/share/opencode/opencode.db/ses_1"))
        );
        assert_eq!(OpenCode.log_of_session(home, "../x"), None);
        assert!(OpenCode.owns_log("ses_1", "opencode.db", b""));
    }
}
