//! Issue 42: a turn is routed at most once whatever happens to its source
//! afterwards (it quits, a rules reload drops and finds its kind again),
//! and no key lands in a target that did not ask for it (an agent that
//! reads lines, a question).

use super::*;

/// A transcript verdict of pane `pane` with its log offset as key.
fn logged(pane: u32, state: State, offset: u64, at: Millis, answer: Option<&str>) -> PaneReport {
    let mut r = report(pane, state, Source::Transcript, at, answer);
    r.verdicts[0].key = Some(offset.to_string());
    r
}

/// The watcher's report once `pane`'s agent process exited: no agent, no
/// verdicts.
fn exited(pane: u32) -> PaneReport {
    PaneReport {
        pane,
        agent: None,
        verdicts: Vec::new(),
        answer: None,
        since: None,
    }
}

fn pastes_of(effects: &[Effect], text: &str) -> usize {
    writes(effects).iter().filter(|(_, w)| w.contains(text)).count()
}

#[test]
fn a_source_that_quits_right_after_its_done_is_routed_once() {
    let mut rig = Rig::leader(&[("flows", "a -> b")]);
    rig.push(&[logged(1, State::Working, 100, T0, None)]);
    let done = rig.push(&[logged(1, State::Done, 200, T0 + 10, Some("the answer"))]);
    assert_eq!(pastes_of(&done, "the answer"), 1, "{done:?}");
    // b takes it and finishes: anything routed again would be pasted at once.
    rig.push(&[report(2, State::Working, Source::Hook, rig.now + 5, None)]);
    rig.push(&[report(2, State::Done, Source::Hook, rig.now + 6, None)]);
    let mut seen = 0;
    // It quits; the watcher still reads its log once more, then reads it
    // anew from the start (a new run of the agent found it).
    seen += pastes_of(&rig.push(&[exited(1)]), "the answer");
    seen += pastes_of(
        &rig.push(&[logged(1, State::Done, 200, T0 + 10, Some("the answer"))]),
        "the answer",
    );
    seen += pastes_of(&rig.push(&[exited(1)]), "the answer");
    seen += pastes_of(&rig.push(&[logged(1, State::Working, 100, T0, None)]), "the answer");
    seen += pastes_of(
        &rig.push(&[logged(1, State::Done, 200, T0 + 10, Some("the answer"))]),
        "the answer",
    );
    for t in 1..=10 {
        seen += pastes_of(&rig.timer_at(rig.now + t * 500), "the answer");
    }
    assert_eq!(seen, 0, "one turn, one paste");
    // Its next turn is routed.
    rig.push(&[logged(1, State::Working, 300, rig.now + 10, None)]);
    let next = rig.push(&[logged(1, State::Done, 400, rig.now + 20, Some("the answer"))]);
    assert_eq!(
        pastes_of(&next, "the answer"),
        1,
        "a new turn with the same words: {next:?}"
    );
}

#[test]
fn a_turn_end_seen_again_flags_nothing_again() {
    let mut rig = Rig::leader(&[]);
    rig.push(&[logged(2, State::Working, 100, T0, None)]);
    rig.push(&[logged(2, State::Done, 200, T0 + 10, Some("x"))]);
    let bar = ansi::strip(&rig.c.render(200, rig.now));
    assert!(bar.contains("needs you: 1"), "{bar}");
    let mut b_focused = vec![terminal(1, 0, "a", false), terminal(2, 0, "b", true)];
    b_focused.extend([copy(1, 0), copy(5, 1)]);
    rig.send(Event::Panes(b_focused));
    assert!(!ansi::strip(&rig.c.render(200, rig.now)).contains("needs you"), "seen");
    let mut a_focused = vec![terminal(1, 0, "a", true), terminal(2, 0, "b", false)];
    a_focused.extend([copy(1, 0), copy(5, 1)]);
    rig.send(Event::Panes(a_focused));
    rig.push(&[exited(2)]);
    rig.push(&[logged(2, State::Done, 200, T0 + 10, Some("x"))]);
    let bar = ansi::strip(&rig.c.render(200, rig.now));
    assert!(!bar.contains("needs you"), "the seen done is not flagged again: {bar}");
    rig.push(&[exited(2)]);
    rig.push(&[logged(2, State::Working, 100, T0, None)]);
    rig.push(&[logged(2, State::Done, 200, T0 + 10, Some("x"))]);
    assert_eq!(rig.state_of(2), State::Done);
    let bar = ansi::strip(&rig.c.render(200, rig.now));
    assert!(!bar.contains("needs you"), "the seen done is not flagged again: {bar}");
}

#[test]
fn the_same_offset_in_a_new_log_is_a_new_turn() {
    let mut rig = Rig::leader(&[("flows", "a -> b")]);
    let in_log = |mut r: PaneReport, log: &str| {
        r.agent.as_mut().unwrap().transcript = Some(log.into());
        r
    };
    rig.push(&[in_log(logged(1, State::Working, 100, T0, None), "/l/one.jsonl")]);
    let first = rig.push(&[in_log(
        logged(1, State::Done, 200, T0 + 10, Some("one")),
        "/l/one.jsonl",
    )]);
    assert_eq!(pastes_of(&first, "one"), 1);
    rig.push(&[report(2, State::Working, Source::Hook, rig.now + 5, None)]);
    rig.push(&[report(2, State::Done, Source::Hook, rig.now + 6, None)]);
    rig.push(&[exited(1)]);
    rig.push(&[in_log(logged(1, State::Working, 100, T0 + 20, None), "/l/two.jsonl")]);
    let second = rig.push(&[in_log(
        logged(1, State::Done, 200, T0 + 30, Some("two")),
        "/l/two.jsonl",
    )]);
    assert_eq!(pastes_of(&second, "two"), 1, "{second:?}");
}
