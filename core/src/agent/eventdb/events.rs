//! A family kind's session log: the rows of its database's append-only
//! `event` table for one session, one JSON line each (`{aggregate_id, seq,
//! type, data}`, as the host's log store renders them, in `seq` order): the
//! authoritative source of a turn.
//!
//! A new user message starts a turn (its later rewrites, a summary at the
//! turn's end, do not). Each model round is one assistant message
//! (`parentID`: the user message); it is written when it starts and again
//! when it completes (`time.completed`) with its `finish`: `tool-calls` is a
//! tool round (its preamble is a text part of that message, so a preamble is
//! never even a candidate), any other finish the answer (done). An `error`
//! ends the turn: `MessageAbortedError` interrupted (Escape), any other
//! failed (an HTTP 400's `APIError`). Trap: Escape while a retry waits
//! completes the message with neither finish nor error (interrupted, not a
//! done). A retried HTTP 500 writes nothing (working); an approval wait
//! writes nothing either (the screen and the plugin tell it). Streamed text
//! is written only when its part ends. Positions are `seq + 1`, so the cold
//! and the incremental paths name the same rows alike.

use crate::transcript::lines::{parse_line, LineClassifier, LineRules};
use crate::transcript::{TranscriptVerdict, Turn};
use crate::verdict::State;
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io::{self, Read, Seek};

/// The cold path reads at most this much of a log file's end.
pub const TAIL_BYTES: u64 = 16 << 20;

/// Text parts of a turn kept for its answer (more are dropped).
const MAX_PARTS: usize = 4096;

/// Earlier turns' user messages remembered.
const MAX_EARLIER: usize = 64;

/// One row of the `event` table.
#[derive(Deserialize)]
struct Row {
    #[serde(default)]
    aggregate_id: Option<String>,
    #[serde(default)]
    seq: u64,
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    data: Value,
}

/// What one row means for the turn.
#[derive(Debug, Clone, PartialEq)]
enum Event {
    /// A user message (id).
    User(String),
    /// An assistant message of the round `id` answering `parent`.
    Round(Round),
    /// A text part of message `message` (part id, text).
    Text {
        message: String,
        part: String,
        text: String,
    },
    /// A tool part `part` with its status.
    Tool {
        part: String,
        status: String,
        tool: String,
    },
    Other,
}

/// An assistant message as a row writes it.
#[derive(Debug, Clone, PartialEq, Default)]
struct Round {
    id: String,
    parent: Option<String>,
    completed: bool,
    finish: Option<String>,
    error: Option<(String, String)>,
}

fn event_of(row: &Row) -> Event {
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
    match row.kind.as_str() {
        "message.updated.1" => {
            let info = row.data.get("info").unwrap_or(&Value::Null);
            let id = text(info, "id").unwrap_or_default();
            match info.get("role").and_then(Value::as_str) {
                Some("user") => Event::User(id),
                Some("assistant") => Event::Round(Round {
                    id,
                    parent: text(info, "parentID"),
                    completed: info.pointer("/time/completed").is_some_and(|t| !t.is_null()),
                    finish: text(info, "finish"),
                    error: info.get("error").filter(|e| !e.is_null()).map(error_of),
                }),
                _ => Event::Other,
            }
        }
        "message.part.updated.1" => {
            let part = row.data.get("part").unwrap_or(&Value::Null);
            let id = text(part, "id").unwrap_or_default();
            match part.get("type").and_then(Value::as_str) {
                Some("text") => Event::Text {
                    message: text(part, "messageID").unwrap_or_default(),
                    part: id,
                    text: text(part, "text").unwrap_or_default(),
                },
                Some("tool") => Event::Tool {
                    part: id,
                    status: part
                        .pointer("/state/status")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                    tool: text(part, "tool").unwrap_or_default(),
                },
                _ => Event::Other,
            }
        }
        _ => Event::Other,
    }
}

/// An error's name and message (`{name, data: {message, statusCode}}`).
fn error_of(error: &Value) -> (String, String) {
    let name = error.get("name").and_then(Value::as_str).unwrap_or("Error").to_owned();
    let data = error.get("data").unwrap_or(&Value::Null);
    let mut message: String = data
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("")
        .chars()
        .take(200)
        .collect();
    if let Some(status) = data.get("statusCode").and_then(Value::as_u64) {
        message = format!("HTTP {status}: {message}");
    }
    (name, message)
}

