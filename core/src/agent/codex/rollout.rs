//! Codex CLI rollouts (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-…jsonl`):
//! the authoritative source of a Codex turn.
//!
//! Lines are `{timestamp, type, payload}`. What decides, in `event_msg`
//! lines: `task_started` (working), `task_complete` (done, its
//! `last_agent_message` the answer; failed when it carries an `error`),
//! `turn_aborted` (interrupted). `session_meta` names the session. Approvals
//! are not written: a pending one looks like a running call (the screen or
//! a hook says waiting). The incremental classifier is O(appended bytes); the
//! cold path reads the first line (the session) and the last turn, found
//! backwards from the end; both agree on every prefix.

use crate::transcript::lines::{LineClassifier, LineRules};
use crate::transcript::TranscriptVerdict;
use crate::verdict::State;
use serde::Deserialize;
use serde_json::Value;
use std::io::{self, Read, Seek, SeekFrom};

/// The cold path reads at most this much of the first line for the session id.
const MAX_META_BYTES: u64 = 4 << 20;
/// The cold path gives up looking for the turn start after this many bytes.
const MAX_SCAN_BYTES: u64 = 64 << 20;
const CHUNK: usize = 64 << 10;
/// A `task_started` line is a few hundred bytes: a line longer than this is
/// no turn start, and the backward scan stops carrying it (which keeps the
/// scan linear, whatever the line lengths).
const MAX_STARTED_LINE: usize = 1 << 20;

/// The turn-start marker the cold path looks for.
const TASK_STARTED: &[u8] = b"\"task_started\"";

#[derive(Deserialize)]
struct Line {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(default)]
    payload: Value,
}

/// What one line means for the turn.
#[derive(Debug, Clone, PartialEq)]
enum Event {
    Session(String),
    Started,
    /// A tool call, and what it asks the user if it is a question
    /// (`request_user_input`: the turn waits for its answer).
    Call(String, Option<String>),
    CallOutput(String),
    Complete {
        answer: Option<String>,
        error: Option<String>,
    },
    Aborted(String),
    Other,
}

fn event_of(line: &Line) -> Event {
    let text = |key: &str| line.payload.get(key).and_then(Value::as_str).map(str::to_owned);
    let payload_type = text("type").unwrap_or_default();
    match (line.kind.as_str(), payload_type.as_str()) {
        ("session_meta", _) => text("id").map_or(Event::Other, Event::Session),
        ("event_msg", "task_started") => Event::Started,
        ("event_msg", "task_complete") => Event::Complete {
            answer: text("last_agent_message"),
            error: line.payload.get("error").filter(|e| !e.is_null()).map(error_text),
        },
        ("event_msg", "turn_aborted") => Event::Aborted(text("reason").unwrap_or_else(|| "interrupted".into())),
        ("response_item", "function_call" | "custom_tool_call" | "local_shell_call") => {
            let arguments = text("arguments").and_then(|a| serde_json::from_str::<Value>(&a).ok());
            let asks = crate::question::asks(&text("name").unwrap_or_default(), arguments.as_ref());
            text("call_id").map_or(Event::Other, |id| Event::Call(id, asks))
        }
        ("response_item", "function_call_output" | "custom_tool_call_output") => {
            text("call_id").map_or(Event::Other, Event::CallOutput)
        }
        _ => Event::Other,
    }
}

fn error_text(error: &Value) -> String {
    error
        .get("message")
        .and_then(Value::as_str)
        .map_or_else(|| error.to_string(), str::to_owned)
}

/// True for lines that can matter (a cheap filter before parsing).
fn may_matter(bytes: &[u8]) -> bool {
    const KEYS: [&[u8]; 3] = [b"\"event_msg\"", b"\"session_meta\"", b"call"];
    KEYS.iter().any(|k| memchr::memmem::find(bytes, k).is_some())
}

/// Incremental classifier of one rollout: the shared line classifier
/// with the rollout's rules.
pub type RolloutClassifier = LineClassifier<RolloutRules>;

/// What a rollout's lines mean: turn starts, calls and their outputs,
/// completions and aborts (see [`LineRules`]).
#[derive(Debug, Clone, Default)]
pub struct RolloutRules {
    session_id: Option<String>,
    started: bool,
    state: Option<State>,
    answer: Option<String>,
    reason: String,
    pending: Vec<String>,
    /// The pending calls that ask the user, with what they ask.
    questions: Vec<(String, String)>,
    decided_offset: Option<u64>,
    decided_at: Option<String>,
    invalid_lines: u64,
}

