//! The arbiter: fuses the verdicts of every source about one pane.
//!
//! Pure and deterministic: observations carry their time, nothing here reads
//! a clock. The rules (ARCHITECTURE.md, invariants; why: docs/design-notes.md):
//!
//! - transcript and hook verdicts are authoritative; the one that changed
//!   last speaks for both;
//! - a screen `done` is dropped while an authoritative source says working;
//! - evidence that a new turn started (screen activity, session busy) after
//!   an authoritative turn end shows working at once;
//! - a transcript *candidate* done (an answer that may still be a preamble)
//!   becomes done when a quiet screen or an idle session is observed after
//!   it, or, where hooks run, when a turn-end hook marks the end;
//! - a turn end seen only by the screen or the session (Escape during an API
//!   retry writes nothing) replaces an authoritative working once it has held
//!   for [`SETTLE_MS`];
//! - every change of the fused state is reported as an [`Edge`] carrying its
//!   source, so routing can require a confirmed done.

use crate::screen::Rule;
use crate::verdict::{Millis, Source, State, Verdict};
use serde::Serialize;

/// How long a non-authoritative turn end must hold before it overrides an
/// authoritative working.
pub const SETTLE_MS: Millis = 1_500;

/// The fused view of one pane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fused {
    /// The state shown to people.
    pub state: State,
    /// The source that decided (`None` before any observation).
    pub source: Option<Source>,
    /// True when an authoritative source backs a turn end (routing may act).
    pub confirmed: bool,
    /// Why, for people.
    pub reason: String,
    /// When the fused state last changed.
    pub since: Millis,
    /// Evidence key of the deciding verdict.
    pub key: Option<String>,
}

impl Default for Fused {
    fn default() -> Self {
        Fused {
            state: State::Unknown,
            source: None,
            confirmed: false,
            reason: "no observation yet".into(),
            since: 0,
            key: None,
        }
    }
}

/// A change of the fused state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Edge {
    /// The state before.
    pub from: State,
    /// The state after.
    pub to: State,
    /// The fused view after the change.
    pub now: Fused,
}

impl Edge {
    /// A done that routing may act on.
    pub fn is_confirmed_done(&self) -> bool {
        self.to == State::Done && self.now.confirmed
    }
}

/// One source's latest verdict and when its state last changed.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Observation {
    verdict: Verdict,
    since: Millis,
}

/// Fuses the sources of one pane.
#[derive(Debug, Clone, Default)]
pub struct PaneArbiter {
    transcript: Option<Observation>,
    hook: Option<Observation>,
    session: Option<Observation>,
    screen: Option<Observation>,
    /// Where the transcript last said a turn runs with nothing that may end
    /// it (working, no candidate: the offset of that line): a hook's done
    /// that read the log short of it is an older turn's.
    turn_running_at: Option<u64>,
    /// The newest hook verdict that ended (or marked the end of) the turn
    /// under way: kept apart from the newest hook, which a later event of
    /// the same turn (a permission notice fired late, an idle notice that
    /// raced the turn-end hook) may replace. A hook's turn start forgets it.
    turn_end_hook: Option<Verdict>,
    /// When the newest hook that starts a turn was fired: an end reported
    /// late is this turn's only when it is newer.
    turn_started_at: Millis,
    fused: Fused,
}

impl PaneArbiter {
    /// An arbiter with no observation.
    pub fn new() -> Self {
        PaneArbiter::default()
    }

    /// The current fused view.
    pub fn fused(&self) -> &Fused {
        &self.fused
    }

    /// True while the transcript holds an unconfirmed done candidate.
    pub fn has_candidate(&self) -> bool {
        self.transcript
            .as_ref()
            .is_some_and(|t| t.verdict.candidate == Some(State::Done) && self.fused.state != State::Done)
    }

    /// The screen's latest verdict, if any.
    pub fn screen_verdict(&self) -> Option<&Verdict> {
        self.screen.as_ref().map(|o| &o.verdict)
    }

    /// True when the agent's own session status file reports on this pane
    /// (it says busy, waiting and idle as they happen).
    pub fn has_session_status(&self) -> bool {
        self.session.is_some()
    }

    /// True when only its screen has said anything of the pane: no
    /// transcript, hook or session status.
    pub fn screen_only(&self) -> bool {
        self.transcript.is_none() && self.hook.is_none() && self.session.is_none()
    }

