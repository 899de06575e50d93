//! Delivery of routed answers: edges go to [`crate::flow::Router`], its
//! decisions become deliveries (each an `Outgoing`, one value from the
//! decision to the turn it starts), and those become pane writes. A
//! delivery to a busy target is queued until it stops working. A delivery
//! is one bracketed-paste write, then Enter as a separate write `ENTER_DELAY_MS` later (TUIs swallow an
//! Enter that comes with the paste).
//!
//! A delivery is confirmed, not assumed: it counts as delivered when the
//! target shows any sign of life after the first Enter (an edge, or a report
//! whose sources say something new). Until then Enter is pressed again every
//! `RETRY_ENTER_MS`, at most `MAX_ENTERS` times in all, but only onto a box
//! that cannot hold a suggestion the agent would submit instead
//! (`Submission::enter_is_safe`). When the last Enter started no turn and
//! the target's box is certainly empty, the paste itself was lost (a TUI
//! still starting up on a busy machine drops it): the answer is pasted
//! again, `MAX_PASTES` times in all, unless the agent may show a suggestion
//! there at any moment (the paste would land before it). A delivery still
//! unconfirmed then is said in the bar.
//!
//! An answer is never pasted onto text standing in the target's input box
//! (a person typing, stray bytes): it is held, the bar says why, and it is
//! pasted once the box is empty (checked every `HOLD_RECHECK_MS`).
//!
//! A confirmed done that brings no answer, from an agent whose screen
//! shows it ([`crate::agent::Agent::shows_its_answer`]), waits for its
//! screen: the hook or log that confirms it and the render that shows the
//! answer race, and under load the confirmation wins. The controller reads
//! that pane's screen every `SCREEN_ANSWER_RECHECK_MS` until an answer shows
//! or `SCREEN_ANSWER_WAIT_MS` pass; the done is routed then.

use super::outgoing::{Outgoing, Pasting, Stage};
use super::Effect;
use crate::agent::Paste;
use crate::arbiter::Edge;
use crate::config::Config;
use crate::flow::{one_line, parse_rules, Action, Lookup, Router, Target};
use crate::panes::{Pane, PaneTable};
use crate::protocol::PaneReport;
use crate::screen::InputBox;
use crate::{Millis, Source, State};

/// Delay between the paste and its Enter.
pub const ENTER_DELAY_MS: Millis = 200;
/// Delay between an Enter and the next one while the target shows no turn.
pub const RETRY_ENTER_MS: Millis = 2_000;
/// Enters pressed for one paste at most.
pub const MAX_ENTERS: u32 = 3;

/// How often a held answer looks at its target's input box again.
pub const HOLD_RECHECK_MS: Millis = 500;

/// How long a confirmed done that brings no answer waits for its screen
/// to show one.
pub const SCREEN_ANSWER_WAIT_MS: Millis = 2_000;
/// How often its screen is read meanwhile.
pub const SCREEN_ANSWER_RECHECK_MS: Millis = 100;

/// A confirmed done waiting for its screen's answer.
#[derive(Debug, Clone)]
struct AwaitedAnswer {
    pane: u32,
    /// The next look at its screen.
    look: Millis,
    /// Routed then, answer or not.
    until: Millis,
}

/// What a target pane's input box holds now, read from its screen.
pub type Drafts<'a> = dyn FnMut(u32) -> InputBox + 'a;

/// How the bar's message about a delivery given up begins.
pub const UNCONFIRMED: &str = "not confirmed:";

/// The router plus every delivery on its way. (Plain vectors: a handful
/// of entries, and every map type costs the plugin ~10 KB.)
#[derive(Debug, Default)]
pub struct Delivery {
    router: Router,
    /// Oldest first; at most one pasted or delivered per target pane.
    outgoing: Vec<Outgoing>,
    /// What each pane's sources last said (a key of its verdicts): a report
    /// that says something else is news (polling repeats the same reports).
    news: Vec<(u32, u64)>,
    /// Confirmed dones waiting for their screen's answer.
    awaited: Vec<AwaitedAnswer>,
    /// The turns the router acted on since the other copies were last
    /// told, with the key of the answer routed.
    acted: Vec<(u32, String, u64)>,
}

