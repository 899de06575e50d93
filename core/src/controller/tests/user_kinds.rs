//! Agents a rules file describes, in the bar: the rules asked of the host
//! once per copy, a user kind's screen done a guess never routed, its hook's
//! done routed, and a broken file named in the bar with its line.

use super::*;

/// The host's answer to `turnstile rules --json` (`problem`: a broken file).
fn rules_result(rig: &mut Rig, stdout: &str) -> Vec<Effect> {
    let context = crate::order::map_of([(CTX_KIND.to_owned(), "rules".to_owned())]);
    rig.send(Event::HostResult {
        code: Some(0),
        stdout: this_build(stdout).into_bytes(),
        stderr: Vec::new(),
        context,
    })
}

const TOY_RULES: &str = r#"{"path": "/home/u/.config/turnstile/agents.kdl", "rules": {"agents": [{
    "name": "toy-routed", "tag": "ty", "line": 1,
    "process": {"source": "^toy_agent\\.py$", "line": 3}, "argv": null, "title": null,
    "screen": [
        {"state": "working", "region": {"last": 3}, "pattern": {"source": "^⠋ thinking", "line": 5}},
        {"state": "done", "region": {"last": 3}, "pattern": {"source": "^Done in [0-9.]+s$", "line": 6}}
    ],
    "hooks": [{"event": "end", "state": "done", "line": 9}], "replaces": null}]}, "problem": null}"#;

/// `report`, about the user kind `toy-routed`.
fn toy(mut report: PaneReport) -> PaneReport {
    report.agent = Some(protocol::AgentBinding {
        kind: crate::agent::AgentKind::parse("toy-routed").expect("the rules are loaded"),
        ..protocol::AgentBinding::default()
    });
    report
}

#[test]
fn every_copy_asks_for_the_rules_once_with_the_setting_s_file() {
    let mut rig = Rig::new(7, &[("rules", "/etc/agents.kdl")]);
    let effects = rig.send(Event::Panes(pane_list(&[(7, 0), (8, 1)])));
    let argv: Vec<&Vec<String>> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::RunHost { argv, context } if context.get(CTX_KIND).map(String::as_str) == Some("rules") => {
                Some(argv)
            }
            _ => None,
        })
        .collect();
    assert_eq!(argv.len(), 1, "{effects:?}");
    assert_eq!(argv[0][1..], ["rules", "--json", "--rules", "/etc/agents.kdl"]);
    let again = rig.send(Event::Panes(pane_list(&[(7, 0), (8, 1)])));
    assert!(host_runs(&again, "rules").is_empty(), "once per copy");
}

#[test]
fn the_leader_asks_again_so_an_edited_file_takes_effect() {
    let mut rig = Rig::leader(&[]);
    let later = rig.now + crate::controller::RULES_RECHECK_MS;
    // The first run (on taking the lead) has not answered: none more,
    // until it is taken for lost.
    assert!(host_runs(&rig.timer_at(later), "rules").is_empty());
    let lost = rig.now + crate::controller::RULES_GIVE_UP_MS;
    let again = (0..=3).any(|n| !host_runs(&rig.timer_at(lost + n * 1_000), "rules").is_empty());
    assert!(again, "a lost run is asked again");
    let later = rig.now + crate::controller::RULES_RECHECK_MS;
    rules_result(
        &mut rig,
        r#"{"path": "/x/agents.kdl", "rules": {"agents": []}, "problem": null}"#,
    );
    let asked = (1..=3).any(|n| !host_runs(&rig.timer_at(later + n * 1_000), "rules").is_empty());
    assert!(asked, "asked again once answered and due");
    let broken = r#"{"path": "/x/agents.kdl", "rules": {"agents": []}, "problem": {"line": 2, "message": "bad"}}"#;
    rules_result(&mut rig, broken);
    assert!(ansi::strip(&rig.c.render(200, rig.now)).contains("agents.kdl line 2: bad"));
}

