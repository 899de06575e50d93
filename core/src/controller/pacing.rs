//! The bar's pacing: its timers, the throttling of render reports during
//! output storms, host command runs (never two at once, a lost one retried)
//! and the watcher's restarts.

use super::Effect;
use crate::Millis;
use std::collections::BTreeSet;

/// Output storm: this many render reports within `STORM_WINDOW_MS`…
pub const STORM_REPORTS: u32 = 3;
/// …of this window…
pub const STORM_WINDOW_MS: Millis = 60;
/// …pause the subscription (longer the more panes stream: the catch-up
/// afterwards reads each of them once), then catch up on the busy ones.
pub const STORM_PAUSE_MS: Millis = 60;
/// Added to the pause per pane to read afterwards.
pub const STORM_PAUSE_PER_PANE_MS: Millis = 15;
/// The longest pause.
pub const STORM_PAUSE_MAX_MS: Millis = 600;
/// A host run that has not answered after this long is given up and retried.
pub const HOST_RUN_TIMEOUT_MS: Millis = 10_000;
/// After the watcher died, wait this long before starting it again
/// (doubling up to `WATCHER_RETRY_MAX_MS`); the bar polls meanwhile.
pub const WATCHER_RETRY_MS: Millis = 2_000;
/// The longest wait before the watcher is started again.
pub const WATCHER_RETRY_MAX_MS: Millis = 60_000;

/// zellij timers serving every deadline. A timer is armed only when none
/// armed fires at or before the deadline, so timers never multiply: each
/// armed one is earlier than all the others.
#[derive(Debug, Default)]
pub struct Timers {
    /// When the armed timers fire, earliest first.
    due: Vec<Millis>,
    /// When the next regular tick is due.
    pub next_tick: Millis,
}

impl Timers {
    /// Arms a timer firing at `due` unless one fires at or before it.
    pub fn arm(&mut self, now: Millis, due: Millis, out: &mut Vec<Effect>) {
        let due = due.max(now + 10);
        if self.due.iter().any(|d| *d <= due) {
            return;
        }
        self.due.insert(0, due);
        out.push(Effect::ArmTimer(due - now));
    }

    /// A timer fired (the earliest armed).
    pub fn fired(&mut self) {
        if !self.due.is_empty() {
            self.due.remove(0);
        }
    }

    /// Timers armed and not fired yet.
    pub fn armed(&self) -> usize {
        self.due.len()
    }

    /// Armed timers due at `now`.
    #[cfg(test)]
    pub fn due_by(&self, now: Millis) -> usize {
        self.due.iter().filter(|d| **d <= now).count()
    }
}

/// Throttling of render reports: when calm, a banner flips the bar in the
/// same render; in a storm, reports are paused for a while and the busy
/// panes are read once afterwards.
#[derive(Debug, Default)]
pub struct Storm {
    window_start: Millis,
    reports: u32,
    paused_until: Option<Millis>,
    /// Panes reported since the window started: the ones that may change unseen.
    streaming: BTreeSet<u32>,
}

impl Storm {
    /// True while reports are paused.
    pub fn is_paused(&self) -> bool {
        self.paused_until.is_some()
    }

    /// When the pause ends.
    pub fn paused_until(&self) -> Option<Millis> {
        self.paused_until
    }

    /// True when a pause is over at `now`.
    pub fn pause_over(&self, now: Millis) -> bool {
        self.paused_until.is_some_and(|until| now >= until)
    }

    /// Counts a report of these panes. Returns the end of a pause that
    /// starts now; `to_read` counts the streaming panes to read afterwards.
    pub fn note(&mut self, panes: &[u32], now: Millis, to_read: impl Fn(&BTreeSet<u32>) -> usize) -> Option<Millis> {
        if now.saturating_sub(self.window_start) > STORM_WINDOW_MS {
            self.window_start = now;
            self.reports = 0;
            self.streaming.clear();
        }
        self.reports += 1;
        self.streaming.extend(panes);
        if self.reports < STORM_REPORTS || self.paused_until.is_some() {
            return None;
        }
        let pause = STORM_PAUSE_MS + STORM_PAUSE_PER_PANE_MS * to_read(&self.streaming) as Millis;
        let until = now + pause.min(STORM_PAUSE_MAX_MS);
        self.paused_until = Some(until);
        Some(until)
    }

    /// Ends the pause; the panes that streamed meanwhile.
    pub fn end(&mut self) -> BTreeSet<u32> {
        std::mem::take(self).streaming
    }
}

/// Host command runs: never more than one in flight; one that never
/// answers is given up after `HOST_RUN_TIMEOUT_MS` (its late answer is
/// ignored) and retried.
#[derive(Debug, Default)]
pub struct HostRuns {
    /// A run was started and has not answered.
    pub in_flight: bool,
    /// A run is wanted as soon as none is in flight.
    pub wanted: bool,
    /// When the last run started.
    pub last_start: Millis,
    request: u64,
    /// Why the last run failed (shown in the bar until one succeeds).
    pub error: Option<String>,
}

impl HostRuns {
    /// Starts a run; its request number.
    pub fn start(&mut self, now: Millis) -> u64 {
        self.request += 1;
        self.in_flight = true;
        self.wanted = false;
        self.last_start = now;
        self.request
    }