    /// Records a verdict and re-fuses at the verdict's time.
    pub fn observe(&mut self, verdict: Verdict) -> Option<Edge> {
        let at = verdict.at;
        let turn_runs =
            verdict.source == Source::Transcript && verdict.state == State::Working && verdict.candidate.is_none();
        if verdict.source == Source::Hook {
            let ended_before = self.turn_end_hook.clone();
            self.note_turn_end_hook(&verdict);
            let known = self.hook.as_ref().is_some_and(|old| {
                marks_what_is_known(&old.verdict, &verdict) || is_stale_hook(&old.verdict, &verdict)
            });
            if known || self.echoes_the_turn_end(&verdict) {
                // A late report of an older event may still be the turn's
                // end (hook processes finish in either order under load).
                let newest = self.hook.as_ref().map_or(at, |h| h.verdict.at.max(at));
                return (self.turn_end_hook != ended_before)
                    .then(|| self.refuse(newest))
                    .flatten();
            }
        }
        let slot = self.slot(verdict.source);
        let since = match slot {
            Some(old) if same_evidence(&old.verdict, &verdict) => old.since,
            _ => at,
        };
        *slot = Some(Observation { verdict, since });
        if turn_runs {
            self.turn_running_at = slot.as_ref().and_then(|o| o.verdict.key.as_deref()?.parse().ok());
        }
        self.refuse(at)
    }

    fn slot(&mut self, source: Source) -> &mut Option<Observation> {
        match source {
            Source::Transcript => &mut self.transcript,
            Source::Hook => &mut self.hook,
            Source::Session => &mut self.session,
            Source::Screen => &mut self.screen,
        }
    }

    /// Keeps a hook's turn end (a done, or a mark of one), also one whose
    /// report came after a newer hook's, until a newer hook says a turn
    /// starts (working with nothing that may end it) or a session starts.
    fn note_turn_end_hook(&mut self, verdict: &Verdict) {
        let at = verdict.at;
        let ends = verdict.state == State::Done || verdict.candidate == Some(State::Done);
        if !ends && matches!(verdict.state, State::Working | State::Idle) {
            self.turn_started_at = self.turn_started_at.max(at);
            if self.turn_end_hook.as_ref().is_some_and(|end| end.at <= at) {
                self.turn_end_hook = None;
            }
        } else if ends
            && at >= self.turn_started_at
            && self
                .turn_end_hook
                .as_ref()
                .is_none_or(|end| end.at <= at && end.key != verdict.key)
        {
            self.turn_end_hook = Some(verdict.clone());
        }
    }

    /// A hook's interrupted after a hook's done of the same turn (no turn
    /// started between): nothing was left to interrupt. Seen with Qwen Code
    /// under load: its `idle_prompt` hook read the pane's record before the
    /// `Stop` hook, started 90 ms earlier, wrote it, and the log before the
    /// answer reached it, and took the turn for an Escape.
    fn echoes_the_turn_end(&self, verdict: &Verdict) -> bool {
        verdict.state == State::Interrupted
            && self
                .turn_end_hook
                .as_ref()
                .is_some_and(|end| end.state == State::Done && end.at <= verdict.at)
    }

    /// Forgets one source (e.g. the screen of a pane scrolled into history).
    pub fn forget(&mut self, source: Source, now: Millis) -> Option<Edge> {
        self.drop_source(source);
        self.refuse(now)
    }

    /// Drops what `source` said (a hook's kept turn end with it), without
    /// re-fusing.
    fn drop_source(&mut self, source: Source) {
        *self.slot(source) = None;
        if source == Source::Hook {
            self.turn_end_hook = None;
        }
    }

    /// Drops what the transcript, hooks and session status said (a remote
    /// agent's relay is lost); the next [`PaneArbiter::refuse`] fuses the
    /// screen alone.
    pub fn forget_authoritative(&mut self) {
        for source in [Source::Transcript, Source::Hook, Source::Session] {
            self.drop_source(source);
        }
    }

    /// Re-fuses at `now` (time alone can settle a pending turn end).
    pub fn refuse(&mut self, now: Millis) -> Option<Edge> {
        let decision = self.decide(now);
        let state_changed = decision.state != self.fused.state;
        let new_turn_end = decision.state.is_turn_end() && decision.key != self.fused.key;
        let newly_confirmed = decision.confirmed && !self.fused.confirmed;
        let from = self.fused.state;
        let since = if state_changed { now } else { self.fused.since };
        self.fused = Fused { since, ..decision };
        (state_changed || new_turn_end || newly_confirmed).then(|| Edge {
            from,
            to: self.fused.state,
            now: self.fused.clone(),
        })
    }

    fn authoritative(&self) -> Option<&Observation> {
        let hook = self.hook.as_ref().filter(|h| !self.wait_superseded_by_screen(h));
        match (&self.transcript, hook) {
            (Some(t), Some(h)) if self.log_ended_past_the_mark(t, h) => Some(t),
            (Some(t), Some(h)) => Some(if h.since > t.since { h } else { t }),
            (t, h) => t.as_ref().or(h),
        }
    }

