//! Claude Code (`@anthropic-ai/claude-code`: the native `claude` binary,
//! or `cli.js` run by node): how its process and its pane's command are
//! recognised, its screen rules ([`screen`]), its transcript classifier
//! ([`transcript`]) and its session status file (`agent::status`).

pub mod home;
pub mod hooks;
pub mod screen;
pub mod transcript;

use super::{Agent, AgentKind, AgentLog, LogClassifier, LogFile};
use crate::screen::{InputBox, ScreenVerdict};
use crate::transcript::TranscriptVerdict;
use crate::Millis;
use std::io;
use std::path::{Path, PathBuf};

/// Command names that run Claude Code.
const COMMANDS: &[&str] = &["claude", "claude-code"];

/// True when a pane's running command (as zellij reports it) is Claude Code.
pub fn is_claude_command(command: &str) -> bool {
    command.split_whitespace().take(2).any(|word| {
        let name = word.rsplit('/').next().unwrap_or(word);
        COMMANDS.contains(&name) || word.contains("claude-code/cli")
    })
}

/// True when a process's argv runs Claude Code (native or `cli.js`).
pub fn is_claude_argv(argv: &[String]) -> bool {
    !argv.is_empty() && is_claude_command(&argv.iter().take(3).cloned().collect::<Vec<_>>().join(" "))
}

/// Claude Code, for the agent model.
pub struct ClaudeCode;

impl Agent for ClaudeCode {
    fn kind(&self) -> AgentKind {
        AgentKind::Claude
    }
    fn name(&self) -> &'static str {
        "claude"
    }
    fn tag(&self) -> &'static str {
        "cc"
    }
    fn runs(&self, argv: &[String]) -> bool {
        is_claude_argv(argv)
    }
    fn runs_command(&self, command: &str) -> bool {
        is_claude_command(command)
    }
    fn classify_screen<'a>(&self, rows: &'a [String], _title: &str) -> ScreenVerdict<'a> {
        screen::classify(rows)
    }
    fn input_box(&self, rows: &[String]) -> InputBox {
        screen::input_box(rows)
    }
    /// 2.1.39 shows one once a turn is done.
    fn suggests_in_its_box(&self) -> bool {
        true
    }
}

impl AgentLog for ClaudeCode {
    fn home(&self, var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
        Some(home::ClaudeHome::from_env(var)?.root().to_path_buf())
    }
    fn status_file(&self, home: &Path, pid: u32) -> Option<PathBuf> {
        Some(home::ClaudeHome::at(home).status_file(pid))
    }
    fn read_status(&self, bytes: &[u8]) -> Option<super::SessionStatus> {
        super::status::parse(bytes).ok()
    }
    fn project_folder(&self, home: &Path, cwd: &Path) -> PathBuf {
        home::ClaudeHome::at(home).project(cwd)
    }
    /// The status files, the projects, and its project's folder.
    fn watched_folders(&self, home: &Path, cwd: Option<&Path>, _now: Millis) -> Vec<PathBuf> {
        let home = home::ClaudeHome::at(home);
        let mut dirs = vec![home.sessions(), home.projects()];
        dirs.extend(cwd.map(|cwd| home.project(cwd)));
        dirs
    }
    /// The default kind: it claims no log by its looks.
    fn owns_log(&self, _name: &str, _folder: &str, _head: &[u8]) -> bool {
        false
    }
    fn log_classifier(&self) -> Box<dyn LogClassifier> {
        Box::<transcript::Classifier>::default()
    }
    fn classify_log(&self, mut file: &mut dyn LogFile, count_lines: bool) -> io::Result<Box<dyn LogClassifier>> {
        let options = transcript::TailOptions {
            count_lines,
            ..transcript::TailOptions::default()
        };
        Ok(Box::new(transcript::classify_tail(&mut file, options)?.classifier))
    }
}

impl LogClassifier for transcript::Classifier {
    fn feed(&mut self, bytes: &[u8]) {
        transcript::Classifier::feed(self, bytes);
    }
    fn verdict(&self) -> TranscriptVerdict {
        transcript::Classifier::verdict(self)
    }
    fn consumed(&self) -> u64 {
        self.offset() + self.pending_bytes() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argvs() {
        let argv = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
        assert!(is_claude_argv(&argv("node /x/@anthropic-ai/claude-code/cli.js")));
        assert!(is_claude_argv(&argv("/home/u/.local/bin/claude --resume")));
        assert!(!is_claude_argv(&argv("/usr/local/bin/turnstile status")));
        assert!(!is_claude_argv(&[]));
    }

    #[test]
    fn commands() {
        assert!(is_claude_command("claude"));
        assert!(is_claude_command(
            "/home/u/.local/bin/claude --dangerously-skip-permissions"
        ));
        assert!(is_claude_command(
            "node /usr/lib/node_modules/@anthropic-ai/claude-code/cli.js"
        ));
        assert!(!is_claude_command("vim claude.md"));
        assert!(!is_claude_command("bash"));
    }
}
