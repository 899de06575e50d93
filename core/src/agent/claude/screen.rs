//! Claude Code's screen matcher: what a pane's visible rows say about it.
//!
//! Claude Code draws a finished banner when a turn ends, e.g.
//! `✻ Cooked for 4s · done 5:28 AM`. The verb rotates and users configure
//! their own, so the banner is recognised by its *shape* (spinner glyph, a
//! capitalised verb that is not an `-ing` form, ` for `, a duration, an
//! optional ` · suffix`), never by a verb list. Without the glyph the same
//! words are prose.
//!
//! The rows are read once, bottom-up. The bottom-most status line decides
//! (an old banner stays on screen while the next turn runs), and any sign of
//! activity — the footer's `esc to interrupt`, a spinner, a prompt submitted
//! below the banner — outranks a banner. An open selection dialog
//! (`Do you want to proceed?` over `❯ 1. Yes`) means the agent waits for the
//! user. Each answer names the [`Rule`] that decided, for `explain` and tests.
//!
//! Cost: one pass over the rows with borrowed slices and no allocation; the
//! shape parsers only run on rows that start with a spinner glyph. (They are
//! written by hand: a regex engine would double the plugin's wasm size.)

use crate::screen::{InputBox, Rule, ScreenVerdict};
use crate::verdict::State;

/// Spinner glyphs Claude Code cycles through (terminal-dependent sets).
const GLYPHS: &[char] = &['·', '✢', '✳', '✶', '✻', '✽', '✺', '*'];

/// Bullets Claude Code draws before an answer or a tool call.
const BULLETS: &[char] = &['●', '⏺'];

/// How far above a selected dialog option its question may stand.
const DIALOG_QUESTION_REACH: usize = 12;

/// What one row is, as far as the status matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RowKind {
    Blank,
    HorizontalRule,
    Footer,
    SelectedOption,
    Question,
    Status(State, Rule),
    PromptLine,
    Other,
}

/// Classifies the visible rows of a pane (top to bottom, ANSI already stripped).
pub fn classify<S: AsRef<str>>(rows: &[S]) -> ScreenVerdict<'_> {
    let mut scan = Scan::default();
    for (index, row) in rows.iter().enumerate().rev() {
        let text = content_of(row.as_ref());
        if let Some(verdict) = scan.step(index, text) {
            return verdict;
        }
    }
    scan.finish()
}

