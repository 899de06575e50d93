//! The attention jump and counter, the notifier, and the inbox.

use super::*;

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
    let rows = all_rows(&rig.c.summaries());
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
    // Handed on at once: the leader's tab may close the next moment.
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

/// Issue 45: a waiting pane's notification came ~4 s after the bar showed
/// it: it waited for the interval after the previous run. A pane that
/// waits for its user is told after the coalescing alone.
#[test]
fn a_waiting_pane_is_notified_without_waiting_for_the_interval() {
    let mut rig = three_agents(&[("notify", "true"), ("notify_interval_ms", "10000")]);
    rig.push(&[report(2, State::Done, Source::Transcript, T0, Some("b's answer"))]);
    assert_eq!(notifier_runs(&rig.timer_at(T0 + notify::COALESCE_MS)).len(), 1);
    let ended = BTreeMap::from([(CTX_KIND.to_owned(), "notify".to_owned())]);
    rig.send(Event::HostResult {
        code: Some(0),
        stdout: vec![],
        stderr: vec![],
        context: ended,
    });
    rig.now = T0 + 2_000;
    rig.push(&[report(3, State::Waiting, Source::Hook, rig.now, None)]);
    let runs = notifier_runs(&rig.timer_at(rig.now + notify::COALESCE_MS));
    assert_eq!(runs.len(), 1, "told within a second, not after the 10 s interval");
    assert_eq!(runs[0].1["TURNSTILE_STATE"], "waiting");
}

/// Issue 45 (and the `report --message` of issue 42): the bar drew rows
/// without their reason, so neither a question nor a program's message
/// ever reached a segment. A waiting pane says what it asks; a program,
/// its message; a plain wait, nothing more.
#[test]
fn a_segment_says_what_a_waiting_pane_asks_and_what_a_program_reports() {
    let mut rig = three_agents(&[]);
    let mut asks = report(2, State::Waiting, Source::Transcript, T0, None);
    asks.verdicts[0].reason = "asks: Which database? (assistant called a tool)".into();
    let mut program = report(3, State::Waiting, Source::Hook, T0, None);
    program.agent = Some(protocol::AgentBinding {
        kind: crate::agent::AgentKind::Program,
        ..protocol::AgentBinding::default()
    });
    program.verdicts[0].reason = "reported blocked: approve deploy?".into();
    rig.push(&[asks, program, report(1, State::Waiting, Source::Hook, T0, None)]);
    let bar = ansi::strip(&rig.c.render(200, rig.now));
    assert!(bar.contains("waiting 0s: asks: Which database?"), "{bar}");
    assert!(
        !bar.contains("assistant called a tool"),
        "the source's detail stays out: {bar}"
    );
    assert!(bar.contains(": approve deploy?"), "{bar}");
    assert!(!bar.contains("test"), "a plain wait says nothing more: {bar}");
}