#[test]
fn a_copy_whose_rules_are_not_the_leaders_asks_for_them_again() {
    let mut leader = Rig::leader(&[]);
    let tab = |position| TabView { position, viewed: true };
    leader.send(Event::Tabs(vec![tab(0), tab(1)]));
    let effects = rules_result(&mut leader, TOY_RULES);
    let sent = sent_to(&effects, 5, PIPE_SYNC);
    assert_eq!(sent.len(), 1, "the new rules reach the other copy: {effects:?}");
    let message: SyncRows = serde_json::from_str(sent[0]).unwrap();
    assert_eq!(message.rules, crate::text::fnv1a(this_build(TOY_RULES).bytes()));

    let mut follower = Rig::new(5, &[]);
    follower.send(Event::Panes(pane_list(&[(1, 0), (5, 1)])));
    rules_result(
        &mut follower,
        r#"{"path": "/x/agents.kdl", "rules": {"agents": []}, "problem": null}"#,
    );
    let asked = follower.send(pipe(PIPE_SYNC, PipeFrom::Plugin(1), sent[0]));
    assert_eq!(host_runs(&asked, "rules").len(), 1, "{asked:?}");
    let again = follower.send(pipe(PIPE_SYNC, PipeFrom::Plugin(1), sent[0]));
    assert!(host_runs(&again, "rules").is_empty(), "once per answer of the leader's");
    rules_result(&mut follower, TOY_RULES);
    let same = follower.send(pipe(PIPE_SYNC, PipeFrom::Plugin(1), sent[0]));
    assert!(host_runs(&same, "rules").is_empty());
}

#[test]
fn a_user_kinds_screen_done_is_never_routed_and_its_hooks_done_is() {
    let mut rig = Rig::leader(&[("flows", "a -> b")]);
    rules_result(&mut rig, TOY_RULES);
    let mut bound = toy(report(1, State::Idle, Source::Session, rig.now, None));
    bound.verdicts.clear(); // bound by its process, as the watcher does: no source yet
    rig.push(&[bound]);
    let screen = |text: &[&str]| text.iter().map(|r| r.to_string()).collect::<Vec<_>>();
    rig.send(Event::Screens(vec![(1, screen(&["> fix it", "⠋ thinking about it"]))]));
    assert_eq!(rig.state_of(1), State::Working);
    let effects = rig.send(Event::Screens(vec![(
        1,
        screen(&["Answer: fixed.", "Done in 2.0s", ">"]),
    )]));
    assert_eq!(rig.state_of(1), State::Done, "the screen rule says done");
    assert!(
        writes(&effects).is_empty(),
        "a screen guess is never routed: {effects:?}"
    );
    let mut done = toy(report(
        1,
        State::Done,
        Source::Hook,
        rig.now + 10,
        Some("Answer: fixed."),
    ));
    done.verdicts[0].key = Some("hook end".into());
    let routed = rig.push(&[done]);
    let pasted = writes(&routed);
    assert_eq!(pasted.len(), 1, "{routed:?}");
    assert!(pasted[0].1.contains("Answer: fixed."));
}

/// A rules file's agent whose done rule names its answer's region.
const ANSWERING_RULES: &str = r#"{"path": "/x/agents.kdl", "rules": {"agents": [{
    "name": "toy-answering", "tag": "ta", "line": 1,
    "process": {"source": "^toy$", "line": 2}, "argv": null, "title": null,
    "input": {"source": "^> ?(.*)$", "line": 3},
    "screen": [
        {"state": "working", "region": {"above": 2}, "pattern": {"source": "^⠋ thinking", "line": 5}},
        {"state": "done", "region": {"above": 2}, "pattern": {"source": "^Done in", "line": 6}, "answer": 3}
    ],
    "hooks": [{"event": "end", "state": "done", "line": 9}], "replaces": null}]}, "problem": null}"#;

#[test]
fn a_screen_answer_is_routed_only_by_a_confirmed_done_that_brings_none() {
    let (mut rig, of_kind) = answering_rig();
    let shown = rows(&["> fix it", "Fixed it:", "  x = 1", "Done in 2.0s", "> "]);
    rig.screens.viewports.insert(1, shown.clone());
    let guessed = rig.send(Event::Screens(vec![(1, shown)]));
    assert!(writes(&guessed).is_empty(), "a screen done routes nothing");
    let routed = rig.push(&[hook_end(&of_kind, rig.now + 10)]);
    let pasted = writes(&routed);
    assert_eq!(pasted.len(), 1, "{routed:?}");
    assert!(pasted[0].1.contains("Fixed it:\n  x = 1"), "{:?}", pasted[0].1);
    assert!(!pasted[0].1.contains("fix it"), "the prompt is not in the region");
}