    /// True when hook `h` only marks the turn's end (its agent's log did not
    /// show the end when it ran: its read came too soon, or ran out of time)
    /// and the log, read since this turn started, ended a turn past what the
    /// hook read: the log says how the turn the mark ends ended, even when
    /// it was read before the mark's event fired. (Seen in CI under load:
    /// OpenCode's `session.idle` after an Escape stayed `working`.)
    fn log_ended_past_the_mark(&self, t: &Observation, h: &Observation) -> bool {
        let mark = h.verdict.state == State::Working && h.verdict.candidate == Some(State::Done);
        let this_turns = t.verdict.state.is_turn_end() && t.since >= self.turn_started_at;
        let offset = t.verdict.key.as_deref().and_then(|k| k.parse::<u64>().ok());
        let read = h.verdict.log_seen.or(self.turn_running_at);
        mark && this_turns && offset.zip(read).is_some_and(|(end, read)| end > read)
    }

    /// A hook's waiting that a screen showing the turn running again, seen
    /// after it, ended (2.1.39 sends its permission Notification seconds
    /// after the dialog, maybe after the user already answered it).
    fn wait_superseded_by_screen(&self, hook: &Observation) -> bool {
        hook.verdict.state == State::Waiting
            && self
                .screen
                .as_ref()
                .is_some_and(|s| s.verdict.state == State::Working && s.verdict.at > hook.verdict.at)
    }

    /// What a pending question of the log, or of the hook whose wait still
    /// holds (`hook_wait`: not an old question's), asks ([`crate::question`]).
    fn question<'a>(&'a self, hook_wait: Option<&'a Observation>) -> Option<&'a str> {
        [self.transcript.as_ref(), hook_wait]
            .into_iter()
            .flatten()
            .map(|o| &o.verdict)
            .find(|v| v.state == State::Waiting && crate::question::is_question(&v.reason))
            .map(|v| v.reason.as_str())
    }

    fn decide(&self, now: Millis) -> Fused {
        let auth = self.authoritative();
        // The session file and the screen say what is true *now*: their
        // waiting holds even when the transcript line of the tool call that
        // asked lands after it. A hook is an event: newer evidence ends it.
        let hook_wait = self
            .hook
            .as_ref()
            .filter(|h| auth.is_none_or(|a| h.since >= a.since))
            .filter(|h| !self.wait_superseded_by_screen(h));
        if let Some(w) = [self.session.as_ref(), self.screen.as_ref(), hook_wait]
            .into_iter()
            .flatten()
            .find(|o| o.verdict.state == State::Waiting)
        {
            let mut fused = from_obs(w, false, "the agent waits for the user");
            if let Some(question) = self.question(hook_wait) {
                // What it asks, in the log's words, whoever saw it first.
                fused.reason = question.to_owned();
            }
            return fused;
        }
        match auth {
            Some(a) if a.verdict.state.is_turn_end() => self.after_turn_end(a),
            Some(a) => self.while_working(a, now),
            None => self.without_authority(),
        }
    }

    /// An authoritative turn end, unless a newer turn visibly started. A
    /// prompt echo alone is no such sign: 2.1.39 draws no banner after most
    /// turns, so the finished turn's own echo stays on screen, and a redraw
    /// (the input box's suggestion appearing) re-reads it later.
    fn after_turn_end(&self, a: &Observation) -> Fused {
        let newer_start = [&self.screen, &self.session]
            .into_iter()
            .flatten()
            .filter(|o| o.verdict.key.as_deref() != Some(Rule::PromptEcho.id()))
            .find(|o| o.verdict.state == State::Working && o.since > a.since);
        match newer_start {
            Some(o) => from_obs(o, false, "a new turn started after the confirmed end"),
            None => from_obs(a, true, ""),
        }
    }

    /// An authoritative working (or unknown/idle), maybe with a done candidate.
    fn while_working(&self, a: &Observation, now: Millis) -> Fused {
        if a.verdict.candidate == Some(State::Done) {
            if let Some(confirmation) = self.candidate_confirmation(a) {
                let mut fused = from_obs(a, true, "");
                fused.state = State::Done;
                fused.confirmed = true;
                fused.reason = format!("{} — confirmed: {confirmation}", a.verdict.reason);
                return fused;
            }
        }
        // `>=`: the turn's prompt line and the session's return to idle may
        // first be seen in one report (Escape right after Enter); holding
        // for SETTLE_MS against a working transcript is the real test.
        let settled_end = [&self.screen, &self.session].into_iter().flatten().find(|o| {
            matches!(o.verdict.state, State::Failed | State::Interrupted | State::Idle)
                && o.since >= a.since
                && now.saturating_sub(o.since) >= SETTLE_MS
        });
        if let Some(o) = settled_end {
            return from_obs(o, false, "the turn ended where the transcript cannot see it");
        }
        if a.verdict.state == State::Unknown {
            return self.without_authority();
        }
        let dropped = self.screen.as_ref().is_some_and(|s| s.verdict.state == State::Done);
        let note = if dropped {
            "screen done dropped: the authoritative source says working"
        } else {
            ""
        };
        from_obs(a, false, note)
    }

