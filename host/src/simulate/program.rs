//! A simulated program that reports itself, for the demo and the tests: a
//! build script drawing its steps and running `turnstile report` (working,
//! waiting, then done with its answer).

use crate::simulate::{rows_above, terminal_rows, Outcome, Sim, Simulator};
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;
use turnstile_core::agent::program::Program;

/// Runs `turnstile report` as a script would (this very executable); a pane
/// outside zellij (a test's terminal) just draws.
fn say(state: &str, answer: Option<&Path>, message: Option<&str>) {
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut report = Command::new(exe);
    report
        .args(["report", state])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some(answer) = answer {
        report.arg("--answer-file").arg(answer);
    }
    if let Some(message) = message {
        report.args(["--message", message]);
    }
    let _ = report.status();
}

impl Simulator for Program {
    fn log_path(&self, home: &Path, _cwd: &Path, session_id: &str, _now: u64) -> PathBuf {
        home.join(format!("{session_id}.log"))
    }

    fn turn(&self, sim: &mut Sim, n: u32, outcome: Outcome, prompt: Option<String>) -> io::Result<()> {
        let started = Instant::now();
        let job = prompt.unwrap_or_else(|| format!("build {n} of {}", sim.name));
        sim.history.push(format!("$ {}", job.lines().next().unwrap_or("")));
        say("working", None, Some(&job));
        sim.spin("", 2.0, started);
        if outcome == Outcome::Wait {
            say("waiting", None, Some("approve the deploy?"));
            sim.dialog(&["approve the deploy? [y/N]"], None, 3.0);
            say("working", None, Some("deploying"));
        }
        sim.spin("", 1.0, started);
        let (state, line) = match outcome {
            Outcome::Fail => ("failed", "error: 2 tests failed (demo)".to_owned()),
            Outcome::Interrupt => ("interrupted", "^C".to_owned()),
            _ => ("done", sim.answer(n, None)),
        };
        sim.history.push(line.clone());
        let answer = sim.log().with_extension("answer");
        std::fs::write(&answer, &line)?;
        say(state, (state == "done").then_some(answer.as_path()), None);
        sim.draw(None, false, None);
        Ok(())
    }

    fn frame(&self, history: &[String], spinner: Option<&str>, _busy: bool, _input: Option<&str>) -> Vec<String> {
        let keep = terminal_rows().saturating_sub(2).max(1);
        let mut lines = rows_above(history, spinner, keep);
        lines.push("$ ".into());
        lines
    }

    fn title(&self, name: &str, _busy: bool, _frame: usize) -> String {
        name.to_owned()
    }

    fn spinner(&self, stem: &str, i: usize, secs: u64) -> String {
        format!("{} {stem}building… {secs}s", ['|', '/', '-', '\\'][i % 4])
    }
}