/// True for rows that can matter (a cheap filter before parsing): session
/// rows carry the whole session and are never needed.
fn may_matter(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(160)];
    memchr::memmem::find(head, br#""type":"message."#).is_some()
}

/// Incremental classifier of one session's rows.
pub type EventsClassifier = LineClassifier<RowRules>;

/// What the session's rows have decided so far.
#[derive(Debug, Clone, Default)]
pub struct RowRules {
    turn: Turn,
    /// The user message of the current turn.
    prompt: Option<String>,
    /// Earlier turns' user messages (the newest few): their late rows (a
    /// summary, a queued prompt's predecessor finishing) are not this turn's.
    earlier: VecDeque<String>,
    /// Text parts of the turn's messages: (message, part) → text.
    texts: BTreeMap<(String, String), String>,
    /// Tool parts not finished yet.
    tools: BTreeSet<String>,
}

impl LineRules for RowRules {
    fn skip_too_long(&mut self) {
        self.turn.invalid_lines += 1;
    }

    fn verdict(&self) -> TranscriptVerdict {
        self.turn.verdict()
    }

    fn apply(&mut self, bytes: &[u8], _end: u64) {
        self.apply_row(bytes);
    }
}

impl RowRules {
    /// Applies one rendered row (its position is its `seq`, not its bytes).
    fn apply_row(&mut self, bytes: &[u8]) {
        let Some(row) = parse_line::<Row>(bytes, may_matter, &mut self.turn.invalid_lines) else {
            return;
        };
        if self.turn.session_id.is_none() {
            self.turn.session_id = row.aggregate_id.clone();
            self.turn.positions_are_rows = true;
        }
        let position = row.seq + 1;
        let decided = match event_of(&row) {
            Event::Other => None,
            Event::User(id) => self.prompted(id),
            Event::Round(round) => self.round(round),
            Event::Text { message, part, text } => {
                if self.texts.len() < MAX_PARTS || self.texts.contains_key(&(message.clone(), part.clone())) {
                    self.texts.insert((message, part), text);
                }
                None
            }
            Event::Tool { part, status, tool } => self.tool(part, &status, &tool),
        };
        if let Some((state, candidate, reason)) = decided {
            self.turn.pending = self.tools.len();
            self.turn.decide(state, candidate, reason, position, None);
        }
    }

    /// A user message: a new turn, unless it is the current turn's (its
    /// rewrites, the summary written at the turn's end).
    fn prompted(&mut self, id: String) -> Option<(State, bool, String)> {
        if self.prompt.as_deref() == Some(id.as_str()) || self.earlier.contains(&id) {
            return None;
        }
        self.supersede(Some(id));
        self.texts.clear();
        self.tools.clear();
        self.turn.answer = None;
        Some((State::Working, false, "a user message: a turn runs".to_owned()))
    }

    fn round(&mut self, round: Round) -> Option<(State, bool, String)> {
        if let Some(parent) = &round.parent {
            if self.earlier.contains(parent) {
                // An earlier turn's round, written late: not this turn's end.
                return None;
            }
            if self.prompt.as_ref() != Some(parent) {
                // A turn whose start was not read (a cold read from the middle).
                self.supersede(Some(parent.clone()));
                self.texts.retain(|(m, _), _| *m == round.id);
                self.tools.clear();
            }
        }
        if let Some((name, message)) = round.error {
            self.turn.answer = None;
            self.tools.clear();
            let state = match name.as_str() {
                "MessageAbortedError" => State::Interrupted,
                _ => State::Failed,
            };
            return Some((state, false, format!("{name} {message}").trim_end().to_owned()));
        }
        if !round.completed {
            return Some((State::Working, false, "a model round runs".to_owned()));
        }
        match round.finish.as_deref() {
            Some("tool-calls") => Some((
                State::Working,
                false,
                "a tool round ended: the next round follows".into(),
            )),
            Some(finish) => {
                self.turn.answer = Some(self.answer_of(&round.id));
                self.tools.clear();
                Some((State::Done, false, format!("the answer completed (finish {finish})")))
            }
            None => {
                self.turn.answer = None;
                self.tools.clear();
                let why = "a round completed with neither finish nor error (Escape while a retry waited)";
                Some((State::Interrupted, false, why.to_owned()))
            }
        }
    }

