//! Rendering of the one-row status bar: one segment per agent pane.
//!
//! `needs you: 2 │ ⠿ 2 api working 41s │ ✓ 3 docs done │ ✗ 4 tests failed │ ? 5 waiting`
//!
//! A pure function of the segments, the time, the width and a palette; it
//! returns the ANSI-coloured row and where each segment sits, so a mouse
//! click can be mapped back to its pane (or to the "needs you" counter,
//! shown first while some pane needs you, see [`crate::attention`]). When the
//! row is too narrow, names go first, then durations, then segments are cut
//! with `…`.

use crate::attention;
use crate::protocol::PaneSummary;
use crate::verdict::{Millis, State};

/// A terminal colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Color {
    /// 24-bit colour.
    Rgb(u8, u8, u8),
    /// A 256-colour palette index.
    Indexed(u8),
}

/// Colours of the bar (from the zellij theme or the plugin config).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Palette {
    /// Text.
    pub text: Color,
    /// Bar background.
    pub background: Color,
    /// Working.
    pub working: Color,
    /// Done.
    pub done: Color,
    /// Failed.
    pub failed: Color,
    /// Waiting for the user.
    pub waiting: Color,
    /// Interrupted, idle, unknown.
    pub muted: Color,
}

impl Default for Palette {
    fn default() -> Self {
        Palette {
            text: Color::Indexed(252),
            background: Color::Indexed(236),
            working: Color::Indexed(214),
            done: Color::Indexed(114),
            failed: Color::Indexed(203),
            waiting: Color::Indexed(177),
            muted: Color::Indexed(245),
        }
    }
}

/// The most characters of a note a row shows (longer ones end in `…`).
pub const NOTE_CHARS: usize = 32;

/// What a click on the bar lands on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hit {
    /// A pane's segment.
    Pane(u32),
    /// The "needs you" counter.
    Attention,
}

/// A rendered bar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// The row, with ANSI colours, at most `cols` columns wide.
    pub line: String,
    /// `(first column, last column exclusive, what)` of each clickable part shown.
    pub hits: Vec<(usize, usize, Hit)>,
}

impl Rendered {
    /// What covers column `col`.
    pub fn at(&self, col: usize) -> Option<Hit> {
        self.hits.iter().find(|(a, b, _)| (*a..*b).contains(&col)).map(|h| h.2)
    }
}

const SEPARATOR: &str = " │ ";

/// How much detail a segment carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Detail {
    Full,
    NoName,
    Minimal,
}

/// Renders the bar for `cols` columns. `message` (config errors, routing
/// feedback) is shown after the segments when it fits, before them if not.
///
/// When agents of more than one kind are on the bar, each segment names its
/// kind (`cc`, `cx`) after the pane name.
pub fn render(
    segments: &[&PaneSummary],
    now: Millis,
    cols: usize,
    palette: &Palette,
    message: Option<&str>,
) -> Rendered {
    let tags = segments.iter().any(|s| s.kind != segments[0].kind);
    let needing = attention::count(segments.iter().map(|s| s.standing()));
    let detail = [Detail::Full, Detail::NoName, Detail::Minimal]
        .into_iter()
        .find(|d| fits(segments, now, *d, tags, message, needing, cols))
        .unwrap_or(Detail::Minimal);
    let mut out = Painter::new(cols, palette);
    out.tags = tags;
    if segments.is_empty() && message.is_none() {
        out.text("turnstile: no agent panes yet", palette.muted);
    }
    if needing > 0 {
        out.counter(&counter(needing, detail));
        if !segments.is_empty() {
            out.text(SEPARATOR, palette.muted);
        }
    }
    for (i, seg) in segments.iter().enumerate() {
        if out.is_full() {
            break; // nothing more shows (zellij runs this in an interpreter)
        }
        if i > 0 {
            out.text(SEPARATOR, palette.muted);
        }
        let start = out.width;
        out.segment(seg, now, detail);
        let end = out.width;
        if end > start {
            out.hits.push((start, end, Hit::Pane(seg.pane)));
        }
    }
    if let Some(msg) = message.filter(|_| !out.is_full()) {
        if !segments.is_empty() {
            out.text(SEPARATOR, palette.muted);
        }
        out.text(msg, palette.waiting);
    }
    out.finish()
}

