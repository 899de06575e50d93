//! The `notify` setting: a command the leader runs when a pane nobody looks
//! at turns done, failed or waiting.
//!
//! Edges of unseen panes wait [`COALESCE_MS`] for company, then go out as one
//! run, never sooner than `notify_interval_ms` after the previous one (but
//! a pane that waits for its user is told at once: it stalls until someone
//! comes), and never while the previous one still runs (one that does not answer in
//! [`LOST_MS`] is given up). A pane is notified once per state of a turn; a
//! pane looked at before the run leaves the batch. The command runs under
//! `timeout` through `sh -c`, so a hanging notifier is killed, and being a
//! background command it never stalls the bar.
//!
//! It gets each pane as five arguments (`$1`… pane id, name, state, kind,
//! why it failed or waits (empty for a done); then the next pane's five) and
//! the first pane again in the environment (`TURNSTILE_PANE_ID`,
//! `TURNSTILE_PANE_NAME`, `TURNSTILE_STATE`, `TURNSTILE_KIND`,
//! `TURNSTILE_ANSWER`), plus `TURNSTILE_COUNT` and `TURNSTILE_SUMMARY`
//! (`api done, docs failed`). Answers go only in the environment (the first
//! line of the n-th pane's as `TURNSTILE_ANSWER_<n>`): a command line can be
//! read by every local user, an environment only by its owner.

use super::{Effect, CTX_KIND};
use crate::arbiter::Edge;
use crate::attention;
use crate::panes::{Pane, PaneTable};
use crate::text::first_line;
use crate::verdict::{Millis, State};
use std::collections::BTreeMap;

/// How long an edge waits for others to share its notification (ms).
pub const COALESCE_MS: Millis = 500;
/// A notifier run that has not ended after this long is given up (ms).
pub const LOST_MS: Millis = 15_000;
/// Seconds after which `timeout` kills a notifier.
pub const KILL_AFTER_S: u32 = 10;

/// Pending notifications and the pacing of runs.
#[derive(Debug, Default)]
pub struct Notifier {
    command: Option<String>,
    interval: Millis,
    /// Panes to tell about, with when they joined and whether they wait
    /// for their user (told without waiting for the interval).
    pending: BTreeMap<u32, (Millis, bool)>,
    /// The state each pane was last notified for, this turn.
    notified: BTreeMap<u32, State>,
    in_flight: Option<Millis>,
    last_run: Option<Millis>,
}

impl Notifier {
    /// A notifier running `command` (`None`: off) at most every `interval` ms.
    pub fn new(command: Option<String>, interval: Millis) -> Notifier {
        Notifier {
            command,
            interval,
            ..Notifier::default()
        }
    }

    /// Notes an edge of `pane`; `unseen`: nobody looked at it when it came.
    pub fn on_edge(&mut self, pane: u32, edge: &Edge, unseen: bool, now: Millis) {
        if self.command.is_none() {
            return;
        }
        if edge.to == State::Working {
            self.notified.remove(&pane);
            self.pending.remove(&pane);
            return;
        }
        if tells(edge.to) && unseen && self.notified.get(&pane) != Some(&edge.to) {
            self.notified.insert(pane, edge.to);
            let waits = edge.to == State::Waiting;
            let entry = self.pending.entry(pane).or_insert((now, waits));
            entry.1 |= waits;
        }
    }

    /// When the next run is due (`None`: nothing to tell, or one runs).
    pub fn due(&self) -> Option<Millis> {
        if self.in_flight.is_some() {
            return self.in_flight.map(|started| started + LOST_MS);
        }
        let first = self.pending.values().map(|(joined, _)| *joined).min()?;
        let urgent = self.pending.values().any(|(_, waits)| *waits);
        let paced = match urgent {
            true => 0,
            false => self.last_run.map_or(0, |at| at + self.interval),
        };
        Some((first + COALESCE_MS).max(paced))
    }

