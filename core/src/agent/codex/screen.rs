//! Codex CLI's screen and terminal title: the fast guess for a Codex pane.
//!
//! The composer (`› …`, the last `›` row, footer lines below it) stays on
//! screen while Codex works, so the row just above it decides:
//! `• Working (7s • esc to interrupt)` is working, the dim `Worked for 9s •
//! 12:52` line is done, `■ Conversation interrupted …` is interrupted,
//! `■ <error>` failed, an echoed `› prompt` a turn that just started. The
//! approval dialog (`Press enter to confirm or esc to cancel`) is waiting.
//! The title says more: a braille spinner in front while busy (also while
//! an answer streams and no working line shows), `[ ! ] Action Required`
//! while an approval waits. As for Claude Code, a false done is worse than a
//! late one: old `Worked for` lines stay on screen during the next turn, so
//! only the row right above the composer counts, and a spinner in the title
//! overrides it.

use crate::screen::{InputBox, Rule, ScreenVerdict};
use crate::verdict::State;

/// The approval dialog's lines (their starts: a narrow pane wraps them).
const DIALOG: [&str; 2] = ["Press enter to confirm", "Would you like to run"];
/// The title's prefix while an approval waits.
const ACTION_REQUIRED: &str = "[ ! ] Action Required";

/// Classifies a Codex pane from its visible rows and its terminal title.
pub fn classify<'a, S: AsRef<str>>(rows: &'a [S], title: &str) -> ScreenVerdict<'a> {
    let by_rows = classify_rows(rows);
    if by_rows.state == State::Waiting {
        return by_rows;
    }
    if title.trim_start().starts_with(ACTION_REQUIRED) {
        return ScreenVerdict::decided(State::Waiting, Rule::PermissionWait, None, false);
    }
    if starts_with_spinner(title) && by_rows.state != State::Working {
        return ScreenVerdict::decided(State::Working, Rule::Spinner, None, true);
    }
    by_rows
}

/// What Codex's composer shows when it is empty (a narrow pane cuts it).
const PLACEHOLDERS: [&str; 2] = ["Ask Codex to do anything", "Ask a follow-up question"];

/// What the composer (the last `›` row) holds: empty when it shows
/// nothing or its placeholder, unknown without a composer or under an
/// approval's options.
pub fn input_box<S: AsRef<str>>(rows: &[S]) -> InputBox {
    let Some(composer) = rows.iter().map(|r| r.as_ref().trim()).rfind(|r| r.starts_with('›')) else {
        return InputBox::Unknown;
    };
    let text = composer['›'.len_utf8()..].trim();
    if is_numbered_option(text) {
        return InputBox::Unknown;
    }
    let placeholder = PLACEHOLDERS.iter().any(|p| p.starts_with(text.trim_end_matches('…')));
    if text.is_empty() || placeholder {
        InputBox::Empty
    } else {
        InputBox::Draft(text.to_owned())
    }
}

/// `1. Yes, proceed (y)`: an approval's option, not a draft.
fn is_numbered_option(text: &str) -> bool {
    text.split_once(". ")
        .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

/// True when the title starts with a braille spinner frame.
fn starts_with_spinner(title: &str) -> bool {
    let mut chars = title.trim_start().chars();
    let first = chars.next();
    first.is_some_and(|c| ('\u{2801}'..='\u{28FF}').contains(&c)) && chars.next() == Some(' ')
}

fn classify_rows<S: AsRef<str>>(rows: &[S]) -> ScreenVerdict<'_> {
    let rows: Vec<(usize, &str)> = rows.iter().map(|r| r.as_ref().trim()).enumerate().collect();
    let tail = rows.iter().rev().filter(|(_, r)| !r.is_empty()).take(12);
    if let Some(&(i, line)) = tail.clone().find(|(_, r)| DIALOG.iter().any(|d| r.contains(d))) {
        return ScreenVerdict::decided(State::Waiting, Rule::PermissionDialog, Some((i, line)), false);
    }
    let Some(composer) = rows.iter().rposition(|(_, r)| r.starts_with('›')) else {
        return ScreenVerdict::decided(State::Unknown, Rule::NoStatus, None, false);
    };
    let above: Vec<&(usize, &str)> = rows[..composer]
        .iter()
        .rev()
        .skip_while(|(_, r)| r.is_empty() || is_footer(r))
        .take_while(|(_, r)| !r.is_empty())
        .collect();
    // A narrow pane wraps lines: the last paragraph's first row decides.
    let head = above.iter().find(|(_, r)| is_head(r)).or(above.last());
    match head {
        Some(&&(i, line)) => judge_row(i, line),
        None => ScreenVerdict::decided(State::Unknown, Rule::NoStatus, None, false),
    }
}