/// A rig leading pane 1, bound to the kind `toy-answering` (its done rule
/// names the answer's rows), whose screen shows a turn at work.
fn answering_rig() -> (Rig, impl Fn(PaneReport) -> PaneReport) {
    let mut rig = Rig::leader(&[("flows", "a -> b")]);
    rules_result(&mut rig, ANSWERING_RULES);
    let kind = crate::agent::AgentKind::parse("toy-answering").unwrap();
    let of_kind = move |mut report: PaneReport| {
        report.agent = Some(protocol::AgentBinding {
            kind,
            ..protocol::AgentBinding::default()
        });
        report
    };
    let mut bound = of_kind(report(1, State::Idle, Source::Session, rig.now, None));
    bound.verdicts.clear();
    rig.push(&[bound]);
    rig.send(Event::Screens(vec![(1, rows(&["> fix it", "⠋ thinking", "> "]))]));
    assert_eq!(rig.state_of(1), State::Working);
    (rig, of_kind)
}

fn rows(text: &[&str]) -> Vec<String> {
    text.iter().map(|r| r.to_string()).collect()
}

/// Its hook's done, which names no answer.
fn hook_end(of_kind: &impl Fn(PaneReport) -> PaneReport, at: Millis) -> PaneReport {
    let mut done = of_kind(report(1, State::Done, Source::Hook, at, None));
    done.verdicts[0].key = Some("hook end".into());
    done
}

#[test]
fn a_done_confirmed_before_the_screen_shows_its_answer_waits_for_it() {
    let (mut rig, of_kind) = answering_rig();
    // The hook is faster than the render: the screen still shows the work.
    rig.screens.viewports.insert(1, rows(&["> fix it", "⠋ thinking", "> "]));
    let confirmed = rig.push(&[hook_end(&of_kind, rig.now + 10)]);
    assert!(writes(&confirmed).is_empty(), "no answer yet: {confirmed:?}");
    let early = rig.timer_at(rig.now + 150);
    assert!(writes(&early).is_empty(), "{early:?}");
    // The render lands; the next look at the screen finds the answer.
    let shown = rows(&["> fix it", "Fixed it:", "  x = 1", "Done in 2.0s", "> "]);
    rig.screens.viewports.insert(1, shown);
    let routed = rig.timer_at(rig.now + delivery::SCREEN_ANSWER_RECHECK_MS);
    let pasted = writes(&routed);
    assert_eq!(pasted.len(), 1, "{routed:?}");
    assert!(pasted[0].1.contains("Fixed it:\n  x = 1"), "{:?}", pasted[0].1);
    let later = rig.timer_at(rig.now + delivery::SCREEN_ANSWER_WAIT_MS);
    let again = writes(&later).into_iter().any(|(_, text)| text.contains("Fixed it"));
    assert!(!again, "routed once: {later:?}");
    assert_eq!(
        rig.screens.scroll_checks, 1,
        "the look that took the answer checked the scroll once"
    );
    let logged = rig.c.inbox.newest_first().next().expect("the turn is in the inbox");
    assert_eq!(
        logged.answer.as_deref(),
        Some("Fixed it:\n  x = 1"),
        "the inbox has the late answer"
    );
}