    /// The run due at `now`, if any: the pending panes that still need
    /// telling (turn end or waiting, unseen), most urgent first.
    pub fn run_due(&mut self, table: &PaneTable, now: Millis) -> Option<Effect> {
        if self.in_flight.is_some_and(|started| now >= started + LOST_MS) {
            self.in_flight = None;
        }
        if self.due().is_none_or(|due| due > now) || self.in_flight.is_some() {
            return None;
        }
        let pending = std::mem::take(&mut self.pending);
        let mut panes: Vec<&Pane> = pending
            .keys()
            .filter_map(|id| table.get(*id))
            .filter(|p| tells(p.state()) && p.unseen)
            .collect();
        crate::order::sort_by_rank(&mut panes, |p| {
            let order = attention::order(p.state(), p.unseen, p.fused().since, p.meta.id);
            order.map_or(0, |(rank, since, pane)| {
                (1 << 127) | crate::order::rank3(rank, since, pane)
            })
        });
        let command = self.command.clone()?;
        if panes.is_empty() {
            return None;
        }
        self.in_flight = Some(now);
        self.last_run = Some(now);
        Some(run(&command, &panes))
    }

    /// The run ended.
    pub fn finished(&mut self) {
        self.in_flight = None;
    }

    /// Forgets a closed pane.
    pub fn forget(&mut self, pane: u32) {
        self.pending.remove(&pane);
        self.notified.remove(&pane);
    }
}

/// The states a notifier is told about.
fn tells(state: State) -> bool {
    matches!(state, State::Done | State::Failed | State::Waiting)
}

/// The five arguments a notifier gets for a pane (no answer text).
fn fields(pane: &Pane) -> [String; 5] {
    let why = match pane.state() {
        State::Done => String::new(),
        _ => first_line(&pane.fused().reason),
    };
    [
        pane.meta.id.to_string(),
        pane.meta.title.clone(),
        pane.state().as_str().to_owned(),
        pane.kind.name().to_owned(),
        why,
    ]
}

/// The first line of the pane's answer, for a confirmed done (else empty).
fn answer_line(pane: &Pane) -> String {
    match (pane.state(), pane.fused().confirmed, pane.turn_answer()) {
        (State::Done, true, Some(answer)) => first_line(answer),
        _ => String::new(),
    }
}

fn run(command: &str, panes: &[&Pane]) -> Effect {
    let all: Vec<[String; 5]> = panes.iter().map(|p| fields(p)).collect();
    let mut argv: Vec<String> = [
        "timeout",
        "-k",
        "2",
        &KILL_AFTER_S.to_string(),
        "sh",
        "-c",
        command,
        "turnstile-notify",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    argv.extend(all.iter().flatten().cloned());
    let summary: Vec<String> = all.iter().map(|f| format!("{} {}", f[1], f[2])).collect();
    let first = &all[0];
    let answers: Vec<String> = panes.iter().map(|p| answer_line(p)).collect();
    let mut env = crate::order::map_of([
        ("TURNSTILE_PANE_ID".to_owned(), first[0].clone()),
        ("TURNSTILE_PANE_NAME".to_owned(), first[1].clone()),
        ("TURNSTILE_STATE".to_owned(), first[2].clone()),
        ("TURNSTILE_KIND".to_owned(), first[3].clone()),
        ("TURNSTILE_ANSWER".to_owned(), answers[0].clone()),
        ("TURNSTILE_COUNT".to_owned(), all.len().to_string()),
        ("TURNSTILE_SUMMARY".to_owned(), summary.join(", ")),
    ]);
    env.extend(
        answers
            .into_iter()
            .enumerate()
            .map(|(n, answer)| (format!("TURNSTILE_ANSWER_{}", n + 1), answer)),
    );
    let context = crate::order::map_of([(CTX_KIND.to_owned(), "notify".to_owned())]);
    Effect::RunNotifier { argv, env, context }
}
