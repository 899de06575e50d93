//! Gemini CLI's chat log (`~/.gemini/tmp/<project>/chats/session-….jsonl`):
//! the authoritative source of a Gemini turn, with one trap.
//!
//! A header line (`sessionId`, …), then records `{id, type: user | gemini |
//! info | error, content, toolCalls?}`. A record may be written again under
//! its id (the later copy wins, in the first copy's place); `{"$set":
//! {"messages": […]}}` rewrites the whole history. There is no turn-end
//! record: a turn starts with a `user` record holding text, and ends with a
//! `gemini` record without tool calls (done), an `info` "Request cancelled."
//! (interrupted) or an `error` record (failed).
//!
//! The trap: nothing marks a running tool. A tool round's `gemini` record
//! (the preamble) is first written without `toolCalls`, exactly like a final
//! answer, and rewritten with them later. So a `gemini` record is only a
//! done *candidate* (working, `candidate: done`): the screen going quiet, the
//! `AfterAgent` hook or the next prompt confirms it. Cold reads replay the
//! file (the log is rewritten in place, so its tail alone cannot be trusted);
//! both paths share this classifier and agree on every prefix.

use crate::transcript::lines::{LineClassifier, LineRules};
use crate::transcript::TranscriptVerdict;
use crate::verdict::State;
use serde_json::Value;
use std::io::{self, Read};

/// The cold path reads at most this much of a chat log: a larger one is an
/// error that says so (a log is one session's, far smaller in practice).
pub const MAX_CHAT_BYTES: u64 = 64 << 20;

/// One record of the current turn.
#[derive(Debug, Clone, PartialEq)]
struct Record {
    id: String,
    kind: Kind,
}

#[derive(Debug, Clone, PartialEq)]
enum Kind {
    /// A person's prompt.
    Prompt,
    /// Tool results handed back to the model.
    ToolResults,
    /// The model's text; with the tool calls it made, if any, and what
    /// an unfinished one asks the user (`ask_user`, `exit_plan_mode`).
    Model {
        text: String,
        tool_calls: usize,
        asks: Option<String>,
    },
    Cancelled,
    Error(String),
    OtherInfo,
}

fn kind_of(record: &Value) -> Option<Kind> {
    let content = record.get("content");
    let text = || content.and_then(Value::as_str).unwrap_or_default().to_owned();
    Some(match record.get("type")?.as_str()? {
        "user" => {
            let parts = content.and_then(Value::as_array);
            let tool_results = parts.is_some_and(|p| p.iter().any(|p| p.get("functionResponse").is_some()));
            // The CLI's own context, written as the history's first message.
            let context = parts.is_some_and(|p| {
                p.iter()
                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                    .all(|t| t.trim_start().starts_with("<session_context>"))
            });
            match (tool_results, context) {
                (true, _) => Kind::ToolResults,
                (false, true) => Kind::OtherInfo,
                (false, false) => Kind::Prompt,
            }
        }
        "gemini" => {
            let calls = record.get("toolCalls").and_then(Value::as_array);
            Kind::Model {
                text: text(),
                tool_calls: calls.map_or(0, Vec::len),
                asks: calls.into_iter().flatten().find_map(unanswered_question),
            }
        }
        "info" if text().trim() == "Request cancelled." => Kind::Cancelled,
        "info" => Kind::OtherInfo,
        "error" => Kind::Error(text()),
        _ => return None,
    })
}

/// What a tool call asks its user while it has no result yet.
fn unanswered_question(call: &Value) -> Option<String> {
    let finished = call.get("result").is_some_and(|r| !r.is_null())
        || matches!(
            call.get("status").and_then(Value::as_str),
            Some("success" | "error" | "cancelled")
        );
    let name = call.get("name").and_then(Value::as_str)?;
    (!finished)
        .then(|| crate::question::asks(name, call.get("args")))
        .flatten()
}

/// Incremental classifier of one chat log: the shared line classifier
/// with the chat log's rules.
pub type ChatClassifier = LineClassifier<ChatRules>;

/// What a chat log's lines mean: records by id, `$set` rewrites of the
/// history, the current turn from its prompt on (see [`LineRules`]).
#[derive(Debug, Clone, Default)]
pub struct ChatRules {
    session_id: Option<String>,
    /// The records of the current turn, its prompt first.
    turn: Vec<Record>,
    decided_offset: Option<u64>,
    decided_at: Option<String>,
    invalid_lines: u64,
}

