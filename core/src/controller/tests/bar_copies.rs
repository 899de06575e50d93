//! Permissions, the pane list, the copies and their rows, screens and
//! storms, the host command and the watcher.

use super::*;

#[test]
fn copies_ask_for_permissions_one_at_a_time() {
    let mut screens = FakeScreens {
        lock: Some(Default::default()),
        ..FakeScreens::default()
    };
    // Every copy asks from its first timer, when it holds the lock.
    let (mut first, effects) = Controller::new(&BTreeMap::new(), 1, T0);
    assert_eq!(effects, vec![Effect::ArmTimer(10)]);
    let (mut second, _) = Controller::new(&BTreeMap::new(), 2, T0);
    let asks = first.handle(Event::Timer, T0 + 10, &mut screens);
    assert!(asks.contains(&Effect::RequestPermissions), "{asks:?}");
    // The second waits for the first's answer, trying again meanwhile.
    let waits = second.handle(Event::Timer, T0 + 10, &mut screens);
    assert!(!waits.contains(&Effect::RequestPermissions), "{waits:?}");
    assert!(waits.contains(&Effect::ArmTimer(permits::ASK_RETRY_MS)), "{waits:?}");
    let granted = first.handle(Event::Permission(true), T0 + 20, &mut screens);
    assert!(
        granted.contains(&Effect::Subscribe(Subscription::KeybindingsOnce)),
        "{granted:?}"
    );
    assert_eq!(screens.lock.as_ref().unwrap().0, None, "let go once answered");
    let asks = second.handle(Event::Timer, T0 + 60, &mut screens);
    assert!(asks.contains(&Effect::RequestPermissions), "{asks:?}");
    // Without a lock to take, a copy asks at its first timer.
    let (mut alone, _) = Controller::new(&BTreeMap::new(), 3, T0);
    let asks = alone.handle(Event::Timer, T0 + 10, &mut FakeScreens::default());
    assert!(asks.contains(&Effect::RequestPermissions), "{asks:?}");
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
    let effects = rig.send(pipe(PIPE_SYNC, PipeFrom::Plugin(1), &all_rows(&rows)));
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
fn a_banner_drawn_during_a_storm_pause_by_a_quiet_pane_is_read_as_it_ends() {
    let mut rig = Rig::leader(&[]);
    let busy = vec![(2, vec!["✻ Thinking… (esc to interrupt)".to_owned()])];
    rig.send(Event::Screens(vec![(1, busy[0].1.clone())]));
    rig.timer_at(rig.now + TICK_MS); // a tick now: the next one is far
    for _ in 0..pacing::STORM_REPORTS {
        rig.send(Event::Screens(busy.clone()));
    }
    // Pane 1 streamed before the storm's window, not in it: its banner,
    // drawn while reports are paused, is read as the pause ends, not a
    // tick later.
    rig.screens.viewports.insert(1, done_banner());
    let until = rig.c.storm.paused_until().expect("a pause");
    assert!(until < rig.now + TICK_MS);
    rig.timer_at(until);
    assert_eq!(rig.state_of(1), State::Done);
}

#[test]
fn bad_pipe_payloads_become_messages() {
    let mut rig = Rig::leader(&[]);
    rig.send(pipe(PIPE_PUSH, PipeFrom::Other, "{not json"));
    assert!(rig.c.render(200, rig.now).contains("unreadable push"));
    rig.send(pipe(PIPE_ROUTE, PipeFrom::Cli("p".into()), "frobnicate"));
    assert!(rig.c.render(200, rig.now).contains("unknown route command"));
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
    let again = follower.send(Event::Panes(panes.clone()));
    assert!(
        !again
            .iter()
            .any(|e| matches!(e, Effect::SendToCopy { name: PIPE_PANES, .. })),
        "an unchanged list is not sent again"
    );
    assert!(follower.c.summaries().is_empty(), "a follower keeps no pane table");
    let mut renamed = panes;
    renamed[2].title = "renamed".into();
    let changed = follower.send(Event::Panes(renamed));
    assert_eq!(
        sent_to(&changed, 1, PIPE_PANES).len(),
        1,
        "a changed title is sent: {changed:?}"
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
    let rows = all_rows(&leader.c.summaries());
    hidden.send(pipe(PIPE_SYNC, PipeFrom::Plugin(1), &rows));
    hidden.push(&[report(1, State::Working, Source::Transcript, T0, None)]);
    hidden.push(std::slice::from_ref(&done));
    // The leader's tab closes; the hidden copy leads and hears the same turn.
    let mut panes = vec![terminal(1, 1, "a", false), terminal(2, 1, "b", true)];
    panes.push(copy(5, 1));
    hidden.send(Event::Panes(panes));
    assert!(hidden.c.role().is_leader());
    assert_eq!(hidden.c.summaries().len(), 2, "the new leader builds the pane table");
    let again = hidden.push(&[done]);
    assert!(writes(&again).is_empty(), "the turn was routed already: {again:?}");
}

/// The rows messages `effects` send to `copy`.
fn rows_to(copy: u32, effects: &[Effect]) -> Vec<String> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::SendToCopy { copy: c, name, payload } if *c == copy && *name == PIPE_SYNC => Some(payload.clone()),
            _ => None,
        })
        .collect()
}

