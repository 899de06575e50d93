//! The controller's effect sequences (the ones the e2e tests rely on) and
//! property tests over random event sequences.

use super::*;
use crate::ansi;
use crate::verdict::{Source, State, Verdict};
use proptest::prelude::*;

const URL: &str = "file:/turnstile.wasm";
const T0: Millis = 1_000_000;

/// Viewports served on demand, and which panes are scrolled back.
#[derive(Default)]
struct FakeScreens {
    viewports: BTreeMap<u32, Vec<String>>,
    scrolled: BTreeSet<u32>,
}

impl Screens for FakeScreens {
    fn viewport(&mut self, pane: u32) -> Option<Vec<String>> {
        self.viewports.get(&pane).cloned()
    }

    fn scrolled_back(&mut self, pane: u32) -> bool {
        self.scrolled.contains(&pane)
    }
}

fn copy(id: u32, tab: usize) -> PaneEntry {
    PaneEntry {
        id,
        tab,
        plugin_url: Some(URL.into()),
        ..PaneEntry::default()
    }
}

fn terminal(id: u32, tab: usize, title: &str, focused: bool) -> PaneEntry {
    PaneEntry {
        id,
        tab,
        title: title.into(),
        focused,
        command: Some("claude".into()),
        ..PaneEntry::default()
    }
}

/// Two agents (`a` focused, `b`) in tab 0, and the bar copies given.
fn pane_list(copies: &[(u32, usize)]) -> Vec<PaneEntry> {
    let mut panes = vec![terminal(1, 0, "a", true), terminal(2, 0, "b", false)];
    panes.extend(copies.iter().map(|(id, tab)| copy(*id, *tab)));
    panes
}

fn settings(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// A copy with plugin id `me`, permissions granted, drawn once.
struct Rig {
    c: Controller,
    screens: FakeScreens,
    now: Millis,
}

impl Rig {
    fn new(me: u32, pairs: &[(&str, &str)]) -> Rig {
        let (c, _) = Controller::new(&settings(pairs), me, T0);
        let mut rig = Rig {
            c,
            screens: FakeScreens::default(),
            now: T0,
        };
        rig.send(Event::Permission(true));
        rig.c.render(120, rig.now);
        rig
    }

    /// A leader of two agent panes, with the watcher running.
    fn leader(pairs: &[(&str, &str)]) -> Rig {
        let mut rig = Rig::new(1, pairs);
        rig.send(Event::Tabs(vec![TabView {
            position: 0,
            viewed: true,
        }]));
        rig.send(Event::Panes(pane_list(&[(1, 0), (5, 1)])));
        rig
    }

    fn send(&mut self, event: Event) -> Vec<Effect> {
        self.c.handle(event, self.now, &mut self.screens)
    }

    /// Advances the clock to `at` and fires a timer.
    fn timer_at(&mut self, at: Millis) -> Vec<Effect> {
        self.now = at;
        self.send(Event::Timer)
    }

    fn push(&mut self, reports: &[PaneReport]) -> Vec<Effect> {
        let payload = serde_json::to_string(reports).unwrap();
        self.send(pipe(PIPE_PUSH, PipeFrom::Other, &payload))
    }

    fn state_of(&self, pane: u32) -> State {
        self.c.table.get(pane).map_or(State::Unknown, |p| p.state())
    }
}

fn pipe(name: &str, from: PipeFrom, payload: &str) -> Event {
    Event::Pipe {
        name: name.into(),
        from,
        payload: Some(payload.into()),
    }
}

fn report(pane: u32, state: State, source: Source, at: Millis, answer: Option<&str>) -> PaneReport {
    PaneReport {
        pane,
        agent: Some(protocol::AgentBinding::default()),
        verdicts: vec![Verdict::new(state, source, "test", at)],
        answer: answer.map(str::to_owned),
        since: None,
    }
}

fn host_runs(effects: &[Effect], kind: &str) -> Vec<BTreeMap<String, String>> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::RunHost { context, .. } if context.get(CTX_KIND).map(String::as_str) == Some(kind) => {
                Some(context.clone())
            }
            _ => None,
        })
        .collect()
}

fn writes(effects: &[Effect]) -> Vec<(u32, String)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::WriteToPane { pane, text } => Some((*pane, text.clone())),
            _ => None,
        })
        .collect()
}

fn done_banner() -> Vec<String> {
    vec!["● Done.".into(), "✻ Brewed for 4s".into()]
}

// ---- effect sequences ----

#[test]
fn copies_ask_for_permissions_one_after_the_other() {
    let (_, first) = Controller::new(&BTreeMap::new(), 1, T0);
    assert_eq!(first, vec![Effect::RequestPermissions]);
    let (mut third, effects) = Controller::new(&BTreeMap::new(), 3, T0);
    assert_eq!(effects, vec![Effect::ArmTimer(2 * PERMISSION_STAGGER_MS)]);
    let effects = third.handle(Event::Timer, T0, &mut FakeScreens::default());
    assert!(effects.contains(&Effect::RequestPermissions), "{effects:?}");
}

#[test]
fn events_before_the_grant_are_replayed_and_after_a_denial_dropped() {
    let (mut c, _) = Controller::new(&BTreeMap::new(), 1, T0);
    let mut screens = FakeScreens::default();
    c.handle(Event::Panes(pane_list(&[(1, 0)])), T0, &mut screens);
    assert_eq!(c.role, Role::Undecided, "queued, not handled");
    let effects = c.handle(Event::Permission(true), T0, &mut screens);
    assert!(effects.contains(&Effect::SetUnselectable));
    assert!(c.role.is_leader(), "the queued pane list was replayed");

    let (mut denied, _) = Controller::new(&BTreeMap::new(), 1, T0);
    let effects = denied.handle(Event::Permission(false), T0, &mut screens);
    assert!(effects.contains(&Effect::Redraw));
    assert!(denied.render(200, T0).contains("permissions denied"));
    for _ in 0..1_000 {
        denied.handle(Event::Panes(pane_list(&[(1, 0)])), T0, &mut screens);
    }
    assert!(denied.queued.is_empty(), "nothing piles up after a denial");
}

#[test]
fn the_queue_before_the_grant_is_bounded() {
    let (mut c, _) = Controller::new(&BTreeMap::new(), 1, T0);
    for _ in 0..(MAX_QUEUED_EVENTS * 3) {
        c.handle(Event::CommandChanged, T0, &mut FakeScreens::default());
    }
    assert_eq!(c.queued.len(), MAX_QUEUED_EVENTS);
}

