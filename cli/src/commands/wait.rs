//! `turnstile wait`: blocks until a pane's agent reaches a state.
//!
//! Reads the same sources as `status` (transcript, session status, hook
//! binding) every 200 ms and fuses them with the arbiter. Exit codes:
//! 0 reached, 3 timed out, 4 the pane's agent or the session is gone.

use anyhow::{bail, Result};
use clap::ValueEnum;
use serde_json::json;
use std::time::{Duration, Instant};
use turnstile_core::arbiter::PaneArbiter;
use turnstile_core::State;

/// What to wait for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Until {
    /// The turn ended normally.
    Done,
    /// No turn runs: done, failed, interrupted or idle.
    Idle,
    /// The agent stopped working for any reason (idle, or waiting for the user).
    Any,
}

impl Until {
    fn reached(self, state: State) -> bool {
        match self {
            Until::Done => state == State::Done,
            Until::Idle => state.is_turn_end() || state == State::Idle,
            Until::Any => state.is_turn_end() || matches!(state, State::Idle | State::Waiting),
        }
    }
}

/// Exit code when the wait timed out.
pub const EXIT_TIMEOUT: i32 = 3;
/// Exit code when the pane's agent or the session disappeared.
pub const EXIT_GONE: i32 = 4;

/// Waits; returns the exit code after printing the last state as JSON.
pub fn run(session: Option<String>, pane: u32, until: Until, timeout: Option<f64>) -> Result<i32> {
    let timeout = match timeout {
        Some(t) if !(0.0..=1e9).contains(&t) => {
            bail!("--timeout must be a finite number of seconds (0 to 1e9), not {t}")
        }
        other => other.map(Duration::from_secs_f64),
    };
    let started = Instant::now();
    let mut arbiter = PaneArbiter::new();
    loop {
        // One report at most until the timeout: a pane whose files take
        // long never holds the wait past it.
        let left = timeout.map_or(turnstile_host::report::READ_BUDGET, |t| {
            t.saturating_sub(started.elapsed())
        });
        let asked = session.clone();
        let Some(report) = turnstile_host::files::within(left.max(Duration::from_millis(50)), move || {
            turnstile_host::report::host_report(asked, &[pane])
        }) else {
            print_state(pane, State::Unknown, "timed out");
            return Ok(EXIT_TIMEOUT);
        };
        let report = report?;
        let Some(entry) = report.panes.into_iter().find(|p| p.pane == pane && p.agent.is_some()) else {
            print_state(pane, State::Unknown, "no agent in this pane (or the session is gone)");
            return Ok(EXIT_GONE);
        };
        for verdict in entry.verdicts {
            arbiter.observe(verdict);
        }
        let fused = arbiter.fused();
        if until.reached(fused.state) {
            print_state(pane, fused.state, &fused.reason);
            return Ok(0);
        }
        if timeout.is_some_and(|t| started.elapsed() >= t) {
            print_state(pane, fused.state, "timed out");
            return Ok(EXIT_TIMEOUT);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn print_state(pane: u32, state: State, reason: &str) {
    println!("{}", json!({"pane": pane, "state": state, "reason": reason}));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets() {
        assert!(Until::Done.reached(State::Done) && !Until::Done.reached(State::Failed));
        assert!(Until::Idle.reached(State::Interrupted) && !Until::Idle.reached(State::Waiting));
        assert!(Until::Any.reached(State::Waiting) && !Until::Any.reached(State::Working));
    }
}