/// True for a row that starts a paragraph: a glyph (`•`, `◦`, `■`, `›`,
/// `✔`) or the `Worked for` line; wrapped continuations start otherwise.
fn is_head(row: &str) -> bool {
    row.starts_with(['•', '◦', '■', '›', '✔', '└']) || is_worked_for(row)
}

/// Lines drawn between the history and the composer that say nothing of the
/// turn (`1 background terminal running · /ps to view …`, kept after an
/// interrupt while Codex is idle).
fn is_footer(row: &str) -> bool {
    row.contains("background terminal") && !is_working(row)
}

fn is_working(row: &str) -> bool {
    let rest = row.trim_start_matches(['•', '◦']).trim_start();
    row.starts_with(['•', '◦']) && rest.starts_with("Working (")
}

fn judge_row(i: usize, line: &str) -> ScreenVerdict<'_> {
    let row = Some((i, line));
    if is_working(line) {
        return ScreenVerdict::decided(State::Working, Rule::FooterActivity, row, true);
    }
    if let Some(rest) = line.strip_prefix('■') {
        return match rest.trim_start().starts_with("Conversation interrupted") {
            true => ScreenVerdict::decided(State::Interrupted, Rule::Interrupted, row, false),
            false => ScreenVerdict::decided(State::Failed, Rule::ApiError, row, false),
        };
    }
    if line.starts_with('›') {
        return ScreenVerdict::decided(State::Working, Rule::PromptEcho, row, true);
    }
    if is_worked_for(line) {
        return ScreenVerdict::decided(State::Done, Rule::Banner, row, false);
    }
    ScreenVerdict::decided(State::Unknown, Rule::NoStatus, None, false)
}