#[test]
fn the_leader_starts_the_watcher_and_takes_screens_while_they_matter() {
    let mut rig = Rig::new(1, &[]);
    let effects = rig.send(Event::Panes(pane_list(&[(1, 0), (5, 1)])));
    assert_eq!(host_runs(&effects, "watch").len(), 1);
    assert!(effects.contains(&Effect::Subscribe(Subscription::RenderReports)));
    assert!(
        !effects.contains(&Effect::Subscribe(Subscription::CommandChanges)),
        "the watcher finds agents"
    );
    let sync = effects
        .iter()
        .any(|e| matches!(e, Effect::SendToCopy { copy: 5, name, .. } if *name == PIPE_SYNC));
    assert!(sync, "a new copy gets the rows at once: {effects:?}");
}

#[test]
fn a_banner_on_screen_shows_done_at_once_and_reaches_the_other_copies() {
    let mut rig = Rig::leader(&[]);
    let both = |position| TabView { position, viewed: true };
    rig.send(Event::Tabs(vec![both(0), both(1)]));
    let effects = rig.send(Event::Screens(vec![(2, done_banner())]));
    assert_eq!(rig.state_of(2), State::Done);
    assert!(effects.contains(&Effect::Redraw));
    assert!(effects
        .iter()
        .any(|e| matches!(e, Effect::SendToCopy { copy: 5, name, .. } if *name == PIPE_SYNC)));
}

#[test]
fn a_banner_read_from_history_is_not_believed() {
    let mut rig = Rig::leader(&[]);
    rig.screens.scrolled.insert(2);
    rig.send(Event::Screens(vec![(2, done_banner())]));
    assert_ne!(rig.state_of(2), State::Done);
}

#[test]
fn a_confirmed_done_is_pasted_then_entered_once() {
    let mut rig = Rig::leader(&[("flows", "a -> b")]);
    rig.push(&[report(1, State::Working, Source::Transcript, T0, None)]);
    let effects = rig.push(&[report(1, State::Done, Source::Transcript, T0 + 10, Some("the answer"))]);
    let pasted = writes(&effects);
    assert_eq!(pasted.len(), 1, "{effects:?}");
    assert_eq!(pasted[0].0, 2);
    assert!(pasted[0].1.contains("the answer"));
    assert!(effects.iter().any(|e| matches!(e, Effect::ArmTimer(_))) || rig.c.timers_armed() > 0);
    // The Enter follows as its own write, once.
    let later = rig.timer_at(rig.now + delivery::ENTER_DELAY_MS);
    assert_eq!(writes(&later), vec![(2, "\r".to_owned())]);
    let again = rig.push(&[report(1, State::Done, Source::Hook, T0 + 20, Some("the answer"))]);
    assert!(
        writes(&again).is_empty(),
        "the hook confirming the same turn does not route it again"
    );
}

/// Issue 21: under load the first Enter was lost and the answer stood in
/// the target's input box for good. Enter is pressed again until the
/// target starts its turn, then never again.
#[test]
fn enter_is_pressed_again_until_the_target_starts_its_turn() {
    let mut rig = Rig::leader(&[("flows", "a -> b")]);
    rig.push(&[report(1, State::Working, Source::Transcript, T0, None)]);
    rig.push(&[report(1, State::Done, Source::Transcript, T0 + 10, Some("the answer"))]);
    let first = rig.timer_at(rig.now + delivery::ENTER_DELAY_MS);
    assert_eq!(writes(&first), vec![(2, "\r".to_owned())]);
    let retry = rig.timer_at(rig.now + delivery::RETRY_ENTER_MS);
    assert_eq!(writes(&retry), vec![(2, "\r".to_owned())], "no turn yet: Enter again");
    rig.push(&[report(2, State::Working, Source::Hook, rig.now, None)]);
    let after = rig.timer_at(rig.now + 10 * delivery::RETRY_ENTER_MS);
    assert!(writes(&after).is_empty(), "the target took the turn: {after:?}");
}

#[test]
fn a_delivery_never_confirmed_is_said_in_the_bar_after_the_last_enter() {
    let mut rig = Rig::leader(&[("flows", "a -> b")]);
    rig.push(&[report(1, State::Working, Source::Transcript, T0, None)]);
    rig.push(&[report(1, State::Done, Source::Transcript, T0 + 10, Some("the answer"))]);
    let mut enters = writes(&rig.timer_at(rig.now + delivery::ENTER_DELAY_MS)).len();
    for _ in 0..delivery::MAX_ENTERS + 1 {
        enters += writes(&rig.timer_at(rig.now + delivery::RETRY_ENTER_MS)).len();
    }
    assert_eq!(enters as u32, delivery::MAX_ENTERS, "bounded");
    assert!(
        rig.c.render(200, rig.now).contains("not confirmed: b"),
        "{}",
        rig.c.render(200, rig.now)
    );
}

/// Issue 21: an answer is never pasted onto text standing in the target's
/// input box; it waits, the bar says why, and goes once the box is empty.
#[test]
fn an_answer_waits_for_the_targets_input_box_to_be_empty() {
    let mut rig = Rig::leader(&[("flows", "a -> b")]);
    let mut codex = report(2, State::Idle, Source::Session, T0, None);
    codex.agent = Some(protocol::AgentBinding {
        kind: crate::agent::AgentKind::Codex,
        ..protocol::AgentBinding::default()
    });
    rig.push(&[codex]);
    rig.screens
        .viewports
        .insert(2, vec!["› half a thought".into(), "  ? for shortcuts".into()]);
    rig.push(&[report(1, State::Working, Source::Transcript, T0, None)]);
    let effects = rig.push(&[report(1, State::Done, Source::Transcript, T0 + 10, Some("the answer"))]);
    assert!(writes(&effects).is_empty(), "pasted onto a draft: {effects:?}");
    let bar = rig.c.render(200, rig.now);
    assert!(bar.contains("input box holds text"), "{bar}");
    let still = rig.timer_at(rig.now + delivery::HOLD_RECHECK_MS);
    assert!(writes(&still).is_empty(), "{still:?}");
    rig.screens
        .viewports
        .insert(2, vec!["› Ask Codex to do anything".into()]);
    let released = rig.timer_at(rig.now + delivery::HOLD_RECHECK_MS);
    let pasted = writes(&released);
    assert_eq!(pasted.len(), 1, "{released:?}");
    assert!(pasted[0].1.contains("the answer"));
    let enter = rig.timer_at(rig.now + delivery::ENTER_DELAY_MS);
    assert_eq!(writes(&enter), vec![(2, "\r".to_owned())]);
}

