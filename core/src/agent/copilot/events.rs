//! Copilot CLI's session log (`~/.copilot/session-state/<id>/events.jsonl`):
//! the authoritative source of a Copilot turn.
//!
//! Lines `{type, data, id, timestamp, parentId}`. A turn starts with
//! `user.message`; `assistant.turn_start` / `assistant.turn_end` pair up per
//! model round, not per turn. A round's `assistant.message` carries its
//! `toolRequests` (a tool round: working; its preamble is in the same line)
//! or none (the answer); the `assistant.turn_end` after an answer ends the
//! turn (done). `permission.requested` waits until `permission.completed`;
//! `abort` is an Escape (interrupted); `session.error` with an HTTP 4xx
//! fails the turn (a 5xx is retried: working). Trap: Esc Esc before the
//! first byte rewinds the session, rewriting the file without the turn and
//! with a `session.usage_checkpoint` naming the rewind: that turn ended
//! (interrupted); a watcher reads a shrunk file again from its start. The
//! cold path reads a bounded tail; both paths agree on every prefix of a
//! log smaller than that tail.

use crate::transcript::lines::{parse_line, LineClassifier, LineRules};
use crate::transcript::{TranscriptVerdict, Turn};
use crate::verdict::State;
use serde::Deserialize;
use serde_json::Value;
use std::io::{self, Read, Seek};

/// The cold path reads at most this much of the log's end.
pub const TAIL_BYTES: u64 = 16 << 20;

#[derive(Deserialize)]
struct Line {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    data: Value,
    #[serde(default)]
    timestamp: Option<String>,
}

/// What one line means for the turn.
#[derive(Debug, Clone, PartialEq)]
enum Event {
    Session(String),
    Prompt,
    ToolRound(usize),
    Answer(String),
    RoundEnd,
    PermissionAsked,
    PermissionAnswered,
    ToolDone,
    Aborted(String),
    Error { status: u64, message: String },
    Rewound,
    Other,
}

fn event_of(line: &Line) -> Event {
    let text = |key: &str| line.data.get(key).and_then(Value::as_str).map(str::to_owned);
    match line.kind.as_str() {
        "session.start" => text("sessionId").map_or(Event::Other, Event::Session),
        "user.message" => Event::Prompt,
        "assistant.message" => match line
            .data
            .get("toolRequests")
            .and_then(Value::as_array)
            .map_or(0, Vec::len)
        {
            0 => Event::Answer(text("content").unwrap_or_default()),
            calls => Event::ToolRound(calls),
        },
        "assistant.turn_end" => Event::RoundEnd,
        "permission.requested" => Event::PermissionAsked,
        "permission.completed" => Event::PermissionAnswered,
        "tool.execution_complete" => Event::ToolDone,
        "abort" => Event::Aborted(text("reason").unwrap_or_else(|| "user_abort".into())),
        "session.error" => Event::Error {
            status: status_code(&line.data),
            message: text("message")
                .unwrap_or_else(|| "error".into())
                .chars()
                .take(200)
                .collect(),
        },
        "session.usage_checkpoint" if line.data.to_string().contains("\"rewind\"") => Event::Rewound,
        _ => Event::Other,
    }
}

/// The HTTP status of a `session.error` (a number, or a string of one).
fn status_code(data: &Value) -> u64 {
    match data.get("statusCode") {
        Some(Value::Number(n)) => n.as_u64().unwrap_or(0),
        Some(Value::String(s)) => s.parse().unwrap_or(0),
        _ => 0,
    }
}

/// True for lines that can matter (a cheap filter before parsing): the
/// system prompt's line alone is tens of kilobytes.
fn may_matter(bytes: &[u8]) -> bool {
    const KEYS: [&[u8]; 7] = [
        b"\"session.start\"",
        b"\"user.message\"",
        b"\"assistant.",
        b"\"permission.",
        b"\"tool.execution_complete\"",
        b"\"abort\"",
        b"\"session.",
    ];
    let head = &bytes[..bytes.len().min(64)];
    KEYS.iter().any(|k| memchr::memmem::find(head, k).is_some())
}

/// Incremental classifier of one `events.jsonl`.
pub type EventsClassifier = LineClassifier<EventRules>;

/// What the lines of the log have decided so far.
#[derive(Debug, Clone, Default)]
pub struct EventRules {
    turn: Turn,
}

impl LineRules for EventRules {
    fn skip_too_long(&mut self) {
        self.turn.invalid_lines += 1;
    }

    fn verdict(&self) -> TranscriptVerdict {
        self.turn.verdict()
    }

