//! The inbox: the turns that finished in this session, newest first, and
//! how the floating inbox view draws them.
//!
//! The leader logs the turns from the edges it sees and hands every new or
//! changed entry to the other copies of the bar, which keep the same
//! [`Log`] (copies in hidden tabs get no pane lists from zellij, so they
//! could not log by themselves): the log survives the leader moving to
//! another copy. The leader hands the entries, without their answers, to
//! the floating view ([`Update`]) and carries out what the view asks
//! ([`Action`]: copy an answer, route it). A turn is one entry: a guessed
//! done confirmed later updates its entry.

use crate::agent::AgentKind;
use crate::arbiter::Edge;
use crate::bar::elapsed;
use crate::panes::Pane;
use crate::text::first_line;
use crate::verdict::{Millis, State};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};

/// Entries kept unless the `inbox_size` setting says otherwise.
pub const DEFAULT_CAPACITY: usize = 200;
/// Longest answer kept per entry (bytes).
pub const MAX_ANSWER_BYTES: usize = 256 * 1024;

/// One finished turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Its number in this copy's log.
    pub id: u64,
    /// When the turn ended (ms since the epoch).
    pub at: Millis,
    /// The terminal pane.
    pub pane: u32,
    /// The pane's title then.
    pub name: String,
    /// The agent.
    pub kind: AgentKind,
    /// How the turn ended.
    pub state: State,
    /// The first line of the answer (or why the turn failed).
    pub line: String,
    /// The whole answer (kept by the bar, not sent to the view).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
}

/// The finished turns, at most `capacity`, oldest dropped first.
#[derive(Debug, Clone)]
pub struct Log {
    entries: VecDeque<Entry>,
    capacity: usize,
    next_id: u64,
    /// The entry of each pane's current turn (until it works again).
    open: BTreeMap<u32, u64>,
}

impl Default for Log {
    fn default() -> Self {
        Log::new(DEFAULT_CAPACITY)
    }
}

impl Log {
    /// An empty log keeping `capacity` entries.
    pub fn new(capacity: usize) -> Log {
        Log {
            entries: VecDeque::new(),
            capacity: capacity.max(1),
            next_id: 1,
            open: BTreeMap::new(),
        }
    }

    /// Notes an edge of `pane`; the entry it added or changed.
    pub fn on_edge(&mut self, pane: &Pane, edge: &Edge, now: Millis) -> Option<Entry> {
        let id = pane.meta.id;
        if edge.to == State::Working {
            self.open.remove(&id);
            return None;
        }
        if !edge.to.is_turn_end() {
            return None;
        }
        let answer = edge
            .is_confirmed_done()
            .then(|| pane.turn_answer().map(cap_answer))
            .flatten();
        let line = first_line(answer.as_deref().unwrap_or(&edge.now.reason));
        let open = self.open.get(&id).copied();
        if let Some(entry) = open.and_then(|n| self.entries.iter_mut().find(|e| e.id == n)) {
            entry.state = edge.to;
            entry.line = line;
            entry.answer = answer;
            return Some(entry.clone());
        }
        let entry = Entry {
            id: self.next_id,
            at: now,
            pane: id,
            name: pane.meta.title.clone(),
            kind: pane.kind,
            state: edge.to,
            line,
            answer,
        };
        self.open.insert(id, entry.id);
        self.upsert(entry.clone());
        Some(entry)
    }

    /// `pane`'s answer came after its confirmed done (its screen showed it
    /// later than the hook confirmed the turn): its open done entry takes it.
    pub fn on_late_answer(&mut self, pane: &Pane) -> Option<Entry> {
        let answer = pane.turn_answer().map(cap_answer)?;
        let open = self.open.get(&pane.meta.id).copied()?;
        let entry = self
            .entries
            .iter_mut()
            .find(|e| e.id == open && e.state == State::Done && e.answer.is_none())?;
        entry.line = first_line(&answer);
        entry.answer = Some(answer);
        Some(entry.clone())
    }

    /// Takes an entry the leader logged (a new one, or a change of one it
    /// sent before), in id order.
    pub fn upsert(&mut self, entry: Entry) {
        self.next_id = self.next_id.max(entry.id + 1);
        match self.entries.binary_search_by_key(&entry.id, |e| e.id) {
            Ok(at) => self.entries[at] = entry,
            Err(at) => self.entries.insert(at, entry),
        }
        while self.entries.len() > self.capacity {
            self.entries.pop_front();
        }
    }

    /// The entries, oldest first (what a copy that joins is sent).
    pub fn oldest_first(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter()
    }

    /// The entries, newest first.
    pub fn newest_first(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter().rev()
    }

    /// An entry by id.
    pub fn get(&self, id: u64) -> Option<&Entry> {
        self.entries.iter().find(|e| e.id == id)
    }

    /// How many entries it holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when no turn finished yet.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// What the bar sends the inbox view.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Update {
    /// The entries, newest first, without answers.
    pub entries: Vec<Entry>,
    /// Panes an answer can be routed to: `(pane id, title)`, agents first.
    pub panes: Vec<(u32, String)>,
    /// What the last action did, for the view's footer.
    #[serde(default)]
    pub feedback: Option<String>,
}

/// What the inbox view asks the bar.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Copy entry `id`'s whole answer to the clipboard.
    Copy(u64),
    /// Route entry `id`'s answer to a pane.
    Route {
        /// The entry.
        entry: u64,
        /// The target terminal pane.
        to: u32,
    },
}

fn cap_answer(answer: &str) -> String {
    let mut end = answer.len().min(MAX_ANSWER_BYTES);
    while !answer.is_char_boundary(end) {
        end -= 1;
    }
    answer[..end].to_owned()
}

