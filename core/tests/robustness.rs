//! Bad input loses nothing and never panics: huge lines, non-UTF-8, CRLF,
//! empty, truncated and replaced files.

use std::io::{Cursor, Write};
use turnstile_core::agent::claude::transcript::{classify_tail, Classifier, TailOptions};
use turnstile_core::State;

const PROMPT: &str = r#"{"type":"user","message":{"content":"go"}}"#;
const FINAL: &str =
    r#"{"type":"assistant","message":{"id":"m","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn"}}"#;

fn cold(bytes: &[u8]) -> turnstile_core::transcript::TranscriptVerdict {
    classify_tail(&mut Cursor::new(bytes), TailOptions::default())
        .unwrap()
        .verdict
}

#[test]
fn a_64_mb_tool_result_line_is_read_and_resolves_its_tool_call() {
    let tool = r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}],"stop_reason":"tool_use"}}"#;
    let big = "x".repeat(64 << 20);
    let result = format!(
        r#"{{"type":"user","message":{{"content":[{{"type":"tool_result","tool_use_id":"t1","content":"{big}"}}]}}}}"#
    );
    let data = format!("{PROMPT}\n{tool}\n{result}\n");
    let mut c = Classifier::new();
    for piece in data.as_bytes().chunks(1 << 20) {
        c.feed(piece);
    }
    let v = c.verdict();
    assert_eq!((v.state, v.pending_tools), (State::Working, 0));
    assert_eq!(cold(data.as_bytes()).pending_tools, 0);
    c.feed(format!("{FINAL}\n").as_bytes());
    assert_eq!(c.verdict().state, State::Done);
}

#[test]
fn non_utf8_bytes_inside_an_answer_keep_the_verdict_and_the_rest_of_the_text() {
    let mut data = format!("{PROMPT}\n").into_bytes();
    data.extend_from_slice(br#"{"type":"assistant","message":{"id":"m","content":[{"type":"text","text":"caf"#);
    data.extend_from_slice(&[0xe9, 0xff]);
    data.extend_from_slice(b"!\"}],\"stop_reason\":\"end_turn\"}}\n");
    let v = cold(&data);
    assert_eq!(v.state, State::Done);
    assert!(v.answer.unwrap().ends_with('!'));
}

#[test]
fn crlf_line_endings_are_read() {
    let data = format!("{PROMPT}\r\n{FINAL}\r\n");
    assert_eq!(cold(data.as_bytes()).state, State::Done);
}

#[test]
fn malformed_lines_are_counted_and_named_not_fatal() {
    let data = format!("{PROMPT}\n{{\"type\":\"assistant\",\"mess\n\u{0}\u{1}garbage\n{FINAL}\n");
    let v = cold(data.as_bytes());
    assert_eq!(v.state, State::Done);
    assert_eq!(v.invalid_lines, 2);
    assert!(v.reason.contains("unreadable"), "{}", v.reason);
}

#[test]
fn a_truncated_then_replaced_file_is_classified_fresh() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    std::fs::write(&path, format!("{PROMPT}\n{FINAL}\n")).unwrap();
    let mut file = std::fs::File::open(&path).unwrap();
    assert_eq!(
        classify_tail(&mut file, TailOptions::default()).unwrap().verdict.state,
        State::Done
    );
    // Replaced by a shorter file with a new turn in progress.
    let mut w = std::fs::File::create(&path).unwrap();
    w.write_all(format!("{PROMPT}\n").as_bytes()).unwrap();
    let mut file = std::fs::File::open(&path).unwrap();
    assert_eq!(
        classify_tail(&mut file, TailOptions::default()).unwrap().verdict.state,
        State::Working
    );
}

#[test]
fn an_empty_file_and_a_lone_half_line_are_unknown() {
    assert_eq!(cold(b"").state, State::Unknown);
    assert_eq!(cold(&PROMPT.as_bytes()[..10]).state, State::Unknown);
}
