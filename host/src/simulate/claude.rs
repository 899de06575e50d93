//! A simulated Claude Code, for the demo and the tests: it draws what
//! Claude Code draws (prompt echo, a spinner with invented verbs, tool
//! calls, the finished banner with its ` · done <time>` suffix, API errors,
//! interrupts, a permission dialog) and writes a transcript in the real
//! JSONL format plus a session status file into its own Claude home.

use crate::simulate::{clock, Outcome, Sim, Simulator};
use serde_json::{json, Value};
use std::io;
use std::path::{Path, PathBuf};
use std::time::Instant;
use turnstile_core::agent::claude::home::ClaudeHome;
use turnstile_core::agent::claude::ClaudeCode;

impl Simulator for ClaudeCode {
    fn log_path(&self, home: &Path, cwd: &Path, session_id: &str, _now: u64) -> PathBuf {
        ClaudeHome::at(home).project(cwd).join(format!("{session_id}.jsonl"))
    }

    fn status_file(&self, home: &Path, pid: u32) -> Option<PathBuf> {
        turnstile_core::agent::AgentLog::status_file(self, home, pid)
    }

    fn turn(&self, sim: &mut Sim, n: u32, outcome: Outcome, prompt: Option<String>) -> io::Result<()> {
        let started = Instant::now();
        let received = prompt.as_ref().map(|p| p.chars().count());
        let prompt = prompt.unwrap_or_else(|| format!("task {n} for {}", sim.name));
        sim.history.push(format!("❯ {}", prompt.lines().next().unwrap_or("")));
        sim.status("busy", None);
        sim.append(&user_line(sim, json!(prompt)))?;
        let stem = sim.verb_stem();
        sim.spin(&stem, 1.5, started);
        let tool_id = format!("toolu_demo_{n}");
        let message_id = format!("msg_demo_{n}a");
        sim.history.push("● Let me look at that first.".into());
        let preamble = json!([{"type": "text", "text": "Let me look at that first."}]);
        sim.append(&assistant_line(sim, &message_id, preamble, "tool_use"))?;
        let tool = json!([{"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": "sleep 2", "description": "Think"}}]);
        sim.append(&assistant_line(sim, &message_id, tool, "tool_use"))?;
        sim.history.push("● Bash(sleep 2)".into());
        if outcome == Outcome::Wait {
            ask_permission(sim, &stem, started);
        }
        sim.spin(&stem, 2.0, started);
        if outcome == Outcome::Interrupt {
            return interrupted(sim, &tool_id);
        }
        let result = json!([{"type": "tool_result", "tool_use_id": tool_id, "content": "ok"}]);
        sim.append(&user_line(sim, result))?;
        sim.history.push("  ⎿  (No output)".into());
        sim.spin(&stem, 1.5, started);
        match outcome {
            Outcome::Fail => failed(sim),
            _ => done(sim, n, &stem, started, received),
        }
    }

    fn frame(&self, history: &[String], spinner: Option<&str>, busy: bool, input: Option<&str>) -> Vec<String> {
        let mut lines: Vec<String> = history.iter().rev().take(14).rev().cloned().collect();
        lines.extend(spinner.map(str::to_owned));
        let rule = "─".repeat(60);
        lines.push(rule.clone());
        lines.push(format!("❯ {}", input.unwrap_or("")));
        lines.push(rule);
        let footer = if busy {
            "  ⏵⏵ demo mode · esc to interrupt"
        } else {
            "  ⏵⏵ demo mode"
        };
        lines.push(footer.to_owned());
        lines
    }

    /// A turning spinner glyph while busy, `✳` at the prompt.
    fn title(&self, name: &str, busy: bool, frame: usize) -> String {
        const TURNING: &[char] = &['⠂', '⠐'];
        match busy {
            true => format!("{} {name}", TURNING[frame % TURNING.len()]),
            false => format!("✳ {name}"),
        }
    }

    fn spinner(&self, stem: &str, i: usize, secs: u64) -> String {
        const GLYPHS: &[char] = &['·', '✢', '*', '✶', '✻', '✽'];
        format!(
            "{} {stem}ing… ({secs}s · ↓ {} tokens)",
            GLYPHS[i % GLYPHS.len()],
            20 + i
        )
    }

    fn room_above_dialog(&self, _dialog: usize) -> usize {
        10
    }
}

