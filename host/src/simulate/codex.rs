//! A simulated Codex CLI, for the demo and the tests: its rollout events
//! (filed by day, a `session_meta` first), its working line, its approval
//! dialog and title, its `Worked for` line.

use crate::simulate::{now_ms, rows_above, terminal_rows, Outcome, Sim, Simulator};
use serde_json::{json, Value};
use std::io;
use std::path::{Path, PathBuf};
use std::time::Instant;
use turnstile_core::agent::codex::home::CodexHome;
use turnstile_core::agent::codex::CodexCli;

impl Simulator for CodexCli {
    fn log_path(&self, home: &Path, _cwd: &Path, session_id: &str, now: u64) -> PathBuf {
        let day = CodexHome::at(home).day_folders(now)[1].clone();
        day.join(format!("rollout-demo-{session_id}.jsonl"))
    }

    fn header(&self, sim: &Sim) -> Option<Value> {
        Some(json!({"timestamp": now_ms().to_string(), "type": "session_meta",
            "payload": {"id": sim.session_id, "cwd": sim.cwd, "cli_version": "demo", "source": "cli"}}))
    }

    fn turn(&self, sim: &mut Sim, n: u32, outcome: Outcome, prompt: Option<String>) -> io::Result<()> {
        let started = Instant::now();
        let received = prompt.as_ref().map(|p| p.chars().count());
        let prompt = prompt.unwrap_or_else(|| format!("task {n} for {}", sim.name));
        sim.history.push(format!("› {}", prompt.lines().next().unwrap_or("")));
        event(sim, "task_started", json!({}))?;
        item(
            sim,
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}),
        )?;
        sim.spin("", 1.5, started);
        let call = format!("call_demo_{n}");
        sim.history.push("• Let me look at that first.".into());
        item(
            sim,
            json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Let me look at that first."}]}),
        )?;
        item(
            sim,
            json!({"type": "function_call", "name": "exec_command", "call_id": call, "arguments": "{\"cmd\":\"sleep 2\"}"}),
        )?;
        if outcome == Outcome::Wait {
            sim.history.push("• Running sleep 2".into());
            let dialog = [
                "  Would you like to run the following command?",
                "  $ sleep 2",
                "› 1. Yes, proceed (y)",
                "  2. No, and tell Codex what to do differently (esc)",
                "  Press enter to confirm or esc to cancel",
            ];
            sim.dialog(&dialog, Some(format!("[ ! ] Action Required | {}", sim.name)), 4.0);
        }
        sim.spin("", 2.0, started);
        if outcome == Outcome::Interrupt {
            item(
                sim,
                json!({"type": "function_call_output", "call_id": call, "output": "aborted by user"}),
            )?;
            event(sim, "turn_aborted", json!({"reason": "interrupted"}))?;
            sim.history
                .push("■ Conversation interrupted - use /feedback if something went wrong".into());
            sim.draw(None, false, None);
            return Ok(());
        }
        item(
            sim,
            json!({"type": "function_call_output", "call_id": call, "output": "ok"}),
        )?;
        sim.history.push("• Ran sleep 2".into());
        sim.spin("", 1.5, started);
        if outcome == Outcome::Fail {
            let error = "We're currently experiencing high demand, which may cause temporary errors.";
            event(
                sim,
                "task_complete",
                json!({"last_agent_message": null, "error": {"message": error}}),
            )?;
            sim.history.push(format!("■ {error}"));
            sim.draw(None, false, None);
            return Ok(());
        }
        let answer = sim.answer(n, received);
        item(
            sim,
            json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": answer}]}),
        )?;
        event(sim, "task_complete", json!({"last_agent_message": answer}))?;
        sim.history.push(format!("• {answer}"));
        let secs = started.elapsed().as_secs();
        let (h, m) = ((now_ms() / 3_600_000) % 24, (now_ms() / 60_000) % 60);
        sim.history.push(format!("  Worked for {secs}s • {h:02}:{m:02}"));
        sim.draw(None, false, None);
        Ok(())
    }

    /// The composer at the bottom of however many rows the pane has: the
    /// history above gives way.
    fn frame(&self, history: &[String], spinner: Option<&str>, _busy: bool, input: Option<&str>) -> Vec<String> {
        let keep = terminal_rows()
            .saturating_sub(5 + usize::from(spinner.is_some()))
            .max(1);
        let mut lines = rows_above(history, spinner, keep);
        let composer = format!("› {}", input.unwrap_or("Ask Codex to do anything"));
        lines.extend([String::new(), composer, String::new()]);
        lines.push("  demo mode · ? for shortcuts".into());
        lines
    }

    /// A braille spinner while busy, the bare name at the prompt.
    fn title(&self, name: &str, busy: bool, frame: usize) -> String {
        const BRAILLE: &[char] = &['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
        match busy {
            true => format!("{} {name}", BRAILLE[frame % BRAILLE.len()]),
            false => name.to_owned(),
        }
    }

    fn spinner(&self, _stem: &str, i: usize, secs: u64) -> String {
        let glyph = ['•', '◦'][i % 2];
        format!("{glyph} Working ({secs}s • esc to interrupt)")
    }
}

/// An `event_msg` line of a rollout.
fn event(sim: &Sim, kind: &str, mut payload: Value) -> io::Result<()> {
    payload["type"] = json!(kind);
    sim.append(&json!({"timestamp": now_ms().to_string(), "type": "event_msg", "payload": payload}))
}

/// A `response_item` line of a rollout.
fn item(sim: &Sim, payload: Value) -> io::Result<()> {
    sim.append(&json!({"timestamp": now_ms().to_string(), "type": "response_item", "payload": payload}))
}
