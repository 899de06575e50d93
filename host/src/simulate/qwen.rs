//! A simulated Qwen Code, for the demo and the tests: its chat records (the
//! preamble and the tool call in one record, the answer without a turn-end
//! record after it), its spinner row, tool rows, approval dialog and title.

use crate::simulate::{now_ms, rows_above, terminal_rows, Outcome, Sim, Simulator};
use serde_json::{json, Value};
use std::io;
use std::path::{Path, PathBuf};
use std::time::Instant;
use turnstile_core::agent::qwen::home::QwenHome;
use turnstile_core::agent::qwen::QwenCode;

impl Simulator for QwenCode {
    fn log_path(&self, home: &Path, cwd: &Path, session_id: &str, _now: u64) -> PathBuf {
        QwenHome::at(home).chats(cwd).join(format!("{session_id}.jsonl"))
    }

    fn status_file(&self, home: &Path, pid: u32) -> Option<PathBuf> {
        Some(QwenHome::at(home).status_file(pid))
    }

    fn turn(&self, sim: &mut Sim, n: u32, outcome: Outcome, prompt: Option<String>) -> io::Result<()> {
        let started = Instant::now();
        let received = prompt.as_ref().map(|p| p.chars().count());
        let prompt = prompt.unwrap_or_else(|| format!("task {n} for {}", sim.name));
        sim.history.push(format!("> {}", prompt.lines().next().unwrap_or("")));
        record(sim, "user", json!([{"text": prompt}]), None)?;
        sim.spin("", 1.5, started);
        let preamble = "Let me look at that first.";
        let call = json!({"functionCall": {"id": format!("call_demo_{n}"), "name": "run_shell_command",
            "args": {"command": "sleep 2"}}});
        record(sim, "assistant", json!([{"text": preamble}, call]), None)?;
        sim.history.push(format!("◆︎ {preamble}"));
        if outcome == Outcome::Wait {
            let dialog = [
                "? Shell sleep 2 ←",
                "  Allow execution of: 'sleep'?",
                "  › 1. Yes, allow once",
                "    4. No, suggest changes (esc)",
                "⠏ Waiting for user confirmation...",
            ];
            sim.dialog(&dialog, Some(format!("✳︎ Qwen - {}", sim.name)), 4.0);
        }
        sim.history.push("⊷ Shell sleep 2".into());
        sim.spin("", 2.0, started);
        sim.history.pop();
        if outcome == Outcome::Interrupt {
            record(
                sim,
                "tool_result",
                json!([{"functionResponse": {"name": "run_shell_command"}}]),
                Some("cancelled"),
            )?;
            sim.history
                .extend(["●︎ Request cancelled.".into(), "- Shell sleep 2".into()]);
            sim.draw(None, false, None);
            return Ok(());
        }
        record(
            sim,
            "tool_result",
            json!([{"functionResponse": {"name": "run_shell_command"}}]),
            Some("success"),
        )?;
        sim.history.push("✓ Shell sleep 2".into());
        sim.spin("", 1.5, started);
        if outcome == Outcome::Fail {
            let error = "[API Error: 400 quota exceeded (demo)]";
            sim.append(
                &json!({"sessionId": sim.session_id, "timestamp": now_ms().to_string(), "type": "system",
                "subtype": "ui_telemetry", "systemPayload": {"uiEvent": {"event.name": "qwen-code.api_error",
                "status_code": 400, "error": error}}}),
            )?;
            sim.history.push(format!("✕ {error}"));
            sim.draw(None, false, None);
            return Ok(());
        }
        let answer = sim.answer(n, received);
        record(sim, "assistant", json!([{"text": answer}]), None)?;
        sim.history.push(format!("◆︎ {answer}"));
        sim.draw(None, false, None);
        Ok(())
    }

    fn frame(&self, history: &[String], spinner: Option<&str>, _busy: bool, input: Option<&str>) -> Vec<String> {
        let keep = terminal_rows()
            .saturating_sub(5 + usize::from(spinner.is_some()))
            .max(1);
        let mut lines = rows_above(history, spinner, keep);
        let input_row = match input {
            Some(draft) => format!("> {draft}"),
            None => ">   Type your message or @path/to/file".into(),
        };
        lines.extend(["─".repeat(40), input_row, "─".repeat(40), "  demo mode".into()]);
        lines
    }

    fn title(&self, name: &str, busy: bool, _frame: usize) -> String {
        match busy {
            true => format!("◐︎ Qwen - {name}"),
            false => format!("Qwen - {name}"),
        }
    }

    fn spinner(&self, _stem: &str, i: usize, secs: u64) -> String {
        format!(
            "{} Just a moment... ({secs}s · esc to cancel)",
            ['⠋', '⠙', '⠹', '⠸'][i % 4]
        )
    }
}

/// A record of the chat log.
fn record(sim: &Sim, kind: &str, parts: Value, status: Option<&str>) -> io::Result<()> {
    let role = if kind == "assistant" { "model" } else { "user" };
    let mut line = json!({"sessionId": sim.session_id, "timestamp": now_ms().to_string(), "type": kind,
        "message": {"role": role, "parts": parts}});
    if let Some(status) = status {
        line["toolCallResult"] = json!({"status": status});
    }
    sim.append(&line)
}