    /// Quiet screen or idle session observed after the candidate appeared.
    /// Not for a pane whose agent runs our hooks: its Stop hook (or the end
    /// markers the hook leaves in the transcript) confirms a moment later,
    /// and a screen caught between two frames must not.
    fn candidate_confirmation(&self, a: &Observation) -> Option<&'static str> {
        if self.hook.is_some() {
            // A turn-end hook that could not see the answer (an old release's
            // Stop runs before it is written; a hook's read ran out of time)
            // marks the end: the transcript's answer, seen before or after
            // it, is the turn's end. So is a hook's done of this turn that
            // the answer follows (Qwen Code's Stop may run before the
            // answer reaches its log). The turn's end hook counts even when
            // a later hook event of the same turn is the newest.
            let hook_marks_the_end = self.turn_end_hook.as_ref().is_some_and(|end| {
                let done_of_this_turn = end.state == State::Done
                    && end
                        .log_seen
                        .zip(self.turn_running_at)
                        .is_some_and(|(seen, running)| seen >= running);
                end.candidate == Some(State::Done) || done_of_this_turn
            });
            let answer_stands = self
                .transcript
                .as_ref()
                .is_some_and(|t| t.verdict.candidate == Some(State::Done) && !t.verdict.state.is_turn_end());
            return (hook_marks_the_end && answer_stands)
                .then_some("the turn-end hook ran; the transcript's answer stands");
        }
        let quiet_screen = self.screen.as_ref().is_some_and(|s| {
            s.verdict.at >= a.since && matches!(s.verdict.state, State::Done | State::Unknown | State::Idle)
        });
        let idle_session = self
            .session
            .as_ref()
            .is_some_and(|s| s.verdict.at >= a.since && s.verdict.state == State::Idle);
        if idle_session {
            Some("the session status is idle")
        } else if quiet_screen {
            Some("the screen shows no activity")
        } else {
            None
        }
    }

    /// No authoritative source: session status and screen guesses.
    fn without_authority(&self) -> Fused {
        let session_busy = self.session.as_ref().filter(|s| s.verdict.state == State::Working);
        match (&self.screen, session_busy) {
            (Some(s), Some(busy)) if s.verdict.state.is_turn_end() && s.since <= busy.since => {
                from_obs(busy, false, "screen end dropped: the session is busy")
            }
            (Some(s), _) if s.verdict.state != State::Unknown => from_obs(s, false, ""),
            _ => match self
                .session
                .as_ref()
                .or(self.transcript.as_ref())
                .or(self.hook.as_ref())
            {
                Some(o) => from_obs(o, false, ""),
                None => Fused::default(),
            },
        }
    }
}

/// True when `new` only marks the end of the event `old` already reported
/// in full (a hook's record read after its report): it adds nothing.
fn marks_what_is_known(old: &Verdict, new: &Verdict) -> bool {
    old.key.is_some() && old.key == new.key && new.state == State::Working && new.candidate == Some(State::Done)
}

/// True when `new` is a hook's report of an event older than the one `old`
/// reported: hook processes of events a few ms apart (OpenCode's last
/// `session.status` busy and its `session.idle`) finish in either order.
fn is_stale_hook(old: &Verdict, new: &Verdict) -> bool {
    new.source == Source::Hook && old.source == Source::Hook && new.at < old.at
}

/// Same state, candidate and key: not a new observation.
fn same_evidence(old: &Verdict, new: &Verdict) -> bool {
    old.state == new.state && old.candidate == new.candidate && old.key == new.key
}