#[test]
fn an_answer_on_a_screen_scrolled_into_its_history_is_not_taken() {
    let (mut rig, of_kind) = answering_rig();
    // The screen still shows the last turn's done when the next turn starts
    // (its hook came first): no screen edge will happen to check the scroll.
    let last_turn = rows(&["> old task", "Old answer", "Done in 1.0s", "> "]);
    rig.send(Event::Screens(vec![(1, last_turn)]));
    let mut start = of_kind(report(1, State::Working, Source::Hook, rig.now + 5, None));
    start.verdicts[0].key = Some("hook start".into());
    rig.push(&[start]);
    let old_turn = rows(&["> old task", "Old answer", "Done in 1.0s", "> fix it", "⠋ thinking"]);
    rig.screens.viewports.insert(1, old_turn);
    rig.screens.scrolled.insert(1);
    rig.push(&[hook_end(&of_kind, rig.now + 10)]);
    let looked = rig.timer_at(rig.now + delivery::SCREEN_ANSWER_RECHECK_MS);
    assert!(writes(&looked).is_empty(), "{looked:?}");
    rig.screens.scrolled.clear();
    let shown = rows(&["> fix it", "Fixed it:", "  x = 1", "Done in 2.0s", "> "]);
    rig.screens.viewports.insert(1, shown);
    let routed = rig.timer_at(rig.now + delivery::SCREEN_ANSWER_RECHECK_MS);
    let pasted = writes(&routed);
    assert_eq!(pasted.len(), 1, "{routed:?}");
    assert!(!pasted[0].1.contains("Old answer"), "{:?}", pasted[0].1);
}

#[test]
fn a_done_whose_screen_never_shows_an_answer_is_said_once_the_wait_is_over() {
    let (mut rig, of_kind) = answering_rig();
    rig.screens.viewports.insert(1, rows(&["> fix it", "⠋ thinking", "> "]));
    let start = rig.now;
    rig.push(&[hook_end(&of_kind, start + 10)]);
    let mut said = String::new();
    for t in (0..=delivery::SCREEN_ANSWER_WAIT_MS + 100).step_by(100) {
        let effects = rig.timer_at(start + t);
        assert!(writes(&effects).is_empty(), "{effects:?}");
        said = ansi::strip(&rig.c.render(200, rig.now));
        if said.contains("without an answer") {
            break;
        }
    }
    assert!(said.contains("a finished without an answer to send"), "{said}");
}

#[test]
fn a_new_turn_during_the_wait_says_the_last_done_came_without_an_answer() {
    let (mut rig, of_kind) = answering_rig();
    rig.screens.viewports.insert(1, rows(&["> fix it", "⠋ thinking", "> "]));
    rig.push(&[hook_end(&of_kind, rig.now + 10)]);
    let mut start = of_kind(report(1, State::Working, Source::Hook, rig.now + 50, None));
    start.verdicts[0].key = Some("hook start".into());
    let started = rig.push(&[start]);
    assert!(writes(&started).is_empty(), "{started:?}");
    let said = ansi::strip(&rig.c.render(200, rig.now));
    assert!(said.contains("a finished without an answer to send"), "{said}");
    let shown = rows(&["> fix it", "Fixed it:", "  x = 1", "Done in 2.0s", "> next"]);
    rig.screens.viewports.insert(1, shown);
    let after = rig.timer_at(rig.now + delivery::SCREEN_ANSWER_WAIT_MS + 100);
    assert!(writes(&after).is_empty(), "the wait ended with the turn: {after:?}");
}

#[test]
fn a_broken_rules_file_is_named_in_the_bar_with_its_line() {
    let mut rig = Rig::leader(&[]);
    let broken = r#"{"path": "/home/u/agents.kdl", "rules": {"agents": []},
        "problem": {"line": 4, "message": "screen rule: found open group without closing ')'"}}"#;
    rules_result(&mut rig, broken);
    let bar = ansi::strip(&rig.c.render(200, rig.now));
    assert!(bar.contains("rules file /home/u/agents.kdl line 4"), "{bar}");
    rules_result(&mut rig, "not json");
    let bar = ansi::strip(&rig.c.render(200, rig.now));
    assert!(
        bar.contains("rules` failed: unreadable JSON from `turnstile rules`"),
        "{bar}"
    );
}

