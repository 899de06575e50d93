//! Qwen Code's screen and terminal title: the fast guess for a Qwen pane.
//!
//! The title is `Qwen - <dir>` when idle, `◐︎ Qwen - <dir>` while a turn
//! runs (also while a tool runs and text streams) and `✳︎ Qwen - <dir>`
//! while an approval waits; it changes together with the spinner row.
//! Working shows `⠋ <phrase>... (3s · ↓ 5 tokens · esc to cancel)` above
//! the input box (which stays on screen all the time). Waiting is the
//! `Allow execution of: …?` dialog and `Waiting for user confirmation...`.
//! Above the input box the last message tells the rest: `◆︎ <answer>`
//! done, `●︎ Request cancelled.` interrupted, `✕ [API Error: …]` failed, a
//! finished tool `✓ Shell …` means the model answers next. Trap: an Escape
//! while an HTTP 500 is being retried removes the turn from the screen (the
//! prompt goes back into the input box): what is left is the previous
//! turn's last message.

use crate::screen::{InputBox, Rule, ScreenVerdict};
use crate::verdict::State;

const WORKING_TITLE: char = '◐';
const WAITING_TITLE: char = '✳';
/// What an idle title holds after its glyph (if any).
const TITLE_NAME: &str = "Qwen - ";

/// Classifies a Qwen pane from its visible rows and its terminal title.
pub fn classify<'a, S: AsRef<str>>(rows: &'a [S], title: &str) -> ScreenVerdict<'a> {
    let rows: Vec<(usize, &'a str)> = rows.iter().map(|r| r.as_ref().trim()).enumerate().collect();
    let title = title.trim();
    let bottom = rows.iter().rev().filter(|(_, r)| !r.is_empty()).take(24);
    if let Some(&row) = bottom.clone().find(|(_, r)| is_approval(r)) {
        return ScreenVerdict::decided(State::Waiting, Rule::PermissionDialog, Some(row), false);
    }
    let Some(input) = input_row(&rows) else {
        // A dialog being drawn: the title still tells.
        return by_title(title).unwrap_or(ScreenVerdict::decided(State::Unknown, Rule::NoStatus, None, false));
    };
    let above: Vec<(usize, &str)> = rows[..input]
        .iter()
        .rev()
        .filter(|(_, r)| !r.is_empty() && !r.starts_with('─'))
        .take(14)
        .copied()
        .collect();
    if let Some(&row) = above.iter().take(3).find(|(_, r)| r.contains("esc to cancel")) {
        return ScreenVerdict::decided(State::Working, Rule::FooterActivity, Some(row), true);
    }
    if let Some(&row) = above.iter().take(6).find(|(_, r)| is_running_tool(r)) {
        return ScreenVerdict::decided(State::Working, Rule::Spinner, Some(row), true);
    }
    if let Some(verdict) = by_title(title) {
        return verdict;
    }
    let idle_title = title.starts_with(TITLE_NAME) || !is_qwen_title(title);
    match above.iter().find(|(_, r)| is_head(r)) {
        Some(&(i, line)) => judge_head(i, line, idle_title),
        None => ScreenVerdict::decided(State::Unknown, Rule::NoStatus, None, false),
    }
}

/// The approval dialog's rows (`? Shell … ←` is the call that waits).
fn is_approval(row: &str) -> bool {
    row.starts_with("Allow execution of")
        || row.starts_with("Waiting for user confirmation")
        || (row.starts_with("? ") && row.ends_with('←'))
}

/// What a working or waiting title says.
fn by_title<'a>(title: &str) -> Option<ScreenVerdict<'a>> {
    if title.starts_with(WAITING_TITLE) {
        return Some(ScreenVerdict::decided(
            State::Waiting,
            Rule::PermissionWait,
            None,
            false,
        ));
    }
    title
        .starts_with(WORKING_TITLE)
        .then(|| ScreenVerdict::decided(State::Working, Rule::Spinner, None, true))
}

/// The input box's row: the last `>` row with a rule right above it.
fn input_row(rows: &[(usize, &str)]) -> Option<usize> {
    (1..rows.len())
        .rev()
        .find(|&i| rows[i].1.starts_with('>') && rows[i - 1].1.starts_with('─'))
}

/// What Qwen Code's input box shows when it is empty.
const PLACEHOLDER: &str = "Type your message or @path/to/file";

/// What the input box holds: empty when it shows its placeholder; other
/// text may be a draft or the suggestion Qwen Code puts there after a turn
/// (plugins get no colours to tell them apart), so it is unsure.
pub fn input_box<S: AsRef<str>>(rows: &[S]) -> InputBox {
    let rows: Vec<(usize, &str)> = rows.iter().map(|r| r.as_ref().trim()).enumerate().collect();
    let Some(input) = input_row(&rows) else {
        return InputBox::Unknown;
    };
    // A zero-width space follows the cursor.
    let text = rows[input].1['>'.len_utf8()..]
        .trim()
        .trim_end_matches('\u{200b}')
        .trim();
    if text.is_empty() || PLACEHOLDER.starts_with(text.trim_end_matches('…')) {
        InputBox::Empty
    } else {
        InputBox::Unsure(text.to_owned())
    }
}