/// True when the row fits in `cols` at `detail`, `needing` being the
/// "needs you" count (segments are measured only until it cannot).
fn fits(
    segments: &[&PaneSummary],
    now: Millis,
    detail: Detail,
    tags: bool,
    message: Option<&str>,
    needing: usize,
    cols: usize,
) -> bool {
    let seps = segments.len().saturating_sub(1) * SEPARATOR.chars().count();
    let msg = message.map_or(0, |m| m.chars().count() + SEPARATOR.chars().count());
    let count = match needing {
        0 => 0,
        n => counter(n, detail).chars().count() + 2 + SEPARATOR.chars().count(),
    };
    let mut width = seps + msg + count;
    for s in segments {
        if width > cols {
            return false;
        }
        width += label_width(s, now, detail, tags) + if s.unseen { 2 } else { 0 };
    }
    width <= cols
}

/// The "needs you" counter's text.
fn counter(needing: usize, detail: Detail) -> String {
    match detail {
        Detail::Minimal => format!("!{needing}"),
        _ => format!("needs you: {needing}"),
    }
}

/// The icon of a state; a guessed done is marked.
fn icon(state: State, confirmed: bool) -> &'static str {
    match state {
        State::Working => "⠿",
        State::Done if confirmed => "✓",
        State::Done => "✓?",
        State::Failed => "✗",
        State::Interrupted => "⊘",
        State::Waiting => "?",
        State::Idle => "·",
        State::Unknown => "…",
    }
}

/// Writes a segment's text (`⠿ 2 api cc working 41s`) into `text`.
///
/// The bar is drawn inside zellij's interpreter for every change of every
/// row: labels are written in place, numbers without `format!`.
fn write_label(text: &mut String, seg: &PaneSummary, now: Millis, detail: Detail, tags: bool) {
    text.push_str(icon(seg.state, seg.confirmed));
    text.push(' ');
    push_number(text, u64::from(seg.pane));
    if detail == Detail::Full && !seg.name.is_empty() {
        text.push(' ');
        text.push_str(&seg.name);
    }
    if tags && detail < Detail::Minimal {
        text.push(' ');
        text.push_str(seg.kind.tag());
    }
    if detail < Detail::Minimal {
        text.push(' ');
        text.push_str(seg.state.as_str());
        if shows_duration(seg.state) {
            text.push(' ');
            write_elapsed(text, now.saturating_sub(seg.since));
        }
    }
    if let Some(note) = seg.note().filter(|_| detail == Detail::Full) {
        text.push_str(": ");
        match note.char_indices().nth(NOTE_CHARS - 1) {
            Some((cut, _)) if note.chars().count() > NOTE_CHARS => {
                text.push_str(&note[..cut]);
                text.push('…');
            }
            _ => text.push_str(note),
        }
    }
}

/// The columns [`write_label`] takes, counted without writing it.
fn label_width(seg: &PaneSummary, now: Millis, detail: Detail, tags: bool) -> usize {
    let mut width = icon(seg.state, seg.confirmed).chars().count() + 1 + digits(u64::from(seg.pane));
    if detail == Detail::Full && !seg.name.is_empty() {
        width += 1 + seg.name.chars().count();
    }
    if tags && detail < Detail::Minimal {
        width += 1 + seg.kind.tag().chars().count();
    }
    if detail < Detail::Minimal {
        width += 1 + seg.state.as_str().len();
        if shows_duration(seg.state) {
            width += 1 + elapsed_width(now.saturating_sub(seg.since));
        }
    }
    if let Some(note) = seg.note().filter(|_| detail == Detail::Full) {
        width += 2 + note.chars().count().min(NOTE_CHARS);
    }
    width
}

/// States whose segment says for how long.
fn shows_duration(state: State) -> bool {
    matches!(state, State::Working | State::Waiting)
}

/// `41s`, `3m05s`, `2h04m`.
pub fn elapsed(ms: Millis) -> String {
    let mut text = String::new();
    write_elapsed(&mut text, ms);
    text
}