    /// Makes `prompt` the current turn's user message, the old one earlier.
    fn supersede(&mut self, prompt: Option<String>) {
        if let Some(old) = std::mem::replace(&mut self.prompt, prompt) {
            if self.earlier.len() == MAX_EARLIER {
                self.earlier.pop_front();
            }
            self.earlier.push_back(old);
        }
    }

    fn tool(&mut self, part: String, status: &str, tool: &str) -> Option<(State, bool, String)> {
        match status {
            "pending" | "running" => {
                self.tools.insert(part);
            }
            _ => {
                self.tools.remove(&part);
            }
        }
        let running = self.turn.state == Some(State::Working);
        running.then(|| (State::Working, false, format!("tool {tool} {status}")))
    }

    /// The text of message `id`, its parts in order.
    fn answer_of(&self, id: &str) -> String {
        let parts = self.texts.iter().filter(|((m, _), _)| m == id).map(|(_, t)| t.trim());
        parts.filter(|t| !t.is_empty()).collect::<Vec<_>>().join("\n\n")
    }
}

/// Classifies a log file cold from its last [`TAIL_BYTES`].
pub fn classify_events_tail<R: Read + Seek>(file: &mut R) -> io::Result<EventsClassifier> {
    EventsClassifier::from_tail(file, TAIL_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;
    use State::{Done, Working};

    /// A `message.updated` row of session `ses_1` at `seq`, as the store renders it.
    fn row(seq: u64, info: &str) -> String {
        format!(r#"{{"aggregate_id":"ses_1","seq":{seq},"type":"message.updated.1","data":{{"info":{info}}}}}"#) + "\n"
    }

    #[test]
    fn a_tool_rounds_preamble_is_never_a_candidate_and_a_summary_starts_no_turn() {
        let mut c = EventsClassifier::default();
        c.feed(row(0, r#"{"id":"u1","role":"user"}"#).as_bytes());
        c.feed(
            row(
                1,
                r#"{"id":"a1","role":"assistant","parentID":"u1","finish":"tool-calls","time":{"completed":1}}"#,
            )
            .as_bytes(),
        );
        assert_eq!((c.verdict().state, c.verdict().candidate), (Working, None));
        c.feed(
            row(
                2,
                r#"{"id":"a2","role":"assistant","parentID":"u1","finish":"stop","time":{"completed":2}}"#,
            )
            .as_bytes(),
        );
        assert_eq!(c.verdict().state, Done);
        c.feed(row(3, r#"{"id":"u1","role":"user","summary":{"diffs":[]}}"#).as_bytes());
        assert_eq!(c.verdict().state, Done, "the user message's summary is no new turn");
        assert_eq!(c.verdict().offset, Some(3), "positions are rows, not bytes");
    }

    #[test]
    fn an_earlier_turns_late_rows_never_end_the_current_one() {
        let mut c = EventsClassifier::default();
        c.feed(row(0, r#"{"id":"u1","role":"user"}"#).as_bytes());
        c.feed(row(1, r#"{"id":"a1","role":"assistant","parentID":"u1"}"#).as_bytes());
        c.feed(row(2, r#"{"id":"u2","role":"user"}"#).as_bytes());
        // The first turn's answer completes after the second prompt's row.
        c.feed(
            row(
                3,
                r#"{"id":"a1","role":"assistant","parentID":"u1","finish":"stop","time":{"completed":3}}"#,
            )
            .as_bytes(),
        );
        c.feed(row(4, r#"{"id":"u1","role":"user","summary":{"diffs":[]}}"#).as_bytes());
        assert_eq!(
            (c.verdict().state, c.verdict().offset),
            (Working, Some(3)),
            "still the second turn"
        );
        c.feed(
            row(
                5,
                r#"{"id":"a2","role":"assistant","parentID":"u2","finish":"stop","time":{"completed":5}}"#,
            )
            .as_bytes(),
        );
        assert_eq!(c.verdict().state, Done);
    }
}
