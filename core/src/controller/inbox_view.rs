//! The floating inbox view's brain: the same plugin loaded with `view
//! "inbox"` (the bar opens it on the `inbox` pipe). A pure state machine like
//! [`super::Controller`]: keys, pipes and pane lists in, effects out.
//!
//! It holds no log of its own: it greets every plugin ([`PIPE_INBOX_HELLO`]),
//! the leading bar answers with an [`Update`] and keeps it current, and
//! copying or routing an answer is asked of that bar ([`Action`]), which
//! holds the answers and the routing code. When the leader's pane goes
//! away, the view greets again and the next leader answers.

#[cfg(test)]
use super::PaneEntry;
use super::{Effect, Event, PipeFrom};
use crate::inbox::{entry_row, Action, Update};
use crate::protocol::{PIPE_INBOX_ACT, PIPE_INBOX_HELLO, PIPE_INBOX_UPDATE};
use crate::Millis;

/// How often the view redraws (entry ages move on).
pub const REFRESH_MS: Millis = 1_000;

/// A key pressed in the view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// ↑
    Up,
    /// ↓
    Down,
    /// Enter
    Enter,
    /// Esc
    Esc,
    /// Backspace
    Backspace,
    /// A character.
    Char(char),
}

/// Picking the pane to route an entry's answer to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Picker {
    entry: u64,
    filter: String,
    selected: usize,
}

/// The state of the inbox view.
#[derive(Debug, Default)]
pub struct InboxView {
    leader: Option<u32>,
    update: Update,
    selected: usize,
    picker: Option<Picker>,
    granted: bool,
    out: Vec<Effect>,
}

impl InboxView {
    /// A view just loaded; the effects to carry out on load.
    pub fn new() -> (InboxView, Vec<Effect>) {
        (InboxView::default(), vec![Effect::RequestPermissions])
    }

    /// Handles one event; the effects to carry out, in order.
    pub fn handle(&mut self, event: Event) -> Vec<Effect> {
        match event {
            Event::Permission(true) if !self.granted => {
                self.granted = true;
                self.greet();
                self.out.push(Effect::ArmTimer(REFRESH_MS));
            }
            Event::Timer => {
                self.out.push(Effect::Redraw);
                self.out.push(Effect::ArmTimer(REFRESH_MS));
            }
            Event::Pipe {
                name,
                from: PipeFrom::Plugin(id),
                payload: Some(payload),
            } if name == PIPE_INBOX_UPDATE => self.on_update(id, &payload),
            Event::Panes(panes) => {
                let leader_gone = self
                    .leader
                    .is_some_and(|l| !panes.iter().any(|p| p.plugin_url.is_some() && p.id == l));
                if leader_gone {
                    self.leader = None;
                    self.greet();
                }
            }
            Event::Key(key) => match self.picker.take() {
                Some(picker) => self.on_pick_key(picker, key),
                None => self.on_list_key(key),
            },
            _ => {}
        }
        std::mem::take(&mut self.out)
    }

    fn greet(&mut self) {
        self.out.push(Effect::Broadcast {
            name: PIPE_INBOX_HELLO,
            payload: String::new(),
        });
    }

    fn on_update(&mut self, leader: u32, payload: &str) {
        let Ok(update) = serde_json::from_str::<Update>(payload) else {
            return;
        };
        self.leader = Some(leader);
        // The selection stays on its entry while newer ones arrive on top.
        let chosen = self.update.entries.get(self.selected).map(|e| e.id);
        self.update = update;
        let kept = chosen.and_then(|id| self.update.entries.iter().position(|e| e.id == id));
        self.selected = kept
            .unwrap_or(self.selected)
            .min(self.update.entries.len().saturating_sub(1));
        self.out.push(Effect::Redraw);
    }

    fn on_list_key(&mut self, key: Key) {
        let count = self.update.entries.len();
        let chosen = self.update.entries.get(self.selected).map(|e| (e.id, e.pane));
        match (key, chosen) {
            (Key::Up | Key::Char('k'), _) => self.selected = self.selected.saturating_sub(1),
            (Key::Down | Key::Char('j'), _) => self.selected = (self.selected + 1).min(count.saturating_sub(1)),
            (Key::Esc | Key::Char('q'), _) => self.out.push(Effect::CloseSelf),
            (Key::Enter, Some((_, pane))) => {
                self.out.push(Effect::FocusPane(pane));
                self.out.push(Effect::CloseSelf);
            }
            (Key::Char('y'), Some((id, _))) => self.ask(Action::Copy(id)),
            (Key::Char('r'), Some((id, _))) => {
                self.picker = Some(Picker {
                    entry: id,
                    ..Picker::default()
                })
            }
            _ => return,
        }
        self.out.push(Effect::Redraw);
    }