/// Whether pane `pane`'s agent may show a suggestion in its box now: its
/// kind suggests, and it has ended a turn (a suggestion follows a turn; an
/// agent still starting up shows none, and drops pastes: seen with Claude
/// Code 2.1.39 under two busy loops, where the paste then has to go again).
fn suggests(table: &PaneTable, pane: u32) -> bool {
    table
        .get(pane)
        .is_some_and(|p| p.kind.suggests_in_its_box() && p.state().is_turn_end())
}

fn target_of(pane: &Pane) -> Target {
    Target {
        pane: pane.meta.id,
        busy: matches!(pane.state(), State::Working | State::Waiting),
    }
}

/// The agent pane titled `title` (the first in display order): answers
/// are routed only to agent panes that take prompts, never to a shell that
/// shares the name (nor to a program that reports itself).
fn find_by_title(table: &PaneTable, title: &str) -> Lookup {
    let found = table
        .agents()
        .into_iter()
        .find(|p| p.meta.title == title && p.kind.agent().takes_prompts())
        .map(target_of);
    match found {
        Some(target) => Lookup::Found(target),
        None if table.all().any(|p| p.meta.title == title) => Lookup::TakesNoPrompts,
        None => Lookup::Missing,
    }
}

impl Delivery {
    /// Routing with the configured flows.
    pub fn new(config: &Config) -> Delivery {
        Delivery {
            router: Router::new(config.flows.clone(), config.flow.clone()),
            outgoing: Vec::new(),
            news: Vec::new(),
            awaited: Vec::new(),
            acted: Vec::new(),
        }
    }