impl ChatRules {
    /// A record written (again): true when the turn changed.
    fn record(&mut self, value: &Value) -> bool {
        let (Some(id), Some(kind)) = (value.get("id").and_then(Value::as_str), kind_of(value)) else {
            return false;
        };
        if let Some(old) = self.turn.iter_mut().find(|r| r.id == id) {
            let changed = old.kind != kind;
            old.kind = kind;
            return changed;
        }
        if kind == Kind::Prompt {
            self.turn.clear();
        } else if self.turn.is_empty() {
            return false; // a record of a turn whose prompt was not seen
        }
        self.turn.push(Record {
            id: id.to_owned(),
            kind,
        });
        true
    }

    /// The whole history rewritten: the current turn is its last prompt on.
    /// A rewrite that drops the current prompt (the CLI removes a prompt
    /// whose request failed, then writes the error) keeps the current turn.
    fn rewrite(&mut self, history: &[Value]) -> bool {
        let before = std::mem::take(&mut self.turn);
        for value in history {
            self.record(value);
        }
        let in_history = |id: &str| history.iter().any(|v| v.get("id").and_then(Value::as_str) == Some(id));
        if before.first().is_some_and(|prompt| !in_history(&prompt.id)) {
            self.turn = before;
            return false;
        }
        before != self.turn
    }

    /// (state, candidate, answer, why) of the current turn: the first
    /// record that ends it decides; otherwise the last one.
    fn judge(&self) -> (State, Option<State>, Option<String>, String) {
        if self.turn.is_empty() {
            return (State::Unknown, None, None, "no prompt yet".into());
        }
        for record in &self.turn {
            match &record.kind {
                Kind::Cancelled => return (State::Interrupted, None, None, "Request cancelled.".into()),
                Kind::Error(text) => return (State::Failed, None, None, format!("error record: {text}")),
                _ => {}
            }
        }
        let last = self.turn.iter().rev().find(|r| r.kind != Kind::OtherInfo);
        match last.map(|r| &r.kind) {
            Some(Kind::Model { asks: Some(asks), .. }) => (State::Waiting, None, None, asks.clone()),
            Some(Kind::Model {
                text, tool_calls: 0, ..
            }) => (
                State::Working,
                Some(State::Done),
                Some(text.clone()),
                "a model answer without tool calls: maybe final, maybe a tool round's preamble; needs confirmation"
                    .into(),
            ),
            Some(Kind::Model { .. }) => (State::Working, None, None, "the model called tools".into()),
            Some(Kind::ToolResults) => (State::Working, None, None, "tool results went back to the model".into()),
            _ => (State::Working, None, None, "a prompt: the turn runs".into()),
        }
    }
}

impl LineRules for ChatRules {
    fn apply(&mut self, bytes: &[u8], end: u64) {
        let bytes = bytes.trim_ascii();
        if bytes.is_empty() {
            return;
        }
        let Ok(value) = serde_json::from_slice::<Value>(bytes) else {
            self.invalid_lines += 1;
            return;
        };
        if let Some(id) = value.get("sessionId").and_then(Value::as_str) {
            self.session_id = Some(id.to_owned());
            return;
        }
        let changed = match value.get("$set") {
            Some(set) => set
                .get("messages")
                .and_then(Value::as_array)
                .is_some_and(|history| self.rewrite(history)),
            None => self.record(&value),
        };
        if changed {
            self.decided_offset = Some(end);
            self.decided_at = value.get("timestamp").and_then(Value::as_str).map(str::to_owned);
        }
    }

    fn skip_too_long(&mut self) {
        self.invalid_lines += 1;
    }

    /// The verdict after everything fed so far.
    fn verdict(&self) -> TranscriptVerdict {
        let (state, candidate, answer, why) = self.judge();
        TranscriptVerdict {
            state,
            reason: why,
            session_id: self.session_id.clone(),
            since: self.decided_at.clone(),
            answer,
            candidate,
            line: None,
            offset: self.decided_offset,
            pending_tools: 0,
            background_agents: 0,
            invalid_lines: self.invalid_lines,
        }
    }
}