/// Issue 21, seen again under two busy loops: Claude Code still starting
/// up dropped the paste itself; its box stayed empty and Enter could not
/// help. With no turn after the last Enter and an empty box, the answer is
/// pasted again; once the target works, nothing more is written.
#[test]
fn a_lost_paste_is_pasted_again_when_the_box_is_certainly_empty() {
    let mut rig = Rig::leader(&[("flows", "a -> b")]);
    rig.screens
        .viewports
        .insert(2, vec!["──────".into(), "❯ ".into(), "──────".into()]);
    rig.push(&[report(1, State::Working, Source::Transcript, T0, None)]);
    let first = rig.push(&[report(1, State::Done, Source::Transcript, T0 + 10, Some("the answer"))]);
    assert_eq!(writes(&first).len(), 1);
    let mut enters = writes(&rig.timer_at(rig.now + delivery::ENTER_DELAY_MS)).len();
    for _ in 1..delivery::MAX_ENTERS {
        enters += writes(&rig.timer_at(rig.now + delivery::RETRY_ENTER_MS)).len();
    }
    assert_eq!(enters as u32, delivery::MAX_ENTERS);
    let again = rig.timer_at(rig.now + delivery::RETRY_ENTER_MS);
    let pasted = writes(&again);
    assert_eq!(pasted.len(), 1, "{again:?}");
    assert!(pasted[0].1.contains("the answer"), "pasted again: {pasted:?}");
    let enter = rig.timer_at(rig.now + delivery::ENTER_DELAY_MS);
    assert_eq!(writes(&enter), vec![(2, "\r".to_owned())]);
    rig.push(&[report(2, State::Working, Source::Transcript, rig.now, None)]);
    let after = rig.timer_at(rig.now + 10 * delivery::RETRY_ENTER_MS);
    assert!(writes(&after).is_empty(), "{after:?}");
}

#[test]
fn a_screen_done_is_never_routed() {
    let mut rig = Rig::leader(&[("flows", "a -> b")]);
    let effects = rig.send(Event::Screens(vec![(1, done_banner())]));
    assert_eq!(rig.state_of(1), State::Done);
    assert!(writes(&effects).is_empty());
}

#[test]
fn a_watcher_that_another_one_replaces_is_not_restarted() {
    let mut rig = Rig::leader(&[]);
    let context = BTreeMap::from([(CTX_KIND.to_owned(), "watch".to_owned())]);
    let result = |code| Event::HostResult {
        code: Some(code),
        stdout: vec![],
        stderr: b"turnstile: a watcher already serves session s".to_vec(),
        context: context.clone(),
    };
    let effects = rig.send(result(EXIT_ANOTHER_WATCHER));
    assert!(
        host_runs(&effects, "status").is_empty(),
        "no polling: another watcher pushes"
    );
    assert!(rig.c.watcher.running);

    // A crash: poll at once, say why, start it again 2 s later.
    let effects = rig.send(result(1));
    assert_eq!(host_runs(&effects, "status").len(), 1);
    assert!(effects.contains(&Effect::Subscribe(Subscription::CommandChanges)));
    assert!(rig.c.render(200, rig.now).contains("watcher stopped"));
    let effects = rig.timer_at(rig.now + pacing::WATCHER_RETRY_MS);
    assert_eq!(host_runs(&effects, "watch").len(), 1);
}

#[test]
fn a_lost_host_run_is_retried_and_its_late_answer_ignored() {
    let mut rig = Rig::leader(&[("watcher", "false")]);
    let first = host_runs(&rig.timer_at(T0 + TICK_MS), "status");
    assert_eq!(first.len(), 1);
    let quiet = rig.timer_at(T0 + 2 * TICK_MS);
    assert!(host_runs(&quiet, "status").is_empty(), "never two runs in flight");
    let retry = host_runs(&rig.timer_at(T0 + pacing::HOST_RUN_TIMEOUT_MS + 2 * TICK_MS), "status");
    assert_eq!(retry.len(), 1, "given up after 10 s and asked again");
    let late = Event::HostResult {
        code: Some(0),
        stdout: br#"{"at":1,"panes":[]}"#.to_vec(),
        stderr: vec![],
        context: first[0].clone(),
    };
    rig.send(late);
    assert!(rig.c.host.in_flight, "the late answer does not end the new run");
}

#[test]
fn a_failing_host_command_is_said_once_and_cleared_by_success() {
    let mut rig = Rig::leader(&[("watcher", "false")]);
    let run = host_runs(&rig.timer_at(T0 + TICK_MS), "status").remove(0);
    let failed = rig.send(Event::HostResult {
        code: Some(127),
        stdout: vec![],
        stderr: b"sh: turnstile: not found\n".to_vec(),
        context: run,
    });
    assert!(failed.contains(&Effect::Redraw));
    assert!(rig.c.render(200, rig.now).contains("not found"));
}

#[test]
fn a_follower_draws_synced_rows_and_once_more_after_a_tab_switch() {
    let mut rig = Rig::new(5, &[]);
    let effects = rig.send(Event::Panes(pane_list(&[(1, 0), (5, 1)])));
    assert_eq!(rig.c.role, Role::Follower(1));
    assert!(host_runs(&effects, "watch").is_empty() && host_runs(&effects, "status").is_empty());
    let rows = vec![PaneSummary {
        pane: 1,
        name: "a".into(),
        state: State::Working,
        source: Some(Source::Transcript),
        confirmed: false,
        since: T0,
        unseen: false,
        reason: String::new(),
        kind: crate::agent::AgentKind::Claude,
    }];
    let effects = rig.send(pipe(
        PIPE_SYNC,
        PipeFrom::Plugin(1),
        &serde_json::to_string(&rows).unwrap(),
    ));
    assert!(effects.contains(&Effect::Redraw));
    rig.c.render(120, rig.now);
    let effects = rig.send(Event::Tabs(vec![TabView {
        position: 1,
        viewed: true,
    }]));
    assert!(effects.contains(&Effect::Redraw));
    assert!(effects
        .iter()
        .any(|e| matches!(e, Effect::SendToCopy { copy: 1, name, .. } if *name == PIPE_VIEW)));
    rig.c.render(120, rig.now);
    let again = rig.timer_at(rig.now + FOLLOWER_TICK_MS);
    assert!(
        again.contains(&Effect::Redraw),
        "zellij may have dropped the first render"
    );
}