    /// Feeds one edge of `pane`; when `act`, pushes the writes to `out` and
    /// returns feedback for the bar. A copy that does not lead feeds edges
    /// without acting (`acting` is `None`), so its routing memory matches
    /// the leader's should it take the lead.
    pub fn on_edge(
        &mut self,
        table: &PaneTable,
        (pane, edge): (u32, &Edge),
        now: Millis,
        acting: Option<(&mut Vec<Effect>, &mut Drafts<'_>)>,
    ) -> Vec<String> {
        let mut actions = Vec::new();
        if edge.to != edge.from {
            self.sign_of_life(pane);
        }
        if edge.to == State::Working && edge.from != State::Working {
            let hops = self.take_turn_hops(pane);
            actions.extend(self.end_the_wait(table, pane));
            self.router.on_turn_started(pane, hops);
        }
        if edge.to == State::Working && edge.now.source.is_some_and(Source::is_authoritative) {
            self.router.on_new_turn_evidence(pane);
        }
        if edge.is_confirmed_done() {
            let awaits_screen = acting.is_some() && table.get(pane).is_some_and(awaits_its_screen);
            match awaits_screen {
                true => self.await_answer(pane, now),
                false => actions.extend(self.route_done(table, pane)),
            }
        }
        if edge.to.is_turn_end() || edge.to == State::Idle {
            actions.extend(self.unqueue(pane));
        }
        let Some((out, drafts)) = acting else {
            actions.into_iter().for_each(|a| self.keep_the_leaders(table, a));
            return Vec::new();
        };
        actions
            .into_iter()
            .filter_map(|a| self.perform(table, a, now, out, drafts))
            .collect()
    }

    /// Routes `pane`'s confirmed done with the answer it has now.
    fn route_done(&mut self, table: &PaneTable, pane: u32) -> Vec<Action> {
        let Some(source) = table.get(pane) else {
            return Vec::new();
        };
        let answer = source.turn_answer().map(str::to_owned);
        let title = source.meta.title.clone();
        let turn = source.turn_identity();
        let actions = self
            .router
            .on_confirmed_done(pane, &title, turn.as_deref(), answer.as_deref(), |name| {
                find_by_title(table, name)
            });
        if let Some(turn) = turn.filter(|t| self.router.remembers(pane, t)) {
            let answer = self.router.routed_answer(pane);
            self.acted.push((pane, turn, answer));
        }
        actions
    }

    /// The turns acted on since the last call, for the other copies.
    pub fn take_acted(&mut self) -> Vec<(u32, String, u64)> {
        std::mem::take(&mut self.acted)
    }

    fn await_answer(&mut self, pane: u32, now: Millis) {
        self.awaited.retain(|a| a.pane != pane);
        self.awaited.push(AwaitedAnswer {
            pane,
            look: now,
            until: now + SCREEN_ANSWER_WAIT_MS,
        });
    }

    /// A new turn of `pane` ends the wait for its last turn's answer: that
    /// done is routed with what it has (the bar says it finished without an
    /// answer), never dropped.
    fn end_the_wait(&mut self, table: &PaneTable, pane: u32) -> Vec<Action> {
        let Some(i) = self.awaited.iter().position(|a| a.pane == pane) else {
            return Vec::new();
        };
        self.awaited.remove(i);
        self.route_done(table, pane)
    }

    /// True while `pane`'s confirmed done waits for its screen's answer.
    pub fn awaits_answer(&self, pane: u32) -> bool {
        self.awaited.iter().any(|a| a.pane == pane)
    }

    /// The panes whose screen should be read now for an awaited answer.
    pub fn screens_to_read(&mut self, now: Millis) -> Vec<u32> {
        let due: Vec<u32> = self.awaited.iter().filter(|a| a.look <= now).map(|a| a.pane).collect();
        for awaited in self.awaited.iter_mut().filter(|a| a.look <= now) {
            awaited.look = now + SCREEN_ANSWER_RECHECK_MS;
        }
        due
    }

    /// Routes the awaited dones whose screen shows an answer now, or whose
    /// wait is over; returns what the bar should say, and the panes whose
    /// answer came.
    pub fn route_awaited(
        &mut self,
        table: &PaneTable,
        now: Millis,
        out: &mut Vec<Effect>,
        drafts: &mut Drafts<'_>,
    ) -> (Option<String>, Vec<u32>) {
        let answered = |pane: u32| table.get(pane).is_some_and(|p| p.turn_answer().is_some());
        let ready = |a: &AwaitedAnswer| now >= a.until || answered(a.pane);
        let (ready, waiting): (Vec<AwaitedAnswer>, Vec<AwaitedAnswer>) =
            std::mem::take(&mut self.awaited).into_iter().partition(ready);
        self.awaited = waiting;
        let actions: Vec<Action> = ready.iter().flat_map(|a| self.route_done(table, a.pane)).collect();
        let said = actions
            .into_iter()
            .filter_map(|a| self.perform(table, a, now, out, drafts))
            .last();
        (said, ready.iter().map(|a| a.pane).filter(|p| answered(*p)).collect())
    }

    fn perform(
        &mut self,
        table: &PaneTable,
        action: Action,
        now: Millis,
        out: &mut Vec<Effect>,
        drafts: &mut Drafts<'_>,
    ) -> Option<String> {
        let mut outgoing = match action {
            Action::Message(text) => return Some(text),
            deliver => outgoing_of(table, deliver)?,
        };
        if outgoing.is_queued() {
            let said = format!("queued for {} (busy)", outgoing.name);
            self.outgoing.push(outgoing);
            return Some(said);
        }
        if let InputBox::Draft(draft) = drafts(outgoing.pane) {
            let chars = outgoing.payload.chars().count();
            let said = format!("holding {chars} chars for {}: {}", outgoing.name, held_reason(&draft));
            outgoing.stage = Stage::Held {
                due: now + HOLD_RECHECK_MS,
            };
            self.outgoing.push(outgoing);
            return Some(said);
        }
        Some(self.paste(table, outgoing, now, out))
    }

    /// A copy that does not lead keeps the leader's deliveries in mind
    /// without writing: a queued one (to paste should it take the lead),
    /// a pasted one as delivered (its hops count for the turn it starts).
    fn keep_the_leaders(&mut self, table: &PaneTable, action: Action) {
        let Some(mut outgoing) = outgoing_of(table, action) else {
            return;
        };
        if !outgoing.is_queued() {
            outgoing.stage = Stage::Delivered;
            self.outgoing
                .retain(|o| o.pane != outgoing.pane || !o.is_in_the_target());
        }
        self.outgoing.push(outgoing);
    }

    /// Pastes `outgoing` into its target and arms its first Enter; whether
    /// the target may be suggesting is judged now, at the paste. An earlier
    /// delivery still in that target gives way to it.
    fn paste(&mut self, table: &PaneTable, mut outgoing: Outgoing, now: Millis, out: &mut Vec<Effect>) -> String {
        let pane = outgoing.pane;
        let kind = table.get(pane).map(|p| p.kind).unwrap_or_default();
        let pasting = Pasting {
            due: now + ENTER_DELAY_MS,
            presses: 0,
            pastes: 1,
            suggests: suggests(table, pane),
            strict: kind.is_user(),
            paste: kind.paste(),
        };
        out.push(outgoing.writes(pasting.paste));
        let chars = match pasting.paste {
            Paste::Bracketed => outgoing.payload.chars().count(),
            Paste::Line => one_line(&outgoing.payload).chars().count(),
        };
        let said = format!("sent {chars} chars → {}", outgoing.name);
        outgoing.stage = Stage::Pasted(pasting);
        self.outgoing.retain(|o| o.pane != pane || !o.is_in_the_target());
        self.outgoing.push(outgoing);
        said
    }

    /// `pane` stopped working: its oldest queued delivery goes now.
    fn unqueue(&mut self, pane: u32) -> Option<Action> {
        let i = self.outgoing.iter().position(|o| o.pane == pane && o.is_queued())?;
        let Outgoing { payload, hops, .. } = self.outgoing.remove(i);
        Some(Action::Deliver { pane, payload, hops })
    }

    /// A turn started in `pane`: the delivery in it (if any) is done with,
    /// and its hop count is the turn's (0: a person's turn).
    fn take_turn_hops(&mut self, pane: u32) -> u32 {
        let Some(i) = self
            .outgoing
            .iter()
            .position(|o| o.pane == pane && o.is_in_the_target())
        else {
            return 0;
        };
        self.outgoing.remove(i).hops
    }

    /// A report about `pane`: a transcript or hook verdict of a turn in
    /// progress (not an old release's answer awaiting confirmation) starts
    /// a new turn for routing.
    /// A delivery to the pane is confirmed by that too, and by any news of
    /// the pane from its sources after the paste (a transcript that moved
    /// on, a hook, a session status): a turn may start and end between two
    /// reports (the watcher coalesces them on a busy machine), and pasting
    /// it again then would submit the turn twice. Only a target that shows
    /// no sign of life at all has its paste repeated.
    pub fn on_report(&mut self, report: &PaneReport) {
        let pane = report.pane;
        let news = news_key(report);
        let before = self.news.iter().position(|(p, _)| *p == pane);
        let changed = before.is_none_or(|i| self.news[i].1 != news);
        if changed && !report.verdicts.is_empty() {
            self.sign_of_life(pane);
        }
        match before {
            Some(i) => self.news[i].1 = news,
            None => self.news.push((pane, news)),
        }
        if report.starts_a_turn() {
            self.confirm(pane, |_| true);
            self.router.on_new_turn_evidence(pane);
        }
    }

    /// The target started a turn, whatever its Enters: the delivery is
    /// confirmed, and no Enter is pressed any more. (An agent that reads
    /// lines starts its turn on the paste's first line break, before the
    /// Enter; that Enter would be typed into its turn, or answer its
    /// question.) Sources tell a turn start apart from an earlier turn's
    /// late done, which only [`Delivery::sign_of_life`] after an Enter
    /// counts. Confirmed, it waits as delivered for the turn's edge, which
    /// takes its hop count.
    fn confirm(&mut self, pane: u32, when: impl Fn(&Pasting) -> bool) {
        for outgoing in self.outgoing.iter_mut().filter(|o| o.pane == pane) {
            if outgoing.pasting().is_some_and(&when) {
                outgoing.stage = Stage::Delivered;
            }
        }
    }

    /// The target moved after its Enter: the delivery is confirmed. Before
    /// the first Enter nothing is (the move is not the paste's turn, and
    /// dropping the delivery then would leave the answer unsubmitted in the
    /// box: seen under load, where the target's own done report came 100 ms
    /// after the paste).
    fn sign_of_life(&mut self, pane: u32) {
        self.confirm(pane, |p| p.presses > 0);
    }

    /// When the next Enter, delivery verdict, input box check or look for
    /// an awaited answer is due.
    pub fn next_enter(&self) -> Option<Millis> {
        let pasted = self.outgoing.iter().filter_map(|o| o.pasting()).map(|p| p.due);
        let held = self.outgoing.iter().filter_map(Outgoing::held_until);
        let awaited = self.awaited.iter().map(|a| a.look.min(a.until));
        pasted.chain(held).chain(awaited).min()
    }

    /// Presses the Enters that are due, and pastes held answers whose
    /// target's input box is empty now; returns what the bar should say.
    pub fn press_due_enters(
        &mut self,
        table: &PaneTable,
        now: Millis,
        out: &mut Vec<Effect>,
        drafts: &mut Drafts<'_>,
    ) -> Option<String> {
        let mut said = self.release_held(table, now, out, drafts);
        let mut given_up = Vec::new();
        let mut asked = Vec::new();
        self.outgoing
            .retain_mut(|o| match press_due_enter(table, o, now, out, drafts) {
                Pressed::Pending => true,
                Pressed::GivenUp => {
                    given_up.push(o.name.clone());
                    false
                }
                Pressed::Asked => {
                    asked.push(o.name.clone());
                    false
                }
            });
        if !given_up.is_empty() {
            said = Some(format!(
                "{UNCONFIRMED} {} started no turn (the answer may wait in its input box)",
                given_up.join(", ")
            ));
        }
        if !asked.is_empty() {
            said = Some(format!(
                "{UNCONFIRMED} {} asks a question: nothing more typed there",
                asked.join(", ")
            ));
        }
        said
    }

    /// The oldest held answer of each pane whose check is due: pasted when
    /// the box is empty (and no earlier delivery there awaits its turn),
    /// else held on.
    fn release_held(
        &mut self,
        table: &PaneTable,
        now: Millis,
        out: &mut Vec<Effect>,
        drafts: &mut Drafts<'_>,
    ) -> Option<String> {
        let mut said = None;
        let mut i = 0;
        while i < self.outgoing.len() {
            let pane = self.outgoing[i].pane;
            let Some(due) = self.outgoing[i].held_until() else {
                i += 1;
                continue;
            };
            let earlier = &self.outgoing[..i];
            let first_of_pane = !earlier.iter().any(|o| o.pane == pane && o.held_until().is_some());
            let awaited = self.outgoing.iter().any(|o| o.pane == pane && o.pasting().is_some());
            if !first_of_pane || awaited || due > now {
                i += 1;
                continue;
            }
            if drafts(pane).draft().is_some() {
                self.outgoing[i].stage = Stage::Held {
                    due: now + HOLD_RECHECK_MS,
                };
                i += 1;
                continue;
            }
            let held = self.outgoing.remove(i);
            said = Some(self.paste(table, held, now, out));
        }
        said
    }

    /// Payloads waiting for busy targets, for the bar.
    pub fn queue_note(&self, table: &PaneTable) -> Option<String> {
        let mut queued: Vec<(u32, usize)> = Vec::new();
        for o in self.outgoing.iter().filter(|o| o.is_queued()) {
            match queued.iter_mut().find(|(p, _)| *p == o.pane) {
                Some((_, n)) => *n += 1,
                None => queued.push((o.pane, 1)),
            }
        }
        queued.sort_unstable();
        let parts: Vec<String> = queued
            .into_iter()
            .map(|(pane, n)| format!("{n} queued → {}", name_of(table, pane)))
            .collect();
        let held = self
            .outgoing
            .iter()
            .filter(|o| o.held_until().is_some())
            .map(|h| format!("held → {} (its input box holds text)", h.name));
        let paused = self.router.is_paused().then(|| "flows paused".to_owned());
        let all: Vec<String> = paused.into_iter().chain(held).chain(parts).collect();
        (!all.is_empty()).then(|| all.join(", "))
    }

    /// The `route` pipe (keybindings): `next`, `prev`, `to <title>`,
    /// `resend`, `pause`, `resume`, `flows <spec>`. Returns feedback.
    pub fn command(
        &mut self,
        table: &PaneTable,
        command: &str,
        now: Millis,
        out: &mut Vec<Effect>,
        drafts: &mut Drafts<'_>,
    ) -> String {
        let command = command.trim();
        match command.split_once(' ').map_or((command, ""), |(a, b)| (a, b.trim())) {
            ("pause", _) => {
                self.router.set_paused(true);
                "flows paused".into()
            }
            ("resume", _) => {
                self.router.set_paused(false);
                "flows resumed".into()
            }
            ("resend", _) => {
                let action = self.router.resend();
                self.perform(table, action, now, out, drafts).unwrap_or_default()
            }
            ("flows", spec) => match parse_rules(spec) {
                Ok(rules) => {
                    let n = rules.len();
                    self.router.set_rules(rules);
                    format!("{n} flow(s) set")
                }
                Err(e) => e.to_string(),
            },
            ("next", _) => self.send_focused(table, 1, now, out, drafts),
            ("prev", _) => self.send_focused(table, -1, now, out, drafts),
            ("to", title) => match find_by_title(table, title) {
                Lookup::Found(target) => self.send_focused_to(table, target, now, out, drafts),
                Lookup::TakesNoPrompts => {
                    format!("{title} is no agent pane (answers go only to panes that take prompts)")
                }
                Lookup::Missing => format!("no pane named {title}"),
            },
            (other, _) => {
                format!("unknown route command `{other}` (next, prev, to <pane>, resend, pause, resume, flows <spec>)")
            }
        }
    }

    /// The focused agent pane's answer to the next (or previous) agent pane.
    fn send_focused(
        &mut self,
        table: &PaneTable,
        step: isize,
        now: Millis,
        out: &mut Vec<Effect>,
        drafts: &mut Drafts<'_>,
    ) -> String {
        let agents = table.agents();
        let Some(at) = agents.iter().position(|p| p.meta.focused) else {
            return "focus an agent pane first".into();
        };
        if agents.len() < 2 {
            return "no other agent pane to send to".into();
        }
        let next = (at as isize + step).rem_euclid(agents.len() as isize) as usize;
        let target = agents[next];
        self.send_focused_to(table, target_of(target), now, out, drafts)
    }

    fn send_focused_to(
        &mut self,
        table: &PaneTable,
        target: Target,
        now: Millis,
        out: &mut Vec<Effect>,
        drafts: &mut Drafts<'_>,
    ) -> String {
        let Some(source) = table.agents().into_iter().find(|p| p.meta.focused) else {
            return "focus an agent pane first".into();
        };
        let Some(answer) = source.answer.clone() else {
            return format!("{} has no finished answer yet", source.meta.title);
        };
        let action = self.router.manual(&answer, target);
        self.perform(table, action, now, out, drafts).unwrap_or_default()
    }

    /// An answer (an inbox entry's) to pane `to`, through the router's
    /// manual send (sanitized, queued while the target is busy). Returns feedback.
    pub fn send(
        &mut self,
        table: &PaneTable,
        answer: &str,
        to: u32,
        now: Millis,
        out: &mut Vec<Effect>,
        drafts: &mut Drafts<'_>,
    ) -> String {
        let Some(target) = table.get(to) else {
            return format!("pane {to} is gone");
        };
        let action = self.router.manual(answer, target_of(target));
        self.perform(table, action, now, out, drafts).unwrap_or_default()
    }

    /// The leader acted on turn `turn` of `pane`, routing the answer of key
    /// `answer` (a `turnstile-acted` message): this copy may lead later, and
    /// must route neither again.
    pub fn leader_acted_on(&mut self, pane: u32, turn: &str, answer: u64) {
        self.router.remember_the_leaders(pane, turn, answer);
    }

    /// Forgets a closed pane.
    pub fn forget(&mut self, pane: u32) {
        self.outgoing.retain(|o| o.pane != pane);
        self.news.retain(|(p, _)| *p != pane);
        self.awaited.retain(|a| a.pane != pane);
        self.router.forget(pane);
    }
}

/// What one pasted delivery's due time brought.
enum Pressed {
    /// Nothing due, an Enter pressed, or the paste typed again.
    Pending,
    /// Its Enters and pastes are spent and no turn started.
    GivenUp,
    /// A question stands in the target: nothing more is typed there.
    Asked,
}

/// Presses `outgoing`'s Enter if one is due, pastes it again when the paste
/// was lost, or says it is given up.
fn press_due_enter(
    table: &PaneTable,
    outgoing: &mut Outgoing,
    now: Millis,
    out: &mut Vec<Effect>,
    drafts: &mut Drafts<'_>,
) -> Pressed {
    let pane = outgoing.pane;
    let Stage::Pasted(mut pasting) = outgoing.stage.clone() else {
        return Pressed::Pending;
    };
    if pasting.due > now {
        return Pressed::Pending;
    }
    if table.get(pane).is_some_and(|p| p.state() == State::Waiting) {
        // A question stands there (no answer is pasted onto one: it came
        // after the paste): an Enter would answer it.
        return Pressed::Asked;
    }
    if pasting.presses < MAX_ENTERS {
        // The first Enter submits the paste; a later one only where it
        // cannot submit a suggestion instead (a turn nobody asked for).
        if pasting.presses == 0 || outgoing.enter_is_safe(&pasting, &drafts(pane)) {
            out.push(Effect::WriteToPane {
                pane,
                text: "\r".into(),
            });
        }
        pasting.presses += 1;
        pasting.due = now + RETRY_ENTER_MS;
    } else if pasting.may_paste_again(&drafts(pane)) {
        // No turn, and nothing in the box: the paste was lost.
        out.push(outgoing.writes(pasting.paste));
        pasting.pastes += 1;
        pasting.presses = 0;
        pasting.due = now + ENTER_DELAY_MS;
    } else {
        return Pressed::GivenUp;
    }
    outgoing.stage = Stage::Pasted(pasting);
    Pressed::Pending
}

/// The delivery an action asks for, named after its target.
fn outgoing_of(table: &PaneTable, action: Action) -> Option<Outgoing> {
    let (pane, payload, hops, stage) = match action {
        Action::Deliver { pane, payload, hops } => (pane, payload, hops, Stage::Delivered),
        Action::Queue { pane, payload, hops } => (pane, payload, hops, Stage::Queued),
        Action::Message(_) => return None,
    };
    let name = name_of(table, pane);
    Some(Outgoing {
        pane,
        name,
        payload,
        hops,
        stage,
    })
}

/// A pane's title, or its id when it is gone.
fn name_of(table: &PaneTable, pane: u32) -> String {
    table
        .get(pane)
        .map_or_else(|| pane.to_string(), |p| p.meta.title.clone())
}

/// Whether a confirmed done of `pane` should wait for its screen's answer:
/// it brings none, and its agent's screen shows one.
fn awaits_its_screen(pane: &Pane) -> bool {
    pane.turn_answer().is_none() && pane.kind.agent().shows_its_answer()
}

/// Why an answer is held, with the start of what stands in the box.
fn held_reason(draft: &str) -> String {
    let shown: String = draft.chars().take(24).collect();
    let more = if draft.chars().count() > 24 { "…" } else { "" };
    format!("its input box holds text (`{shown}{more}`)")
}

/// A key of what a report's sources say (state, source, candidate and
/// evidence key of each verdict): FNV-1a over them.
fn news_key(report: &PaneReport) -> u64 {
    crate::text::fnv1a(report.verdicts.iter().flat_map(|v| {
        let candidate = v.candidate.map_or("", State::as_str);
        let parts = [
            v.state.as_str(),
            v.source.as_str(),
            candidate,
            v.key.as_deref().unwrap_or(""),
        ];
        parts.into_iter().flat_map(|p| p.bytes().chain([0]))
    }))
}
