//! The family's screen: the fast guess for its panes. The title never
//! shows the state (OpenCode's `OpenCode`, then `OC | <session title>`;
//! Kilo's `Kilo`). The footer
//! under the input box does: a bouncing bar of `■`/`⬝` with `esc interrupt`
//! (`esc again to interrupt` after one Escape, `… [retrying in 2s attempt
//! #2]` while an HTTP 500 is retried) while a turn runs, the working folder
//! when it is over. The approval dialog (`△ Permission required`) takes the
//! input box's place. Above the input box every assistant message ends with
//! `▣  <mode> · <model>` (`Build`, `Code`): a finished turn adds its duration (`· 4.7s`, done),
//! an Escape `· interrupted`; no suffix with a quiet footer is an API error
//! (or an Escape while a retry waited). A prompt shown below the last `▣`
//! is a turn starting.

use crate::screen::{InputBox, Rule, ScreenVerdict};
use crate::verdict::State;

/// Classifies a family pane from its visible rows (the title tells nothing).
pub fn classify<'a, S: AsRef<str>>(rows: &'a [S], _title: &str) -> ScreenVerdict<'a> {
    let rows: Vec<(usize, &'a str)> = rows.iter().map(|r| r.as_ref().trim()).enumerate().collect();
    let bottom = rows.iter().rev().filter(|(_, r)| !r.is_empty()).take(30);
    if let Some(&row) = bottom.clone().find(|(_, r)| is_approval(r)) {
        return ScreenVerdict::decided(State::Waiting, Rule::PermissionDialog, Some(row), false);
    }
    let Some(input) = box_bottom(&rows) else {
        return ScreenVerdict::decided(State::Unknown, Rule::NoStatus, None, false);
    };
    let footer = rows[input + 1..].iter().find(|(_, r)| !r.is_empty());
    if let Some(&row) = footer.filter(|(_, r)| r.contains("[retrying")) {
        return ScreenVerdict::decided(State::Working, Rule::Retrying, Some(row), true);
    }
    if let Some(&row) = footer.filter(|(_, r)| is_working_footer(r)) {
        return ScreenVerdict::decided(State::Working, Rule::FooterActivity, Some(row), true);
    }
    let history = &rows[..box_top(&rows, input)];
    let last = history.iter().rev().find(|(_, r)| !r.is_empty());
    match last {
        Some(&(i, line)) if line.starts_with('▣') => judge_end(i, line),
        Some(&row) if row.1.starts_with('┃') => {
            ScreenVerdict::decided(State::Working, Rule::PromptEcho, Some(row), true)
        }
        _ => ScreenVerdict::decided(State::Unknown, Rule::NoStatus, None, false),
    }
}

/// The approval dialog's title.
fn is_approval(row: &str) -> bool {
    row.trim_start_matches('┃').trim().starts_with("△ Permission required")
}

/// The footer while a turn runs: the bouncing bar, or its Escape hint.
fn is_working_footer(row: &str) -> bool {
    let bar = row.chars().take(8).filter(|c| matches!(c, '■' | '⬝')).count() == 8;
    bar || row.contains("esc interrupt") || row.contains("esc again to interrupt")
}

/// The input box's bottom edge (`╹▀▀▀`), the last one on screen.
fn box_bottom(rows: &[(usize, &str)]) -> Option<usize> {
    rows.iter().rposition(|(_, r)| r.starts_with("╹▀"))
}

/// The input box's first row: the `┃` rows right above its bottom edge.
fn box_top(rows: &[(usize, &str)], bottom: usize) -> usize {
    let mut top = bottom;
    while top > 0 && rows[top - 1].1.starts_with('┃') && bottom - top < 12 {
        top -= 1;
    }
    top
}

/// The line that ends an assistant message: its suffix tells how.
fn judge_end(i: usize, line: &str) -> ScreenVerdict<'_> {
    let row = Some((i, line));
    let suffix = line.rsplit(" · ").next().unwrap_or("").trim();
    if suffix == "interrupted" {
        return ScreenVerdict::decided(State::Interrupted, Rule::Interrupted, row, false);
    }
    if is_duration(suffix) {
        return ScreenVerdict::decided(State::Done, Rule::Banner, row, false);
    }
    ScreenVerdict::decided(State::Failed, Rule::ApiError, row, false)
}

/// A duration as the family prints it: `64ms`, `4.7s`, `1m 5s`, `2h 1m`.
fn is_duration(text: &str) -> bool {
    !text.is_empty()
        && text.split(' ').all(|word| {
            let unit = word.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
            let number = &word[..word.len() - unit.len()];
            !number.is_empty() && matches!(unit, "ms" | "s" | "m" | "h")
        })
}