    fn on_pick_key(&mut self, mut picker: Picker, key: Key) {
        let matches = self.matching(&picker.filter).len();
        match key {
            Key::Esc => return self.out.push(Effect::Redraw),
            Key::Up => picker.selected = picker.selected.saturating_sub(1),
            Key::Down => picker.selected = (picker.selected + 1).min(matches.saturating_sub(1)),
            Key::Backspace => {
                picker.filter.pop();
                picker.selected = 0;
            }
            Key::Char(c) => {
                picker.filter.push(c);
                picker.selected = 0;
            }
            Key::Enter => {
                if let Some((to, _)) = self.matching(&picker.filter).get(picker.selected) {
                    let to = *to;
                    self.ask(Action::Route {
                        entry: picker.entry,
                        to,
                    });
                }
                return self.out.push(Effect::Redraw);
            }
        }
        self.picker = Some(picker);
        self.out.push(Effect::Redraw);
    }

    /// Panes whose title contains `filter` (case-insensitive).
    fn matching(&self, filter: &str) -> Vec<(u32, String)> {
        let filter = filter.to_lowercase();
        self.update
            .panes
            .iter()
            .filter(|(_, title)| title.to_lowercase().contains(&filter))
            .cloned()
            .collect()
    }

    fn ask(&mut self, action: Action) {
        let Some(leader) = self.leader else {
            self.update.feedback = Some("no bar answers yet".into());
            return;
        };
        if let Ok(payload) = serde_json::to_string(&action) {
            self.out.push(Effect::SendToCopy {
                copy: leader,
                name: PIPE_INBOX_ACT,
                payload,
            });
        }
    }

    /// The view as it should be drawn now, `rows` × `cols`, one line each.
    pub fn render(&self, rows: usize, cols: usize, now: Millis) -> String {
        let mut lines = Vec::with_capacity(rows);
        match &self.picker {
            Some(picker) => {
                lines.push(format!(
                    "route to: {}▏  (type to filter · ↑↓ · Enter send · Esc back)",
                    picker.filter
                ));
                for (i, (id, title)) in self.matching(&picker.filter).iter().enumerate() {
                    let row = format!("  {id:<4} {title}");
                    lines.push(mark(row, i == picker.selected, cols));
                }
            }
            None => {
                let n = self.update.entries.len();
                lines.push(format!(
                    "turnstile inbox · {n} turn{} · ↑↓ select · Enter focus · y copy · r route · Esc close",
                    if n == 1 { "" } else { "s" }
                ));
                if n == 0 {
                    lines.push("  no turn has finished yet".into());
                }
                for (i, entry) in self.update.entries.iter().enumerate() {
                    lines.push(mark(
                        entry_row(entry, now, cols.saturating_sub(2)),
                        i == self.selected,
                        cols,
                    ));
                }
            }
        }
        let body_rows = rows.saturating_sub(1);
        let mut shown: Vec<String> = scroll(lines, body_rows, self.cursor_line())
            .into_iter()
            .map(|l| cut(&l, cols))
            .collect();
        shown.resize(body_rows, String::new());
        shown.push(cut(self.update.feedback.as_deref().unwrap_or(""), cols));
        shown.join("\n")
    }

    /// The line of the selection (the header is line 0).
    fn cursor_line(&self) -> usize {
        1 + self.picker.as_ref().map_or(self.selected, |p| p.selected)
    }
}

/// A list row, marked and in reverse video when selected.
fn mark(row: String, selected: bool, cols: usize) -> String {
    match selected {
        true => format!("\x1b[7m▸ {}\x1b[0m", cut(&row, cols.saturating_sub(2))),
        false => format!("  {row}"),
    }
}

/// Keeps the header and the cursor's line in view.
fn scroll(lines: Vec<String>, rows: usize, cursor: usize) -> Vec<String> {
    if lines.len() <= rows || rows < 2 {
        return lines.into_iter().take(rows).collect();
    }
    let first = cursor.saturating_sub(rows - 2).max(1);
    let header = lines[0].clone();
    std::iter::once(header)
        .chain(lines.into_iter().skip(first).take(rows - 1))
        .collect()
}