/// What a follower draws from: the leader's rows without the reasons.
fn drawn_rows(leader: &Rig) -> Vec<PaneSummary> {
    let strip = |r: PaneSummary| PaneSummary {
        reason: String::new(),
        source: None,
        ..r
    };
    leader.c.summaries().into_iter().map(strip).collect()
}

#[test]
fn the_viewed_copy_is_sent_only_changed_rows_and_catches_up_after_a_lost_one() {
    let mut leader = Rig::leader(&[]);
    let hidden_leader = vec![
        TabView {
            position: 0,
            viewed: false,
        },
        TabView {
            position: 1,
            viewed: true,
        },
    ];
    leader.send(Event::Tabs(hidden_leader));
    // The follower loads and tells the leader what it sees viewed.
    let shown = leader.send(pipe(PIPE_VIEW, PipeFrom::Plugin(5), "[1]"));
    let mut follower = Rig::new(5, &[]);
    let mut sizes = Vec::new();
    for payload in rows_to(5, &shown) {
        sizes.push((payload.contains("\"base\""), payload.len()));
        follower.send(pipe(PIPE_SYNC, PipeFrom::Plugin(1), &payload));
    }
    for n in 0..6u64 {
        let state = [State::Working, State::Done][n as usize % 2];
        let pane = 1 + (n as u32 / 2) % 2;
        let at = T0 + 10 * (n + 1);
        let answer = (state == State::Done).then_some("an answer");
        let effects = leader.push(&[report(pane, state, Source::Transcript, at, answer)]);
        for payload in rows_to(5, &effects) {
            sizes.push((payload.contains("\"base\""), payload.len()));
            follower.send(pipe(PIPE_SYNC, PipeFrom::Plugin(1), &payload));
        }
        assert_eq!(follower.c.synced, drawn_rows(&leader), "after step {n}");
    }
    assert!(!sizes[0].0, "the first message holds every row: {sizes:?}");
    assert!(
        sizes[1..].iter().all(|(change, _)| *change),
        "then only changes: {sizes:?}"
    );
    // A message lost on the way: the next change is out of step, the
    // follower asks again and gets every row.
    leader.push(&[report(1, State::Working, Source::Transcript, T0 + 100, None)]);
    let effects = leader.push(&[report(2, State::Working, Source::Transcript, T0 + 110, None)]);
    let asked: Vec<Effect> = rows_to(5, &effects)
        .iter()
        .flat_map(|payload| follower.send(pipe(PIPE_SYNC, PipeFrom::Plugin(1), payload)))
        .collect();
    let ask = asked.iter().find_map(|e| match e {
        Effect::SendToCopy { copy: 1, name, payload } if *name == PIPE_VIEW => Some(payload.clone()),
        _ => None,
    });
    let answer = leader.send(pipe(
        PIPE_VIEW,
        PipeFrom::Plugin(5),
        &ask.expect("the follower asks again"),
    ));
    let all = rows_to(5, &answer);
    assert!(all.len() == 1 && !all[0].contains("\"base\""), "{answer:?}");
    follower.send(pipe(PIPE_SYNC, PipeFrom::Plugin(1), &all[0]));
    assert_eq!(follower.c.synced, drawn_rows(&leader));
}

