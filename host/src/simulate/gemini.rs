//! A simulated Gemini CLI, for the demo and the tests: its chat records
//! (the tool round's preamble first written without its tool call, then
//! again with it), its thinking line, tool box, approval box and title.

use crate::simulate::{now_ms, rows_above, terminal_rows, Outcome, Sim, Simulator};
use serde_json::{json, Value};
use std::io;
use std::path::{Path, PathBuf};
use std::time::Instant;
use turnstile_core::agent::gemini::home::GeminiHome;
use turnstile_core::agent::gemini::GeminiCli;

impl Simulator for GeminiCli {
    fn log_path(&self, home: &Path, cwd: &Path, session_id: &str, _now: u64) -> PathBuf {
        GeminiHome::at(home)
            .chats(cwd)
            .join(format!("session-demo-{session_id}.jsonl"))
    }

    fn header(&self, sim: &Sim) -> Option<Value> {
        Some(json!({"sessionId": sim.session_id, "projectHash": "demo",
            "startTime": now_ms().to_string(), "kind": "main"}))
    }

    fn turn(&self, sim: &mut Sim, n: u32, outcome: Outcome, prompt: Option<String>) -> io::Result<()> {
        let started = Instant::now();
        let received = prompt.as_ref().map(|p| p.chars().count());
        let prompt = prompt.unwrap_or_else(|| format!("task {n} for {}", sim.name));
        sim.history.push(format!(" > {}", prompt.lines().next().unwrap_or("")));
        record(sim, &format!("u{n}"), "user", json!([{"text": prompt}]), None)?;
        sim.spin("", 1.5, started);
        let preamble = "Let me look at that first.";
        record(sim, &format!("g{n}a"), "gemini", json!(preamble), None)?;
        sim.history.push(format!("✦ {preamble}"));
        let call =
            json!([{"id": format!("call_demo_{n}"), "name": "run_shell_command", "args": {"command": "sleep 2"}}]);
        if outcome == Outcome::Wait {
            let dialog = [
                "╭────────────────────────────╮",
                "│ ? Shell  sleep 2          │",
                "│ Allow execution of [Shell]? │",
                "│ ● 1. Allow once            │",
                "│   3. No, suggest changes (esc) │",
                "╰────────────────────────────╯",
            ];
            sim.dialog(&dialog, Some(format!("✋  Action Required ({})", sim.name)), 4.0);
        }
        sim.history.push("│ ⊶  Shell sleep 2".into());
        sim.spin("", 2.0, started);
        sim.history.pop();
        if outcome == Outcome::Interrupt {
            record(sim, &format!("i{n}"), "info", json!("Request cancelled."), None)?;
            sim.history.push("ℹ Request cancelled.".into());
            sim.draw(None, false, None);
            return Ok(());
        }
        record(sim, &format!("g{n}a"), "gemini", json!(preamble), Some(call))?;
        record(
            sim,
            &format!("r{n}"),
            "user",
            json!([{"functionResponse": {"name": "run_shell_command"}}]),
            None,
        )?;
        sim.history.push("│ ✓  Shell sleep 2".into());
        sim.spin("", 1.5, started);
        if outcome == Outcome::Fail {
            let error = "[API Error: You exceeded your current quota (demo).]";
            record(sim, &format!("e{n}"), "error", json!(error), None)?;
            sim.history.push(format!("✕ {error}"));
            sim.draw(None, false, None);
            return Ok(());
        }
        let answer = sim.answer(n, received);
        record(sim, &format!("g{n}b"), "gemini", json!(answer), None)?;
        sim.history.push(format!("✦ {answer}"));
        sim.draw(None, false, None);
        Ok(())
    }

    fn frame(&self, history: &[String], spinner: Option<&str>, _busy: bool, input: Option<&str>) -> Vec<String> {
        let keep = terminal_rows()
            .saturating_sub(4 + usize::from(spinner.is_some()))
            .max(1);
        let mut lines = rows_above(history, spinner, keep);
        let input_row = match input {
            Some(draft) => format!(" > {draft}"),
            None => " >   Type your message or @path/to/file".into(),
        };
        lines.extend(["─".repeat(40), input_row, "  demo mode".into()]);
        lines
    }

    fn title(&self, name: &str, busy: bool, _frame: usize) -> String {
        match busy {
            true => format!("✦  Working… ({name})"),
            false => format!("◇  Ready ({name})"),
        }
    }

    fn spinner(&self, _stem: &str, i: usize, secs: u64) -> String {
        format!(" {} Thinking... (esc to cancel, {secs}s)", ['⠋', '⠙', '⠹', '⠸'][i % 4])
    }
}

/// A record of the chat log.
fn record(sim: &Sim, id: &str, kind: &str, content: Value, tool_calls: Option<Value>) -> io::Result<()> {
    let mut line = json!({"id": format!("{}-{id}", sim.session_id), "timestamp": now_ms().to_string(),
        "type": kind, "content": content});
    if let Some(calls) = tool_calls {
        line["toolCalls"] = calls;
    }
    sim.append(&line)
}
