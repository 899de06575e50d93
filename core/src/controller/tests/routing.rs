//! Routing a confirmed done: paste and Enter, confirmation, a held
//! answer, a lost paste, never a screen guess.

use super::*;

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
    let bar = ansi::strip(&rig.c.render(200, rig.now));
    assert!(bar.contains("sent 10 chars → b"), "nothing more to say: {bar}");
}

/// Issue 21: under load the first Enter was lost and the answer stood in
/// the target's input box for good (`❯ ping from codex`). Enter is pressed
/// again while the paste stands there, until the target starts its turn,
/// then never again.
#[test]
fn enter_is_pressed_again_until_the_target_starts_its_turn() {
    let mut rig = Rig::leader(&[("flows", "a -> b")]);
    rig.screens.viewports.insert(2, claude_box("the answer"));
    a_finishes_with_the_answer(&mut rig);
    let first = rig.timer_at(rig.now + delivery::ENTER_DELAY_MS);
    assert_eq!(writes(&first), vec![(2, "\r".to_owned())]);
    let retry = rig.timer_at(rig.now + delivery::RETRY_ENTER_MS);
    assert_eq!(writes(&retry), vec![(2, "\r".to_owned())], "no turn yet: Enter again");
    rig.push(&[report(2, State::Working, Source::Hook, rig.now, None)]);
    let after = rig.timer_at(rig.now + 10 * delivery::RETRY_ENTER_MS);
    assert!(writes(&after).is_empty(), "the target took the turn: {after:?}");
}

/// The same for a Codex target whose box reads empty (the Enter came
/// before the paste was drawn): Codex never shows a suggestion there.
#[test]
fn enter_is_pressed_again_onto_an_empty_codex_box() {
    let mut rig = Rig::leader(&[("flows", "a -> b")]);
    rig.bind_codex(2);
    rig.screens.viewports.insert(2, empty_codex_box());
    a_finishes_with_the_answer(&mut rig);
    let first = rig.timer_at(rig.now + delivery::ENTER_DELAY_MS);
    assert_eq!(writes(&first), vec![(2, "\r".to_owned())]);
    let retry = rig.timer_at(rig.now + delivery::RETRY_ENTER_MS);
    assert_eq!(writes(&retry), vec![(2, "\r".to_owned())], "no turn yet: Enter again");
}