/// Bottom-up scan state.
#[derive(Default)]
struct Scan<'a> {
    rules_seen: usize,
    footer: Option<(usize, &'a str)>,
    selected_option: Option<usize>,
    prompt_echo: Option<(usize, &'a str)>,
}

impl<'a> Scan<'a> {
    fn step(&mut self, index: usize, text: &'a str) -> Option<ScreenVerdict<'a>> {
        match row_kind(text) {
            RowKind::Blank | RowKind::Other => None,
            RowKind::HorizontalRule => {
                self.rules_seen += 1;
                None
            }
            RowKind::Footer => {
                self.footer.get_or_insert((index, text));
                None
            }
            RowKind::SelectedOption => {
                self.selected_option.get_or_insert(index);
                None
            }
            RowKind::Question => self.dialog(index, text),
            RowKind::PromptLine => {
                // Rows inside the input box (between the two bottom rules) are
                // what the user is typing or a placeholder, not a submitted prompt.
                if self.rules_seen >= 2 {
                    self.prompt_echo.get_or_insert((index, text));
                }
                None
            }
            RowKind::Status(state, rule) => Some(self.decide(index, text, state, rule)),
        }
    }

    fn dialog(&self, index: usize, text: &'a str) -> Option<ScreenVerdict<'a>> {
        let option_row = self.selected_option?;
        (option_row > index && option_row - index <= DIALOG_QUESTION_REACH).then_some(ScreenVerdict {
            state: State::Waiting,
            rule: Rule::PermissionDialog,
            line: Some(text),
            row: Some(index),
            active: self.is_active(),
            answer: None,
        })
    }

    /// Only the footer proves activity on its own; a prompt echo proves a new
    /// turn only when a turn-ending line stands above it.
    fn is_active(&self) -> bool {
        self.footer.is_some()
    }

    /// The bottom-most status line decides, unless activity shows below it.
    fn decide(&self, index: usize, text: &'a str, state: State, rule: Rule) -> ScreenVerdict<'a> {
        let ends_turn = state.is_turn_end();
        if ends_turn {
            if let Some((row, line)) = self.prompt_echo {
                return self.verdict(State::Working, Rule::PromptEcho, row, line, true);
            }
            if let Some((row, line)) = self.footer {
                return self.verdict(State::Working, Rule::FooterActivity, row, line, true);
            }
        }
        let active = self.is_active() || !ends_turn && state == State::Working;
        self.verdict(state, rule, index, text, active)
    }

    fn verdict(&self, state: State, rule: Rule, row: usize, line: &'a str, active: bool) -> ScreenVerdict<'a> {
        ScreenVerdict {
            state,
            rule,
            line: Some(line),
            row: Some(row),
            active,
            answer: None,
        }
    }

    /// No status line on screen: only activity can still say something.
    fn finish(self) -> ScreenVerdict<'a> {
        if let Some((row, line)) = self.footer {
            return self.verdict(State::Working, Rule::FooterActivity, row, line, true);
        }
        ScreenVerdict {
            state: State::Unknown,
            rule: Rule::NoStatus,
            line: None,
            row: None,
            active: false,
            answer: None,
        }
    }
}

/// What the input box (the prompt row right below the last horizontal
/// rule but one) holds. Claude Code dims the suggestions it shows there,
/// and plugins get no colours, so typed text is [`InputBox::Unsure`]; only
/// a collapsed paste (`[Pasted text #1 +12 lines]`) is certainly a draft.
pub fn input_box<S: AsRef<str>>(rows: &[S]) -> InputBox {
    let rows: Vec<&str> = rows.iter().map(|r| content_of(r.as_ref())).collect();
    let Some(prompt) = (1..rows.len())
        .rev()
        .find(|&i| is_box_top(rows[i - 1]) && rows[i].starts_with(['❯', '>']))
    else {
        return InputBox::Unknown;
    };
    let rest = rows[prompt].trim_start_matches(['❯', '>']).trim();
    if rest.is_empty() {
        InputBox::Empty
    } else if rest.starts_with("[Pasted text #") {
        InputBox::Draft(rest.to_owned())
    } else {
        InputBox::Unsure(rest.to_owned())
    }
}

/// A horizontal rule, or the top border of a box (`╭────╮`).
fn is_box_top(row: &str) -> bool {
    row.contains('─') && row.chars().all(|c| matches!(c, '─' | '╭' | '╮'))
}

/// The row without trailing spaces and without box-drawing side borders.
fn content_of(row: &str) -> &str {
    let row = row.trim_end();
    let row = row.strip_suffix('│').map_or(row, str::trim_end);
    let trimmed = row.trim_start();
    trimmed.strip_prefix('│').map_or(trimmed, str::trim_start)
}

fn row_kind(text: &str) -> RowKind {
    let Some(first) = text.chars().next() else {
        return RowKind::Blank;
    };
    if first == '─' {
        return if text.chars().all(|c| c == '─') {
            RowKind::HorizontalRule
        } else {
            RowKind::Other
        };
    }
    if GLYPHS.contains(&first) {
        return glyph_row(text);
    }
    if first == '⎿' {
        return outcome_row(text['⎿'.len_utf8()..].trim_start());
    }
    if BULLETS.contains(&first) {
        let rest = text[first.len_utf8()..].trim_start();
        return if rest.starts_with("API Error") {
            RowKind::Status(State::Failed, Rule::ApiError)
        } else {
            RowKind::Other
        };
    }
    if first == '❯' {
        let rest = text['❯'.len_utf8()..].trim_start();
        return if is_numbered_option(rest) {
            RowKind::SelectedOption
        } else if rest.is_empty() {
            RowKind::Other
        } else {
            RowKind::PromptLine
        };
    }
    plain_row(text)
}

fn plain_row(text: &str) -> RowKind {
    if text.contains("esc to interrupt") || counts_local_agents(text) {
        RowKind::Footer
    } else if text.starts_with("Do you want to") || text.starts_with("Would you like to") {
        if text.ends_with('?') {
            RowKind::Question
        } else {
            RowKind::Other
        }
    } else if is_question_footer(text) {
        RowKind::Status(State::Waiting, Rule::QuestionDialog)
    } else if text.starts_with("Waiting for permission") {
        RowKind::Status(State::Waiting, Rule::PermissionWait)
    } else if text.starts_with("Retrying in ") {
        RowKind::Status(State::Working, Rule::Retrying)
    } else {
        RowKind::Other
    }
}

/// The footer of Claude Code's question and plan dialogs (the
/// AskUserQuestion tool, the end of plan mode): `Enter to select · ↑/↓ to
/// navigate · Esc to cancel`, in any order of its parts.
fn is_question_footer(text: &str) -> bool {
    text.contains("Enter to select") && (text.contains("to navigate") || text.contains("Esc to cancel"))
}

/// Old releases' footer while a background agent runs: `… · 1 local agent · ↓ to view`.
fn counts_local_agents(text: &str) -> bool {
    text.split(" · ").any(|part| {
        part.trim()
            .split_once(' ')
            .is_some_and(|(count, rest)| count.parse::<u32>().is_ok() && rest.starts_with("local agent"))
    })
}

/// A row that starts with a spinner glyph: banner, spinner, retry, background wait.
fn glyph_row(text: &str) -> RowKind {
    if is_banner(text) {
        RowKind::Status(State::Done, Rule::Banner)
    } else if is_spinner(text) {
        RowKind::Status(State::Working, Rule::Spinner)
    } else if text.contains("retrying in") || text.contains("Retrying in") {
        RowKind::Status(State::Working, Rule::Retrying)
    } else if text.contains(" background agent") || text.contains(" background task") {
        RowKind::Status(State::Working, Rule::BackgroundAgents)
    } else {
        RowKind::Other
    }
}

/// `⎿  …` rows that end a turn.
fn outcome_row(rest: &str) -> RowKind {
    if rest.starts_with("Interrupted") {
        RowKind::Status(State::Interrupted, Rule::Interrupted)
    } else if rest.starts_with("API Error")
        || rest.starts_with("Prompt is too long")
        || rest.starts_with("Context limit reached")
    {
        RowKind::Status(State::Failed, Rule::ApiError)
    } else if rest.starts_with("Retrying in ") {
        RowKind::Status(State::Working, Rule::Retrying)
    } else {
        RowKind::Other
    }
}

fn is_numbered_option(text: &str) -> bool {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && text[digits..].starts_with(". ")
}

/// True when `line` (trimmed) has the finished-banner shape:
/// `GLYPH ␠ Verb ␠for␠ DURATION` then the end or ` · anything`, where the verb
/// is a capitalised word that is not an `-ing` form and the duration is one
/// or more space-separated `<number>(ms|h|m|s)` parts (`4s`, `1m 12s`, `1.2s`).
pub fn is_banner(line: &str) -> bool {
    let Some(rest) = after_glyph(line) else {
        return false;
    };
    let Some((verb, rest)) = rest.split_once(" for ") else {
        return false;
    };
    if !is_capitalised_word(verb) || verb.ends_with("ing") {
        return false;
    }
    let duration = rest.split_once(" · ").map_or(rest, |(d, _)| d);
    !duration.is_empty() && duration.split(' ').all(is_duration_part)
}

/// True when `line` (trimmed) is an in-progress spinner line:
/// `GLYPH ␠ Capitalised words…` (anything may follow the ellipsis).
fn is_spinner(line: &str) -> bool {
    let Some(rest) = after_glyph(line) else {
        return false;
    };
    let Some((words, _)) = rest.split_once('…') else {
        return false;
    };
    words.chars().next().is_some_and(char::is_uppercase) && words.chars().all(|c| is_word_char(c) || c == ' ')
}

/// The text after a leading spinner glyph and one space.
fn after_glyph(line: &str) -> Option<&str> {
    let first = line.chars().next()?;
    if !GLYPHS.contains(&first) {
        return None;
    }
    line[first.len_utf8()..].strip_prefix(' ')
}

/// `Brewed`, `Sautéed`, `Razzle-dazzled`: an uppercase letter, word
/// characters, and a letter at the end.
fn is_capitalised_word(word: &str) -> bool {
    word.chars().next().is_some_and(char::is_uppercase)
        && word.chars().all(is_word_char)
        && word.chars().last().is_some_and(char::is_alphabetic)
}

fn is_word_char(c: char) -> bool {
    // Letters, combining accents (a decomposed `é`), apostrophes and hyphens.
    c.is_alphabetic() || ('\u{300}'..='\u{36f}').contains(&c) || matches!(c, '\'' | '’' | '-')
}

/// `4s`, `12ms`, `1.2s`, `1h`, `5m`.
fn is_duration_part(part: &str) -> bool {
    let number = part
        .strip_suffix("ms")
        .or_else(|| part.strip_suffix(['h', 'm', 's']))
        .unwrap_or("");
    let (int, frac) = number.split_once('.').unwrap_or((number, "0"));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    digits(int) && digits(frac)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Owned copy of a verdict, so tests can build rows inline.
    #[derive(Debug)]
    struct Seen {
        state: State,
        rule: Rule,
        line: Option<String>,
        active: bool,
    }

    impl Seen {
        fn is_quiet(&self) -> bool {
            !self.active && self.state != State::Waiting
        }
    }

    fn screen(text: &str) -> Seen {
        let rows: Vec<&str> = text.lines().collect();
        let v = classify(&rows);
        Seen {
            state: v.state,
            rule: v.rule,
            line: v.line.map(str::to_owned),
            active: v.active,
        }
    }

    const BOX: &str = "────────────────────\n❯ \n────────────────────\n  ⏵⏵ bypass permissions on (shift+tab to cycle)";
    const BOX_BUSY: &str =
        "────────────────────\n❯ \n────────────────────\n  ⏵⏵ bypass permissions on · esc to interrupt";

    fn with_box(body: &str, footer: &str) -> String {
        format!("{body}\n{footer}")
    }

    #[test]
    fn only_an_empty_input_box_is_certain() {
        let empty = [
            "✻ Cooked for 4s · done 5:28 AM",
            "──────",
            "❯ ",
            "──────",
            "  ⏵⏵ bypass",
        ];
        assert_eq!(input_box(&empty), InputBox::Empty);
        let old = ["╭──────╮", "│ >    │", "╰──────╯"];
        assert_eq!(input_box(&old), InputBox::Empty, "2.1.39's boxed prompt");
        let suggestion = ["──────", "❯ Hello from the fake model.", "──────"];
        assert_eq!(
            input_box(&suggestion),
            InputBox::Unsure("Hello from the fake model.".into()),
            "a dimmed suggestion looks like a draft"
        );
        let pasted = ["──────", "❯ [Pasted text #1 +12 lines]", "──────"];
        assert_eq!(input_box(&pasted), InputBox::Draft("[Pasted text #1 +12 lines]".into()));
        assert_eq!(input_box(&["● Done."]), InputBox::Unknown, "no box on screen");
    }

    #[test]
    fn banner_with_done_suffix_is_done() {
        let s = with_box("● Done: slept 4s.\n✻ Cooked for 4s · done 5:28 AM", BOX);
        let v = screen(&s);
        assert_eq!((v.state, v.rule), (State::Done, Rule::Banner));
        assert_eq!(v.line.as_deref(), Some("✻ Cooked for 4s · done 5:28 AM"));
    }

    #[test]
    fn banner_of_unseen_verb_matches_by_shape() {
        for line in [
            "✻ Flibbertigibbeted for 9s",
            "✻ Sautéed for 1m 12s · done 7:23 PM",
            "✽ Baked for 2h 5m 1s",
            "· Zapped for 1.2s",
            "✢ Pinged for 12ms",
            "  ✻ Brewed for 33s",
        ] {
            let v = screen(line);
            assert_eq!(v.state, State::Done, "{line}");
        }
    }

    #[test]
    fn banner_shaped_prose_without_glyph_is_not_done() {
        for line in [
            "Retried for 3s",
            "Waited for 5s",
            "  Worked for 5s on the first part…",
            "● Worked for 5s",
        ] {
            assert_ne!(screen(line).state, State::Done, "{line}");
        }
    }

    #[test]
    fn glyph_lines_that_are_not_banners() {
        let cases = [
            ("✻ 529 Overloaded · retrying in 12s · attempt 6/10", Rule::Retrying),
            ("✻ API error · retrying in 1s · attempt 1/10", Rule::Retrying),
            ("✻ Waiting for 1 background agent to finish", Rule::BackgroundAgents),
            ("✻ Pondering for 4s", Rule::NoStatus),
            ("✻ Cooked for a while", Rule::NoStatus),
            ("✻ cooked for 4s", Rule::NoStatus),
        ];
        for (line, rule) in cases {
            let v = screen(line);
            assert_ne!(v.state, State::Done, "{line}");
            assert_eq!(v.rule, rule, "{line}");
        }
    }

    #[test]
    fn banner_shape_edges() {
        assert!(is_banner("✻ Sautéed for 3s"), "decomposed accent");
        assert!(is_banner("✻ Razzle-dazzled for 3s · done"));
        assert!(!is_banner("✻ Baked for 3"), "a number without unit");
        assert!(
            !is_banner("✻ Baked for 3s and more"),
            "words after the duration need the · separator"
        );
        assert!(!is_banner("✻ Baked for s"));
        assert!(!is_banner("✻ Baked for 1.s"));
        assert!(!is_banner("✻Baked for 3s"), "one space after the glyph");
        assert!(!is_banner("✻ Baked2 for 3s"));
        assert!(
            !is_banner("✻ Baked for 3s ·"),
            "a bare separator without a space is not the suffix form"
        );
        assert!(is_banner("✻ Baked for 3s · "));
    }

    #[test]
    fn old_banner_with_spinner_below_is_working() {
        let s = with_box(
            "✻ Cooked for 4s · done 5:28 AM\n❯ next\n✽ Tomfoolering… (4s · ↓ 20 tokens)",
            BOX_BUSY,
        );
        let v = screen(&s);
        assert_eq!((v.state, v.rule), (State::Working, Rule::Spinner));
    }

    #[test]
    fn old_banner_while_answer_streams_is_working_by_footer() {
        let s = with_box("✻ Cooked for 4s · done 5:28 AM\n● Streaming the answer", BOX_BUSY);
        let v = screen(&s);
        assert_eq!((v.state, v.rule), (State::Working, Rule::FooterActivity));
    }

    #[test]
    fn prompt_echo_below_old_banner_is_working() {
        let s = with_box("✻ Cooked for 4s · done 5:28 AM\n❯ hello\n● Hel", BOX);
        let v = screen(&s);
        assert_eq!((v.state, v.rule), (State::Working, Rule::PromptEcho));
    }

    #[test]
    fn text_typed_in_input_box_does_not_start_a_turn() {
        let s = "✻ Cooked for 4s · done 5:28 AM\n──────────\n❯ draft not sent\n──────────\n  footer";
        assert_eq!(screen(s).state, State::Done);
    }

    #[test]
    fn first_tenth_of_a_second_spinner_without_brackets() {
        assert_eq!(screen("· Gusting…").rule, Rule::Spinner);
        assert_eq!(screen("✻ Burrowing… (running stop hook)").rule, Rule::Spinner);
    }

    #[test]
    fn permission_dialog_is_waiting() {
        let s = "● Bash(rm -rf build)\n────────\n Bash command\n   rm -rf build\n Do you want to proceed?\n ❯ 1. Yes\n   2. Yes, and don't ask again\n   3. No, and tell Claude what to do differently (esc)";
        let v = screen(s);
        assert_eq!((v.state, v.rule), (State::Waiting, Rule::PermissionDialog));
    }

    #[test]
    fn boxed_permission_dialog_is_waiting() {
        let s = "╭──────────────╮\n│ Do you want to make this edit to a.rs? │\n│ ❯ 1. Yes │\n│   2. No  │\n╰──────────────╯";
        assert_eq!(screen(s).state, State::Waiting);
    }

    /// Issue 45: the question dialog (AskUserQuestion) and the plan-mode
    /// exit wait for the user, whatever they ask.
    #[test]
    fn question_and_plan_dialogs_are_waiting() {
        let question = "● I need one choice first.\n\n ☐ Database\n\nWhich database should the service use?\n\n❯ 1. Postgres\n     Battle-tested.\n  2. SQLite\n     One file.\n  3. Type something.\n\nEnter to select · ↑/↓ to navigate · Esc to cancel";
        let v = screen(question);
        assert_eq!((v.state, v.rule), (State::Waiting, Rule::QuestionDialog), "{v:?}");
        let plan = "╭─────────────╮\n│ Ready to code? │\n│ Here is Claude's plan: │\n│ 1. add the parser │\n╰─────────────╯\n Would you like to proceed?\n ❯ 1. Yes, and auto-accept edits\n   2. Yes, and manually approve edits\n   3. No, keep planning";
        assert_eq!(screen(plan).state, State::Waiting);
    }

    #[test]
    fn question_without_options_is_prose() {
        assert_eq!(screen("Do you want to proceed?").state, State::Unknown);
    }

    #[test]
    fn interrupt_text_is_interrupted_not_done() {
        let s = with_box("● Running it.\n  ⎿  Interrupted · What should Claude do instead?", BOX);
        assert_eq!(screen(&s).state, State::Interrupted);
    }

    #[test]
    fn api_errors_drawn_like_answers_are_failed() {
        for body in [
            "● API Error: 529 Overloaded. Try again later.",
            "  ⎿  Prompt is too long · 210000 tokens > 200000 maximum",
            "  ⎿  API Error: 529 {\"type\":\"error\"}",
            "  ⎿  Context limit reached · /compact or /clear to continue",
        ] {
            let s = with_box(
                &format!("❯ go\n{body}"),
                "────\n❯ Resend your message to try again\n────\n footer",
            );
            let v = screen(&s);
            assert_eq!((v.state, v.rule), (State::Failed, Rule::ApiError), "{body}");
        }
    }

    #[test]
    fn welcome_screen_is_unknown() {
        let v = screen(&with_box("  Claude Code v2.1.332\n  ~/proj", BOX));
        assert_eq!((v.state, v.rule), (State::Unknown, Rule::NoStatus));
        assert!(v.is_quiet());
    }

    #[test]
    fn old_release_without_banner_is_quiet_unknown() {
        let s = with_box(
            "❯ tool:4\n● Running it.\n● Bash(sleep 4)\n  ⎿  (No output)\n● Done: slept 4s.",
            BOX,
        );
        let v = screen(&s);
        assert_eq!(v.state, State::Unknown);
        assert!(v.is_quiet(), "no footer, no spinner: nothing runs");
    }

    #[test]
    fn old_release_footer_counting_local_agents_is_activity() {
        let footer = "  ⏵⏵ bypass permissions on · 1 local agent · ↓ to view   Failed to install Anthropic marketplace";
        let seen = screen(&with_box(
            "❯ bg:8\n● Starting a background agent.\n● Task(Background sleep)",
            footer,
        ));
        assert_eq!((seen.state, seen.rule), (State::Working, Rule::FooterActivity));
        let prose = screen(&with_box(
            "● I found 2 local agents in the repo.",
            "  ⏵⏵ bypass permissions on",
        ));
        assert_ne!(prose.state, State::Working);
    }

    #[test]
    fn retry_line_of_old_release_is_working() {
        let s = "· Fluttering…\n  ⎿  Retrying in 4 seconds… (attempt 4/10)";
        assert_eq!(screen(s).state, State::Working);
    }
}