impl RolloutRules {
    /// Rules that know the session already (the cold path reads it from
    /// the first line).
    pub fn in_session(id: Option<String>) -> Self {
        RolloutRules {
            session_id: id,
            ..RolloutRules::default()
        }
    }

    /// The session id, once a `session_meta` line named it.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }
}

impl LineRules for RolloutRules {
    fn apply(&mut self, bytes: &[u8], end: u64) {
        let trimmed = bytes.trim_ascii();
        if trimmed.is_empty() || !may_matter(trimmed) {
            return;
        }
        let Ok(line) = serde_json::from_slice::<Line>(trimmed) else {
            self.invalid_lines += 1;
            return;
        };
        let why = match event_of(&line) {
            Event::Session(id) => {
                self.session_id = Some(id);
                return;
            }
            Event::Other => return,
            Event::Call(id, asks) => {
                if let Some(asks) = asks {
                    self.questions.push((id.clone(), asks));
                }
                self.pending.push(id);
                return;
            }
            Event::CallOutput(id) => {
                self.pending.retain(|p| *p != id);
                self.questions.retain(|(q, _)| *q != id);
                return;
            }
            Event::Started => {
                self.started = true;
                self.pending.clear();
                self.questions.clear();
                self.answer = None;
                self.state = Some(State::Working);
                "task_started: a turn runs".to_owned()
            }
            Event::Complete { error: Some(error), .. } => {
                self.state = Some(State::Failed);
                self.answer = None;
                format!("the turn failed: {error}")
            }
            Event::Complete { answer, .. } => {
                self.state = Some(State::Done);
                self.answer = answer;
                "task_complete: the turn is done".to_owned()
            }
            Event::Aborted(reason) => {
                self.state = Some(State::Interrupted);
                self.answer = None;
                format!("turn_aborted ({reason})")
            }
        };
        self.reason = why;
        self.decided_offset = Some(end);
        self.decided_at = line.timestamp;
    }

    fn skip_too_long(&mut self) {
        self.invalid_lines += 1;
    }

    /// The verdict after everything fed so far.
    fn verdict(&self) -> TranscriptVerdict {
        let question = self.questions.last().map(|(_, asks)| asks);
        let (state, reason) = match (self.state, question) {
            (Some(State::Working), Some(asks)) => (State::Waiting, asks.clone()),
            (Some(state), _) => (state, self.reason.clone()),
            (None, _) => (State::Unknown, "no turn yet".to_owned()),
        };
        TranscriptVerdict {
            state,
            reason,
            session_id: self.session_id.clone(),
            since: self.decided_at.clone(),
            answer: self.answer.clone(),
            candidate: None,
            line: None,
            offset: self.decided_offset,
            pending_tools: if state == State::Working { self.pending.len() } else { 0 },
            background_agents: 0,
            invalid_lines: self.invalid_lines,
        }
    }
}

/// The folder a rollout was started in, from its first line
/// (`session_meta`'s `payload.cwd`).
pub fn started_in(first_line: &[u8]) -> Option<std::path::PathBuf> {
    let line: Value = serde_json::from_slice(first_line).ok()?;
    line.pointer("/payload/cwd")?.as_str().map(std::path::PathBuf::from)
}

/// Classifies a rollout cold: the session from its first line, the turn
/// from the last `task_started` (found backwards from the end).
pub fn classify_rollout_tail<R: Read + Seek>(file: &mut R) -> io::Result<RolloutClassifier> {
    let len = file.seek(SeekFrom::End(0))?;
    let start = last_turn_start(file, len)?;
    let session = match start {
        0 => None,
        _ => first_line_session(file)?,
    };
    let mut classifier = RolloutClassifier::with_rules(start, RolloutRules::in_session(session));
    file.seek(SeekFrom::Start(start))?;
    let mut chunk = vec![0u8; CHUNK];
    loop {
        let n = file.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        classifier.feed(&chunk[..n]);
    }
    Ok(classifier)
}

/// The session id of the first line, when it is a readable `session_meta`.
fn first_line_session<R: Read + Seek>(file: &mut R) -> io::Result<Option<String>> {
    file.seek(SeekFrom::Start(0))?;
    let mut first = Vec::new();
    file.take(MAX_META_BYTES).read_to_end(&mut first)?;
    let Some(newline) = memchr::memchr(b'\n', &first) else {
        return Ok(None);
    };
    let mut probe = RolloutClassifier::default();
    probe.feed(&first[..=newline]);
    Ok(probe.rules().session_id().map(str::to_owned))
}

