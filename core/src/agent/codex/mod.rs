//! Codex CLI (`@openai/codex`, a static binary named `codex`): its screen
//! and title rules ([`screen`]) and its rollout classifier ([`rollout`]).

pub mod home;
pub mod hooks;
pub mod rollout;
pub mod screen;

use super::{Agent, AgentKind, AgentLog, LogClassifier, LogFile};
use crate::screen::{InputBox, ScreenVerdict};
use crate::Millis;
use std::io;
use std::path::{Path, PathBuf};

/// True when a process's argv runs Codex CLI: the native binary, or its
/// node launcher (`node …/bin/codex.js`).
///
/// Codex's own helpers (its app-server daemon, which holds the rollouts
/// open, an MCP server) are not agents.
pub fn is_codex_argv(argv: &[String]) -> bool {
    let program = |arg: &String| arg.rsplit('/').next().unwrap_or(arg).to_owned();
    let (codex, rest) = match argv.first().map(program).as_deref() {
        Some("codex") => (true, argv.get(1..)),
        Some("node" | "nodejs") => (
            argv.get(1)
                .map(program)
                .is_some_and(|p| p == "codex.js" || p == "codex"),
            argv.get(2..),
        ),
        _ => (false, None),
    };
    let helper = rest
        .and_then(<[String]>::first)
        .is_some_and(|sub| matches!(sub.as_str(), "app-server" | "mcp-server"));
    codex && !helper
}

/// True when a command line zellij reports for a pane runs Codex CLI.
pub fn is_codex_command(command: &str) -> bool {
    let argv: Vec<String> = command.split_whitespace().map(str::to_owned).collect();
    is_codex_argv(&argv)
}

/// Codex CLI, for the agent model.
pub struct CodexCli;

impl Agent for CodexCli {
    fn kind(&self) -> AgentKind {
        AgentKind::Codex
    }
    fn name(&self) -> &'static str {
        "codex"
    }
    fn tag(&self) -> &'static str {
        "cx"
    }
    fn runs(&self, argv: &[String]) -> bool {
        is_codex_argv(argv)
    }
    fn runs_command(&self, command: &str) -> bool {
        is_codex_command(command)
    }
    fn classify_screen<'a>(&self, rows: &'a [String], title: &str) -> ScreenVerdict<'a> {
        screen::classify(rows, title)
    }
    fn input_box(&self, rows: &[String]) -> InputBox {
        screen::input_box(rows)
    }
}

/// Rollouts are filed by day, and its app-server daemon holds every one
/// open: a rollout's first line (`session_meta`) names the folder it was
/// started in.
impl AgentLog for CodexCli {
    fn home(&self, var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
        Some(home::CodexHome::from_env(var)?.root().to_path_buf())
    }
    /// A key naming the project (`sessions/<project>`, no real folder).
    fn project_folder(&self, home: &Path, cwd: &Path) -> PathBuf {
        home::CodexHome::at(home)
            .sessions()
            .join(crate::agent::naming::dashed(cwd))
    }
    /// The day folders around `now`.
    fn log_folders(&self, home: &Path, _cwd: &Path, now: Millis) -> Vec<PathBuf> {
        home::CodexHome::at(home).day_folders(now)
    }
    fn log_of_project(&self, first_line: &dyn Fn() -> Option<Vec<u8>>, cwd: &Path) -> bool {
        first_line().is_some_and(|line| rollout::started_in(&line).as_deref() == Some(cwd))
    }
    fn holds_its_log_open(&self) -> bool {
        false
    }
    fn watched_folders(&self, home: &Path, _cwd: Option<&Path>, now: Millis) -> Vec<PathBuf> {
        home::CodexHome::at(home).day_folders(now)
    }
    /// `rollout-….jsonl`, or a first line of type `session_meta`.
    fn owns_log(&self, name: &str, _folder: &str, head: &[u8]) -> bool {
        name.starts_with("rollout-") || memchr::memmem::find(head, br#""type":"session_meta""#).is_some()
    }
    fn log_classifier(&self) -> Box<dyn LogClassifier> {
        Box::<rollout::RolloutClassifier>::default()
    }
    fn classify_log(&self, mut file: &mut dyn LogFile, _count_lines: bool) -> io::Result<Box<dyn LogClassifier>> {
        Ok(Box::new(rollout::classify_rollout_tail(&mut file)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_processes() {
        let argv = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
        assert!(is_codex_argv(&argv(
            "/root/.cache/x/vendor/x86_64-unknown-linux-musl/bin/codex"
        )));
        assert!(is_codex_argv(&argv(
            "node /usr/lib/node_modules/@openai/codex/bin/codex.js --yolo"
        )));
        assert!(!is_codex_argv(&argv("vim codex.md")));
        assert!(!is_codex_argv(&argv("/h/bin/codex app-server --listen unix://")));
        assert!(!is_codex_argv(&argv("/h/bin/codex app-server --listen unix://")));
        assert!(is_codex_command("codex resume"));
        assert!(!is_codex_command("claude"));
    }
}