/// One step of a leader (copy 1, tab 0) and a follower (copy 5, tab 1).
#[derive(Debug, Clone)]
enum SyncStep {
    /// A report for pane 1 or 2: state index, source index.
    Push(u32, usize, usize),
    /// Time passes: a timer fires in both copies.
    Wait(Millis),
    /// Which tabs a client views: the leader's, the follower's.
    View(bool, bool),
    /// A pane list where pane 1 or 2 has another title.
    Rename(u32, u8),
}

fn sync_step() -> impl Strategy<Value = SyncStep> {
    prop_oneof![
        4 => (1..=2u32, 0..6usize, 0..4usize).prop_map(|(p, s, src)| SyncStep::Push(p, s, src)),
        2 => (0..3_000u64).prop_map(SyncStep::Wait),
        1 => (any::<bool>(), any::<bool>()).prop_map(|(a, b)| SyncStep::View(a, b)),
        1 => (1..=2u32, 0..3u8).prop_map(|(p, n)| SyncStep::Rename(p, n)),
    ]
}

/// Hands each copy's messages to the other until neither sends one.
fn exchange(leader: &mut Rig, follower: &mut Rig, mut from_leader: Vec<Effect>, mut from_follower: Vec<Effect>) {
    let to = |copy: u32, effects: &[Effect]| -> Vec<(String, String)> {
        effects
            .iter()
            .filter_map(|e| match e {
                Effect::SendToCopy { copy: c, name, payload } if *c == copy => {
                    Some((name.to_string(), payload.clone()))
                }
                _ => None,
            })
            .collect()
    };
    for _ in 0..8 {
        let (to_follower, to_leader) = (to(5, &from_leader), to(1, &from_follower));
        if to_follower.is_empty() && to_leader.is_empty() {
            return;
        }
        from_follower = to_follower
            .iter()
            .flat_map(|(name, payload)| follower.send(pipe(name, PipeFrom::Plugin(1), payload)))
            .collect();
        from_leader = to_leader
            .iter()
            .flat_map(|(name, payload)| leader.send(pipe(name, PipeFrom::Plugin(5), payload)))
            .collect();
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// The rows travel as changes to what the follower holds: whatever
    /// happens, a follower in a viewed tab draws what the leader's table
    /// shows once their messages are handed over.
    #[test]
    fn a_viewed_follower_always_holds_the_leaders_rows(steps in proptest::collection::vec(sync_step(), 1..60)) {
        let mut leader = Rig::new(1, &[]);
        let mut follower = Rig::new(5, &[]);
        let mut titles = [String::from("a"), String::from("b")];
        let panes = |titles: &[String; 2]| {
            let mut panes = vec![terminal(1, 0, &titles[0], true), terminal(2, 0, &titles[1], false)];
            panes.extend([copy(1, 0), copy(5, 1)]);
            panes
        };
        let tabs = |a: bool, b: bool| Event::Tabs(vec![TabView { position: 0, viewed: a }, TabView { position: 1, viewed: b }]);
        let mut viewed = true;
        let (l, f) = (leader.send(tabs(false, true)), follower.send(tabs(false, true)));
        exchange(&mut leader, &mut follower, l, f);
        let (l, f) = (leader.send(Event::Panes(panes(&titles))), follower.send(Event::Panes(panes(&titles))));
        exchange(&mut leader, &mut follower, l, f);
        const SOURCES: [Source; 4] = [Source::Transcript, Source::Hook, Source::Session, Source::Screen];
        const STATES: [State; 6] = [State::Working, State::Done, State::Waiting, State::Failed, State::Interrupted, State::Idle];
        for (i, step) in steps.iter().enumerate() {
            let (l, f) = match step {
                SyncStep::Push(pane, state, source) => {
                    let answer = (STATES[*state] == State::Done).then_some("an answer");
                    let at = leader.now + i as Millis;
                    (leader.push(&[report(*pane, STATES[*state], SOURCES[*source], at, answer)]), vec![])
                }
                SyncStep::Wait(ms) => {
                    let at = leader.now + ms;
                    (leader.timer_at(at), follower.timer_at(at))
                }
                SyncStep::View(a, b) => {
                    viewed = *b;
                    (leader.send(tabs(*a, *b)), follower.send(tabs(*a, *b)))
                }
                SyncStep::Rename(pane, n) => {
                    titles[*pane as usize - 1] = format!("{}{n}", ["a", "b"][*pane as usize - 1]);
                    (leader.send(Event::Panes(panes(&titles))), follower.send(Event::Panes(panes(&titles))))
                }
            };
            exchange(&mut leader, &mut follower, l, f);
            if viewed {
                prop_assert_eq!(&follower.c.synced, &drawn_rows(&leader), "after step {}: {:?}", i, step);
            }
        }
    }
}

/// The `turnstile pull` runs among `effects`: their argv and context.
fn pulls(effects: &[Effect]) -> Vec<(Vec<String>, BTreeMap<String, String>)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::RunHost { argv, context } if context.get(CTX_KIND).map(String::as_str) == Some("pull") => {
                Some((argv.clone(), context.clone()))
            }
            _ => None,
        })
        .collect()
}

