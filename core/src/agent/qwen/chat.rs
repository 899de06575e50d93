//! Qwen Code's chat log (`~/.qwen/projects/<project>/chats/<session>.jsonl`):
//! the authoritative source of a Qwen turn, append-only, Claude-shaped.
//!
//! Records `{uuid, sessionId, timestamp, type, …}`: `user` (a prompt:
//! `message.parts[{text}]`), `assistant` (`message.parts`: `text`, and
//! `functionCall` for a tool round: its preamble and its calls are one
//! record, written before the tools run), `tool_result` (its
//! `toolCallResult.status`: success, error, cancelled) and `system` lines
//! (`ui_telemetry`: `qwen-code.api_error` with its `status_code`).
//!
//! No record ends a turn. An `assistant` record without a function call is
//! the answer: written once the model's response has ended, it is still
//! only a done *candidate* (the `Stop` hook, a quiet screen or the session
//! going idle confirms it), since nothing in the log says the agent will
//! not go on. A cancelled tool result is an Escape (interrupted). An HTTP
//! error shows only as telemetry: a 4xx fails the turn at once, a 5xx is
//! retried (working; an Escape then leaves no trace in the log: the hooks'
//! `idle_prompt` or the screen tells). Approval waits leave nothing either.
//! The cold path reads a bounded tail; both paths agree on every prefix of
//! a log smaller than that tail.

use crate::transcript::lines::{parse_line, LineClassifier, LineRules};
use crate::transcript::{TranscriptVerdict, Turn};
use crate::verdict::State;
use serde::Deserialize;
use serde_json::Value;
use std::io::{self, Read, Seek};

/// The cold path reads at most this much of the log's end.
pub const TAIL_BYTES: u64 = 16 << 20;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Record {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    subtype: Option<String>,
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(default)]
    message: Option<Value>,
    #[serde(default)]
    tool_call_result: Option<Value>,
    #[serde(default)]
    system_payload: Option<Value>,
}

/// What one record means for the turn.
#[derive(Debug, Clone, PartialEq)]
enum Event {
    Prompt,
    ToolRound(usize),
    Answer(String),
    ToolResult { cancelled: bool },
    ApiError { status: u64, message: String },
    Other,
}