/// Classifies a chat log cold: the whole file through the incremental
/// classifier (its history may be rewritten anywhere), up to
/// [`MAX_CHAT_BYTES`]: more is refused, never read without end.
pub fn classify_chat<R: Read>(file: &mut R) -> io::Result<ChatClassifier> {
    let mut classifier = ChatClassifier::default();
    let mut chunk = vec![0u8; 64 << 10];
    let mut total = 0u64;
    loop {
        let n = file.read(&mut chunk)?;
        if n == 0 {
            return Ok(classifier);
        }
        total += n as u64;
        if total > MAX_CHAT_BYTES {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("chat log larger than {MAX_CHAT_BYTES} bytes: not classified"),
            ));
        }
        classifier.feed(&chunk[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &[u8] = include_bytes!("../../../../tests/fixtures/gemini/chats/five-turns.jsonl");

    /// (1-based line, state, candidate) after each line that changes the turn,
    /// checked by hand against the recording (README beside the fixture).
    const TRUTH: &[(usize, State, Option<State>)] = &[
        (3, State::Working, None),
        (5, State::Working, Some(State::Done)), // the preamble, before its rewrite
        (7, State::Working, None),              // rewritten with its tool call
        (8, State::Working, None),
        (10, State::Working, Some(State::Done)), // the answer: a candidate
        (12, State::Working, None),
        (14, State::Working, Some(State::Done)),
        (16, State::Working, None),
        (18, State::Working, None), // the history rewritten without the failed prompt: its turn goes on
        (19, State::Failed, None),
        (23, State::Working, None),
        (25, State::Working, Some(State::Done)),
        (27, State::Interrupted, None),
    ];

    #[test]
    fn every_prefix_of_a_real_log_has_the_hand_checked_state() {
        let mut c = ChatClassifier::default();
        for (i, line) in FIXTURE.split_inclusive(|b| *b == b'\n').enumerate() {
            c.feed(line);
            let v = c.verdict();
            let expected = TRUTH.iter().rev().find(|(l, _, _)| *l <= i + 1);
            let (state, candidate) = expected.map_or((State::Unknown, None), |(_, s, c)| (*s, *c));
            assert_eq!(
                (v.state, v.candidate),
                (state, candidate),
                "after line {}: {}",
                i + 1,
                v.reason
            );
            assert_ne!(v.state, State::Done, "the log alone never says done");
        }
        assert_eq!(
            c.verdict().session_id.as_deref(),
            Some("b8b939b4-4e60-4781-af53-43e6c40f1990")
        );
    }

    /// Issue 45: an `ask_user` call without a result waits for the user,
    /// with its question; its result lets the turn go on.
    #[test]
    fn an_unanswered_ask_user_call_is_waiting_with_what_it_asks() {
        let prompt = br#"{"id":"u1","type":"user","content":[{"text":"pick a db"}]}
"#;
        let asking = br#"{"id":"g1","type":"gemini","content":"","toolCalls":[{"id":"a1","name":"ask_user","args":{"questions":[{"question":"Which database?","header":"DB","type":"choice"}]},"status":"awaiting_approval"}]}
"#;
        let answered = br#"{"id":"g1","type":"gemini","content":"","toolCalls":[{"id":"a1","name":"ask_user","args":{"questions":[{"question":"Which database?"}]},"result":[{"functionResponse":{"id":"a1","name":"ask_user","response":{"output":"Postgres"}}}],"status":"success"}]}
"#;
        let mut c = ChatClassifier::default();
        c.feed(prompt);
        c.feed(asking);
        let v = c.verdict();
        assert_eq!((v.state, v.reason.as_str()), (State::Waiting, "asks: Which database?"));
        c.feed(answered);
        let v = c.verdict();
        assert_eq!(
            (v.state, v.candidate),
            (State::Working, None),
            "the choice is no answer"
        );
    }

    #[test]
    fn the_answer_is_the_last_model_text() {
        let mut c = ChatClassifier::default();
        let lines: Vec<&[u8]> = FIXTURE.split_inclusive(|b| *b == b'\n').collect();
        lines[..10].iter().for_each(|l| c.feed(l));
        assert_eq!(c.verdict().answer.as_deref(), Some("Done: slept 3s."));
        assert!(c.verdict().offset.is_some());
    }

    #[test]
    fn cold_and_incremental_agree_and_bad_lines_are_counted() {
        let cold = classify_chat(&mut &FIXTURE[..]).unwrap().verdict();
        let mut hot = ChatClassifier::default();
        FIXTURE.chunks(333).for_each(|c| hot.feed(c));
        assert_eq!(cold, hot.verdict());
        let mut c = ChatClassifier::default();
        c.feed(b"{\"id\":\"1\",\"type\":\"user\",\"content\":[{\"text\":\"hi\"}]}\n{broken\n");
        assert_eq!((c.verdict().state, c.verdict().invalid_lines), (State::Working, 1));
    }
}
