//! GitHub Copilot CLI (`@github/copilot`, a node single-executable): its
//! screen ([`screen`]), its session log classifier ([`events`]), its hooks
//! ([`hooks`]).

pub mod events;
pub mod home;
pub mod hooks;
pub mod screen;

use super::{Agent, AgentKind, AgentLog, LogClassifier, LogFile};
use crate::screen::{InputBox, ScreenVerdict};
use std::io;
use std::path::{Path, PathBuf};

/// True when a process's argv runs Copilot CLI: its executable `copilot`
/// (the platform package's, or a launcher of that name), or node running
/// the `@github/copilot` loader.
pub fn is_copilot_argv(argv: &[String]) -> bool {
    let program = |arg: &String| arg.rsplit('/').next().unwrap_or(arg).to_owned();
    match argv.first().map(program).as_deref() {
        Some("copilot") => true,
        Some("node" | "nodejs") => argv
            .iter()
            .skip(1)
            .find(|a| !a.starts_with('-'))
            .is_some_and(|script| program(script) == "copilot" || script.contains("@github/copilot/")),
        _ => false,
    }
}

/// True when a command line zellij reports for a pane runs Copilot CLI.
pub fn is_copilot_command(command: &str) -> bool {
    let argv: Vec<String> = command.split_whitespace().map(str::to_owned).collect();
    is_copilot_argv(&argv)
}

/// GitHub Copilot CLI, for the agent model.
pub struct CopilotCli;

impl Agent for CopilotCli {
    fn kind(&self) -> AgentKind {
        AgentKind::Copilot
    }
    fn name(&self) -> &'static str {
        "copilot"
    }
    fn tag(&self) -> &'static str {
        "gh"
    }
    fn runs(&self, argv: &[String]) -> bool {
        is_copilot_argv(argv)
    }
    fn runs_command(&self, command: &str) -> bool {
        is_copilot_command(command)
    }
    fn classify_screen<'a>(&self, rows: &'a [String], title: &str) -> ScreenVerdict<'a> {
        screen::classify(rows, title)
    }
    fn input_box(&self, rows: &[String]) -> InputBox {
        screen::input_box(rows)
    }
}

impl AgentLog for CopilotCli {
    fn home(&self, var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
        Some(home::CopilotHome::from_env(var)?.root().to_path_buf())
    }
    /// Its sessions' folder: sessions are not filed by project.
    fn project_folder(&self, home: &Path, _cwd: &Path) -> PathBuf {
        home::CopilotHome::at(home).sessions()
    }
    /// A loader may run it: the innermost process holds its session.
    fn innermost_process_is_the_agent(&self) -> bool {
        true
    }
    /// It holds `session-state/<id>/inuse.<pid>.hold` open from start-up:
    /// that session's `events.jsonl` (written from the first prompt on).
    fn log_held_open(&self, folder: &Path, open_file: &Path) -> Option<PathBuf> {
        let session = open_file.parent()?;
        let name = open_file.file_name()?.to_str()?;
        let hold = name.starts_with("inuse.") && name.ends_with(".hold");
        (hold && session.parent() == Some(folder)).then(|| session.join("events.jsonl"))
    }
    fn log_of_session(&self, home: &Path, session_id: &str) -> Option<PathBuf> {
        let plain = !session_id.is_empty() && session_id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
        plain.then(|| home::CopilotHome::at(home).events(session_id))
    }
    /// `session-state/<id>/events.jsonl`.
    fn owns_log(&self, name: &str, _folder: &str, head: &[u8]) -> bool {
        name == "events.jsonl" || memchr::memmem::find(head, br#""copilotVersion""#).is_some()
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
    fn copilot_processes_and_the_session_it_holds() {
        let argv = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
        assert!(is_copilot_argv(&argv(
            "/c/node_modules/@github/copilot-linux-x64/copilot --allow-tool x"
        )));
        assert!(is_copilot_argv(&argv(
            "node /usr/lib/node_modules/@github/copilot/npm-loader.js"
        )));
        assert!(!is_copilot_argv(&argv("node server.js")));
        assert!(!is_copilot_command("vim copilot.md"));
        let folder = Path::new("/h/.copilot/session-state");
        let held = Path::new("/h/.copilot/session-state/s1/inuse.42.hold");
        assert_eq!(
            CopilotCli.log_held_open(folder, held),
            Some(PathBuf::from("/h/.copilot/session-state/s1/events.jsonl"))
        );
        assert_eq!(
            CopilotCli.log_held_open(folder, Path::new("/h/.copilot/logs/x.log")),
            None
        );
        assert_eq!(CopilotCli.log_of_session(Path::new("/h"), "../x"), None);
    }
}