fn parts(record: &Record) -> &[Value] {
    record
        .message
        .as_ref()
        .and_then(|m| m.get("parts"))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn event_of(record: &Record) -> Event {
    let parts = parts(record);
    let texts = || {
        parts
            .iter()
            .filter(|p| !p.get("thought").and_then(Value::as_bool).unwrap_or(false))
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<String>()
    };
    match record.kind.as_str() {
        "user" if parts.iter().any(|p| p.get("text").is_some()) => Event::Prompt,
        "assistant" => match parts.iter().filter(|p| p.get("functionCall").is_some()).count() {
            0 if parts.is_empty() => Event::Other,
            0 => Event::Answer(texts()),
            calls => Event::ToolRound(calls),
        },
        "tool_result" => {
            let status = record
                .tool_call_result
                .as_ref()
                .and_then(|r| r.get("status"))
                .and_then(Value::as_str);
            Event::ToolResult {
                cancelled: status == Some("cancelled"),
            }
        }
        "system" if record.subtype.as_deref() == Some("ui_telemetry") => telemetry(record),
        _ => Event::Other,
    }
}

/// An `api_error` telemetry line: its HTTP status and message.
fn telemetry(record: &Record) -> Event {
    let Some(ui) = record.system_payload.as_ref().and_then(|p| p.get("uiEvent")) else {
        return Event::Other;
    };
    if ui.get("event.name").and_then(Value::as_str) != Some("qwen-code.api_error") {
        return Event::Other;
    }
    let status = ui.get("status_code").and_then(Value::as_u64).unwrap_or(0);
    let message = ui
        .get("error")
        .and_then(Value::as_str)
        .unwrap_or("API error")
        .chars()
        .take(200)
        .collect();
    Event::ApiError { status, message }
}

/// True for lines that can matter (a cheap filter before parsing).
fn may_matter(bytes: &[u8]) -> bool {
    const KEYS: [&[u8]; 4] = [b"\"user\"", b"\"assistant\"", b"\"tool_result\"", b"api_error"];
    KEYS.iter().any(|k| memchr::memmem::find(bytes, k).is_some())
}

/// Incremental classifier of one chat log.
pub type QwenChatClassifier = LineClassifier<ChatRules>;

/// What the lines of the log have decided so far.
#[derive(Debug, Clone, Default)]
pub struct ChatRules {
    turn: Turn,
}

impl LineRules for ChatRules {
    fn skip_too_long(&mut self) {
        self.turn.invalid_lines += 1;
    }

    fn verdict(&self) -> TranscriptVerdict {
        self.turn.verdict()
    }

    fn apply(&mut self, bytes: &[u8], end: u64) {
        let Some(record) = parse_line::<Record>(bytes, may_matter, &mut self.turn.invalid_lines) else {
            return;
        };
        let turn = &mut self.turn;
        if let Some(id) = &record.session_id {
            turn.session_id = Some(id.clone());
        }
        let (state, candidate, reason) = match event_of(&record) {
            Event::Other => return,
            Event::Prompt => {
                turn.pending = 0;
                turn.answer = None;
                (State::Working, false, "a prompt: a turn runs".to_owned())
            }
            Event::ToolRound(calls) => {
                turn.pending += calls;
                turn.answer = None;
                (
                    State::Working,
                    false,
                    format!("{calls} tool call(s) with their preamble"),
                )
            }
            Event::ToolResult { cancelled: true } => {
                turn.pending = 0;
                (
                    State::Interrupted,
                    false,
                    "a tool call was cancelled (Escape)".to_owned(),
                )
            }
            Event::ToolResult { cancelled: false } => {
                turn.pending = turn.pending.saturating_sub(1);
                (State::Working, false, "a tool result: the model goes on".to_owned())
            }
            Event::Answer(text) => {
                turn.pending = 0;
                turn.answer = Some(text);
                let why = "an answer without tool calls: the turn's end unless the agent goes on; needs confirmation";
                (State::Working, true, why.to_owned())
            }
            // Only an error of the running turn counts (not of the side
            // requests sent after an answer).
            Event::ApiError { .. } if !turn.runs() => return,
            Event::ApiError { status, message } if is_retried(status) => {
                (State::Working, false, format!("HTTP {status}, retried: {message}"))
            }
            Event::ApiError { status, message } => {
                turn.answer = None;
                (
                    State::Failed,
                    false,
                    format!("HTTP {status} failed the turn: {message}"),
                )
            }
        };
        turn.decide(state, candidate, reason, end, record.timestamp);
    }
}

/// Statuses Qwen Code retries by itself (a 5xx, a rate limit, none at all).
fn is_retried(status: u64) -> bool {
    status == 0 || status == 429 || status >= 500
}

/// Classifies a chat log cold from its last [`TAIL_BYTES`] (from the first
/// line that starts within them).
pub fn classify_chat_tail<R: Read + Seek>(file: &mut R) -> io::Result<QwenChatClassifier> {
    QwenChatClassifier::from_tail(file, TAIL_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::replay::{assert_cold_agrees_with_incremental, fixture, states_with_candidates};
    use crate::agent::AgentKind;

    fn log(name: &str) -> Vec<u8> {
        fixture("qwen", name)
    }

    const WORKING: (State, Option<State>) = (State::Working, None);
    const ANSWER: (State, Option<State>) = (State::Working, Some(State::Done));

    #[test]
    fn a_tool_turn_is_working_until_its_answer_a_candidate() {
        let log = log("0.24.4-tool");
        assert_eq!(states_with_candidates(AgentKind::Qwen, &log), [WORKING, ANSWER]);
        let mut c = QwenChatClassifier::default();
        c.feed(&log);
        let v = c.verdict();
        assert_eq!(v.answer.as_deref(), Some("Done: slept 4s."));
        assert!(v.session_id.is_some());
    }

    #[test]
    fn escape_during_a_tool_is_interrupted_and_the_next_turn_runs_again() {
        let log = log("0.24.4-interrupt");
        assert_eq!(
            states_with_candidates(AgentKind::Qwen, &log),
            [WORKING, (State::Interrupted, None), WORKING, ANSWER]
        );
    }

    #[test]
    fn http_400_fails_a_500_is_retried_and_the_next_answer_stands() {
        let log = log("0.24.4-fail");
        assert_eq!(
            states_with_candidates(AgentKind::Qwen, &log),
            [WORKING, (State::Failed, None), WORKING, ANSWER]
        );
    }

    #[test]
    fn the_cold_path_agrees_with_the_incremental_one_on_every_prefix() {
        assert_cold_agrees_with_incremental(
            AgentKind::Qwen,
            "qwen",
            &["0.24.4-tool", "0.24.4-perm", "0.24.4-interrupt", "0.24.4-fail"],
            97,
        );
    }

    #[test]
    fn a_tail_starts_at_a_line_and_bad_lines_are_counted() {
        let mut log = Vec::new();
        let filler = format!("{{\"type\":\"system\",\"pad\":\"{}\"}}\n", "x".repeat(1 << 20));
        for _ in 0..17 {
            log.extend_from_slice(filler.as_bytes());
        }
        log.extend_from_slice(
            b"{\"type\":\"user\",\"message\":{\"parts\":[{\"text\":\"go\"}]}}\n{\"type\":\"user\", broken\n",
        );
        let v = classify_chat_tail(&mut std::io::Cursor::new(&log)).unwrap().verdict();
        assert_eq!((v.state, v.invalid_lines), (State::Working, 1));
    }
}