fn pull_answer(context: &BTreeMap<String, String>, code: i32, stdout: &str) -> Event {
    Event::HostResult {
        code: Some(code),
        stdout: stdout.as_bytes().to_vec(),
        stderr: b"boom".to_vec(),
        context: context.clone(),
    }
}

#[test]
fn the_leader_keeps_one_pull_of_the_watchers_mailbox_in_flight_and_only_it() {
    let mut rig = Rig::new(1, &[]);
    rig.send(Event::Tabs(vec![TabView {
        position: 0,
        viewed: true,
    }]));
    let first = pulls(&rig.send(Event::Panes(pane_list(&[(1, 0), (5, 1)]))));
    assert_eq!(first.len(), 1, "one pull as the watcher starts");
    assert!(first[0]
        .0
        .ends_with(&["--after".into(), "0".into(), "--wait-ms".into(), "5000".into()]));
    assert!(pulls(&rig.timer_at(T0 + 300)).is_empty(), "never two in flight");
    // It answers: the reports are applied, the next pull asks for newer ones.
    let report = report(1, State::Working, Source::Transcript, T0, None);
    let answer = serde_json::json!({"at": T0, "seq": 42, "panes": [report]}).to_string();
    let next = pulls(&rig.send(pull_answer(&first[0].1, 0, &answer)));
    assert_eq!(rig.state_of(1), State::Working);
    assert_eq!(next.len(), 1);
    assert!(next[0].0.contains(&"42".to_string()), "{:?}", next[0].0);
    // An answer to an old request changes nothing.
    let stale = serde_json::json!({"at": T0, "seq": 99, "panes": []}).to_string();
    assert!(pulls(&rig.send(pull_answer(&first[0].1, 0, &stale))).is_empty());
    // A failure waits a second, then pulls again from the same number.
    assert!(pulls(&rig.send(pull_answer(&next[0].1, 1, ""))).is_empty());
    assert!(pulls(&rig.timer_at(T0 + 500)).is_empty());
    let again = pulls(&rig.timer_at(T0 + 1_300));
    assert_eq!(again.len(), 1);
    assert!(again[0].0.contains(&"42".to_string()));
    // A copy that follows never pulls.
    let mut follower = Rig::new(5, &[]);
    let effects = follower.send(Event::Panes(pane_list(&[(1, 0), (5, 1)])));
    assert!(pulls(&effects).is_empty() && pulls(&follower.timer_at(T0 + 2_000)).is_empty());
}