fn write_elapsed(text: &mut String, ms: Millis) {
    let s = ms / 1000;
    let (high, low, units) = match s {
        0..=59 => {
            push_number(text, s);
            text.push('s');
            return;
        }
        60..=3599 => (s / 60, s % 60, ['m', 's']),
        _ => (s / 3600, (s % 3600) / 60, ['h', 'm']),
    };
    push_number(text, high);
    text.push(units[0]);
    if low < 10 {
        text.push('0');
    }
    push_number(text, low);
    text.push(units[1]);
}

/// The columns of [`elapsed`]'s text.
fn elapsed_width(ms: Millis) -> usize {
    let s = ms / 1000;
    match s {
        0..=59 => digits(s) + 1,
        60..=3599 => digits(s / 60) + 4,
        _ => digits(s / 3600) + 4,
    }
}

/// Appends `n` in decimal.
fn push_number(text: &mut String, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // Only ASCII digits were written.
    text.extend(buf[at..].iter().map(|&b| b as char));
}

/// How many decimal digits `n` has.
fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// Writes coloured text while counting columns, never past `cols`.
struct Painter<'p> {
    line: String,
    width: usize,
    cols: usize,
    palette: &'p Palette,
    hits: Vec<(usize, usize, Hit)>,
    /// Segments name their agent's kind.
    tags: bool,
    /// The escape sequences of the colours used so far: formatted once.
    sgr: Vec<(Color, bool, String)>,
    /// A segment's text, written here before it is painted.
    label: String,
}

impl<'p> Painter<'p> {
    fn new(cols: usize, palette: &'p Palette) -> Self {
        let mut painter = Painter {
            line: String::with_capacity(cols * 3 + 64),
            width: 0,
            cols,
            palette,
            hits: Vec::new(),
            tags: false,
            sgr: Vec::with_capacity(8),
            label: String::new(),
        };
        painter.background(palette.background);
        painter
    }

    /// Switches the foreground colour.
    fn foreground(&mut self, color: Color) {
        self.colour(color, false);
    }

    /// Switches the background colour.
    fn background(&mut self, color: Color) {
        self.colour(color, true);
    }

    fn colour(&mut self, color: Color, background: bool) {
        let known = self.sgr.iter().find(|(c, bg, _)| *c == color && *bg == background);
        match known {
            Some((_, _, sgr)) => self.line.push_str(sgr),
            None => {
                let sgr = if background { sgr_bg(color) } else { sgr_fg(color) };
                self.line.push_str(&sgr);
                self.sgr.push((color, background, sgr));
            }
        }
    }

    fn segment(&mut self, seg: &PaneSummary, now: Millis, detail: Detail) {
        let color = state_color(seg.state, self.palette);
        let mut label = std::mem::take(&mut self.label);
        label.clear();
        if seg.unseen {
            // Unseen: the state colour becomes the background, bold.
            label.push(' ');
            write_label(&mut label, seg, now, detail, self.tags);
            label.push(' ');
            self.line.push_str("\x1b[1m");
            self.background(color);
            self.foreground(self.palette.background);
            self.raw(&label);
            self.line.push_str("\x1b[22m");
            self.background(self.palette.background);
        } else {
            write_label(&mut label, seg, now, detail, self.tags);
            self.text(&label, color);
        }
        self.label = label;
    }

    /// The "needs you" counter: bold, on the waiting colour, clickable.
    fn counter(&mut self, text: &str) {
        let start = self.width;
        self.line.push_str(&format!(
            "\x1b[1m{}{}",
            sgr_bg(self.palette.waiting),
            sgr_fg(self.palette.background)
        ));
        self.raw(&format!(" {text} "));
        self.line
            .push_str(&format!("\x1b[22m{}", sgr_bg(self.palette.background)));
        if self.width > start {
            self.hits.push((start, self.width, Hit::Attention));
        }
    }

    fn text(&mut self, text: &str, color: Color) {
        self.foreground(color);
        self.raw(text);
    }

    fn raw(&mut self, text: &str) {
        for c in text.chars() {
            if self.width + 1 > self.cols {
                return;
            }
            if self.width + 2 > self.cols && self.cols > 0 && text.chars().count() > 1 {
                self.line.push('…');
                self.width += 1;
                return;
            }
            self.line.push(c);
            self.width += 1;
        }
    }

    /// True once nothing more would show.
    fn is_full(&self) -> bool {
        self.width >= self.cols
    }