/// A title Qwen Code set.
fn is_qwen_title(title: &str) -> bool {
    title.starts_with([WORKING_TITLE, WAITING_TITLE]) || title.starts_with(TITLE_NAME)
}

/// A tool row of a tool that still runs (`⊷`, `⊶`) or waits to (`o`).
fn is_running_tool(row: &str) -> bool {
    row.starts_with(['⊷', '⊶']) || row.starts_with("o ")
}

/// The first row of a message: its glyph, a prompt echo, or a finished
/// tool. A cancelled tool's `- Shell …` row is passed over: the `●︎ Request
/// cancelled.` above it tells.
fn is_head(row: &str) -> bool {
    row.starts_with(['◆', '●', '✕', '>', '✓'])
}

fn judge_head(i: usize, line: &str, idle_title: bool) -> ScreenVerdict<'_> {
    let row = Some((i, line));
    let body = line
        .trim_start_matches(|c: char| !c.is_alphanumeric() && c != '[')
        .trim();
    if line.starts_with('✓') {
        return ScreenVerdict::decided(State::Working, Rule::Spinner, row, true);
    }
    if line.starts_with('●') && body.starts_with("Request cancelled") {
        return ScreenVerdict::decided(State::Interrupted, Rule::Interrupted, row, false);
    }
    if line.starts_with('✕') {
        return ScreenVerdict::decided(State::Failed, Rule::ApiError, row, false);
    }
    if line.starts_with('>') {
        return ScreenVerdict::decided(State::Working, Rule::PromptEcho, row, true);
    }
    if line.starts_with('◆') && idle_title {
        return ScreenVerdict::decided(State::Done, Rule::Banner, row, false);
    }
    ScreenVerdict::decided(State::Unknown, Rule::NoStatus, None, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The frame of a recorded fixture at `t` seconds: its rows (escapes
    /// removed) and its title.
    fn frame(name: &str, t: f64) -> (Vec<String>, String) {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/qwen/");
        let text = std::fs::read_to_string(format!("{dir}{name}/frames.json")).unwrap();
        let frames: serde_json::Value = serde_json::from_str(&text).unwrap();
        let mut screen = String::new();
        let mut title = String::new();
        for f in frames["frames"].as_array().unwrap() {
            if let Some(s) = f["screen"].as_str() {
                screen = crate::ansi::strip(s);
            }
            title = f["title"].as_str().unwrap_or_default().to_owned();
            if f["t"].as_f64().unwrap() >= t {
                break;
            }
        }
        (screen.lines().map(str::to_owned).collect(), title)
    }

    #[test]
    fn real_frames_with_and_without_their_titles() {
        for (name, t, with_title, without_title) in [
            ("0.24.4-tool", 6.0, State::Working, State::Working),
            ("0.24.4-tool", 8.0, State::Working, State::Working),
            ("0.24.4-tool", 11.5, State::Done, State::Done),
            ("0.24.4-perm", 6.5, State::Waiting, State::Waiting),
            ("0.24.4-interrupt", 8.5, State::Interrupted, State::Interrupted),
            ("0.24.4-fail", 6.5, State::Failed, State::Failed),
            ("0.24.4-fail", 12.0, State::Working, State::Working),
        ] {
            let (rows, title) = frame(name, t);
            assert_eq!(
                classify(&rows, &title).state,
                with_title,
                "{name} at {t} with {title:?}"
            );
            assert_eq!(
                classify(&rows, "").state,
                without_title,
                "{name} at {t} without a title"
            );
        }
    }

    #[test]
    fn an_answer_under_a_working_title_is_not_done() {
        let rows = ["◆︎ Running it.", "─────", ">   Type your message", "─────"];
        assert_eq!(classify(&rows, "◐︎ Qwen - proj").state, State::Working);
        assert_eq!(classify(&rows, "Qwen - proj").state, State::Done);
        assert_eq!(classify(&rows, "✳︎ Qwen - proj").state, State::Waiting);
        assert_eq!(classify(&rows, "reviewer").state, State::Done, "a layout's pane name");
    }

    #[test]
    fn the_input_box_after_a_turn_may_hold_a_suggestion() {
        let (rows, _) = frame("0.24.4-tool", 11.5);
        assert_eq!(input_box(&rows), InputBox::Unsure("Fake side answer.".into()));
        let (rows, _) = frame("0.24.4-tool", 6.0);
        assert_eq!(input_box(&rows), InputBox::Empty);
        assert_eq!(input_box(&["no box"]), InputBox::Unknown);
    }
}