/// The test rig's mailbox: `report` posted as change `seq` (generation 0).
fn post(rig: &mut Rig, seq: u64, report: &PaneReport) {
    use crate::mailbox::{file_name, journal_line, journal_name, Head, HEAD};
    let mailbox = rig.screens.mailbox.get_or_insert_with(MemoryFolder::default);
    let name = file_name(seq, report.pane, false);
    let json = serde_json::to_vec(report).unwrap();
    let journal = mailbox.0.entry(journal_name(0)).or_default();
    journal.extend(journal_line(&name, Some(&json)));
    let head = Head {
        seq,
        generation: 0,
        len: journal.len() as u64,
    };
    mailbox.0.insert(HEAD.into(), head.to_bytes());
}

#[test]
fn a_pull_waits_while_all_is_quiet_and_the_leader_looks_itself_while_news_flow() {
    let mut rig = Rig::new(1, &[]);
    rig.screens.mailbox = Some(MemoryFolder::default());
    rig.send(Event::Tabs(vec![TabView {
        position: 0,
        viewed: true,
    }]));
    let first = pulls(&rig.send(Event::Panes(pane_list(&[(1, 0), (5, 1)]))));
    assert_eq!(first.len(), 1, "a pull waits for the first news");
    // The pull brings news: the leader looks next, and pulls nothing.
    let working = report(1, State::Working, Source::Transcript, T0, None);
    post(&mut rig, 42, &working);
    let answer = serde_json::json!({"at": T0, "seq": 42, "panes": [working]}).to_string();
    assert!(pulls(&rig.send(pull_answer(&first[0].1, 0, &answer))).is_empty());
    assert_eq!(rig.state_of(1), State::Working);
    assert_eq!(rig.c.pulls.next_look(), Some(T0 + pacing::LOOK_MS));
    // A look finds the next news.
    post(&mut rig, 50, &report(2, State::Working, Source::Transcript, T0, None));
    assert!(pulls(&rig.timer_at(T0 + 25)).is_empty());
    assert_eq!(rig.state_of(2), State::Working);
    // Quiet looks draw nothing; after a few, a pull waits from 50.
    let quiet: Vec<Vec<Effect>> = (1..=pacing::QUIET_LOOKS as u64)
        .map(|i| rig.timer_at(T0 + 25 + 25 * i))
        .collect();
    assert!(
        quiet.iter().all(|effects| !effects.contains(&Effect::Redraw)),
        "{quiet:?}"
    );
    let waiting = pulls(quiet.last().unwrap());
    assert_eq!(waiting.len(), 1);
    assert!(waiting[0].0.contains(&"50".to_string()), "{:?}", waiting[0].0);
    assert_eq!(rig.c.pulls.next_look(), None);
    // News again, then a mailbox the leader cannot read: a pull at once.
    let done = report(2, State::Done, Source::Transcript, T0, Some("ok"));
    post(&mut rig, 60, &done);
    let answer = serde_json::json!({"at": T0, "seq": 60, "panes": [done]}).to_string();
    rig.now = T0 + 200;
    assert!(pulls(&rig.send(pull_answer(&waiting[0].1, 0, &answer))).is_empty());
    rig.screens.mailbox.as_mut().unwrap().0.clear();
    let fallback = pulls(&rig.timer_at(T0 + 225));
    assert_eq!(fallback.len(), 1);
    assert!(fallback[0].0.contains(&"60".to_string()), "{:?}", fallback[0].0);
}

#[test]
fn a_copy_zellij_has_not_drawn_asks_again_and_draws_only_when_drawn() {
    let mut rig = Rig::leader(&[]);
    let unseen = |rig: &mut Rig, state: State| {
        let payload = serde_json::to_string(&[report(1, state, Source::Transcript, rig.now, None)]).unwrap();
        rig.c
            .handle(pipe(PIPE_PUSH, PipeFrom::Other, &payload), rig.now, &mut rig.screens)
    };
    assert!(unseen(&mut rig, State::Working).contains(&Effect::Redraw));
    assert!(rig.c.next_draw.is_some(), "drawn ahead for zellij's render");
    // zellij did not draw it (a copy in a tab nobody views): no bar is
    // drawn for the next change, zellij is asked again.
    assert!(unseen(&mut rig, State::Waiting).contains(&Effect::Redraw));
    assert!(rig.c.next_draw.is_none());
    let line = crate::ansi::strip(&rig.c.render(120, rig.now));
    assert!(line.contains("? 1"), "{line}");
    // Drawn: the next change is drawn ahead again.
    assert!(unseen(&mut rig, State::Working).contains(&Effect::Redraw));
    assert!(rig.c.next_draw.is_some());
}

