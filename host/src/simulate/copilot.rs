//! A simulated Copilot CLI, for the demo and the tests: its `events.jsonl`
//! (a model round per `assistant.turn_start` / `assistant.turn_end`, the
//! tool requests in the round's message), its footer and approval dialog.

use crate::simulate::{now_ms, rows_above, terminal_rows, Outcome, Sim, Simulator};
use serde_json::{json, Value};
use std::io;
use std::path::{Path, PathBuf};
use std::time::Instant;
use turnstile_core::agent::copilot::home::CopilotHome;
use turnstile_core::agent::copilot::CopilotCli;

impl Simulator for CopilotCli {
    fn log_path(&self, home: &Path, _cwd: &Path, session_id: &str, _now: u64) -> PathBuf {
        CopilotHome::at(home).events(session_id)
    }

    fn header(&self, sim: &Sim) -> Option<Value> {
        Some(line(
            "session.start",
            json!({"sessionId": sim.session_id, "copilotVersion": "demo",
            "context": {"cwd": sim.cwd}}),
        ))
    }

    fn turn(&self, sim: &mut Sim, n: u32, outcome: Outcome, prompt: Option<String>) -> io::Result<()> {
        let started = Instant::now();
        let received = prompt.as_ref().map(|p| p.chars().count());
        let prompt = prompt.unwrap_or_else(|| format!("task {n} for {}", sim.name));
        sim.history.push(format!("❯ {}", prompt.lines().next().unwrap_or("")));
        sim.append(&line("user.message", json!({"content": prompt})))?;
        sim.append(&line("assistant.turn_start", json!({"turnId": "0"})))?;
        sim.spin("", 1.5, started);
        let request = json!([{"toolCallId": format!("call_demo_{n}"), "name": "bash",
            "arguments": {"command": "sleep 2"}}]);
        sim.append(&line(
            "assistant.message",
            json!({"content": "Let me look at that first.", "toolRequests": request}),
        ))?;
        sim.history.push("● Let me look at that first.".into());
        if outcome == Outcome::Wait {
            sim.append(&line("permission.requested", json!({})))?;
            let dialog = [
                "│ sleep 2                          │",
                "│ Do you want to run this command? │",
                "│ ❯ 1. Yes                         │",
                "│   3. No (Esc to stop)            │",
            ];
            sim.dialog(&dialog, None, 4.0);
            sim.append(&line("permission.completed", json!({"result": {"kind": "approved"}})))?;
        }
        sim.history.push("$ Shell sleep 2".into());
        sim.spin("", 2.0, started);
        if outcome == Outcome::Interrupt {
            sim.append(&line("assistant.turn_end", json!({"turnId": "0"})))?;
            sim.append(&line("abort", json!({"reason": "user_abort"})))?;
            sim.history.push("● Operation cancelled by user".into());
            sim.draw(None, false, None);
            return Ok(());
        }
        sim.append(&line("tool.execution_complete", json!({"success": true})))?;
        sim.append(&line("assistant.turn_end", json!({"turnId": "0"})))?;
        sim.spin("", 1.5, started);
        if outcome == Outcome::Fail {
            sim.append(&line(
                "session.error",
                json!({"statusCode": 400, "message": "400 quota exceeded (demo)"}),
            ))?;
            sim.history.push("✗ 400 quota exceeded (demo)".into());
            sim.draw(None, false, None);
            return Ok(());
        }
        let answer = sim.answer(n, received);
        sim.append(&line("assistant.turn_start", json!({"turnId": "1"})))?;
        sim.append(&line(
            "assistant.message",
            json!({"content": answer, "toolRequests": []}),
        ))?;
        sim.append(&line("assistant.turn_end", json!({"turnId": "1"})))?;
        sim.history.push(format!("● {answer}"));
        sim.draw(None, false, None);
        Ok(())
    }

    fn frame(&self, history: &[String], spinner: Option<&str>, _busy: bool, input: Option<&str>) -> Vec<String> {
        let keep = terminal_rows().saturating_sub(5).max(1);
        let mut lines = rows_above(history, None, keep);
        let footer = spinner.map_or_else(|| " ← open sidebar · Interactive · demo mode".to_owned(), str::to_owned);
        lines.extend([
            "─".repeat(40),
            format!("❯ {}", input.unwrap_or("")),
            "─".repeat(40),
            footer,
        ]);
        lines
    }

    fn title(&self, name: &str, _busy: bool, _frame: usize) -> String {
        format!("{name} - GitHub Copilot")
    }

    fn spinner(&self, _stem: &str, i: usize, secs: u64) -> String {
        format!(
            " {} Working · {} B esc esc interrupt",
            ['●', '◉', '◎', '○'][i % 4],
            40 + secs * 25
        )
    }
}

/// A line of `events.jsonl`.
fn line(kind: &str, data: Value) -> Value {
    json!({"type": kind, "data": data, "id": format!("demo-{}", now_ms()), "timestamp": now_ms().to_string()})
}
