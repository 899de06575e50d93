//! Gemini CLI's screen and terminal title: the fast guess for a Gemini pane.
//!
//! Working shows `⠸ Thinking... (esc to cancel, 3s)` above the input box, or
//! a running tool box (`│ ⊶  Shell …`), and the title `✦  Working…`. Waiting
//! is the `Allow execution of …?` box and the title `✋  Action Required`.
//! Above the input box the last message tells the rest: `ℹ Request
//! cancelled.` is interrupted, `✕ [API Error …]` (with its `ℹ This request
//! failed…` note) failed, an answer `✦ …` done — but only while nothing is
//! running and the title, when known, is back to `◇  Ready`. Two traps: the
//! title says Ready while a trust or auth dialog shows (the rows decide
//! then), and a silent command can put `Action Required` in the title with
//! no approval pending (the rows' running tool box wins).

use crate::screen::{InputBox, Rule, ScreenVerdict};
use crate::verdict::State;

const WORKING_TITLE: &str = "✦";
const ACTION_TITLE: &str = "✋";
const READY_TITLE: &str = "◇";

/// Classifies a Gemini pane from its visible rows and its terminal title.
pub fn classify<'a, S: AsRef<str>>(rows: &'a [S], title: &str) -> ScreenVerdict<'a> {
    let rows: Vec<(usize, &'a str)> = rows.iter().map(|r| r.as_ref().trim()).enumerate().collect();
    let title = title.trim_start();
    // The approval box takes the input box's place.
    let bottom = rows.iter().rev().filter(|(_, r)| !r.is_empty()).take(16);
    if let Some(&row) = bottom.clone().find(|(_, r)| r.contains("Allow execution of")) {
        return ScreenVerdict::decided(State::Waiting, Rule::PermissionDialog, Some(row), false);
    }
    let Some(input) = rows.iter().rposition(|(_, r)| r.starts_with('>')) else {
        return ScreenVerdict::decided(State::Unknown, Rule::NoStatus, None, false);
    };
    let above: Vec<(usize, &str)> = rows[..input]
        .iter()
        .rev()
        .filter(|(_, r)| !r.is_empty() && !is_chrome(r))
        .take(14)
        .copied()
        .collect();
    if let Some(&row) = above.iter().find(|(_, r)| r.contains("esc to cancel")) {
        return ScreenVerdict::decided(State::Working, Rule::FooterActivity, Some(row), true);
    }
    if let Some(&row) = above.iter().take(6).find(|(_, r)| is_running_tool(r)) {
        return ScreenVerdict::decided(State::Working, Rule::Spinner, Some(row), true);
    }
    if title.starts_with(ACTION_TITLE) {
        return ScreenVerdict::decided(State::Waiting, Rule::PermissionWait, None, false);
    }
    if title.starts_with(WORKING_TITLE) {
        return ScreenVerdict::decided(State::Working, Rule::Spinner, None, true);
    }
    let head = above.iter().find(|(_, r)| is_head(r));
    match head {
        // A title that is not Gemini's (a pane named by its layout keeps
        // its name) tells nothing: the rows decide.
        Some(&(i, line)) => judge_head(i, line, title.starts_with(READY_TITLE) || !is_gemini_title(title)),
        None => ScreenVerdict::decided(State::Unknown, Rule::NoStatus, None, false),
    }
}

/// What Gemini CLI's input box shows when it is empty.
const PLACEHOLDER: &str = "Type your message or @path/to/file";

/// What the input box (the last `>` row) holds: empty when it shows
/// nothing or its placeholder, unknown without an input box. Stray bytes
/// count as a draft (zellij's late answer to start-up terminal queries has
/// landed there: `>|Zellij(4501)62;4;52c`).
pub fn input_box<S: AsRef<str>>(rows: &[S]) -> InputBox {
    let Some(input) = rows
        .iter()
        .map(|r| r.as_ref().trim().trim_matches('│').trim())
        .rfind(|r| r.starts_with('>'))
    else {
        return InputBox::Unknown;
    };
    let text = input['>'.len_utf8()..].trim();
    if text.is_empty() || PLACEHOLDER.starts_with(text.trim_end_matches('…')) {
        InputBox::Empty
    } else {
        InputBox::Draft(text.to_owned())
    }
}

/// A title Gemini CLI set (its state glyph first).
fn is_gemini_title(title: &str) -> bool {
    title.starts_with([WORKING_TITLE, ACTION_TITLE, READY_TITLE].map(|g| g.chars().next().unwrap_or(' ')))
}

/// The input box's surroundings: the rule above it, hints, tool box borders.
fn is_chrome(row: &str) -> bool {
    row.starts_with('─')
        || row.starts_with('╭')
        || row.starts_with('╰')
        || row == "│"
        || row == "? for shortcuts"
        || row.starts_with("Shift+Tab")
        || row.chars().all(|c| c == '│' || c.is_whitespace())
}