fn from_obs(o: &Observation, authoritative_end: bool, note: &str) -> Fused {
    let v = &o.verdict;
    let reason = if note.is_empty() {
        v.reason.clone()
    } else {
        format!("{note}: {}", v.reason)
    };
    Fused {
        state: v.state,
        source: Some(v.source),
        confirmed: authoritative_end && v.source.is_authoritative() && v.state.is_turn_end(),
        reason,
        since: o.since,
        key: v.key.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(state: State, source: Source, at: Millis) -> Verdict {
        Verdict::new(state, source, format!("{source} says {state}"), at)
    }

    fn keyed(state: State, key: &str, at: Millis) -> Verdict {
        Verdict {
            key: Some(key.into()),
            ..v(state, Source::Transcript, at)
        }
    }

    #[test]
    fn the_finished_turns_own_prompt_echo_is_no_new_turn() {
        let mut a = PaneArbiter::new();
        let echo = |at| Verdict {
            key: Some(Rule::PromptEcho.id().into()),
            ..v(State::Working, Source::Screen, at)
        };
        a.observe(echo(10));
        a.observe(keyed(State::Done, "end", 20));
        a.observe(v(State::Unknown, Source::Screen, 21)); // a redraw in between
        a.observe(echo(22));
        assert_eq!(a.fused().state, State::Done, "{:?}", a.fused());
        let spinner = Verdict {
            key: Some(Rule::Spinner.id().into()),
            ..v(State::Working, Source::Screen, 30)
        };
        a.observe(spinner);
        assert_eq!(a.fused().state, State::Working, "a spinner is a new turn");
    }

    #[test]
    fn a_late_permission_hook_does_not_outlive_a_screen_that_runs_again() {
        let mut a = PaneArbiter::new();
        a.observe(keyed(State::Working, "tool", 10));
        a.observe(v(State::Working, Source::Screen, 12));
        a.observe(v(State::Waiting, Source::Hook, 20)); // Notification, late
        assert_eq!(a.fused().state, State::Waiting, "nothing newer yet");
        a.observe(v(State::Working, Source::Screen, 21)); // the spinner turns on
        assert_eq!(a.fused().state, State::Working);
    }

    #[test]
    fn an_old_releases_stop_before_its_answer_is_confirmed_by_the_answer() {
        let mut a = PaneArbiter::new();
        a.observe(v(State::Working, Source::Hook, 10)); // UserPromptSubmit
        a.observe(keyed(State::Working, "prompt", 11));
        let stop = Verdict {
            candidate: Some(State::Done),
            ..v(State::Working, Source::Hook, 20)
        };
        a.observe(stop);
        assert_eq!(a.fused().state, State::Working, "no answer yet: not done");
        let answer = Verdict {
            candidate: Some(State::Done),
            ..keyed(State::Working, "answer", 25)
        };
        let edge = a.observe(answer).expect("the answer ends the turn");
        assert!(edge.is_confirmed_done(), "{edge:?}");
    }

    /// Seen in CI on a busy machine (Gemini CLI): the chat log's answer was
    /// read first, and the `AfterAgent` hook then could not read the log in
    /// its time budget. The hook marks the end; the answer read before it
    /// stands.
    #[test]
    fn a_turn_end_hook_that_cannot_see_the_answer_confirms_the_one_seen_before() {
        let mut a = PaneArbiter::new();
        a.observe(v(State::Working, Source::Hook, 10)); // BeforeAgent
        let answer = Verdict {
            candidate: Some(State::Done),
            ..keyed(State::Working, "answer", 20)
        };
        a.observe(answer);
        assert_eq!(a.fused().state, State::Working, "a candidate alone is no done");
        let after_agent = Verdict {
            candidate: Some(State::Done),
            ..v(State::Working, Source::Hook, 30)
        };
        let edge = a.observe(after_agent).expect("the hook ends the turn");
        assert!(edge.is_confirmed_done(), "{edge:?}");
    }

    /// Seen live with Qwen Code: its `Stop` ran before the answer reached
    /// its log; the answer then read as a candidate, newer than the hook's
    /// done, and the pane stayed working.
    #[test]
    fn a_hooks_done_confirms_the_answer_that_lands_after_it_but_not_a_later_turns() {
        let mut a = PaneArbiter::new();
        let answer = |at: Millis| Verdict {
            candidate: Some(State::Done),
            ..keyed(State::Working, &format!("{}", at * 100), at)
        };
        // Keys are the offsets of the deciding log lines.
        a.observe(keyed(State::Working, "300", 10)); // a tool's result
        let stop = Verdict {
            log_seen: Some(300),
            ..v(State::Done, Source::Hook, 20)
        };
        a.observe(stop);
        // Read by the watcher after the hook ran (its clock is later).
        a.observe(keyed(State::Working, "300", 22));
        let edge = a.observe(answer(25)).expect("the answer lands");
        assert!(edge.is_confirmed_done(), "{edge:?}");
        // The next turn's prompt hook is lost: its preamble stays working.
        a.observe(keyed(State::Working, "900", 40));
        a.observe(answer(45));
        assert_eq!(a.fused().state, State::Working, "{:?}", a.fused());
    }

    /// Seen in CI under load (OpenCode, Escape during a tool): the log's
    /// interrupted was read before `session.idle` fired, and that hook, whose
    /// read of the log came too soon, only marked the end. The log's end
    /// stands; a mark with nothing past what it read stays working.
    #[test]
    fn a_logs_end_read_before_a_later_hooks_mark_of_it_stands() {
        for end in [State::Interrupted, State::Failed, State::Done] {
            let mut a = PaneArbiter::new();
            a.observe(v(State::Working, Source::Hook, 5)); // chat.message
            a.observe(keyed(State::Working, "7", 10)); // a tool runs
            a.observe(keyed(end, "9", 20));
            let mark = |log_seen| Verdict {
                candidate: Some(State::Done),
                log_seen,
                ..v(State::Working, Source::Hook, 30)
            };
            a.observe(mark(Some(7)));
            assert_eq!(a.fused().state, end, "{:?}", a.fused());
            assert!(a.fused().confirmed);
            let mut a = PaneArbiter::new();
            a.observe(v(State::Working, Source::Hook, 5));
            a.observe(keyed(State::Working, "7", 10));
            a.observe(mark(None));
            assert_eq!(
                a.fused().state,
                State::Working,
                "nothing past the mark: {:?}",
                a.fused()
            );
        }
    }

    /// An earlier turn's end read before this turn's start is not what a
    /// mark of this turn's end ends.
    #[test]
    fn an_earlier_turns_end_is_not_what_a_later_mark_ends() {
        let mut a = PaneArbiter::new();
        a.observe(v(State::Working, Source::Hook, 5));
        a.observe(keyed(State::Working, "7", 10));
        a.observe(keyed(State::Done, "9", 20)); // turn 1's answer
        a.observe(v(State::Working, Source::Hook, 40)); // turn 2 starts; its rows are not read yet
        a.observe(Verdict {
            candidate: Some(State::Done),
            ..v(State::Working, Source::Hook, 50)
        });
        assert_eq!(a.fused().state, State::Working, "{:?}", a.fused());
    }

    /// Seen in CI under two busy loops (Qwen Code, an approved tool): the
    /// newest hook event after `Stop` was a `Notification` of the same turn
    /// (a late permission notice, or an `idle_prompt` that raced the `Stop`
    /// hook and took the turn for an Escape). The turn's end still confirms
    /// the answer that lands after it, and no interrupted is shown.
    #[test]
    fn a_later_hook_event_of_the_same_turn_keeps_its_end() {
        let stop = Verdict {
            log_seen: Some(300),
            ..v(State::Done, Source::Hook, 20)
        };
        let answer = Verdict {
            candidate: Some(State::Done),
            ..keyed(State::Working, "500", 30)
        };
        for late in [State::Waiting, State::Interrupted] {
            let mut a = PaneArbiter::new();
            a.observe(v(State::Working, Source::Hook, 5)); // UserPromptSubmit
            a.observe(keyed(State::Working, "300", 10)); // the tool's result
            a.observe(stop.clone());
            a.observe(v(late, Source::Hook, 22));
            assert_ne!(
                a.fused().state,
                State::Interrupted,
                "{late}: nothing was left to interrupt"
            );
            a.observe(v(State::Working, Source::Screen, 25)); // the answer streams
            let edge = a.observe(answer.clone());
            assert!(edge.is_some_and(|e| e.is_confirmed_done()), "{late}: {:?}", a.fused());
            next_turns_preamble_is_no_done(&mut a);
        }
    }

    /// Seen in CI under two busy loops (Qwen Code, an approved tool): the
    /// `Stop` hook's process finished after a later `Notification`'s, so
    /// its report came second and older than the pane's newest hook. It is
    /// still the turn's end; an older turn's end reported late is not.
    #[test]
    fn a_turn_end_reported_after_a_later_hook_event_still_ends_the_turn() {
        let mut a = PaneArbiter::new();
        a.observe(v(State::Working, Source::Hook, 5)); // UserPromptSubmit
        a.observe(keyed(State::Working, "300", 10)); // the tool's result
        a.observe(v(State::Waiting, Source::Hook, 22)); // a late Notification, first
        a.observe(v(State::Working, Source::Screen, 23));
        let stop = Verdict {
            log_seen: Some(300),
            ..v(State::Done, Source::Hook, 20)
        };
        a.observe(stop);
        let answer = Verdict {
            candidate: Some(State::Done),
            ..keyed(State::Working, "500", 30)
        };
        let edge = a.observe(answer);
        assert!(edge.is_some_and(|e| e.is_confirmed_done()), "{:?}", a.fused());
        // The previous Stop, reported late again, is no end of the next turn.
        a.observe(v(State::Working, Source::Hook, 40));
        a.observe(Verdict {
            candidate: Some(State::Done),
            ..v(State::Working, Source::Hook, 20)
        });
        next_turns_preamble_is_no_done(&mut a);
    }

    /// The next turn starts (its prompt hook at 40, its log at 41); its
    /// preamble, a candidate, is no done.
    fn next_turns_preamble_is_no_done(a: &mut PaneArbiter) {
        a.observe(v(State::Working, Source::Hook, 40));
        a.observe(keyed(State::Working, "900", 41));
        a.observe(Verdict {
            candidate: Some(State::Done),
            ..keyed(State::Working, "950", 45)
        });
        assert_eq!(a.fused().state, State::Working, "{:?}", a.fused());
    }

    /// The watcher posts the mark a hook's record leaves (its report may be
    /// lost); read after the report itself, the mark must not undo it.
    #[test]
    fn a_records_mark_never_replaces_the_report_of_the_same_hook_event() {
        let mut a = PaneArbiter::new();
        let hook = |state, candidate| Verdict {
            candidate,
            key: Some("AfterAgent@30".into()),
            ..v(state, Source::Hook, 30)
        };
        a.observe(keyed(State::Interrupted, "cancel", 25));
        a.observe(hook(State::Interrupted, None));
        a.observe(hook(State::Working, Some(State::Done)));
        assert_eq!(a.hook.as_ref().map(|h| h.verdict.state), Some(State::Interrupted));
        let next_turn = Verdict {
            key: Some("BeforeAgent@40".into()),
            ..v(State::Working, Source::Hook, 40)
        };
        a.observe(next_turn);
        assert_eq!(a.hook.as_ref().map(|h| h.verdict.state), Some(State::Working));
    }

    #[test]
    fn a_hook_report_of_an_older_event_arriving_late_changes_nothing() {
        // OpenCode fires `session.status` busy 5 ms before `session.idle`:
        // their hook processes may finish in either order.
        let mut a = PaneArbiter::new();
        a.observe(keyed(State::Done, "answer", 100));
        a.observe(v(State::Done, Source::Hook, 105));
        a.observe(v(State::Working, Source::Hook, 100));
        assert_eq!(a.hook.as_ref().map(|h| h.verdict.state), Some(State::Done));
        assert_eq!(a.decide(200).state, State::Done);
        a.observe(v(State::Working, Source::Hook, 300)); // the next turn
        assert_eq!(a.decide(300).state, State::Working);
    }

    #[test]
    fn a_preamble_under_a_running_turn_is_not_confirmed_by_the_prompt_hook() {
        let mut a = PaneArbiter::new();
        a.observe(v(State::Working, Source::Hook, 10)); // UserPromptSubmit
        let preamble = Verdict {
            candidate: Some(State::Done),
            ..keyed(State::Working, "preamble", 25)
        };
        a.observe(preamble);
        assert_ne!(a.fused().state, State::Done);
    }

    #[test]
    fn screen_done_alone_is_an_unconfirmed_guess() {
        let mut a = PaneArbiter::new();
        let edge = a.observe(v(State::Done, Source::Screen, 10)).unwrap();
        assert_eq!(edge.to, State::Done);
        assert!(!edge.is_confirmed_done());
    }

    #[test]
    fn screen_done_is_dropped_while_transcript_says_working() {
        let mut a = PaneArbiter::new();
        a.observe(keyed(State::Working, "1", 10));
        assert!(a.observe(v(State::Done, Source::Screen, 20)).is_none());
        assert_eq!(a.fused().state, State::Working);
        assert!(a.fused().reason.contains("dropped"));
    }

    #[test]
    fn transcript_confirms_and_edge_carries_source() {
        let mut a = PaneArbiter::new();
        a.observe(keyed(State::Working, "1", 10));
        a.observe(v(State::Done, Source::Screen, 20));
        let edge = a.observe(keyed(State::Done, "2", 30)).unwrap();
        assert!(edge.is_confirmed_done());
        assert_eq!(edge.now.source, Some(Source::Transcript));
    }

    #[test]
    fn authoritative_source_corrects_a_screen_guess() {
        let mut a = PaneArbiter::new();
        a.observe(v(State::Done, Source::Screen, 10));
        let edge = a.observe(keyed(State::Working, "1", 11)).unwrap();
        assert_eq!((edge.from, edge.to), (State::Done, State::Working));
    }

    #[test]
    fn new_turn_on_screen_after_confirmed_done_shows_working_at_once() {
        let mut a = PaneArbiter::new();
        a.observe(keyed(State::Done, "1", 10));
        a.observe(v(State::Done, Source::Screen, 10));
        let edge = a.observe(v(State::Working, Source::Screen, 50)).unwrap();
        assert_eq!(edge.to, State::Working);
        // The transcript re-read of the old turn (same key) does not undo it.
        assert!(a.observe(keyed(State::Done, "1", 60)).is_none());
        assert_eq!(a.fused().state, State::Working);
    }

    #[test]
    fn hook_prompt_submit_beats_a_stale_transcript_done() {
        let mut a = PaneArbiter::new();
        a.observe(keyed(State::Done, "1", 10));
        a.observe(v(State::Working, Source::Hook, 20));
        a.observe(keyed(State::Done, "1", 25));
        assert_eq!(a.fused().state, State::Working);
        let edge = a.observe(v(State::Done, Source::Hook, 40)).unwrap();
        assert!(edge.is_confirmed_done());
    }

    #[test]
    fn a_second_done_with_a_new_key_is_a_new_edge() {
        let mut a = PaneArbiter::new();
        a.observe(keyed(State::Done, "1", 10));
        let edge = a.observe(keyed(State::Done, "2", 20)).unwrap();
        assert_eq!((edge.from, edge.to), (State::Done, State::Done));
    }

    #[test]
    fn candidate_done_needs_a_quiet_screen_observed_after_it() {
        let mut a = PaneArbiter::new();
        a.observe(v(State::Unknown, Source::Screen, 5)); // quiet, but before the candidate
        let candidate = Verdict {
            candidate: Some(State::Done),
            ..keyed(State::Working, "9", 10)
        };
        a.observe(candidate);
        assert_eq!(a.fused().state, State::Working);
        a.observe(v(State::Working, Source::Screen, 11));
        assert_eq!(a.fused().state, State::Working);
        let edge = a.observe(v(State::Unknown, Source::Screen, 12)).unwrap();
        assert!(edge.is_confirmed_done());
        assert!(edge.now.reason.contains("confirmed"));
    }

    #[test]
    fn with_hooks_a_quiet_screen_does_not_confirm_a_candidate() {
        let mut a = PaneArbiter::new();
        a.observe(v(State::Working, Source::Hook, 5)); // UserPromptSubmit
        a.observe(Verdict {
            candidate: Some(State::Done),
            ..keyed(State::Working, "preamble-or-answer", 10)
        });
        a.observe(v(State::Unknown, Source::Screen, 12)); // a frame without the spinner
        assert_eq!(a.fused().state, State::Working);
        a.observe(v(State::Done, Source::Hook, 14)); // the Stop hook
        assert!(a.fused().confirmed && a.fused().state == State::Done);
    }

    #[test]
    fn escape_during_retry_settles_into_interrupted() {
        let mut a = PaneArbiter::new();
        a.observe(keyed(State::Working, "1", 10));
        a.observe(v(State::Interrupted, Source::Screen, 20));
        assert_eq!(a.fused().state, State::Working, "not before the settle time");
        let edge = a.refuse(20 + SETTLE_MS).unwrap();
        assert_eq!(edge.to, State::Interrupted);
        assert!(!edge.is_confirmed_done());
    }

    #[test]
    fn session_idle_first_seen_with_the_prompt_settles_the_turn() {
        // Escape right after Enter (native release, 529 retry wait): the
        // report that first shows the prompt line already shows the session
        // back to idle, and nothing more is ever written.
        let mut a = PaneArbiter::new();
        a.observe(v(State::Idle, Source::Session, 5));
        a.observe(keyed(State::Working, "1079", 10));
        a.observe(Verdict {
            key: Some("busy-then-idle".into()),
            ..v(State::Idle, Source::Session, 10)
        });
        assert_eq!(a.fused().state, State::Working);
        let edge = a.refuse(10 + SETTLE_MS).unwrap();
        assert_eq!((edge.to, edge.now.confirmed), (State::Idle, false));
    }

    #[test]
    fn a_dialog_on_screen_stays_waiting_when_the_tool_call_line_lands_later() {
        let mut a = PaneArbiter::new();
        a.observe(keyed(State::Working, "prompt", 10));
        a.observe(v(State::Waiting, Source::Screen, 20));
        a.observe(keyed(State::Working, "tool-call", 30)); // the transcript lags the screen
        assert_eq!(a.fused().state, State::Waiting);
        a.observe(v(State::Working, Source::Screen, 40)); // approved
        assert_eq!(a.fused().state, State::Working);
    }

    #[test]
    fn a_permission_hook_is_over_once_the_transcript_moves_on() {
        let mut a = PaneArbiter::new();
        a.observe(keyed(State::Working, "tool-call", 10));
        a.observe(v(State::Waiting, Source::Hook, 20));
        assert_eq!(a.fused().state, State::Waiting);
        a.observe(keyed(State::Working, "tool-result", 30));
        assert_eq!(a.fused().state, State::Working);
    }

    #[test]
    fn session_waiting_shows_waiting() {
        let mut a = PaneArbiter::new();
        a.observe(keyed(State::Working, "1", 10));
        a.observe(v(State::Waiting, Source::Session, 20));
        assert_eq!(a.fused().state, State::Waiting);
        a.observe(v(State::Working, Source::Session, 30));
        assert_eq!(a.fused().state, State::Working);
    }

    /// Issue 45: the screen's dialog or the hook often says waiting first;
    /// the bar still says what the log's pending question asks.
    #[test]
    fn a_wait_seen_first_elsewhere_says_what_the_logs_question_asks() {
        let mut a = PaneArbiter::new();
        a.observe(keyed(State::Working, "1", 10));
        a.observe(v(State::Waiting, Source::Screen, 20));
        assert_eq!(a.fused().source, Some(Source::Screen));
        let asks = Verdict::new(State::Waiting, Source::Transcript, "asks: Which database? (a tool)", 30);
        a.observe(asks);
        assert_eq!(a.fused().state, State::Waiting);
        assert_eq!(a.fused().reason, "asks: Which database? (a tool)");
        // Answered (the log goes on), then a permission dialog: not the old question.
        let mut b = PaneArbiter::new();
        b.observe(Verdict::new(
            State::Waiting,
            Source::Hook,
            "asks: Which database? (hook)",
            10,
        ));
        b.observe(keyed(State::Working, "2", 20));
        b.observe(v(State::Waiting, Source::Screen, 30));
        assert_eq!(b.fused().state, State::Waiting);
        assert!(!b.fused().reason.contains("Which database"), "{}", b.fused().reason);
    }

    #[test]
    fn forgetting_the_screen_removes_its_guess() {
        let mut a = PaneArbiter::new();
        a.observe(v(State::Done, Source::Screen, 10));
        let edge = a.forget(Source::Screen, 11).unwrap();
        assert_eq!(edge.to, State::Unknown);
    }
}