    /// True when an answer with this request number is the one awaited (it
    /// ends the run).
    pub fn answers(&mut self, request: Option<&String>) -> bool {
        let current = self.in_flight && request.is_some_and(|r| *r == self.request.to_string());
        if current {
            self.in_flight = false;
        }
        current
    }

    /// Gives up a run that has not answered for too long; true if it did.
    pub fn give_up_if_lost(&mut self, now: Millis) -> bool {
        let lost = self.in_flight && now.saturating_sub(self.last_start) >= HOST_RUN_TIMEOUT_MS;
        if lost {
            self.in_flight = false;
            self.wanted = true;
        }
        lost
    }
}

/// How long a `turnstile pull` waits for news before it answers none.
pub const PULL_WAIT_MS: Millis = 5_000;
/// A pull that has not answered by then is given up and started again.
pub const PULL_LOST_MS: Millis = PULL_WAIT_MS + 10_000;
/// After a failed pull, the next one waits this long.
pub const PULL_RETRY_MS: Millis = 1_000;

/// While news flow, the leader looks in the mailbox itself this often.
pub const LOOK_MS: Millis = 25;
/// After this many looks in a row with nothing new, a pull waits instead.
pub const QUIET_LOOKS: u32 = 12;

/// How the leader takes the watcher's news, one reader at a time. A
/// `turnstile pull` waits for news for free but costs a process per
/// answer; a look of the leader's own (in zellij's `/tmp`) costs a timer
/// event whether or not there is news. So: a pull waits while all is
/// quiet; once it brings news, the leader looks every `LOOK_MS` while news
/// keep coming, and after `QUIET_LOOKS` empty looks hands back to a pull.
/// Where the leader cannot look, pulls alone carry the news.
#[derive(Debug, Default)]
pub struct Pulls {
    /// When the pull in flight started, and its request number.
    in_flight: Option<(Millis, u64)>,
    /// The number of the newest change taken from the mailbox.
    pub after: u64,
    /// Where the leader's looks left the mailbox's journal.
    pub cursor: crate::mailbox::Cursor,
    /// When the leader last looked in the mailbox itself (or began to).
    pub looked_at: Millis,
    /// The leader looks (and no pull runs).
    looking: bool,
    /// Looks in a row that found nothing new.
    quiet_looks: u32,
    /// No pull before this (after a failure).
    not_before: Millis,
    request: u64,
    /// Pulls that failed in a row.
    pub failures: u32,
}

impl Pulls {
    /// True when a pull may start now: none in flight (or the one in
    /// flight is lost), and no failure asks to wait.
    pub fn due(&self, now: Millis) -> bool {
        let lost = |(at, _): (Millis, u64)| now.saturating_sub(at) >= PULL_LOST_MS;
        self.in_flight.is_none_or(lost) && now >= self.not_before
    }

    /// Starts a pull; its request number.
    pub fn start(&mut self, now: Millis) -> u64 {
        self.request += 1;
        self.in_flight = Some((now, self.request));
        self.request
    }

    /// True when an answer with this request number is the one awaited (it
    /// ends the pull).
    pub fn answers(&mut self, request: Option<&String>) -> bool {
        let current = self
            .in_flight
            .is_some_and(|(_, r)| request.is_some_and(|q| *q == r.to_string()));
        if current {
            self.in_flight = None;
        }
        current
    }

    /// The pull failed: the next one waits a little.
    pub fn failed(&mut self, now: Millis) {
        self.failures += 1;
        self.not_before = now + PULL_RETRY_MS;
    }

    /// News came (by a pull or a look): the leader looks from now on.
    pub fn start_looking(&mut self, now: Millis) {
        self.looking = true;
        self.quiet_looks = 0;
        self.looked_at = now;
    }

    /// A look found nothing new: true when it is time to wait with a pull.
    pub fn quiet_look(&mut self) -> bool {
        self.quiet_looks += 1;
        if self.quiet_looks >= QUIET_LOOKS {
            self.looking = false;
        }
        !self.looking
    }

    /// A look failed: pulls take over.
    pub fn stop_looking(&mut self) {
        self.looking = false;
    }

    /// True while the leader looks itself (no pull runs).
    pub fn looking(&self) -> bool {
        self.looking
    }

    /// When to look next, while looking.
    pub fn next_look(&self) -> Option<Millis> {
        self.looking.then_some(self.looked_at + LOOK_MS)
    }
}

/// The session's `turnstile watch`: while it runs it posts every change to
/// the mailbox, the leader pulls them, and the bar does not poll the host.
#[derive(Debug, Default)]
pub struct WatcherRun {
    /// Started and not exited (or another one serves the session).
    pub running: bool,
    /// When to start it again after it died (`None`: not planned).
    restart_at: Option<Millis>,
    retry_ms: Millis,
}

impl WatcherRun {
    /// It was started.
    pub fn started(&mut self) {
        self.running = true;
        self.restart_at = None;
    }

    /// True when a planned restart is due.
    pub fn restart_due(&self, now: Millis) -> bool {
        self.restart_at.is_some_and(|at| now >= at)
    }

    /// It died: start it again later, waiting longer after each death.
    pub fn plan_restart(&mut self, now: Millis) {
        let retry = self.retry_ms.clamp(WATCHER_RETRY_MS, WATCHER_RETRY_MAX_MS);
        self.restart_at = Some(now + retry);
        self.retry_ms = (retry * 2).min(WATCHER_RETRY_MAX_MS);
    }
}