/// A tool box row of a tool that still runs (`⊶`, or the spinner frames).
fn is_running_tool(row: &str) -> bool {
    let inner = row.trim_start_matches('│').trim_start();
    inner.starts_with('⊶') || inner.starts_with(|c: char| ('\u{2801}'..='\u{28FF}').contains(&c))
}

/// The first row of a message: its glyph, or a tool box's status row
/// (`│ ✓  Shell …`; a cancelled tool's `│ -` row is passed over: the
/// `ℹ Request cancelled.` above it tells).
fn is_head(row: &str) -> bool {
    row.starts_with(['✦', 'ℹ', '✕', '>']) || finished_tool(row)
}

/// A tool box row of a tool that finished (`✓`, or `x` for an error): the
/// model answers next.
fn finished_tool(row: &str) -> bool {
    let inner = row.trim_start_matches('│').trim_start();
    row.starts_with('│') && (inner.starts_with('✓') || inner.starts_with("x "))
}

fn judge_head(i: usize, line: &str, ready: bool) -> ScreenVerdict<'_> {
    let row = Some((i, line));
    if finished_tool(line) {
        return ScreenVerdict::decided(State::Working, Rule::Spinner, row, true);
    }
    if line.starts_with("ℹ Request cancelled") {
        return ScreenVerdict::decided(State::Interrupted, Rule::Interrupted, row, false);
    }
    if line.starts_with('✕') || line.starts_with("ℹ This request failed") {
        return ScreenVerdict::decided(State::Failed, Rule::ApiError, row, false);
    }
    if line.starts_with('>') {
        return ScreenVerdict::decided(State::Working, Rule::PromptEcho, row, true);
    }
    if line.starts_with('✦') && ready {
        return ScreenVerdict::decided(State::Done, Rule::Banner, row, false);
    }
    ScreenVerdict::decided(State::Unknown, Rule::NoStatus, None, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(name: &str) -> (Vec<String>, String) {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/gemini/frames/");
        let rows = std::fs::read_to_string(format!("{dir}{name}.txt")).unwrap();
        let title = std::fs::read_to_string(format!("{dir}{name}.title")).unwrap();
        (rows.lines().map(str::to_owned).collect(), title.trim().to_owned())
    }

    #[test]
    fn real_frames_with_and_without_their_titles() {
        for (name, with_title, without_title) in [
            ("tool-approval", State::Waiting, State::Waiting),
            ("tool-running", State::Working, State::Working),
            ("tool8-running", State::Working, State::Working),
            ("slow-streaming", State::Working, State::Working),
            ("tool-done", State::Done, State::Done),
            ("slow-done", State::Done, State::Done),
            ("failed", State::Failed, State::Failed),
            ("interrupted", State::Interrupted, State::Interrupted),
        ] {
            let (rows, title) = frame(name);
            assert_eq!(classify(&rows, &title).state, with_title, "{name} with its title");
            assert_eq!(classify(&rows, "").state, without_title, "{name} without a title");
        }
    }

    #[test]
    fn a_finished_tool_box_at_the_bottom_means_the_answer_is_still_to_come() {
        let rows = [
            "✦ Running it.",
            "╭────╮",
            "│ ✓  Shell sleep 3 │",
            "╰────╯",
            "? for shortcuts",
            ">   Type",
        ];
        assert_eq!(classify(&rows, "").state, State::Working);
        assert!(
            !classify(&rows, "◇  Ready (work)").is_quiet(),
            "never confirms a preamble"
        );
    }

    #[test]
    fn the_input_boxs_draft_is_text_that_is_not_its_placeholder() {
        let (rows, _) = frame("slow-done");
        assert_eq!(input_box(&rows), InputBox::Empty, "{rows:?}");
        assert_eq!(
            input_box(&["│ >   Type your message or @path/to/file │"]),
            InputBox::Empty
        );
        assert_eq!(
            input_box(&[">   Type your mess"]),
            InputBox::Empty,
            "cut by a narrow pane"
        );
        assert_eq!(input_box(&[" > draft"]), InputBox::Draft("draft".into()));
        let stray = input_box(&[">|Zellij(4501)62;4;52c"]);
        assert_eq!(stray, InputBox::Draft("|Zellij(4501)62;4;52c".into()));
        assert_eq!(input_box(&["no box"]), InputBox::Unknown);
    }

    #[test]
    fn an_answer_while_the_title_says_working_is_not_done() {
        let rows = ["✦ Running it.", "", "? for shortcuts", ">   Type your message"];
        assert_eq!(classify(&rows, "✦  Working… (work)").state, State::Working);
        assert_eq!(classify(&rows, "◇  Ready (work)").state, State::Done);
        assert_eq!(classify(&rows, "✋  Action Required (work)").state, State::Waiting);
        assert_eq!(
            classify(&rows, "reviewer").state,
            State::Done,
            "a layout's pane name is no Gemini title"
        );
    }
}