#[test]
fn a_delivery_never_confirmed_is_said_in_the_bar_after_the_last_enter() {
    let mut rig = Rig::leader(&[("flows", "a -> b")]);
    b_finished_a_turn(&mut rig);
    // Text that is not the paste stands in Claude's box: a suggestion.
    rig.screens
        .viewports
        .insert(2, claude_box("Hello from the fake model."));
    a_finishes_with_the_answer(&mut rig);
    let mut enters = writes(&rig.timer_at(rig.now + delivery::ENTER_DELAY_MS)).len();
    for _ in 0..delivery::MAX_ENTERS + 1 {
        enters += writes(&rig.timer_at(rig.now + delivery::RETRY_ENTER_MS)).len();
    }
    assert_eq!(enters, 1, "no Enter onto what may be a suggestion");
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
    rig.bind_codex(2);
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

/// Issue 21, seen again under two busy loops: a TUI still starting up
/// dropped the paste itself; its box stayed empty and Enter could not
/// help. With no turn after the last Enter and an empty box, the answer is
/// pasted again; once the target works, nothing more is written.
#[test]
fn a_lost_paste_is_pasted_again_when_the_box_is_certainly_empty() {
    let mut rig = Rig::leader(&[("flows", "a -> b")]);
    rig.bind_codex(2);
    rig.screens.viewports.insert(2, empty_codex_box());
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
    rig.push(&[codex(report(2, State::Working, Source::Transcript, rig.now, None))]);
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

/// Seen under two busy loops (real Claude Code ping-pong): the routed turn
/// started and ended between two watcher reports, so no working edge came;
/// the box was empty again, the answer was pasted a second time and the
/// turn ran twice. The target's transcript moving on confirms the delivery.
#[test]
fn a_turn_too_quick_to_be_seen_working_still_confirms_the_delivery() {
    let mut rig = Rig::leader(&[("flows", "a -> b")]);
    rig.bind_codex(2);
    rig.screens.viewports.insert(2, empty_codex_box());
    let keyed = |state, key: &str, answer| {
        let mut r = codex(report(2, state, Source::Transcript, T0, answer));
        r.verdicts[0].key = Some(key.into());
        r
    };
    rig.push(&[keyed(State::Done, "100", Some("b's first"))]);
    rig.push(&[report(1, State::Working, Source::Transcript, T0, None)]);
    let first = rig.push(&[report(1, State::Done, Source::Transcript, T0 + 10, Some("the answer"))]);
    assert_eq!(writes(&first).len(), 1);
    rig.timer_at(rig.now + delivery::ENTER_DELAY_MS);
    rig.push(&[keyed(State::Done, "250", Some("b's second"))]);
    let mut later = Vec::new();
    for _ in 0..=delivery::MAX_ENTERS + 1 {
        later.extend(writes(&rig.timer_at(rig.now + delivery::RETRY_ENTER_MS)));
    }
    assert!(later.is_empty(), "confirmed: no Enter, no second paste: {later:?}");
}

/// Pane 1 (`a`) runs a turn and finishes it with "the answer", which the
/// flow `a -> b` routes; returns the effects of the done.
fn a_finishes_with_the_answer(rig: &mut Rig) -> Vec<Effect> {
    rig.push(&[report(1, State::Working, Source::Transcript, T0, None)]);
    rig.push(&[report(1, State::Done, Source::Transcript, T0 + 10, Some("the answer"))])
}

/// Pane 2 (`b`, Claude Code) ended a turn of its own: from now on it may
/// show a suggestion in its box.
fn b_finished_a_turn(rig: &mut Rig) {
    rig.push(&[report(2, State::Working, Source::Transcript, T0 - 20, None)]);
    rig.push(&[report(2, State::Done, Source::Transcript, T0 - 10, Some("b's own"))]);
}

/// The box of an idle Claude Code pane, empty.
fn empty_claude_box() -> Vec<String> {
    claude_box("")
}

/// The box of an idle Claude Code pane showing `text`.
fn claude_box(text: &str) -> Vec<String> {
    vec!["──────".into(), format!("❯ {text}"), "──────".into()]
}

/// The composer of an idle Codex pane, showing its placeholder.
fn empty_codex_box() -> Vec<String> {
    vec!["› Ask Codex to do anything".into(), "  ? for shortcuts".into()]
}

/// Seen under two busy loops (real Claude Code ping-pong): the box read
/// empty, a suggestion appeared before the next key arrived, and a retried
/// Enter submitted it, or a second paste landed before it (`❯ PONGHello
/// from the fake model.`). A Claude box that reads empty gets neither.
#[test]
fn an_empty_claude_box_gets_no_second_enter_and_no_second_paste() {
    let mut rig = Rig::leader(&[("flows", "a -> b")]);
    b_finished_a_turn(&mut rig);
    rig.screens.viewports.insert(2, empty_claude_box());
    a_finishes_with_the_answer(&mut rig);
    let first = rig.timer_at(rig.now + delivery::ENTER_DELAY_MS);
    assert_eq!(writes(&first), vec![(2, "\r".to_owned())], "the Enter that submits");
    let mut later = Vec::new();
    for _ in 0..delivery::MAX_ENTERS {
        later.extend(writes(&rig.timer_at(rig.now + delivery::RETRY_ENTER_MS)));
    }
    assert!(later.is_empty(), "{later:?}");
    let bar = rig.c.render(200, rig.now);
    assert!(bar.contains("not confirmed: b"), "{bar}");
}

/// Seen under two busy loops: Claude Code 2.1.39 shows a suggestion in its
/// box once a turn is done, and a retried Enter submitted it (a turn nobody
/// asked for). Text that may be a suggestion gets no Enter.
#[test]
fn no_enter_is_retried_onto_what_may_be_a_suggestion() {
    let mut rig = Rig::leader(&[("flows", "a -> b")]);
    b_finished_a_turn(&mut rig);
    rig.screens.viewports.insert(2, empty_claude_box());
    a_finishes_with_the_answer(&mut rig);
    let first = rig.timer_at(rig.now + delivery::ENTER_DELAY_MS);
    assert_eq!(writes(&first), vec![(2, "\r".to_owned())], "the Enter that submits");
    rig.screens
        .viewports
        .insert(2, claude_box("Hello from the fake model."));
    let mut later = Vec::new();
    for _ in 0..=delivery::MAX_ENTERS + 1 {
        later.extend(writes(&rig.timer_at(rig.now + delivery::RETRY_ENTER_MS)));
    }
    assert!(later.is_empty(), "{later:?}");
}

/// Seen under two busy loops: the target's own done report (its session
/// going idle) came 100 ms after the paste, before the Enter, and dropped
/// the delivery with its first Enter: the answer stood in the box unsent.
/// A move of the target before the first Enter confirms nothing.
#[test]
fn news_before_the_first_enter_still_gets_the_enter() {
    let mut rig = Rig::leader(&[("flows", "a -> b")]);
    rig.screens.viewports.insert(2, empty_claude_box());
    a_finishes_with_the_answer(&mut rig);
    rig.now += 100;
    rig.push(&[report(2, State::Idle, Source::Session, rig.now, None)]);
    let enter = rig.timer_at(rig.now + delivery::ENTER_DELAY_MS);
    assert_eq!(writes(&enter), vec![(2, "\r".to_owned())], "{enter:?}");
}

/// Seen under two busy loops (real Codex routed to a real Claude Code just
/// started): Claude Code still starting up dropped the paste. It has ended
/// no turn, so no suggestion can stand in its box: the paste goes again.
#[test]
fn a_paste_lost_by_a_claude_still_starting_goes_again() {
    let mut rig = Rig::leader(&[("flows", "a -> b")]);
    rig.screens.viewports.insert(2, empty_claude_box());
    a_finishes_with_the_answer(&mut rig);
    let mut writes_after = Vec::new();
    writes_after.extend(writes(&rig.timer_at(rig.now + delivery::ENTER_DELAY_MS)));
    for _ in 0..delivery::MAX_ENTERS {
        writes_after.extend(writes(&rig.timer_at(rig.now + delivery::RETRY_ENTER_MS)));
    }
    let pastes = writes_after.iter().filter(|(_, t)| t.contains("the answer")).count();
    assert_eq!(pastes, 1, "pasted again once: {writes_after:?}");
}

/// Whether the target may be suggesting is judged at the paste, not when
/// the answer was held: a Claude Code that ended a turn while the answer
/// waited for its box may show a suggestion there now, so a lost paste
/// is not repeated.
#[test]
fn a_held_answer_judges_the_suggestion_at_its_paste() {
    let mut rig = Rig::leader(&[("flows", "a -> b")]);
    rig.screens.viewports.insert(2, claude_box("[Pasted text #1 +3 lines]"));
    a_finishes_with_the_answer(&mut rig);
    b_finished_a_turn(&mut rig);
    rig.screens.viewports.insert(2, empty_claude_box());
    let mut later = writes(&rig.timer_at(rig.now + delivery::HOLD_RECHECK_MS));
    assert_eq!(later.len(), 1, "released once the box is empty: {later:?}");
    later.clear();
    for _ in 0..=delivery::MAX_ENTERS {
        later.extend(writes(&rig.timer_at(rig.now + delivery::RETRY_ENTER_MS)));
    }
    let pastes = later.iter().filter(|(_, t)| t.contains("the answer")).count();
    assert_eq!(pastes, 0, "no second paste before a suggestion: {later:?}");
}

/// A delivery to a busy target is kept until the target stops working,
/// then pasted; the turn it starts carries its hop count (here the limit,
/// 1), so the target's answer is not routed back.
#[test]
fn a_queued_delivery_goes_when_its_target_stops_and_its_turn_carries_the_hops() {
    let mut rig = Rig::leader(&[("flows", "a -> b, b -> a"), ("max_hops", "1")]);
    rig.push(&[report(2, State::Working, Source::Transcript, T0 - 5, None)]);
    let queued = a_finishes_with_the_answer(&mut rig);
    assert!(writes(&queued).is_empty(), "b works: nothing typed into it: {queued:?}");
    let bar = ansi::strip(&rig.c.render(200, rig.now));
    assert!(bar.contains("queued for b (busy)"), "{bar}");
    let stopped = rig.push(&[report(2, State::Done, Source::Transcript, T0 + 20, Some("b's own"))]);
    let into_b: Vec<_> = writes(&stopped).into_iter().filter(|(p, _)| *p == 2).collect();
    assert_eq!(into_b.len(), 1, "{stopped:?}");
    assert!(into_b[0].1.contains("the answer"), "{into_b:?}");
    rig.timer_at(rig.now + delivery::ENTER_DELAY_MS);
    rig.push(&[report(2, State::Working, Source::Transcript, T0 + 30, None)]);
    let back = rig.push(&[report(2, State::Done, Source::Transcript, T0 + 40, Some("b's reply"))]);
    let replies = writes(&back)
        .into_iter()
        .filter(|(_, w)| w.contains("b's reply"))
        .count();
    assert_eq!(replies, 0, "one hop was the limit: {back:?}");
    let bar = ansi::strip(&rig.c.render(200, rig.now));
    assert!(bar.contains("hop limit 1 reached"), "{bar}");
}