/// `Worked for 9s • 12:52` (or `… for <1s`): a past verb, `for`, a
/// duration, then the time. Prose with the same words lacks the time.
fn is_worked_for(line: &str) -> bool {
    let line = line.trim_matches(|c: char| c == '─' || c.is_whitespace());
    let Some((verb, rest)) = line.split_once(" for ") else {
        return false;
    };
    let past_verb = verb.len() > 2 && verb.ends_with("ed") && verb.chars().all(char::is_alphabetic);
    let (duration, time) = rest.split_once(" • ").unwrap_or((rest, ""));
    let duration_shape = duration == "<1s"
        || (!duration.is_empty()
            && duration.split_whitespace().all(|part| {
                part.len() > 1
                    && part.ends_with(['h', 'm', 's'])
                    && part[..part.len() - 1].bytes().all(|b| b.is_ascii_digit())
            }));
    let clock = time.split_once(':').is_some_and(|(h, m)| {
        !h.is_empty()
            && h.len() <= 2
            && h.bytes().all(|b| b.is_ascii_digit())
            && m.starts_with(|c: char| c.is_ascii_digit())
    });
    past_verb && duration_shape && (clock || duration == "<1s")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(name: &str) -> (Vec<String>, String) {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/codex/frames/");
        let rows = std::fs::read_to_string(format!("{dir}{name}.txt")).unwrap();
        let title = std::fs::read_to_string(format!("{dir}{name}.title")).unwrap();
        (rows.lines().map(str::to_owned).collect(), title.trim_end().to_owned())
    }

    fn state_of(name: &str, with_title: bool) -> State {
        let (rows, title) = frame(name);
        classify(&rows, if with_title { &title } else { "" }).state
    }

    #[test]
    fn real_frames_with_their_titles() {
        for (name, state) in [
            ("tool-running", State::Working),
            ("slow-early", State::Working),
            ("slow-streaming", State::Working),
            ("perm-dialog", State::Waiting),
            ("tool-done", State::Done),
            ("slow-done", State::Done),
            ("perm-done", State::Done),
            ("interrupted", State::Interrupted),
            ("failed-idle", State::Failed),
        ] {
            assert_eq!(state_of(name, true), state, "{name}");
        }
    }

    #[test]
    fn without_a_title_the_rows_never_say_done_early() {
        for name in ["tool-running", "slow-early", "slow-streaming", "perm-dialog"] {
            assert_ne!(state_of(name, false), State::Done, "{name}");
        }
        assert_eq!(state_of("tool-done", false), State::Done);
        assert_eq!(state_of("tool-running", false), State::Working);
    }

    #[test]
    fn an_old_worked_for_line_above_a_new_prompt_is_not_done() {
        let rows = [
            "• Done: slept 3s.",
            "  Worked for 3s • 17:47",
            "",
            "› tool:3",
            "",
            "› Ask Codex to do anything",
        ];
        let v = classify(&rows, "");
        assert_eq!((v.state, v.rule), (State::Working, Rule::PromptEcho));
    }

    #[test]
    fn wrapped_lines_of_a_narrow_pane_are_read_from_their_first_row() {
        let failed = [
            "› go",
            "■ We're currently experiencing high dem",
            "and, which may cause errors.",
            "",
            "› Ask Codex to do anything",
        ];
        assert_eq!(classify(&failed, "").state, State::Failed);
        let stopped = [
            "■ Conversation interrupted - us",
            "ck if something went wrong",
            "",
            "› Ask Codex",
        ];
        assert_eq!(classify(&stopped, "").state, State::Interrupted);
        let working = [
            "› go",
            "• Working (3s • esc to",
            "interrupt) · 1 background terminal",
            "",
            "› Ask Codex",
        ];
        assert_eq!(classify(&working, "").state, State::Working);
        let dialog = [
            "  Would you like to run the",
            "  following command?",
            "› 1. Yes, proceed (y)",
            "  Press enter to confirm or",
            "  esc to cancel",
        ];
        assert_eq!(classify(&dialog, "").state, State::Waiting);
        let prose = [
            "› go",
            "• word0 word1 word2 word3 word4",
            "word5 Worked for 3s • 17:47",
            "",
            "› Ask Codex",
        ];
        assert_ne!(
            classify(&prose, "").state,
            State::Done,
            "a wrapped answer is not a done line"
        );
    }

    #[test]
    fn worked_for_shapes() {
        assert!(is_worked_for("Worked for 3s • 17:47"));
        assert!(is_worked_for("Worked for 1m 05s • 9:02"));
        assert!(is_worked_for("─ Worked for <1s ─────"));
        assert!(!is_worked_for("Worked for 3s"), "prose lacks the time");
        assert!(!is_worked_for("I worked for hours • 17:47"));
        assert!(!is_worked_for("Worked for the team • 12:00"));
    }

    #[test]
    fn the_composers_draft_is_text_that_is_not_its_placeholder() {
        let empty = ["› tool:3", "• Done.", "› Ask Codex to do anything", "  ? for shortcuts"];
        assert_eq!(input_box(&empty), InputBox::Empty);
        assert_eq!(input_box(&["› Ask Codex"]), InputBox::Empty, "cut by a narrow pane");
        assert_eq!(input_box(&["› Ask a follow-up question"]), InputBox::Empty);
        assert_eq!(input_box(&["› "]), InputBox::Empty);
        assert_eq!(input_box(&["› 1. Yes, proceed (y)"]), InputBox::Unknown);
        assert_eq!(
            input_box(&["› half a thought"]),
            InputBox::Draft("half a thought".into())
        );
        assert_eq!(input_box(&["no composer"]), InputBox::Unknown);
    }

    #[test]
    fn the_title_alone() {
        let idle = ["› Ask Codex to do anything"];
        assert_eq!(classify(&idle, "⠋ Fake title | work").state, State::Working);
        assert_eq!(classify(&idle, "[ ! ] Action Required | t").state, State::Waiting);
        assert_eq!(classify(&idle, "work").state, State::Unknown);
        assert_eq!(classify(&[] as &[&str], "").rule, Rule::NoStatus);
    }
}