    fn apply(&mut self, bytes: &[u8], end: u64) {
        let Some(line) = parse_line::<Line>(bytes, may_matter, &mut self.turn.invalid_lines) else {
            return;
        };
        let turn = &mut self.turn;
        let running = turn.state.is_some_and(|s| matches!(s, State::Working | State::Waiting));
        let (state, candidate, reason) = match event_of(&line) {
            Event::Other => return,
            Event::Session(id) => {
                turn.session_id = Some(id);
                return;
            }
            Event::Prompt => {
                turn.pending = 0;
                turn.answer = None;
                (State::Working, false, "user.message: a turn runs".to_owned())
            }
            Event::ToolRound(calls) => {
                turn.pending += calls;
                turn.answer = None;
                (
                    State::Working,
                    false,
                    format!("{calls} tool request(s) with their preamble"),
                )
            }
            Event::Answer(text) => {
                turn.pending = 0;
                turn.answer = Some(text);
                let why = "an answer without tool requests; its round's end confirms it";
                (State::Working, true, why.to_owned())
            }
            Event::RoundEnd if turn.candidate => (State::Done, false, "assistant.turn_end after the answer".to_owned()),
            Event::PermissionAsked => (State::Waiting, false, "permission.requested: a tool waits".to_owned()),
            event @ (Event::PermissionAnswered | Event::ToolDone | Event::RoundEnd) if running => {
                if event == Event::ToolDone {
                    turn.pending = turn.pending.saturating_sub(1);
                }
                (State::Working, false, format!("{}: the turn goes on", line.kind))
            }
            Event::PermissionAnswered | Event::ToolDone | Event::RoundEnd => return,
            Event::Aborted(reason) => {
                turn.answer = None;
                (State::Interrupted, false, format!("abort ({reason})"))
            }
            Event::Error { status, message } if is_retried(status) => {
                if !running {
                    return;
                }
                (
                    State::Working,
                    false,
                    format!("session.error HTTP {status}, retried: {message}"),
                )
            }
            Event::Error { status, message } => {
                turn.answer = None;
                (State::Failed, false, format!("session.error HTTP {status}: {message}"))
            }
            Event::Rewound => {
                turn.answer = None;
                (
                    State::Interrupted,
                    false,
                    "the session was rewound (Esc Esc): its turn ended".to_owned(),
                )
            }
        };
        turn.decide(state, candidate, reason, end, line.timestamp);
    }
}

/// Statuses Copilot CLI retries by itself (a 5xx, a rate limit, none).
fn is_retried(status: u64) -> bool {
    status == 0 || status == 429 || status >= 500
}

/// Classifies a log cold from its last [`TAIL_BYTES`].
pub fn classify_events_tail<R: Read + Seek>(file: &mut R) -> io::Result<EventsClassifier> {
    EventsClassifier::from_tail(file, TAIL_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::replay::{assert_cold_agrees_with_incremental, fixture, states};
    use crate::agent::AgentKind;

    fn log(name: &str) -> Vec<u8> {
        fixture("copilot", name)
    }

    use State::{Done, Failed, Interrupted, Unknown, Waiting, Working};

    #[test]
    fn real_sessions_go_through_their_hand_checked_states() {
        assert_eq!(
            states(AgentKind::Copilot, &log("1.0.102-tool")),
            [Unknown, Working, Done]
        );
        assert_eq!(
            states(AgentKind::Copilot, &log("1.0.102-perm")),
            [Unknown, Working, Waiting, Working, Done]
        );
        assert_eq!(
            states(AgentKind::Copilot, &log("1.0.102-interrupt")),
            [Unknown, Working, Interrupted, Working, Done]
        );
        // The 500 turn was rewound out of the file: the checkpoint says so.
        assert_eq!(
            states(AgentKind::Copilot, &log("1.0.102-fail")),
            [Unknown, Working, Failed, Interrupted, Working, Done]
        );
        let mut c = EventsClassifier::default();
        c.feed(&log("1.0.102-tool"));
        let v = c.verdict();
        assert_eq!(v.answer.as_deref(), Some("Done: slept 4s."));
        assert_eq!(v.session_id.as_deref().map(str::len), Some(36));
    }

    #[test]
    fn a_preamble_is_never_a_candidate_the_answer_is_until_its_round_ends() {
        let mut c = EventsClassifier::default();
        c.feed(
            br#"{"type":"user.message","data":{"content":"go"}}
{"type":"assistant.message","data":{"content":"Running it.","toolRequests":[{"name":"bash"}]}}
"#,
        );
        assert_eq!((c.verdict().state, c.verdict().candidate), (Working, None));
        c.feed(
            br#"{"type":"assistant.message","data":{"content":"ok","toolRequests":[]}}
"#,
        );
        assert_eq!((c.verdict().state, c.verdict().candidate), (Working, Some(Done)));
        c.feed(b"{\"type\":\"assistant.turn_end\",\"data\":{}}\n");
        assert_eq!(c.verdict().state, Done);
        c.feed(b"{\"type\":\"session.error\",\"data\":{\"statusCode\":500}}\n");
        assert_eq!(c.verdict().state, Done, "a later error of no turn changes nothing");
    }

    #[test]
    fn the_cold_path_agrees_with_the_incremental_one_on_every_prefix() {
        assert_cold_agrees_with_incremental(
            AgentKind::Copilot,
            "copilot",
            &["1.0.102-tool", "1.0.102-perm", "1.0.102-interrupt", "1.0.102-fail"],
            211,
        );
    }
}