/// At most `cols` visible characters (escape sequences are not counted).
fn cut(line: &str, cols: usize) -> String {
    let mut out = String::new();
    let mut width = 0;
    let mut in_escape = false;
    for c in line.chars() {
        in_escape |= c == '\x1b';
        if in_escape {
            out.push(c);
            in_escape = c != 'm';
        } else if width < cols {
            out.push(c);
            width += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::AgentKind;
    use crate::ansi;
    use crate::inbox::Entry;
    use crate::verdict::State;

    const NOW: Millis = 10_000_000;

    fn entry(id: u64, ago_s: u64, pane: u32, name: &str, kind: AgentKind, state: State, line: &str) -> Entry {
        Entry {
            id,
            at: NOW - ago_s * 1000,
            pane,
            name: name.into(),
            kind,
            state,
            line: line.into(),
            answer: None,
        }
    }

    /// A view that the leader (plugin 1) filled.
    fn filled() -> InboxView {
        let (mut view, _) = InboxView::new();
        view.handle(Event::Permission(true));
        let update = Update {
            entries: vec![
                entry(
                    3,
                    4,
                    5,
                    "review",
                    AgentKind::Gemini,
                    State::Interrupted,
                    "Request cancelled.",
                ),
                entry(
                    2,
                    65,
                    3,
                    "tests",
                    AgentKind::Codex,
                    State::Failed,
                    "API error: 529 overloaded",
                ),
                entry(1, 3700, 2, "api", AgentKind::Claude, State::Done, "All 4 checks pass."),
            ],
            panes: vec![
                (2, "api".into()),
                (3, "tests".into()),
                (5, "review".into()),
                (7, "shell".into()),
            ],
            feedback: None,
        };
        view.handle(Event::Pipe {
            name: PIPE_INBOX_UPDATE.into(),
            from: PipeFrom::Plugin(1),
            payload: Some(serde_json::to_string(&update).unwrap()),
        });
        view
    }

    fn screen(view: &InboxView) -> String {
        ansi::strip(&view.render(8, 90, NOW))
    }

    #[test]
    fn on_load_it_asks_permissions_then_greets_every_plugin() {
        let (mut view, effects) = InboxView::new();
        assert_eq!(effects, [Effect::RequestPermissions]);
        let greeted = view.handle(Event::Permission(true));
        assert!(matches!(
            &greeted[0],
            Effect::Broadcast {
                name: PIPE_INBOX_HELLO,
                ..
            }
        ));
        insta::assert_snapshot!(screen(&view));
    }

    #[test]
    fn the_list_shows_time_pane_kind_state_and_first_line_newest_first() {
        let mut view = filled();
        insta::assert_snapshot!(screen(&view));
        view.handle(Event::Key(Key::Down));
        insta::assert_snapshot!(screen(&view));
    }

    #[test]
    fn the_selection_stays_on_its_entry_when_a_newer_one_arrives() {
        let mut view = filled();
        view.handle(Event::Key(Key::Down));
        let mut update = view.update.clone();
        update
            .entries
            .insert(0, entry(4, 0, 7, "shell", AgentKind::Claude, State::Done, "new"));
        view.on_update(1, &serde_json::to_string(&update).unwrap());
        let enter = view.handle(Event::Key(Key::Enter));
        assert!(enter.contains(&Effect::FocusPane(3)), "{enter:?}");
    }

    #[test]
    fn enter_focuses_y_copies_esc_closes() {
        let mut view = filled();
        view.handle(Event::Key(Key::Down));
        let copy = view.handle(Event::Key(Key::Char('y')));
        assert_eq!(
            copy[0],
            Effect::SendToCopy {
                copy: 1,
                name: PIPE_INBOX_ACT,
                payload: r#"{"copy":2}"#.into()
            }
        );
        let enter = view.handle(Event::Key(Key::Enter));
        assert_eq!(enter[..2], [Effect::FocusPane(3), Effect::CloseSelf]);
        assert_eq!(filled().handle(Event::Key(Key::Esc))[0], Effect::CloseSelf);
    }

    #[test]
    fn r_picks_a_pane_by_name_and_asks_the_leader_to_route() {
        let mut view = filled();
        view.handle(Event::Key(Key::Char('r')));
        for c in "SH".chars() {
            view.handle(Event::Key(Key::Char(c)));
        }
        insta::assert_snapshot!(screen(&view));
        let sent = view.handle(Event::Key(Key::Enter));
        assert_eq!(
            sent[0],
            Effect::SendToCopy {
                copy: 1,
                name: PIPE_INBOX_ACT,
                payload: r#"{"route":{"entry":3,"to":7}}"#.into()
            }
        );
        // Back in the list; Esc in the picker only leaves the picker.
        view.handle(Event::Key(Key::Char('r')));
        assert!(!view.handle(Event::Key(Key::Esc)).contains(&Effect::CloseSelf));
        assert!(screen(&view).starts_with("turnstile inbox"));
    }

    #[test]
    fn the_leader_going_away_makes_it_greet_again() {
        let mut view = filled();
        let bar = |id| PaneEntry {
            id,
            plugin_url: Some("file:/t.wasm".into()),
            ..PaneEntry::default()
        };
        assert!(view.handle(Event::Panes(vec![bar(1), bar(4)])).is_empty());
        let again = view.handle(Event::Panes(vec![bar(4)]));
        assert!(matches!(
            &again[..],
            [Effect::Broadcast {
                name: PIPE_INBOX_HELLO,
                ..
            }]
        ));
    }

    #[test]
    fn many_entries_scroll_with_the_selection_and_rows_never_overflow() {
        let mut view = filled();
        let mut update = view.update.clone();
        update.entries = (0..40)
            .map(|i| {
                entry(
                    100 - i,
                    i,
                    2,
                    "api",
                    AgentKind::Claude,
                    State::Done,
                    &"long ".repeat(40),
                )
            })
            .collect();
        view.on_update(1, &serde_json::to_string(&update).unwrap());
        for _ in 0..30 {
            view.handle(Event::Key(Key::Down));
        }
        let shown = screen(&view);
        assert_eq!(shown.split('\n').count(), 8);
        assert!(shown.split('\n').all(|l| l.chars().count() <= 90));
        assert!(shown.contains("▸"), "the selection stays in view:\n{shown}");
    }
}