    fn finish(mut self) -> Rendered {
        let pad = self.cols.saturating_sub(self.width);
        self.line.push_str(&" ".repeat(pad));
        self.line.push_str("\x1b[0m");
        Rendered {
            line: self.line,
            hits: self.hits,
        }
    }
}

fn state_color(state: State, p: &Palette) -> Color {
    match state {
        State::Working => p.working,
        State::Done => p.done,
        State::Failed => p.failed,
        State::Waiting => p.waiting,
        State::Interrupted | State::Idle | State::Unknown => p.muted,
    }
}

fn sgr_fg(c: Color) -> String {
    match c {
        Color::Rgb(r, g, b) => format!("\x1b[38;2;{r};{g};{b}m"),
        Color::Indexed(i) => format!("\x1b[38;5;{i}m"),
    }
}

fn sgr_bg(c: Color) -> String {
    match c {
        Color::Rgb(r, g, b) => format!("\x1b[48;2;{r};{g};{b}m"),
        Color::Indexed(i) => format!("\x1b[48;5;{i}m"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::AgentKind;
    use crate::ansi;

    fn seg(pane: u32, name: &str, state: State, confirmed: bool, since: Millis, unseen: bool) -> PaneSummary {
        PaneSummary {
            pane,
            name: name.to_owned(),
            state,
            source: None,
            confirmed,
            since,
            unseen,
            kind: AgentKind::Claude,
            reason: String::new(),
        }
    }

    /// The rows as the bar takes them.
    fn refs(rows: &[PaneSummary]) -> Vec<&PaneSummary> {
        rows.iter().collect()
    }

    fn sample() -> Vec<PaneSummary> {
        vec![
            seg(2, "api", State::Working, false, 0, false),
            seg(3, "docs", State::Done, true, 0, true),
            seg(4, "tests", State::Failed, true, 0, false),
            seg(5, "review", State::Waiting, false, 30_000, false),
            seg(6, "guess", State::Done, false, 0, false),
        ]
    }

    #[test]
    fn full_width_bar() {
        let r = render(&refs(&sample()), 41_000, 120, &Palette::default(), None);
        insta::assert_snapshot!(ansi::strip(&r.line).trim_end(), @" needs you: 2  │ ⠿ 2 api working 41s │  ✓ 3 docs done  │ ✗ 4 tests failed │ ? 5 review waiting 11s │ ✓? 6 guess done");
        insta::assert_debug_snapshot!(r.line);
    }

    /// Issue 42: `turnstile report waiting --message "approve deploy?"`
    /// shows its message; a long one is cut, and a narrow bar drops it first.
    #[test]
    fn a_programs_message_follows_its_state() {
        let mut deploy = seg(7, "deploy", State::Waiting, false, 30_000, false);
        deploy.kind = AgentKind::Program;
        deploy.reason = "approve deploy?".into();
        let r = render(&refs(&[deploy.clone()]), 41_000, 120, &Palette::default(), None);
        insta::assert_snapshot!(ansi::strip(&r.line).trim_end(), @" needs you: 1  │ ? 7 deploy waiting 11s: approve deploy?");
        deploy.reason = "a message far longer than any bar should ever show".into();
        let r = render(&refs(&[deploy.clone()]), 41_000, 120, &Palette::default(), None);
        insta::assert_snapshot!(ansi::strip(&r.line).trim_end(), @" needs you: 1  │ ? 7 deploy waiting 11s: a message far longer than any b…");
        let r = render(&refs(&[deploy]), 41_000, 40, &Palette::default(), None);
        insta::assert_snapshot!(ansi::strip(&r.line).trim_end(), @" needs you: 1  │ ? 7 waiting 11s");
    }

    #[test]
    fn mixed_kinds_name_their_kind() {
        let mut segments = sample();
        segments[1].kind = AgentKind::Codex;
        let r = render(&refs(&segments[..2]), 41_000, 120, &Palette::default(), None);
        insta::assert_snapshot!(ansi::strip(&r.line).trim_end(), @" needs you: 1  │ ⠿ 2 api cc working 41s │  ✓ 3 docs cx done");
        let r = render(&refs(&segments[..2]), 41_000, 12, &Palette::default(), None);
        insta::assert_snapshot!(ansi::strip(&r.line).trim_end(), @" !1  │ ⠿ 2 …");
    }

    #[test]
    fn narrow_bar_drops_names_then_words() {
        let r = render(&refs(&sample()), 41_000, 96, &Palette::default(), None);
        insta::assert_snapshot!(ansi::strip(&r.line).trim_end(), @" needs you: 2  │ ⠿ 2 working 41s │  ✓ 3 done  │ ✗ 4 failed │ ? 5 waiting 11s │ ✓? 6 done");
        let r = render(&refs(&sample()), 41_000, 48, &Palette::default(), None);
        insta::assert_snapshot!(ansi::strip(&r.line).trim_end(), @" !2  │ ⠿ 2 │  ✓ 3  │ ✗ 4 │ ? 5 │ ✓? 6");
    }

    #[test]
    fn never_wider_than_the_row() {
        for cols in [0, 1, 5, 13, 27] {
            let r = render(
                &refs(&sample()),
                41_000,
                cols,
                &Palette::default(),
                Some("flow planner → coder: no pane named coder"),
            );
            assert_eq!(ansi::strip(&r.line).chars().count(), cols, "cols {cols}");
        }
    }

    #[test]
    fn clicks_map_to_panes() {
        let r = render(&refs(&sample()), 41_000, 140, &Palette::default(), None);
        assert_eq!(r.at(0), Some(Hit::Attention), "the counter comes first");
        let plain = ansi::strip(&r.line);
        let api = plain.chars().position(|c| c == '⠿').unwrap();
        assert_eq!(r.at(api), Some(Hit::Pane(2)));
        let docs = plain.chars().position(|c| c == '✓').unwrap();
        assert_eq!(r.at(docs), Some(Hit::Pane(3)));
        assert_eq!(r.at(139), None);
    }

    #[test]
    fn the_counter_shows_how_many_panes_need_you() {
        let calm = [seg(2, "api", State::Working, false, 0, false)];
        let r = render(&refs(&calm), 41_000, 60, &Palette::default(), None);
        assert!(
            !ansi::strip(&r.line).contains("needs you"),
            "nothing needs you: no counter"
        );
        let r = render(&refs(&sample()), 41_000, 30, &Palette::default(), None);
        insta::assert_snapshot!(ansi::strip(&r.line).trim_end(), @" !2  │ ⠿ 2 │  ✓ 3  │ ✗ 4 │ ? …");
        let counter_only = render(&refs(&sample()[1..2]), 0, 60, &Palette::default(), None);
        insta::assert_debug_snapshot!(counter_only.line);
    }

    #[test]
    fn empty_bar_and_message() {
        let r = render(&[], 0, 40, &Palette::default(), None);
        assert!(ansi::strip(&r.line).starts_with("turnstile: no agent panes yet"));
        let r = render(
            &[],
            0,
            60,
            &Palette::default(),
            Some("config: poll_ms must be a number"),
        );
        assert!(ansi::strip(&r.line).starts_with("config: poll_ms"));
    }

    #[test]
    fn elapsed_formats() {
        assert_eq!(elapsed(41_000), "41s");
        assert_eq!(elapsed(185_000), "3m05s");
        assert_eq!(elapsed(7_440_000), "2h04m");
        assert_eq!(elapsed(3_600_000 * 100 + 60_000), "100h01m");
    }

    proptest::proptest! {
        /// The width the fitting counts is the width the label takes.
        #[test]
        fn label_widths_are_counted_right(
            pane in proptest::prelude::any::<u32>(),
            name in ".{0,12}",
            state in 0usize..8,
            since in 0u64..u64::MAX / 2,
            now in 0u64..u64::MAX / 2,
            tags in proptest::prelude::any::<bool>(),
        ) {
            let states = [State::Working, State::Done, State::Failed, State::Interrupted,
                State::Waiting, State::Idle, State::Unknown, State::Done];
            let seg = seg(pane, &name, states[state], state == 7, since, false);
            for detail in [Detail::Full, Detail::NoName, Detail::Minimal] {
                let mut text = String::new();
                write_label(&mut text, &seg, now, detail, tags);
                proptest::prop_assert_eq!(text.chars().count(), label_width(&seg, now, detail, tags));
            }
            let ms = now.saturating_sub(since);
            proptest::prop_assert_eq!(elapsed(ms).chars().count(), elapsed_width(ms));
        }
    }
}