#[test]
fn a_host_of_another_build_is_named_in_the_bar_with_the_fix() {
    let mut rig = Rig::leader(&[]);
    let other = r#"{"path": null, "rules": {"agents": []}, "problem": null, "build": "0.0.1+00000000"}"#;
    rules_result(&mut rig, other);
    let bar = ansi::strip(&rig.c.render(200, rig.now));
    assert!(bar.contains("runs host `turnstile` 0.0.1+00000000"), "{bar}");
    assert!(bar.contains(crate::identity::LABEL), "{bar}");
    let old = r#"{"path": null, "rules": {"agents": []}, "problem": null, "build": null}"#;
    rules_result(&mut rig, old);
    let bar = ansi::strip(&rig.c.render(200, rig.now));
    assert!(bar.contains("older host"), "{bar}");
    rules_result(&mut rig, r#"{"path": null, "rules": {"agents": []}, "problem": null}"#);
    let bar = ansi::strip(&rig.c.render(200, rig.now));
    assert!(!bar.contains("host"), "the same build says nothing: {bar}");
    rules_result(
        &mut rig,
        r#"{"path": null, "rules": {"agents": []}, "problem": null, "zellij": "0.46.0"}"#,
    );
    let bar = ansi::strip(&rig.c.render(200, rig.now));
    assert!(
        bar.contains("zellij 0.46.0 is not a release turnstile is tested with"),
        "{bar}"
    );
    rules_result(
        &mut rig,
        r#"{"path": null, "rules": {"agents": []}, "problem": null, "zellij": "0.45.1"}"#,
    );
    let bar = ansi::strip(&rig.c.render(200, rig.now));
    assert!(!bar.contains("zellij 0."), "a tested release says nothing: {bar}");
}

/// A rules file's agent that reads its input line by line (`paste "line"`).
const LINE_RULES: &str = r#"{"path": "/x/agents.kdl", "rules": {"agents": [{
    "name": "toy-line", "tag": "tl", "line": 1, "paste": "line",
    "process": {"source": "^toy$", "line": 2}, "argv": null, "title": null,
    "input": {"source": "^> ?(.*)$", "line": 3},
    "screen": [
        {"state": "working", "region": {"last": 2}, "pattern": {"source": "^⠋ thinking", "line": 5}},
        {"state": "waiting", "region": {"last": 2}, "pattern": {"source": "\\(y/n\\)", "line": 6}}
    ],
    "hooks": [], "replaces": null}]}, "problem": null}"#;

/// A leader with the flow `a -> b`, `b` bound to `toy-line`, idle at its prompt.
fn line_target_rig() -> Rig {
    let mut rig = Rig::leader(&[("flows", "a -> b")]);
    rules_result(&mut rig, LINE_RULES);
    let mut bound = report(2, State::Idle, Source::Session, rig.now, None);
    bound.agent = Some(protocol::AgentBinding {
        kind: crate::agent::AgentKind::parse("toy-line").unwrap(),
        ..protocol::AgentBinding::default()
    });
    bound.verdicts.clear();
    rig.push(&[bound]);
    rig.screens.viewports.insert(2, rows(&["ready", "> "]));
    rig
}

fn a_is_done_with(rig: &mut Rig, answer: &str) -> Vec<Effect> {
    rig.push(&[report(1, State::Working, Source::Transcript, rig.now, None)]);
    rig.push(&[report(1, State::Done, Source::Transcript, rig.now + 10, Some(answer))])
}

#[test]
fn an_agent_that_reads_lines_gets_the_answer_as_one_line_and_one_enter() {
    let mut rig = line_target_rig();
    let effects = a_is_done_with(&mut rig, "first line\nsecond   line");
    assert_eq!(
        writes(&effects),
        vec![(2, "first line second line".to_owned())],
        "{effects:?}"
    );
    assert!(
        !effects.iter().any(|e| matches!(e, Effect::PasteToPane { .. })),
        "no bracketed paste"
    );
    rig.screens
        .viewports
        .insert(2, rows(&["ready", "> first line second line"]));
    let enter = rig.timer_at(rig.now + delivery::ENTER_DELAY_MS);
    assert_eq!(writes(&enter), vec![(2, "\r".to_owned())]);
    rig.send(Event::Screens(vec![(
        2,
        rows(&["> first line second line", "⠋ thinking"]),
    )]));
    let after = rig.timer_at(rig.now + 10 * delivery::RETRY_ENTER_MS);
    assert!(writes(&after).is_empty(), "{after:?}");
}