/// The start of the last line that is a `task_started` event. When there
/// is none within `MAX_SCAN_BYTES` of the end, the scan's earliest offset
/// (0 for a smaller file): the forward pass never reads more than that.
fn last_turn_start<R: Read + Seek>(file: &mut R, len: u64) -> io::Result<u64> {
    let mut end = len;
    // Bytes from `end` onwards already searched, kept while a line spans
    // chunks (and dropped once it is too long to be a turn start).
    let mut carry: Vec<u8> = Vec::new();
    while end > 0 && len - end < MAX_SCAN_BYTES {
        let start = end.saturating_sub(CHUNK as u64);
        let mut buf = vec![0u8; (end - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut buf)?;
        buf.extend_from_slice(&carry);
        // Whole lines only: keep the first (maybe partial) line for the next round.
        let first_newline = if start == 0 {
            Some(0)
        } else {
            memchr::memchr(b'\n', &buf).map(|i| i + 1)
        };
        end = start;
        let Some(cut) = first_newline else {
            carry = if buf.len() > MAX_STARTED_LINE { Vec::new() } else { buf };
            continue;
        };
        if let Some(at) = last_started_line(&buf[cut..]) {
            return Ok(start + (cut + at) as u64);
        }
        buf.truncate(cut.min(MAX_STARTED_LINE + 1));
        carry = if cut > MAX_STARTED_LINE { Vec::new() } else { buf };
    }
    Ok(end)
}

/// Offset (within `lines`) of the last complete line (newline included: a
/// half-written line does not count yet) that is a `task_started` event.
fn last_started_line(lines: &[u8]) -> Option<usize> {
    let mut search_end = lines.len();
    while let Some(hit) = memchr::memmem::rfind(&lines[..search_end], TASK_STARTED) {
        let line_start = memchr::memrchr(b'\n', &lines[..hit]).map_or(0, |i| i + 1);
        let complete = memchr::memchr(b'\n', &lines[hit..]).map(|i| hit + i);
        let parsed = complete.map(|end| serde_json::from_slice::<Line>(lines[line_start..end].trim_ascii()));
        if parsed.is_some_and(|p| p.is_ok_and(|l| event_of(&l) == Event::Started)) {
            return Some(line_start);
        }
        search_end = line_start;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    const FIXTURE: &[u8] = include_bytes!("../../../../tests/fixtures/codex/rollouts/eight-turns.jsonl");

    /// (1-based line, state) after each deciding line of the fixture.
    const TRUTH: &[(usize, State)] = &[
        (2, State::Working),
        (21, State::Done),
        (23, State::Working),
        (38, State::Done),
        (40, State::Working),
        (51, State::Interrupted),
        (53, State::Working),
        (57, State::Failed),
        (60, State::Working),
        (68, State::Done),
        (70, State::Working),
        (85, State::Done),
        (87, State::Working),
        (102, State::Done),
        (104, State::Working),
        (115, State::Interrupted),
    ];

    fn lines() -> Vec<&'static [u8]> {
        FIXTURE.split_inclusive(|b| *b == b'\n').collect()
    }

    fn expected_at(line: usize) -> State {
        TRUTH
            .iter()
            .rev()
            .find(|(l, _)| *l <= line)
            .map_or(State::Unknown, |(_, s)| *s)
    }

    #[test]
    fn every_prefix_of_a_real_rollout_has_the_hand_checked_state() {
        let mut c = RolloutClassifier::default();
        for (i, line) in lines().iter().enumerate() {
            c.feed(line);
            let v = c.verdict();
            assert_eq!(v.state, expected_at(i + 1), "after line {}: {}", i + 1, v.reason);
            assert_eq!(v.session_id.as_deref(), Some("01a23d04-bef8-7891-bce6-aa131a0da52d"));
        }
        let v = c.verdict();
        assert_eq!(v.invalid_lines, 0);
    }

    /// Issue 45: a pending `request_user_input` call waits for the user
    /// (with its question); its output lets the turn go on to its end.
    #[test]
    fn a_pending_question_is_waiting_with_what_it_asks() {
        let started = br#"{"type":"event_msg","payload":{"type":"task_started"}}
"#;
        let ask = br#"{"type":"response_item","payload":{"type":"function_call","name":"request_user_input","call_id":"c1","arguments":"{\"questions\":[{\"id\":\"db\",\"header\":\"DB\",\"question\":\"Which database?\",\"options\":[{\"label\":\"Postgres\"}]}]}"}}
"#;
        let answered =
            br#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"Postgres"}}
"#;
        let done = br#"{"type":"event_msg","payload":{"type":"task_complete","last_agent_message":"Using Postgres."}}
"#;
        let mut c = RolloutClassifier::default();
        c.feed(started);
        c.feed(ask);
        let v = c.verdict();
        assert_eq!((v.state, v.reason.as_str()), (State::Waiting, "asks: Which database?"));
        c.feed(answered);
        assert_eq!(
            c.verdict().state,
            State::Working,
            "the answer to a question is no turn end"
        );
        c.feed(done);
        assert_eq!(c.verdict().answer.as_deref(), Some("Using Postgres."));
        let mut shell = RolloutClassifier::default();
        shell.feed(started);
        shell.feed(br#"{"type":"response_item","payload":{"type":"function_call","name":"shell","call_id":"c2","arguments":"{}"}}
"#);
        assert_eq!(shell.verdict().state, State::Working, "another call is work");
    }

    #[test]
    fn answers_and_errors_come_from_task_complete() {
        let upto = |n: usize| {
            let mut c = RolloutClassifier::default();
            lines()[..n].iter().for_each(|l| c.feed(l));
            c.verdict()
        };
        assert_eq!(upto(21).answer.as_deref(), Some("Done: slept 3s."));
        assert_eq!(
            upto(38).answer.as_deref(),
            Some("Done: created the file, as you approved.")
        );
        let failed = upto(57);
        assert!(failed.reason.contains("high demand"), "{}", failed.reason);
        assert_eq!(failed.answer, None);
        assert_eq!(upto(14).pending_tools, 1, "the shell call runs");
        assert_eq!(upto(15).pending_tools, 0, "its output came back");
        assert_ne!(upto(21).offset, upto(38).offset, "each turn's end is new evidence");
    }

    #[test]
    fn the_cold_path_agrees_with_the_incremental_one_on_every_prefix() {
        let mut incremental = RolloutClassifier::default();
        let mut prefix = Vec::new();
        for line in lines() {
            // Mid-line cuts too: the half-written line must not count.
            for cut in [1, line.len() / 2, line.len() - 1, line.len()] {
                let mut bytes = prefix.clone();
                bytes.extend_from_slice(&line[..cut]);
                let cold = classify_rollout_tail(&mut Cursor::new(&bytes)).unwrap().verdict();
                let mut inc = incremental.clone();
                inc.feed(&line[..cut]);
                let hot = inc.verdict();
                assert_eq!(
                    (cold.state, &cold.answer, &cold.session_id, cold.offset),
                    (hot.state, &hot.answer, &hot.session_id, hot.offset),
                    "prefix of {} bytes",
                    bytes.len()
                );
            }
            incremental.feed(line);
            prefix.extend_from_slice(line);
        }
    }

    #[test]
    fn bad_lines_are_counted_not_fatal() {
        let mut c = RolloutClassifier::default();
        c.feed(b"{\"type\":\"event_msg\",\"payload\":{\"type\":\"task_started\"}}\n");
        c.feed(b"{\"type\":\"event_msg\", broken\n\xff\xfe\n");
        let v = c.verdict();
        assert_eq!((v.state, v.invalid_lines), (State::Working, 1));
        c.feed(b"{\"type\":\"event_msg\",\"payload\":{\"type\":\"task_complete\",\"last_agent_message\":\"ok\"}}");
        assert_eq!(
            c.verdict().state,
            State::Working,
            "a half-written last line waits for its newline"
        );
        c.feed(b"\n");
        assert_eq!(c.verdict().answer.as_deref(), Some("ok"));
    }

    /// Counts the bytes read and copied by the cold path.
    struct Counting {
        inner: Cursor<Vec<u8>>,
        read: u64,
    }

    impl Read for Counting {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.inner.read(buf)?;
            self.read += n as u64;
            Ok(n)
        }
    }

    impl Seek for Counting {
        fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
            self.inner.seek(pos)
        }
    }

    #[test]
    fn a_rollout_without_newlines_is_read_in_linear_work_and_bounded() {
        // Issue 21: a newline-less rollout cost time quadratic in its size.
        for size in [1usize << 20, 8 << 20] {
            let mut file = Counting {
                inner: Cursor::new(vec![b'x'; size]),
                read: 0,
            };
            let c = classify_rollout_tail(&mut file).unwrap();
            assert_eq!(c.verdict().state, State::Unknown);
            assert!(file.read <= 2 * size as u64 + 4096, "{size}: read {} bytes", file.read);
        }
        // Past the scan budget, nothing before it is read at all.
        let size = (MAX_SCAN_BYTES + (8 << 20)) as usize;
        let mut file = Counting {
            inner: Cursor::new(vec![b'\n'; size]),
            read: 0,
        };
        classify_rollout_tail(&mut file).unwrap();
        assert!(
            file.read <= 2 * MAX_SCAN_BYTES + MAX_META_BYTES,
            "read {} bytes",
            file.read
        );
    }
}