#[test]
fn the_state_pipe_and_a_click_are_answered() {
    let mut rig = Rig::leader(&[]);
    rig.push(&[report(1, State::Working, Source::Transcript, T0, None)]);
    let effects = rig.send(pipe(PIPE_STATE, PipeFrom::Cli("p1".into()), ""));
    let answered = effects
        .iter()
        .any(|e| matches!(e, Effect::AnswerPipe { pipe, text } if pipe == "p1" && text.contains("\"working\"")));
    assert!(answered, "{effects:?}");
    rig.c.render(120, rig.now);
    let col = rig.c.drawn.as_ref().unwrap().hits[0].0;
    assert_eq!(rig.send(Event::Click(col)), vec![Effect::FocusPane(1)]);
}

#[test]
fn a_copy_that_announces_itself_gets_the_rows_even_in_a_hidden_tab() {
    let mut rig = Rig::leader(&[]);
    // Copy 5 (tab 1, not viewed) was sent rows once, maybe before it listened.
    let effects = rig.send(pipe(PIPE_VIEW, PipeFrom::Plugin(5), "[]"));
    let synced = effects
        .iter()
        .any(|e| matches!(e, Effect::SendToCopy { copy: 5, name, .. } if *name == PIPE_SYNC));
    assert!(synced, "{effects:?}");
}

/// Issue 21 (under load, e2e): a hidden copy was sent rows once, while the
/// table was still empty, and showed "no agent panes" when its tab was
/// viewed. It now gets the rows whenever the set of agent panes changes;
/// state changes alone still wait until its tab is viewed.
#[test]
fn a_hidden_copy_gets_the_rows_when_the_agent_panes_change_not_on_every_state() {
    let mut rig = Rig::leader(&[]);
    let synced = |effects: &[Effect]| {
        effects
            .iter()
            .any(|e| matches!(e, Effect::SendToCopy { copy: 5, name, .. } if *name == PIPE_SYNC))
    };
    let state = rig.push(&[report(1, State::Working, Source::Transcript, T0, None)]);
    assert!(
        !synced(&state),
        "a state change alone waits for the tab to be viewed: {state:?}"
    );
    let mut panes = pane_list(&[(1, 0), (5, 1)]);
    panes.push(terminal(3, 0, "c", false));
    let grown = rig.send(Event::Panes(panes));
    assert!(synced(&grown), "a new agent pane reaches the hidden copy: {grown:?}");
    let third = rig.push(&[report(3, State::Done, Source::Transcript, T0 + 5, Some("x"))]);
    assert!(
        !synced(&third),
        "a state change alone waits for the tab to be viewed: {third:?}"
    );
}

/// Issue 21 (under load, e2e): a shell pane drew an agent's spinner once,
/// before the bar had loaded and subscribed to render reports, then drew
/// nothing more: no report ever carried it. Every pane is read once when
/// the subscription starts.
#[test]
fn what_panes_drew_before_the_subscription_is_read_once_at_the_next_tick() {
    let mut rig = Rig::new(1, &[]);
    rig.screens
        .viewports
        .insert(7, vec!["✽ Pondering… (1s)".into(), String::new()]);
    let mut shell = terminal(7, 0, "guess", true);
    shell.command = Some("bash".into());
    rig.send(Event::Tabs(vec![TabView {
        position: 0,
        viewed: true,
    }]));
    rig.send(Event::Panes(vec![shell, copy(1, 0)]));
    assert_eq!(rig.state_of(7), State::Unknown);
    rig.timer_at(rig.now + TICK_MS);
    assert_eq!(
        rig.state_of(7),
        State::Working,
        "read once the reports were subscribed to"
    );
}

#[test]
fn nothing_visible_changed_means_no_redraw() {
    let mut rig = Rig::leader(&[]);
    rig.c.render(120, rig.now);
    let effects = rig.send(Event::CommandChanged);
    assert!(!effects.contains(&Effect::Redraw));
    let effects = rig.send(pipe(PIPE_VIEW, PipeFrom::Plugin(5), "[0]"));
    assert!(!effects.contains(&Effect::Redraw), "{effects:?}");
}

/// A leader with `a` (focused) and `b` in tab 0, `c` in hidden tab 1.
fn three_agents(pairs: &[(&str, &str)]) -> Rig {
    let mut rig = Rig::leader(pairs);
    let mut panes = pane_list(&[(1, 0), (5, 1)]);
    panes.push(terminal(3, 1, "c", true));
    rig.send(Event::Panes(panes));
    rig
}

/// The payloads sent to copy `to` on pipe `name`.
fn sent_to<'e>(effects: &'e [Effect], to: u32, pipe: &str) -> Vec<&'e String> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::SendToCopy { copy, name, payload } if *copy == to && *name == pipe => Some(payload),
            _ => None,
        })
        .collect()
}

fn focuses(effects: &[Effect]) -> Vec<u32> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::FocusPane(p) => Some(*p),
            _ => None,
        })
        .collect()
}