#[test]
fn a_target_that_starts_its_turn_before_the_enter_gets_no_enter() {
    let mut rig = line_target_rig();
    a_is_done_with(&mut rig, "do it");
    // It read the line as it came and works already.
    rig.send(Event::Screens(vec![(2, rows(&["> do it", "⠋ thinking"]))]));
    assert_eq!(rig.state_of(2), State::Working);
    let mut later = Vec::new();
    for t in 1..=10 {
        later.extend(rig.timer_at(rig.now + t * delivery::RETRY_ENTER_MS));
    }
    assert!(writes(&later).is_empty(), "no stray Enter into its turn: {later:?}");
    let bar = ansi::strip(&rig.c.render(200, rig.now));
    assert!(!bar.contains("not confirmed"), "{bar}");
}

#[test]
fn no_enter_is_typed_onto_a_question_and_the_bar_says_so() {
    let mut rig = line_target_rig();
    a_is_done_with(&mut rig, "do it\nthen this");
    // The paste's own line break (an agent given a bracketed paste it
    // cannot read) made it ask before the Enter came.
    rig.send(Event::Screens(vec![(2, rows(&["overwrite notes.txt?", "(y/n) "]))]));
    assert_eq!(rig.state_of(2), State::Waiting);
    let mut later = Vec::new();
    let mut said = false;
    for _ in 1..=10 {
        later.extend(rig.timer_at(rig.now + delivery::RETRY_ENTER_MS));
        let bar = ansi::strip(&rig.c.render(200, rig.now));
        said |= bar.contains("b asks a question: nothing more typed there");
    }
    assert!(writes(&later).is_empty(), "nothing typed into the question: {later:?}");
    assert!(said, "the bar says why");
}

#[test]
fn a_strict_target_gets_no_enter_onto_a_line_that_is_not_the_answer() {
    let mut rig = line_target_rig();
    a_is_done_with(&mut rig, "do it");
    rig.timer_at(rig.now + delivery::ENTER_DELAY_MS);
    // Its prompt shows other text (a person typed over it): no more Enters.
    rig.screens.viewports.insert(2, rows(&["ready", "> something else"]));
    let mut later = Vec::new();
    for t in 1..=10 {
        later.extend(rig.timer_at(rig.now + t * delivery::RETRY_ENTER_MS));
    }
    assert!(writes(&later).is_empty(), "{later:?}");
}

/// Issue 42: a rules file broken while its agent runs is named at once:
/// the watcher drops the kind within a second, and the bar asks for the
/// rules then rather than at its next look 10 s later.
#[test]
fn a_user_kind_dropped_by_the_watcher_asks_for_the_rules_at_once() {
    let mut rig = Rig::leader(&[]);
    rules_result(&mut rig, TOY_RULES);
    rig.push(&[toy(report(1, State::Working, Source::Hook, rig.now, None))]);
    rig.timer_at(rig.now + 1_000);
    let dropped = PaneReport {
        pane: 1,
        ..PaneReport::default()
    };
    let asked = rig.push(&[dropped]);
    assert_eq!(host_runs(&asked, "rules").len(), 1, "{asked:?}");
}

/// Issue 42: a log glob that matches no file is named in the bar while
/// an agent of that kind runs (its dones stay guesses until then).
#[test]
fn a_log_glob_that_matches_no_file_is_named_while_its_agent_runs() {
    let mut rig = Rig::leader(&[]);
    let noted = TOY_RULES.replace(
        r#""problem": null}"#,
        r#""problem": null, "notes": [{"agent": "toy-routed", "message": "log ~/.toy/logs/*.jsonl matches no file: /home/u/.toy/logs does not exist"}]}"#,
    );
    rules_result(&mut rig, &noted);
    let bar = ansi::strip(&rig.c.render(200, rig.now));
    assert!(!bar.contains("matches no file"), "no such agent runs: {bar}");
    rig.push(&[toy(report(1, State::Working, Source::Hook, rig.now, None))]);
    let bar = ansi::strip(&rig.c.render(200, rig.now));
    assert!(
        bar.contains("agent toy-routed: log ~/.toy/logs/*.jsonl matches no file"),
        "{bar}"
    );
}
