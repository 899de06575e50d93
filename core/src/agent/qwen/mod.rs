//! Qwen Code (`@qwen-code/qwen-code`, run by node; a Gemini CLI fork whose
//! log and hooks are Claude-shaped): its screen and title rules
//! ([`screen`]), its chat log classifier ([`chat`]), its hooks ([`hooks`]).

pub mod chat;
pub mod home;
pub mod hooks;
pub mod screen;

use super::{Agent, AgentKind, AgentLog, LogClassifier, LogFile, SessionStatus};
use crate::screen::{InputBox, ScreenVerdict};
use std::io;
use std::path::{Path, PathBuf};

/// True when a process's argv runs Qwen Code: `node …/cli-entry.js` or
/// `node …/qwen-code/cli.js` (the entry script relaunches itself under
/// node twice; the last of them writes the status file), or a `qwen`
/// launcher.
pub fn is_qwen_argv(argv: &[String]) -> bool {
    let program = |arg: &String| arg.rsplit('/').next().unwrap_or(arg).to_owned();
    match argv.first().map(program).as_deref() {
        Some("qwen") => true,
        Some("node" | "nodejs") => argv.iter().skip(1).find(|a| !a.starts_with('-')).is_some_and(|script| {
            let name = program(script);
            name == "qwen" || (script.contains("qwen-code/") && (name == "cli-entry.js" || name == "cli.js"))
        }),
        _ => false,
    }
}

/// True when a command line zellij reports for a pane runs Qwen Code.
pub fn is_qwen_command(command: &str) -> bool {
    let argv: Vec<String> = command.split_whitespace().map(str::to_owned).collect();
    is_qwen_argv(&argv)
}

/// Qwen Code, for the agent model.
pub struct QwenCode;

impl Agent for QwenCode {
    fn kind(&self) -> AgentKind {
        AgentKind::Qwen
    }
    fn name(&self) -> &'static str {
        "qwen"
    }
    fn tag(&self) -> &'static str {
        "qw"
    }
    fn runs(&self, argv: &[String]) -> bool {
        is_qwen_argv(argv)
    }
    fn runs_command(&self, command: &str) -> bool {
        is_qwen_command(command)
    }
    fn classify_screen<'a>(&self, rows: &'a [String], title: &str) -> ScreenVerdict<'a> {
        screen::classify(rows, title)
    }
    fn input_box(&self, rows: &[String]) -> InputBox {
        screen::input_box(rows)
    }
    /// After a turn it puts a suggested next prompt in its input box.
    fn suggests_in_its_box(&self) -> bool {
        true
    }
}

impl AgentLog for QwenCode {
    fn home(&self, var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
        Some(home::QwenHome::from_env(var)?.root().to_path_buf())
    }
    fn status_file(&self, home: &Path, pid: u32) -> Option<PathBuf> {
        Some(home::QwenHome::at(home).status_file(pid))
    }
    /// Its session id only: it keeps no state there.
    fn read_status(&self, bytes: &[u8]) -> Option<SessionStatus> {
        // The shared shape; Qwen Code keeps no state there.
        let status = super::status::parse(bytes).ok()?;
        Some(SessionStatus {
            state: None,
            word: None,
            waiting_for: None,
            ..status
        })
    }
    /// Its status file is written by the last of its node processes.
    fn innermost_process_is_the_agent(&self) -> bool {
        true
    }
    fn project_folder(&self, home: &Path, cwd: &Path) -> PathBuf {
        home::QwenHome::at(home).chats(cwd)
    }
    /// Its logs are appended to, never held open.
    fn holds_its_log_open(&self) -> bool {
        false
    }
    /// `projects/<project>/chats/<session>.jsonl` (Gemini CLI's are
    /// `session-….jsonl`), or Claude-shaped records holding Gemini-shaped
    /// `parts`.
    fn owns_log(&self, name: &str, folder: &str, head: &[u8]) -> bool {
        let has = |key: &[u8]| memchr::memmem::find(head, key).is_some();
        (folder == "chats" && name.ends_with(".jsonl") && !name.starts_with("session-"))
            || (has(br#""parentUuid""#) && has(br#""parts":["#))
    }
    fn log_classifier(&self) -> Box<dyn LogClassifier> {
        Box::<chat::QwenChatClassifier>::default()
    }
    fn classify_log(&self, mut file: &mut dyn LogFile, _count_lines: bool) -> io::Result<Box<dyn LogClassifier>> {
        Ok(Box::new(chat::classify_chat_tail(&mut file)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qwen_processes() {
        let argv = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
        let root = "/c/node_modules/@qwen-code/qwen-code";
        assert!(is_qwen_argv(&argv(&format!("node {root}/cli-entry.js"))));
        assert!(is_qwen_argv(&argv(&format!("/usr/bin/node --expose-gc {root}/cli.js"))));
        assert!(is_qwen_argv(&argv("/usr/local/bin/qwen -m x")));
        assert!(!is_qwen_argv(&argv("node /app/cli.js")));
        assert!(!is_qwen_command("vim qwen.md"));
    }

    #[test]
    fn its_logs_are_told_from_claude_codes() {
        assert!(QwenCode.owns_log("3f1c.jsonl", "chats", br#"{"uuid":"a","parentUuid":null,"#));
        assert!(!QwenCode.owns_log("3f1c.jsonl", "-home-me-proj", br#"{"parentUuid":null}"#));
        let fixture =
            br#"{"uuid":"8","parentUuid":null,"type":"user","message":{"role":"user","parts":[{"text":"x"}]}}"#;
        assert!(QwenCode.owns_log("transcript.jsonl", "0.24.4-fail", fixture));
        assert!(!QwenCode.owns_log("session-1.jsonl", "chats", b""), "Gemini CLI's");
    }
}