fn notifier_runs(effects: &[Effect]) -> Vec<(Vec<String>, BTreeMap<String, String>)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::RunNotifier { argv, env, .. } => Some((argv.clone(), env.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn attention_goes_to_the_waiting_pane_in_a_hidden_tab_then_the_next() {
    let mut rig = three_agents(&[]);
    rig.push(&[report(2, State::Done, Source::Transcript, T0, Some("b's answer"))]);
    rig.now += 1_000;
    rig.push(&[report(3, State::Waiting, Source::Session, rig.now, None)]);
    let cli = PipeFrom::Cli("p".into());
    let first = rig.send(pipe(PIPE_ATTENTION, cli.clone(), ""));
    assert_eq!(focuses(&first), [3], "waiting comes before done: {first:?}");
    assert!(first
        .iter()
        .any(|e| matches!(e, Effect::AnswerPipe { text, .. } if text == "→ 3 c waiting\n")));
    assert_eq!(focuses(&rig.send(pipe(PIPE_ATTENTION, cli.clone(), ""))), [2]);
    assert_eq!(
        focuses(&rig.send(pipe(PIPE_ATTENTION, cli.clone(), ""))),
        [3],
        "presses cycle"
    );
    // Both answered: nothing needs you, and the bar says so.
    rig.push(&[
        report(2, State::Working, Source::Transcript, rig.now, None),
        report(3, State::Working, Source::Session, rig.now, None),
    ]);
    let none = rig.send(pipe(PIPE_ATTENTION, cli, ""));
    assert!(focuses(&none).is_empty());
    assert!(ansi::strip(&rig.c.render(120, rig.now)).contains("nothing needs you"));
}

#[test]
fn a_click_on_the_counter_jumps_and_a_followers_click_asks_the_leader() {
    let mut rig = three_agents(&[]);
    rig.push(&[report(3, State::Waiting, Source::Session, T0, None)]);
    rig.c.render(120, rig.now);
    let counter = rig.c.drawn.as_ref().unwrap().hits[0];
    assert_eq!(counter.2, Hit::Attention);
    assert_eq!(focuses(&rig.send(Event::Click(counter.0))), [3]);
    let key = Event::Pipe {
        name: PIPE_ATTENTION.into(),
        from: PipeFrom::Other,
        payload: None,
    };
    assert_eq!(focuses(&rig.send(key)), [3], "a keybinding without a payload jumps too");

    let mut follower = Rig::new(5, &[]);
    follower.send(Event::Panes(pane_list(&[(1, 0), (5, 1)])));
    let rows = serde_json::to_string(&rig.c.summaries()).unwrap();
    follower.send(pipe(PIPE_SYNC, PipeFrom::Plugin(1), &rows));
    follower.c.render(120, follower.now);
    let col = follower.c.drawn.as_ref().unwrap().hits[0].0;
    let asked = follower.send(Event::Click(col));
    assert!(
        matches!(
            &asked[..],
            [
                Effect::SendToCopy {
                    copy: 1,
                    name: PIPE_ATTENTION,
                    ..
                },
                ..
            ]
        ),
        "{asked:?}"
    );
}

#[test]
fn the_notifier_runs_once_for_unseen_panes_coalesced_and_paced() {
    let mut rig = three_agents(&[
        ("notify", "notify-send \"$TURNSTILE_SUMMARY\""),
        ("notify_interval_ms", "5000"),
    ]);
    // `a` is looked at: never notified. `b` and `c` are not.
    let effects = rig.push(&[
        report(1, State::Done, Source::Transcript, T0, Some("a's answer")),
        report(
            2,
            State::Done,
            Source::Transcript,
            T0,
            Some("All 4 checks pass.\nMore."),
        ),
    ]);
    assert!(notifier_runs(&effects).is_empty(), "it waits for company");
    rig.now += 100;
    rig.push(&[report(3, State::Failed, Source::Transcript, rig.now, None)]);
    let runs = notifier_runs(&rig.timer_at(T0 + notify::COALESCE_MS));
    assert_eq!(runs.len(), 1, "one run for both");
    let (argv, env) = &runs[0];
    assert_eq!(argv[..3], ["timeout", "-k", "2"]);
    assert_eq!(
        argv[4..8],
        ["sh", "-c", "notify-send \"$TURNSTILE_SUMMARY\"", "turnstile-notify"]
    );
    assert_eq!(
        argv[8..],
        ["3", "c", "failed", "claude", "test", "2", "b", "done", "claude", ""]
    );
    assert!(
        !argv.iter().any(|a| a.contains("All 4 checks")),
        "answers never on a command line"
    );
    assert_eq!(env["TURNSTILE_ANSWER_2"], "All 4 checks pass.");
    assert_eq!(env["TURNSTILE_ANSWER_1"], "", "c failed: no answer");
    assert_eq!(env["TURNSTILE_PANE_ID"], "3");
    assert_eq!(env["TURNSTILE_COUNT"], "2");
    assert_eq!(env["TURNSTILE_SUMMARY"], "c failed, b done");
    // The hook confirming b's turn again tells nobody; a new turn of b does,
    // after the previous run ended and the interval passed.
    rig.push(&[report(
        2,
        State::Done,
        Source::Hook,
        rig.now,
        Some("All 4 checks pass."),
    )]);
    rig.push(&[report(2, State::Working, Source::Transcript, rig.now, None)]);
    rig.push(&[report(2, State::Done, Source::Transcript, rig.now, Some("second"))]);
    assert!(
        notifier_runs(&rig.timer_at(rig.now + 1_000)).is_empty(),
        "the first still runs"
    );
    let ended = BTreeMap::from([(CTX_KIND.to_owned(), "notify".to_owned())]);
    let failed = rig.send(Event::HostResult {
        code: Some(127),
        stdout: vec![],
        stderr: b"sh: notify-send: not found".to_vec(),
        context: ended,
    });
    assert!(notifier_runs(&failed).is_empty(), "paced: 5 s after the first run");
    assert!(ansi::strip(&rig.c.render(200, rig.now)).contains("notify command failed: sh: notify-send: not found"));
    let runs = notifier_runs(&rig.timer_at(T0 + notify::COALESCE_MS + 5_000));
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].1["TURNSTILE_ANSWER"], "second");
}

#[test]
fn without_the_setting_nothing_is_notified() {
    let mut rig = three_agents(&[]);
    rig.push(&[report(2, State::Done, Source::Transcript, T0, Some("x"))]);
    assert!(notifier_runs(&rig.timer_at(T0 + 60_000)).is_empty());
}