/// The icon of a finished turn.
fn icon(state: State) -> &'static str {
    match state {
        State::Done => "✓",
        State::Failed => "✗",
        State::Interrupted => "⊘",
        _ => "·",
    }
}

/// One list row of an entry, plain text, at most `cols` wide.
pub fn entry_row(entry: &Entry, now: Millis, cols: usize) -> String {
    let age = format!("{} ago", elapsed(now.saturating_sub(entry.at)));
    let name: String = entry.name.chars().take(16).collect();
    let row = format!(
        "{age:>10}  {:<3} {name:<16} {:<2} {} {:<11} {}",
        entry.pane,
        entry.kind.tag(),
        icon(entry.state),
        entry.state.as_str(),
        entry.line
    );
    row.chars().take(cols).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arbiter::Fused;
    use crate::panes::{PaneMeta, PaneTable};
    use crate::protocol::PaneReport;
    use crate::verdict::{Source, Verdict};

    fn edge(to: State, confirmed: bool, reason: &str) -> Edge {
        Edge {
            from: State::Working,
            to,
            now: Fused {
                state: to,
                confirmed,
                reason: reason.into(),
                ..Fused::default()
            },
        }
    }

    fn pane_with_answer(answer: &str) -> Pane {
        let mut table = PaneTable::new();
        table.sync(vec![PaneMeta {
            id: 4,
            title: "api".into(),
            ..PaneMeta::default()
        }]);
        table.observe_report(PaneReport {
            pane: 4,
            agent: Some(Default::default()),
            verdicts: vec![Verdict::new(State::Done, Source::Transcript, "turn done", 1)],
            answer: Some(answer.into()),
            since: None,
        });
        table.get(4).unwrap().clone()
    }

    #[test]
    fn a_guess_confirmed_later_is_one_entry_with_the_answer() {
        let pane = pane_with_answer("\n  All 4 checks pass.\nDetails follow.");
        let mut log = Log::new(10);
        assert!(log
            .on_edge(&pane, &edge(State::Done, false, "screen rule banner"), 5)
            .is_some());
        assert_eq!(log.get(1).unwrap().answer, None, "a guess carries no answer");
        let confirmed = log.on_edge(&pane, &edge(State::Done, true, "turn done"), 6).unwrap();
        assert_eq!(confirmed.id, 1);
        assert_eq!(log.len(), 1);
        let entry = log.get(1).unwrap();
        assert_eq!(entry.line, "All 4 checks pass.");
        assert_eq!(entry.at, 5);
        assert!(entry.answer.as_deref().unwrap().ends_with("Details follow."));
        // The next turn is a new entry.
        log.on_edge(&pane, &edge(State::Working, false, ""), 7);
        log.on_edge(&pane, &edge(State::Failed, true, "API error: overloaded"), 8);
        let newest: Vec<(u64, State)> = log.newest_first().map(|e| (e.id, e.state)).collect();
        assert_eq!(newest, [(2, State::Failed), (1, State::Done)]);
        assert_eq!(log.get(2).unwrap().line, "API error: overloaded");
    }

    #[test]
    fn the_oldest_entries_go_first_when_full() {
        let pane = pane_with_answer("ok");
        let mut log = Log::new(3);
        for at in 0..5 {
            log.on_edge(&pane, &edge(State::Working, false, ""), at * 10);
            log.on_edge(&pane, &edge(State::Done, true, ""), at * 10 + 1);
        }
        let ids: Vec<u64> = log.newest_first().map(|e| e.id).collect();
        assert_eq!(ids, [5, 4, 3]);
    }

    #[test]
    fn waiting_is_not_a_finished_turn_and_answers_are_capped() {
        let pane = pane_with_answer(&"é".repeat(MAX_ANSWER_BYTES));
        let mut log = Log::default();
        assert!(log
            .on_edge(&pane, &edge(State::Waiting, false, "permission"), 1)
            .is_none());
        log.on_edge(&pane, &edge(State::Done, true, ""), 2);
        assert!(log.get(1).unwrap().answer.as_ref().unwrap().len() <= MAX_ANSWER_BYTES);
    }

    #[test]
    fn a_copy_keeps_the_leaders_entries_in_order_and_continues_their_ids() {
        let pane = pane_with_answer("ok");
        let mut leader = Log::new(3);
        let mut copy = Log::new(3);
        let mut sent = Vec::new();
        for at in 0..4 {
            leader.on_edge(&pane, &edge(State::Working, false, ""), at * 10);
            sent.extend(leader.on_edge(&pane, &edge(State::Done, false, ""), at * 10 + 1));
            sent.extend(leader.on_edge(&pane, &edge(State::Done, true, ""), at * 10 + 2));
        }
        sent.reverse(); // out of order, and each entry twice
        for entry in sent {
            copy.upsert(entry);
        }
        let ids: Vec<u64> = copy.newest_first().map(|e| e.id).collect();
        assert_eq!(ids, [4, 3, 2], "the newest three");
        // The copy takes the lead: its next entry follows the leader's.
        copy.on_edge(&pane, &edge(State::Working, false, ""), 50);
        assert_eq!(copy.on_edge(&pane, &edge(State::Done, true, ""), 51).unwrap().id, 5);
    }

    #[test]
    fn updates_travel_without_answers() {
        let pane = pane_with_answer("secret body");
        let mut log = Log::default();
        log.on_edge(&pane, &edge(State::Done, true, ""), 2);
        let mut entry = log.get(1).unwrap().clone();
        entry.answer = None;
        let json = serde_json::to_string(&Update {
            entries: vec![entry],
            ..Update::default()
        })
        .unwrap();
        assert!(!json.contains("answer"));
        let action = serde_json::to_string(&Action::Route { entry: 3, to: 9 }).unwrap();
        assert_eq!(action, r#"{"route":{"entry":3,"to":9}}"#);
    }
}
