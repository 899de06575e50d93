//! Gemini CLI (`@google/gemini-cli`, run by node): its screen and title
//! rules ([`screen`]) and its chat log classifier ([`chat`]).

pub mod chat;
pub mod home;
pub mod hooks;
pub mod screen;

use super::{Agent, AgentKind, AgentLog, LogClassifier, LogFile};
use crate::screen::{InputBox, ScreenVerdict};
use std::io;
use std::path::{Path, PathBuf};

/// True when a process's argv runs Gemini CLI: `node …/gemini.js` (the
/// bundle), `node …/bin/gemini`, or a `gemini` launcher.
pub fn is_gemini_argv(argv: &[String]) -> bool {
    let program = |arg: &String| arg.rsplit('/').next().unwrap_or(arg).to_owned();
    match argv.first().map(program).as_deref() {
        Some("gemini") => true,
        Some("node" | "nodejs") => argv
            .iter()
            .skip(1)
            .find(|a| !a.starts_with('-'))
            .map(program)
            .is_some_and(|p| p == "gemini.js" || p == "gemini"),
        _ => false,
    }
}

/// True when a command line zellij reports for a pane runs Gemini CLI.
pub fn is_gemini_command(command: &str) -> bool {
    let argv: Vec<String> = command.split_whitespace().map(str::to_owned).collect();
    is_gemini_argv(&argv)
}

/// Gemini CLI, for the agent model.
pub struct GeminiCli;

impl Agent for GeminiCli {
    fn kind(&self) -> AgentKind {
        AgentKind::Gemini
    }
    fn name(&self) -> &'static str {
        "gemini"
    }
    fn tag(&self) -> &'static str {
        "gm"
    }
    fn runs(&self, argv: &[String]) -> bool {
        is_gemini_argv(argv)
    }
    fn runs_command(&self, command: &str) -> bool {
        is_gemini_command(command)
    }
    fn classify_screen<'a>(&self, rows: &'a [String], title: &str) -> ScreenVerdict<'a> {
        screen::classify(rows, title)
    }
    fn input_box(&self, rows: &[String]) -> InputBox {
        screen::input_box(rows)
    }
}

impl AgentLog for GeminiCli {
    fn home(&self, var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
        Some(home::GeminiHome::from_env(var)?.root().to_path_buf())
    }
    fn project_folder(&self, home: &Path, cwd: &Path) -> PathBuf {
        home::GeminiHome::at(home).chats(cwd)
    }
    /// `chats/session-….jsonl`, or a header naming the `projectHash`.
    fn owns_log(&self, name: &str, folder: &str, head: &[u8]) -> bool {
        (folder == "chats" && name.starts_with("session-")) || memchr::memmem::find(head, br#""projectHash""#).is_some()
    }
    fn log_classifier(&self) -> Box<dyn LogClassifier> {
        Box::<chat::ChatClassifier>::default()
    }
    fn classify_log(&self, mut file: &mut dyn LogFile, _count_lines: bool) -> io::Result<Box<dyn LogClassifier>> {
        Ok(Box::new(chat::classify_chat(&mut file)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemini_processes() {
        let argv = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
        assert!(is_gemini_argv(&argv(
            "node /c/node_modules/@google/gemini-cli/bundle/gemini.js"
        )));
        assert!(is_gemini_argv(&argv("node --no-warnings=DEP0040 /usr/bin/gemini")));
        assert!(is_gemini_argv(&argv("/usr/local/bin/gemini -m flash")));
        assert!(!is_gemini_argv(&argv("node server.js")));
        assert!(!is_gemini_command("vim gemini.md"));
    }
}