fn done(sim: &mut Sim, n: u32, stem: &str, started: Instant, received: Option<usize>) -> io::Result<()> {
    let answer = sim.answer(n, received);
    let content = json!([{"type": "text", "text": answer}]);
    sim.append(&assistant_line(sim, &format!("msg_demo_{n}b"), content, "end_turn"))?;
    let duration = started.elapsed().as_millis() as u64;
    sim.append(&json!({"type": "system", "subtype": "turn_duration", "durationMs": duration, "isSidechain": false, "sessionId": sim.session_id}))?;
    sim.history.push(format!("● {answer}"));
    let secs = started.elapsed().as_secs();
    sim.history.push(format!("✻ {stem}ed for {secs}s · done {}", clock()));
    sim.status("idle", None);
    sim.draw(None, false, None);
    Ok(())
}

fn failed(sim: &mut Sim) -> io::Result<()> {
    let text =
        "API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}";
    let mut line = assistant_line(
        sim,
        "msg_demo_error",
        json!([{"type": "text", "text": text}]),
        "stop_sequence",
    );
    line["isApiErrorMessage"] = json!(true);
    line["message"]["model"] = json!("<synthetic>");
    sim.append(&line)?;
    sim.history
        .push("  ⎿  API Error: 529 Overloaded · retries exhausted".into());
    sim.status("idle", None);
    sim.draw(None, false, Some("Resend your message to try again"));
    Ok(())
}

fn interrupted(sim: &mut Sim, tool_id: &str) -> io::Result<()> {
    let rejected = json!([{"type": "tool_result", "tool_use_id": tool_id, "content": "The user doesn't want to proceed with this tool use.", "is_error": true}]);
    sim.append(&user_line(sim, rejected))?;
    let note = json!([{"type": "text", "text": "[Request interrupted by user for tool use]"}]);
    sim.append(&user_line(sim, note))?;
    sim.history
        .push("  ⎿  Interrupted · What should Claude do instead?".into());
    sim.status("idle", None);
    sim.draw(None, false, None);
    Ok(())
}

fn ask_permission(sim: &Sim, stem: &str, started: Instant) {
    sim.status("waiting", Some("permission prompt"));
    let dialog = [
        "────────────────────────────────────────",
        " Bash command",
        "",
        "   sleep 2",
        "",
        " Do you want to proceed?",
        " ❯ 1. Yes",
        "   2. Yes, and don't ask again for sleep commands",
        "   3. No, and tell Claude what to do differently (esc)",
    ];
    sim.dialog(&dialog, None, 4.0);
    sim.status("busy", None);
    sim.spin(stem, 0.2, started);
}

/// A transcript line of `kind`, chained to the previous one.
fn base(sim: &Sim, kind: &str) -> Value {
    let now = crate::simulate::now_ms();
    let uuid = format!("{:08x}-demo-4000-8000-{now:012x}", sim.rand(u32::MAX as u64));
    let line = json!({
        "parentUuid": *sim.parent.borrow(), "isSidechain": false, "userType": "external", "cwd": sim.cwd,
        "sessionId": sim.session_id, "version": "demo", "type": kind, "uuid": uuid,
        "timestamp": format!("{now}"),
    });
    sim.parent.replace(Some(uuid));
    line
}

fn user_line(sim: &Sim, content: Value) -> Value {
    let mut line = base(sim, "user");
    line["message"] = json!({"role": "user", "content": content});
    line
}

fn assistant_line(sim: &Sim, id: &str, content: Value, stop: &str) -> Value {
    let mut line = base(sim, "assistant");
    line["message"] = json!({
        "id": id, "type": "message", "role": "assistant", "model": "demo-model",
        "content": content, "stop_reason": stop, "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 20},
    });
    line
}
