//! Copilot CLI's screen: the fast guess for a Copilot pane. Its title never
//! shows the state; the footer under the input box (`❯` between two rules)
//! does: `◉ Working · 67 B esc esc interrupt` (also `Working esc esc edit
//! prompt` before the first byte, `esc again to interrupt` after one Escape)
//! while a turn runs, `← open sidebar · …` when it is over. The approval
//! dialog (`Do you want to run this command?`) takes the input box's place.
//! Above the input box (and the working folder's row) the last message
//! tells the rest: `● <answer>` done, `● Operation cancelled by user`
//! interrupted, `✗ 400 …` failed, `● Request failed … Retrying...` working.

use crate::screen::{InputBox, Rule, ScreenVerdict};
use crate::verdict::State;

/// Classifies a Copilot pane from its visible rows (the title tells nothing).
pub fn classify<'a, S: AsRef<str>>(rows: &'a [S], _title: &str) -> ScreenVerdict<'a> {
    let rows: Vec<(usize, &'a str)> = rows.iter().map(|r| r.as_ref().trim()).enumerate().collect();
    let bottom = rows.iter().rev().filter(|(_, r)| !r.is_empty()).take(30);
    if let Some(&row) = bottom.clone().find(|(_, r)| is_approval(r)) {
        return ScreenVerdict::decided(State::Waiting, Rule::PermissionDialog, Some(row), false);
    }
    let Some(input) = input_row(&rows) else {
        return ScreenVerdict::decided(State::Unknown, Rule::NoStatus, None, false);
    };
    let footer = rows[input + 1..]
        .iter()
        .find(|(_, r)| !r.is_empty() && !r.starts_with('─'));
    if let Some(&row) = footer.filter(|(_, r)| is_working_footer(r)) {
        return ScreenVerdict::decided(State::Working, Rule::FooterActivity, Some(row), true);
    }
    let idle = footer.is_some_and(|(_, r)| r.contains("open sidebar") || r.starts_with("Interactive"));
    let head = rows[..input]
        .iter()
        .rev()
        .filter(|(_, r)| !r.is_empty() && !r.starts_with('─'))
        .take(14)
        .find(|(_, r)| is_head(r));
    match head {
        Some(&(i, line)) => judge_head(i, line, idle),
        None => ScreenVerdict::decided(State::Unknown, Rule::NoStatus, None, false),
    }
}

/// The input box's row: the last `❯` row with a rule right above it.
fn input_row(rows: &[(usize, &str)]) -> Option<usize> {
    (1..rows.len())
        .rev()
        .find(|&i| rows[i].1.starts_with('❯') && rows[i - 1].1.starts_with('─'))
}

/// The approval dialog's question.
fn is_approval(row: &str) -> bool {
    let inner = row.trim_start_matches('│').trim();
    inner.starts_with("Do you want to run this command?") || inner.starts_with("Do you want to allow")
}

/// The footer while a turn runs.
fn is_working_footer(row: &str) -> bool {
    row.contains("esc esc interrupt")
        || row.contains("esc again to interrupt")
        || row.contains("esc esc edit prompt")
        || row
            .trim_start_matches(['●', '◉', '◎', '○'])
            .trim_start()
            .starts_with("Working")
}

/// The first row of a message: its glyph, a tool row, a prompt echo.
fn is_head(row: &str) -> bool {
    row.starts_with(['●', '✗', '$', '❯'])
}

fn judge_head(i: usize, line: &str, idle: bool) -> ScreenVerdict<'_> {
    let row = Some((i, line));
    let body = line[line.chars().next().map_or(0, char::len_utf8)..].trim();
    if line.starts_with('❯') {
        return ScreenVerdict::decided(State::Working, Rule::PromptEcho, row, true);
    }
    if line.starts_with('$') {
        // A tool that finished: the model answers next.
        return ScreenVerdict::decided(State::Working, Rule::Spinner, row, true);
    }
    if line.starts_with('✗') {
        return match body.starts_with("Shell") {
            true => ScreenVerdict::decided(State::Interrupted, Rule::Interrupted, row, false),
            false => ScreenVerdict::decided(State::Failed, Rule::ApiError, row, false),
        };
    }
    if body.starts_with("Operation cancelled") {
        return ScreenVerdict::decided(State::Interrupted, Rule::Interrupted, row, false);
    }
    if body.contains("Retrying") {
        return ScreenVerdict::decided(State::Working, Rule::Retrying, row, true);
    }
    if body.starts_with("Tip:") || !idle {
        return ScreenVerdict::decided(State::Unknown, Rule::NoStatus, None, false);
    }
    ScreenVerdict::decided(State::Done, Rule::Banner, row, false)
}

/// What the input box (the `❯` row) holds: empty or a draft (Copilot CLI
/// puts no suggestion there).
pub fn input_box<S: AsRef<str>>(rows: &[S]) -> InputBox {
    let rows: Vec<(usize, &str)> = rows.iter().map(|r| r.as_ref().trim()).enumerate().collect();
    let Some(input) = input_row(&rows) else {
        return InputBox::Unknown;
    };
    match rows[input].1['❯'.len_utf8()..].trim() {
        "" => InputBox::Empty,
        text => InputBox::Draft(text.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(name: &str, t: f64) -> Vec<String> {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/copilot/");
        let text = std::fs::read_to_string(format!("{dir}{name}/frames.json")).unwrap();
        let frames: serde_json::Value = serde_json::from_str(&text).unwrap();
        let mut screen = String::new();
        for f in frames["frames"].as_array().unwrap() {
            if let Some(s) = f["screen"].as_str() {
                screen = crate::ansi::strip(s);
            }
            if f["t"].as_f64().unwrap() >= t {
                break;
            }
        }
        screen.lines().map(str::to_owned).collect()
    }

    #[test]
    fn real_frames() {
        for (name, t, state) in [
            ("1.0.102-tool", 2.8, State::Working),
            ("1.0.102-tool", 6.0, State::Working),
            ("1.0.102-tool", 8.0, State::Done),
            ("1.0.102-perm", 4.0, State::Waiting),
            ("1.0.102-interrupt", 5.7, State::Working),
            ("1.0.102-interrupt", 7.0, State::Interrupted),
            ("1.0.102-fail", 4.05, State::Failed),
            ("1.0.102-fail", 9.0, State::Working),
        ] {
            assert_eq!(classify(&frame(name, t), "").state, state, "{name} at {t}");
        }
    }

    #[test]
    fn the_input_box() {
        assert_eq!(input_box(&frame("1.0.102-tool", 8.0)), InputBox::Empty);
        assert_eq!(
            input_box(&frame("1.0.102-fail", 13.6)),
            InputBox::Draft("fail:500".into()),
            "Esc Esc put the prompt back"
        );
        assert_eq!(input_box(&["no box"]), InputBox::Unknown);
    }
}