/// What the input box holds: its rows between the padding above and the
/// agent's row (`Build · <model>`) at its foot; `Ask anything…` (or
/// `Ask anything...` with a suggested prompt after it) is the placeholder.
pub fn input_box<S: AsRef<str>>(rows: &[S]) -> InputBox {
    let rows: Vec<(usize, &str)> = rows.iter().map(|r| r.as_ref().trim()).enumerate().collect();
    if rows.iter().any(|(_, r)| is_approval(r)) {
        return InputBox::Unknown;
    }
    let Some(bottom) = box_bottom(&rows) else {
        return InputBox::Unknown;
    };
    let top = box_top(&rows, bottom);
    let inner = &rows[top..bottom.saturating_sub(1).max(top)];
    let text: Vec<&str> = inner
        .iter()
        .map(|(_, r)| r.trim_start_matches('┃').trim())
        .filter(|r| !r.is_empty())
        .collect();
    match text.as_slice() {
        [] => InputBox::Empty,
        [only] if only.starts_with("Ask anything…") || only.starts_with("Ask anything...") => InputBox::Empty,
        _ => InputBox::Draft(text.join("\n")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen(text: &str) -> Vec<String> {
        text.lines().map(str::to_owned).collect()
    }

    const BOX: &str = "  ┃\n  ┃\n  ┃\n  ┃  Build · Fake Model Fake\n  ╹▀▀▀▀▀▀▀▀";

    #[test]
    fn the_footer_decides_while_a_turn_runs() {
        let rows = screen(&format!(
            "  ┃  tool:3\n\n     ▣  Build · Fake Model · 4.7s\n\n{BOX}\n   ⬝⬝■■■■⬝⬝  esc interrupt   tab agents\n"
        ));
        assert_eq!(classify(&rows, "OC | x").state, State::Working);
        let rows = screen(&format!(
            "     ▣  Build · Fake Model\n\n{BOX}\n   ■■⬝⬝⬝⬝⬝⬝ fake HTTP 500 [retrying in 1s attempt #2]\n"
        ));
        assert_eq!(classify(&rows, "").rule, Rule::Retrying);
    }

    #[test]
    fn the_last_messages_end_line_decides_when_the_footer_is_quiet() {
        let quiet = "   /home/u/proj                                15  ctrl+p commands";
        let end = |line: &str| screen(&format!("     Done.\n     {line}\n\n{BOX}\n{quiet}\n"));
        let state = |line: &str| classify(&end(line), "").state;
        assert_eq!(state("▣  Build · Fake Model · 4.7s"), State::Done);
        assert_eq!(state("▣  Build · Fake Model · 64ms"), State::Done);
        assert_eq!(state("▣  Build · Fake Model · 1m 5s"), State::Done);
        assert_eq!(state("▣  Build · Fake Model · interrupted"), State::Interrupted);
        assert_eq!(state("▣  Build · Fake Model"), State::Failed);
        let echo = screen(&format!(
            "     ▣  Build · Fake Model · 4.7s\n\n  ┃\n  ┃  next\n  ┃\n\n{BOX}\n{quiet}\n"
        ));
        assert_eq!(classify(&echo, "").state, State::Working, "a prompt below the last end");
        assert_eq!(classify(&screen(quiet), "").state, State::Unknown);
    }

    #[test]
    fn the_dialog_waits_and_hides_the_box() {
        let rows = screen("  ┃  △ Permission required\n  ┃    # Shell command\n  ┃  $ touch x\n  ┃   Allow once   Allow always   Reject\n");
        assert_eq!(classify(&rows, "").state, State::Waiting);
        assert_eq!(input_box(&rows), InputBox::Unknown);
    }

    #[test]
    fn the_box_holds_a_draft_or_its_placeholder() {
        assert_eq!(input_box(&screen(BOX)), InputBox::Empty);
        let draft = "  ┃\n  ┃  echo:hi\n  ┃\n  ┃  Build · Fake Model Fake\n  ╹▀▀▀▀";
        assert_eq!(input_box(&screen(draft)), InputBox::Draft("echo:hi".into()));
        let home = "  ┃\n  ┃  Ask anything… \"Fix a TODO\"\n  ┃\n  ┃  Build · Fake Model Fake\n  ╹▀▀▀▀";
        assert_eq!(input_box(&screen(home)), InputBox::Empty);
        let suggested = "  ┃\n  ┃  Ask anything... \"Fix broken tests\"\n  ┃\n  ┃  Code  · Fake Model Fake\n  ╹▀▀▀▀";
        assert_eq!(input_box(&screen(suggested)), InputBox::Empty, "Kilo's placeholder");
    }
}