#[test]
fn reports_that_change_nothing_a_copy_draws_send_it_nothing() {
    let mut rig = Rig::leader(&[]);
    view_both_tabs(&mut rig);
    let syncs = |effects: &[Effect]| {
        effects
            .iter()
            .filter(|e| matches!(e, Effect::SendToCopy { copy: 5, name, .. } if *name == PIPE_SYNC))
            .count()
    };
    assert_eq!(
        syncs(&rig.push(&[report(1, State::Working, Source::Transcript, T0, None)])),
        1
    );
    // The same state for another reason (the turn's next line): copies draw
    // no reasons, so nothing travels.
    let mut next_line = report(1, State::Working, Source::Transcript, T0, None);
    next_line.verdicts[0].reason = "tool_use Bash".into();
    assert_eq!(syncs(&rig.push(&[next_line])), 0);
    assert_eq!(
        syncs(&rig.push(&[report(1, State::Done, Source::Transcript, T0, Some("ok"))])),
        1
    );
}

#[test]
fn a_batch_of_reports_sends_the_rows_of_the_panes_it_touched() {
    let mut rig = Rig::leader(&[]);
    view_both_tabs(&mut rig);
    rig.push(&[
        report(1, State::Working, Source::Transcript, T0, None),
        report(2, State::Working, Source::Transcript, T0, None),
    ]);
    let sent = rig.push(&[report(2, State::Done, Source::Transcript, T0, Some("ok"))]);
    let rows: Vec<SyncRows> = sent
        .iter()
        .filter_map(|e| match e {
            Effect::SendToCopy { copy: 5, name, payload } if *name == PIPE_SYNC => serde_json::from_str(payload).ok(),
            _ => None,
        })
        .collect();
    assert_eq!(rows.len(), 1, "{sent:?}");
    assert!(rows[0].base.is_some(), "a change, not all the rows");
    let panes: Vec<(u32, State)> = rows[0].rows.iter().map(|r| (r.pane, r.state)).collect();
    assert_eq!(panes, vec![(2, State::Done)]);
    // The follower that applies it holds what the leader's table shows.
    let mut follower = Rig::new(5, &[]);
    follower.send(Event::Panes(pane_list(&[(1, 0), (5, 1)])));
    let all = rig.c.table.drawn_rows();
    let before: Vec<PaneSummary> = all
        .iter()
        .cloned()
        .map(|mut r| {
            if r.pane == 2 {
                r.state = State::Working;
            }
            r
        })
        .collect();
    follower.send(pipe(
        PIPE_SYNC,
        PipeFrom::Plugin(1),
        &all_rows_at(&before, rows[0].base.unwrap()),
    ));
    follower.send(pipe(
        PIPE_SYNC,
        PipeFrom::Plugin(1),
        &serde_json::to_string(&rows[0]).unwrap(),
    ));
    assert_eq!(follower.c.synced, all);
}

/// A leader's message with all these rows, numbered `seq`.
fn all_rows_at(rows: &[PaneSummary], seq: u64) -> String {
    serde_json::to_string(&SyncRows {
        seq,
        base: None,
        rows: rows.to_vec(),
        rules: 0,
    })
    .unwrap()
}

/// A client views the leader's tab and the follower's.
fn view_both_tabs(rig: &mut Rig) {
    let tab = |position| TabView { position, viewed: true };
    rig.send(Event::Tabs(vec![tab(0), tab(1)]));
}