#[test]
fn the_inbox_view_gets_entries_and_copies_and_routes_through_the_leader() {
    let mut rig = three_agents(&[]);
    rig.push(&[report(2, State::Done, Source::Transcript, T0, Some("b's whole answer"))]);
    rig.push(&[report(3, State::Failed, Source::Transcript, T0 + 5, None)]);
    let opened = rig.send(pipe(PIPE_INBOX, PipeFrom::Cli("p".into()), ""));
    assert!(
        opened
            .iter()
            .any(|e| matches!(e, Effect::OpenInbox { url, config } if url == URL && config["view"] == "inbox")),
        "{opened:?}"
    );
    let view = PipeFrom::Plugin(77);
    let hello = rig.send(pipe(PIPE_INBOX_HELLO, view.clone(), ""));
    let update = |effects: &[Effect]| -> inbox::Update {
        let payload = effects
            .iter()
            .find_map(|e| match e {
                Effect::SendToCopy {
                    copy: 77,
                    name: PIPE_INBOX_UPDATE,
                    payload,
                } => Some(payload.clone()),
                _ => None,
            })
            .expect("an update for the view");
        serde_json::from_str(&payload).unwrap()
    };
    let first = update(&hello);
    let listed: Vec<(u32, State)> = first.entries.iter().map(|e| (e.pane, e.state)).collect();
    assert_eq!(listed, [(3, State::Failed), (2, State::Done)], "newest first");
    assert!(
        first.entries.iter().all(|e| e.answer.is_none()),
        "answers stay with the bar"
    );
    let b = first.entries[1].id;
    let copied = rig.send(pipe(PIPE_INBOX_ACT, view.clone(), &format!(r#"{{"copy":{b}}}"#)));
    assert!(copied.contains(&Effect::CopyToClipboard("b's whole answer".into())));
    assert_eq!(update(&copied).feedback.as_deref(), Some("copied 16 chars"));
    let routed = rig.send(pipe(
        PIPE_INBOX_ACT,
        view.clone(),
        &format!(r#"{{"route":{{"entry":{b},"to":1}}}}"#),
    ));
    let pasted = writes(&routed);
    assert_eq!(pasted.len(), 1);
    assert!(pasted[0].1.contains("b's whole answer") && pasted[0].0 == 1);
    // A new finished turn reaches the open view by itself.
    rig.push(&[report(1, State::Done, Source::Transcript, T0 + 9, Some("a"))]);
    let pushed = rig.push(&[report(1, State::Working, Source::Transcript, T0 + 10, None)]);
    assert!(
        pushed.iter().all(|e| !matches!(e, Effect::SendToCopy { copy: 77, .. })),
        "working logs nothing"
    );
}

#[test]
fn a_floating_copy_of_the_plugin_is_an_inbox_view_not_a_bar() {
    let mut rig = Rig::new(9, &[]);
    let mut panes = pane_list(&[(9, 0)]);
    panes.push(PaneEntry {
        floating: true,
        ..copy(2, 0)
    });
    rig.send(Event::Panes(panes));
    assert!(rig.c.role().is_leader(), "the floating view (id 2) never leads");
}

#[test]
fn an_output_storm_pauses_screens_then_catches_up() {
    let mut rig = Rig::leader(&[]);
    let busy = vec![(2, vec!["✻ Thinking… (esc to interrupt)".to_owned()])];
    let mut paused = false;
    for _ in 0..pacing::STORM_REPORTS {
        let effects = rig.send(Event::Screens(busy.clone()));
        paused |= effects.contains(&Effect::Unsubscribe(Subscription::RenderReports));
    }
    assert!(paused, "reports paused in a storm");
    rig.screens.viewports.insert(2, done_banner());
    let effects = rig.timer_at(rig.now + pacing::STORM_PAUSE_MAX_MS);
    assert!(effects.contains(&Effect::Subscribe(Subscription::RenderReports)));
    assert_eq!(rig.state_of(2), State::Done, "the busy pane was read after the pause");
}

#[test]
fn bad_pipe_payloads_become_messages() {
    let mut rig = Rig::leader(&[]);
    rig.send(pipe(PIPE_PUSH, PipeFrom::Other, "{not json"));
    assert!(rig.c.render(200, rig.now).contains("unreadable push"));
    rig.send(pipe(PIPE_ROUTE, PipeFrom::Cli("p".into()), "frobnicate"));
    assert!(rig.c.render(200, rig.now).contains("unknown route command"));
}

// ---- properties over random event sequences ----

/// One step of a random run.
#[derive(Debug, Clone)]
enum Step {
    /// Advance the clock and fire a timer.
    Wait(Millis),
    /// A pane list showing these copies (a subset: zellij's odd lists).
    Panes(Vec<u32>),
    Tabs(Vec<bool>),
    Screen(u32, usize),
    /// A push for pane 1 or 2: state index, source index, answer number.
    Push(u32, usize, usize, Option<u8>),
    HostAnswer {
        valid: bool,
        current: bool,
        code: i32,
    },
    WatcherExit(i32),
    Pipe(usize, String),
    Click(usize),
    Permission(bool),
    CommandChanged,
}

const COPIES: [u32; 3] = [1, 4, 9];
const STATES: [State; 6] = [
    State::Working,
    State::Done,
    State::Waiting,
    State::Failed,
    State::Interrupted,
    State::Idle,
];
const SOURCES: [Source; 4] = [Source::Transcript, Source::Hook, Source::Session, Source::Screen];
const SCREENS: [&[&str]; 4] = [
    &["● Done.", "✻ Brewed for 4s"],
    &["✻ Thinking… (esc to interrupt)"],
    &["$ "],
    &["⎿  Interrupted by user"],
];
const PIPES: [&str; 12] = [
    PIPE_PUSH,
    PIPE_VERDICT,
    PIPE_ROUTE,
    PIPE_STATE,
    PIPE_SYNC,
    PIPE_VIEW,
    PIPE_ATTENTION,
    PIPE_INBOX,
    PIPE_INBOX_HELLO,
    PIPE_INBOX_ACT,
    PIPE_PANES,
    "other",
];

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (1..3_000u64).prop_map(Step::Wait),
        2 => proptest::sample::subsequence(COPIES.to_vec(), 0..=3).prop_map(Step::Panes),
        1 => proptest::collection::vec(any::<bool>(), 1..3).prop_map(Step::Tabs),
        3 => (1..3u32, 0..SCREENS.len()).prop_map(|(p, s)| Step::Screen(p, s)),
        5 => (1..3u32, 0..STATES.len(), 0..SOURCES.len(), proptest::option::of(0..4u8))
            .prop_map(|(p, s, src, a)| Step::Push(p, s, src, a)),
        1 => (any::<bool>(), any::<bool>(), prop_oneof![Just(0), Just(1), Just(127)])
            .prop_map(|(valid, current, code)| Step::HostAnswer { valid, current, code }),
        1 => prop_oneof![Just(1), Just(EXIT_ANOTHER_WATCHER)].prop_map(Step::WatcherExit),
        1 => (0..PIPES.len(), ".{0,40}").prop_map(|(p, s)| Step::Pipe(p, s)),
        1 => (0..200usize).prop_map(Step::Click),
        1 => any::<bool>().prop_map(Step::Permission),
        1 => Just(Step::CommandChanged),
    ]
}

/// A session of three copies of the bar fed the same events.
struct Session {
    copies: Vec<Controller>,
    screens: FakeScreens,
    now: Millis,
    /// Each copy's last status request, to answer it.
    last_request: Vec<Option<BTreeMap<String, String>>>,
    /// Each copy: since when a status run is in flight.
    in_flight_since: Vec<Option<Millis>>,
    /// How often each answer was pasted.
    pasted: BTreeMap<String, u32>,
    /// Answers of turns pane 1 ended with a confirmed done.
    confirmed: BTreeSet<String>,
    /// Pane lists may omit live copies (zellij's odd lists); otherwise a
    /// copy missing from a list was closed with its tab and hears nothing more.
    odd_lists: bool,
    alive: Vec<bool>,
}

impl Session {
    fn new(flows: bool, odd_lists: bool) -> Session {
        let pairs: &[(&str, &str)] = if flows { &[("flows", "a -> b")] } else { &[] };
        let copies = COPIES
            .iter()
            .map(|me| {
                let (mut c, _) = Controller::new(&settings(pairs), *me, T0);
                c.handle(Event::Permission(true), T0, &mut FakeScreens::default());
                c
            })
            .collect();
        Session {
            copies,
            screens: FakeScreens::default(),
            now: T0,
            last_request: vec![None; COPIES.len()],
            in_flight_since: vec![None; COPIES.len()],
            pasted: BTreeMap::new(),
            confirmed: BTreeSet::new(),
            odd_lists,
            alive: vec![true; COPIES.len()],
        }
    }

    fn event(&self, step: &Step, copy: usize) -> Event {
        match step {
            Step::Wait(_) => Event::Timer,
            Step::Panes(shown) => {
                let copies: Vec<(u32, usize)> = shown.iter().map(|id| (*id, (*id % 2) as usize)).collect();
                Event::Panes(pane_list(&copies))
            }
            Step::Tabs(viewed) => Event::Tabs(
                viewed
                    .iter()
                    .enumerate()
                    .map(|(position, viewed)| TabView {
                        position,
                        viewed: *viewed,
                    })
                    .collect(),
            ),
            Step::Screen(pane, i) => Event::Screens(vec![(*pane, SCREENS[*i].iter().map(|s| s.to_string()).collect())]),
            Step::Push(pane, state, source, answer) => {
                let answer = answer.map(|n| format!("answer {n} at {}", self.now));
                let r = report(*pane, STATES[*state], SOURCES[*source], self.now, answer.as_deref());
                pipe(PIPE_PUSH, PipeFrom::Other, &serde_json::to_string(&[r]).unwrap())
            }
            Step::HostAnswer { valid, current, code } => Event::HostResult {
                code: Some(*code),
                stdout: match valid {
                    true => br#"{"at":1,"panes":[{"pane":1}]}"#.to_vec(),
                    false => b"garbage".to_vec(),
                },
                stderr: vec![],
                context: match (current, &self.last_request[copy]) {
                    (true, Some(context)) => context.clone(),
                    _ => BTreeMap::from([(CTX_KIND.to_owned(), "status".to_owned())]),
                },
            },
            Step::WatcherExit(code) => Event::HostResult {
                code: Some(*code),
                stdout: vec![],
                stderr: b"boom".to_vec(),
                context: BTreeMap::from([(CTX_KIND.to_owned(), "watch".to_owned())]),
            },
            Step::Pipe(p, payload) => pipe(PIPES[*p], PipeFrom::Cli("p".into()), payload),
            Step::Click(col) => Event::Click(*col),
            Step::Permission(granted) => Event::Permission(*granted),
            Step::CommandChanged => Event::CommandChanged,
        }
    }

    /// Feeds one step to every copy and checks the invariants.
    fn run(&mut self, step: &Step) -> Result<(), TestCaseError> {
        if let Step::Wait(ms) = step {
            self.now += ms;
        }
        if let (Step::Panes(shown), false) = (step, self.odd_lists) {
            for (i, id) in COPIES.iter().enumerate() {
                self.alive[i] &= shown.contains(id);
            }
        }
        let live: Vec<usize> = (0..self.copies.len()).filter(|i| self.alive[*i]).collect();
        for i in live {
            // zellij fires the timers that are due, and only those.
            let times = match step {
                Step::Wait(_) => self.copies[i].timers.due_by(self.now),
                _ => 1,
            };
            for _ in 0..times {
                let event = self.event(step, i);
                let effects = self.copies[i].handle(event, self.now, &mut self.screens);
                self.check(i, step, &effects)?;
            }
        }
        let alive = self.copies.iter().zip(&self.alive).filter(|(_, alive)| **alive);
        let leaders = alive.filter(|(c, _)| c.role.is_leader()).count();
        prop_assert!(leaders <= 1, "{leaders} leaders at once");
        Ok(())
    }

    fn check(&mut self, i: usize, step: &Step, effects: &[Effect]) -> Result<(), TestCaseError> {
        let c = &self.copies[i];
        // One per kind of deadline at most: tick, storm pause, Enter, permissions.
        prop_assert!(c.timers_armed() <= 4, "timers multiply: {}", c.timers_armed());
        prop_assert!(
            c.timers_armed() >= 1 || c.permission != Permission::Granted,
            "a copy without a timer stalls"
        );
        if effects.contains(&Effect::Redraw) {
            if let Some(drawn) = &c.drawn {
                prop_assert_ne!(&drawn.line, &c.draw(self.now).line, "a redraw that changes nothing");
            }
        }
        if !c.role.is_leader() {
            // It may still press the Enter of a paste it made while leading.
            let pasted = writes(effects).iter().any(|(_, text)| text != "\r");
            prop_assert!(!pasted, "a copy that does not lead pasted into a pane");
        }
        if let Some(since) = self.in_flight_since[i] {
            let answered = matches!(step, Step::HostAnswer { current: true, .. });
            let given_up = self.now.saturating_sub(since) >= pacing::HOST_RUN_TIMEOUT_MS;
            prop_assert!(
                answered || given_up || host_runs(effects, "status").is_empty(),
                "a second host run while one is in flight since {}",
                since
            );
            if answered || given_up || !c.host.in_flight {
                self.in_flight_since[i] = None;
            }
        }
        if let Some(context) = host_runs(effects, "status").pop() {
            self.last_request[i] = Some(context);
            self.in_flight_since[i] = Some(self.now);
        }
        let overdue = self.now.saturating_sub(c.host.last_start) > pacing::HOST_RUN_TIMEOUT_MS + 3_000;
        if c.role.is_leader() && c.host.in_flight && overdue {
            prop_assert!(!matches!(step, Step::Wait(_)), "a lost host run is not retried");
        }
        let source = c.table.get(1).map(|p| (p.fused().clone(), p.answer.clone()));
        if let Some((fused, Some(answer))) = source {
            if fused.state == State::Done && fused.confirmed {
                self.confirmed.insert(answer);
            }
        }
        if self.odd_lists {
            // A copy that an odd list made step down may have queued what
            // the new leader delivers: only the leader count is checked.
            return Ok(());
        }
        for (pane, text) in writes(effects).into_iter().filter(|(_, t)| t != "\r") {
            prop_assert_eq!(pane, 2u32);
            // Delivered now or queued earlier, it is a confirmed turn's answer.
            let answer = self.confirmed.iter().find(|a| text.contains(a.as_str())).cloned();
            prop_assert!(answer.is_some(), "routed an unconfirmed turn: {}", text);
            let n = self.pasted.entry(answer.unwrap_or_default()).or_default();
            *n += 1;
            prop_assert!(*n <= 1, "a turn routed twice");
        }
        Ok(())
    }
}

/// Issue 21's shrunk case: a second done with no answer of its own, after
/// a hook showed a new turn, must not paste the first turn's answer again.
#[test]
fn a_done_without_its_own_answer_never_routes_the_last_turns_again() {
    let steps = [
        Step::Panes(vec![9]),
        Step::Push(1, 1, 1, Some(0)),
        Step::Push(1, 0, 1, None),
        Step::Push(1, 1, 0, None),
    ];
    let mut session = Session::new(true, false);
    for step in &steps {
        session.run(step).unwrap();
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_sessions_keep_every_invariant(steps in proptest::collection::vec(step(), 1..80)) {
        // Route commands resend on purpose: leave them out of the routing check.
        let steps: Vec<Step> = steps
            .into_iter()
            .filter(|s| !matches!(s, Step::Pipe(p, _) if PIPES[*p] == PIPE_ROUTE))
            .collect();
        let mut session = Session::new(true, false);
        for step in &steps {
            session.run(step)?;
        }
    }

    #[test]
    fn odd_pane_lists_never_make_two_leaders(steps in proptest::collection::vec(step(), 1..80)) {
        let mut session = Session::new(true, true);
        for step in &steps {
            session.run(step)?;
        }
    }

    #[test]
    fn random_pipe_payloads_and_settings_never_panic(
        payloads in proptest::collection::vec((0..PIPES.len(), ".{0,200}"), 1..20),
        key in prop_oneof![Just("poll_ms"), Just("flows"), Just("watch"), Just("max_hops"), Just("color_done"), Just("watcher"), Just("notify"), Just("inbox_size"), Just("notify_interval_ms")],
        value in ".{0,30}",
    ) {
        let mut rig = Rig::new(1, &[(key, value.as_str())]);
        rig.send(Event::Panes(pane_list(&[(1, 0)])));
        for (p, payload) in payloads {
            rig.send(pipe(PIPES[p], PipeFrom::Cli("p".into()), &payload));
            rig.timer_at(rig.now + 300);
        }
        rig.c.render(80, rig.now);
    }
}

#[test]
fn the_inbox_survives_the_leader_moving_to_another_copy() {
    let mut leader = Rig::leader(&[]);
    leader.push(&[report(2, State::Working, Source::Transcript, T0, None)]);
    let effects = leader.push(&[report(
        2,
        State::Done,
        Source::Transcript,
        T0 + 5,
        Some("b's answer\nthe rest"),
    )]);
    let shared = sent_to(&effects, 5, PIPE_INBOX_ENTRIES);
    assert_eq!(shared.len(), 1, "{effects:?}");
    // The copy in the hidden tab never had a pane list (zellij sends none
    // there) and still keeps the entry.
    let mut hidden = Rig::new(5, &[]);
    hidden.send(pipe(PIPE_INBOX_ENTRIES, PipeFrom::Plugin(1), shared[0]));
    // The leader's tab closes: the hidden copy leads, with the log.
    let mut panes = vec![terminal(3, 1, "c", true)];
    panes.push(copy(5, 1));
    hidden.send(Event::Panes(panes));
    assert!(hidden.c.role().is_leader());
    let answer = hidden.send(pipe(PIPE_INBOX, PipeFrom::Cli("p".into()), "open"));
    assert!(
        answer
            .iter()
            .any(|e| matches!(e, Effect::AnswerPipe { text, .. } if text == "inbox: 1 finished turn(s)\n")),
        "{answer:?}"
    );
    let hello = hidden.send(pipe(PIPE_INBOX_HELLO, PipeFrom::Plugin(40), ""));
    assert!(hello
        .iter()
        .any(|e| matches!(e, Effect::SendToCopy { copy: 40, payload, .. } if !payload.contains("the rest") && payload.contains("\"pane\":2"))));
}

#[test]
fn a_copy_in_the_viewed_tab_hands_pane_lists_to_a_leader_nobody_views() {
    // The person looks at tab 1: zellij sends pane lists to copy 5 only.
    let mut follower = Rig::new(5, &[]);
    follower.send(Event::Tabs(vec![
        TabView {
            position: 0,
            viewed: false,
        },
        TabView {
            position: 1,
            viewed: true,
        },
    ]));
    let mut panes = pane_list(&[(1, 0), (5, 1)]);
    panes.push(terminal(3, 1, "new", true));
    let effects = follower.send(Event::Panes(panes.clone()));
    let forwarded = sent_to(&effects, 1, PIPE_PANES);
    assert_eq!(forwarded.len(), 1, "{effects:?}");
    let again = follower.send(Event::Panes(panes));
    assert!(
        !again
            .iter()
            .any(|e| matches!(e, Effect::SendToCopy { name: PIPE_PANES, .. })),
        "an unchanged list is not sent again"
    );
    let mut leader = Rig::leader(&[]);
    leader.send(pipe(PIPE_PANES, PipeFrom::Plugin(5), forwarded[0]));
    assert!(
        leader.c.summaries().iter().any(|s| s.name == "new"),
        "the new pane shows"
    );
    // A copy whose leader's tab is viewed forwards nothing.
    let mut beside = Rig::new(5, &[]);
    beside.send(Event::Tabs(vec![TabView {
        position: 0,
        viewed: true,
    }]));
    let quiet = beside.send(Event::Panes(pane_list(&[(1, 0), (5, 0)])));
    assert!(!quiet
        .iter()
        .any(|e| matches!(e, Effect::SendToCopy { name: PIPE_PANES, .. })));
}

#[test]
fn a_hidden_copy_that_takes_the_lead_does_not_route_a_turn_again() {
    let flows = [("flows", "a -> b")];
    let mut leader = Rig::leader(&flows);
    leader.push(&[report(1, State::Working, Source::Transcript, T0, None)]);
    let done = report(1, State::Done, Source::Transcript, T0 + 10, Some("the answer"));
    assert_eq!(
        writes(&leader.push(std::slice::from_ref(&done))).len(),
        1,
        "routed once"
    );
    // A copy in a hidden tab: no pane list ever, only rows and pushes.
    let mut hidden = Rig::new(5, &flows);
    let rows = serde_json::to_string(&leader.c.summaries()).unwrap();
    hidden.send(pipe(PIPE_SYNC, PipeFrom::Plugin(1), &rows));
    hidden.push(&[report(1, State::Working, Source::Transcript, T0, None)]);
    hidden.push(std::slice::from_ref(&done));
    // The leader's tab closes; the hidden copy leads and hears the same turn.
    let mut panes = vec![terminal(1, 1, "a", false), terminal(2, 1, "b", true)];
    panes.push(copy(5, 1));
    hidden.send(Event::Panes(panes));
    assert!(hidden.c.role().is_leader());
    let again = hidden.push(&[done]);
    assert!(writes(&again).is_empty(), "the turn was routed already: {again:?}");
}