/// With many agents the bar's end is cut off: each copy draws the agents
/// of its own tab first, the others after them.
#[test]
fn each_copy_draws_its_own_tabs_agents_first() {
    let mut follower = Rig::new(5, &[]);
    let mut panes = pane_list(&[(1, 0), (5, 1)]);
    panes.push(terminal(3, 1, "here", false));
    follower.send(Event::Panes(panes));
    let row = |pane: u32, name: &str| PaneSummary {
        pane,
        name: name.into(),
        state: State::Working,
        source: None,
        confirmed: false,
        since: T0,
        unseen: false,
        reason: String::new(),
        kind: crate::agent::AgentKind::default(),
    };
    let rows = [row(1, "a"), row(2, "b"), row(3, "here")];
    follower.send(pipe(PIPE_SYNC, PipeFrom::Plugin(1), &all_rows(&rows)));
    let bar = ansi::strip(&follower.c.render(200, follower.now));
    let at = |name: &str| {
        bar.find(&format!(" {name} "))
            .unwrap_or_else(|| panic!("{name} in {bar}"))
    };
    assert!(at("here") < at("a") && at("a") < at("b"), "{bar}");
}

/// Nothing but its screen tells a hidden agent's turn end: it is read on
/// every tick, not every `hidden_poll_ms`; an agent whose log reports is not.
#[test]
fn a_hidden_agent_only_its_screen_tells_is_read_every_tick() {
    let mut rig = three_agents(&[]);
    rig.timer_at(rig.now); // the first ticks catch up and read every hidden pane
    rig.timer_at(rig.now + TICK_MS);
    rig.screens.viewports.insert(3, done_banner());
    rig.timer_at(rig.now + TICK_MS);
    assert_eq!(rig.state_of(3), State::Done, "a tick later, not hidden_poll_ms");
    rig.push(&[report(3, State::Working, Source::Transcript, rig.now, None)]);
    rig.screens
        .viewports
        .insert(3, vec!["✻ Thinking… (esc to interrupt)".into()]);
    rig.timer_at(rig.now + TICK_MS);
    assert!(
        !rig.c
            .table
            .get(3)
            .is_some_and(|p| p.fused().reason.contains("Thinking")),
        "its log tells: read every hidden_poll_ms only"
    );
}

/// Render reports of panes whose rows are skipped (their state is pushed)
/// never pause the subscription, however many come.
#[test]
fn reports_of_covered_panes_alone_make_no_storm() {
    let mut rig = Rig::leader(&[]);
    let mut session = report(2, State::Working, Source::Session, rig.now, None);
    session.verdicts[0].key = Some("busy".into());
    rig.push(&[session]);
    assert!(rig.c.covered(2));
    for _ in 0..10 * pacing::STORM_REPORTS {
        let effects = rig.send(Event::Screens(vec![(2, Vec::new())]));
        assert!(!effects.contains(&Effect::Unsubscribe(Subscription::RenderReports)));
    }
    assert!(!rig.c.storm.is_paused());
}

/// The `turnstile-acted` message carries the routed answer's key with the
/// turn's identity (what the router of a copy that leads later needs to
/// route neither again: `flow`'s tests show it).
#[test]
fn the_acted_message_carries_the_turn_and_its_answers_key() {
    let mut leader = Rig::leader(&[("flows", "a -> b")]);
    leader.push(&[report(1, State::Working, Source::Transcript, T0, None)]);
    let mut done = report(1, State::Done, Source::Transcript, T0 + 10, Some("the answer"));
    done.verdicts[0].key = Some("40".into());
    let routed = leader.push(&[done]);
    assert_eq!(writes(&routed).len(), 1, "routed once");
    let acted: Vec<&String> = sent_to(&routed, 5, PIPE_ACTED);
    assert_eq!(acted.len(), 1, "the other copy is told: {routed:?}");
    let acted: crate::protocol::Acted = serde_json::from_str(acted[0]).expect("an Acted message");
    assert_eq!(acted.answer, crate::flow::answer_key(Some("the answer")));
    assert_eq!(acted.pane, 1);
}
