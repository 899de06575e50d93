//! Test helpers every kind's log classifier shares: its recordings, the
//! states a log goes through fed line by line, and the agreement of the
//! cold path with the incremental one on every prefix.

use crate::agent::AgentKind;
use crate::verdict::State;
use std::io::Cursor;

/// The log of recording `name` in `tests/fixtures/<corpus>/`.
pub fn fixture(corpus: &str, name: &str) -> Vec<u8> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/");
    std::fs::read(format!("{dir}{corpus}/{name}/transcript.jsonl")).unwrap()
}

/// Each change of (state, candidate) as `log` is fed line by line.
pub fn states_with_candidates(kind: AgentKind, log: &[u8]) -> Vec<(State, Option<State>)> {
    let mut c = kind.transcript_classifier();
    let mut out = Vec::new();
    for line in log.split_inclusive(|b| *b == b'\n') {
        c.feed(line);
        let v = c.verdict();
        if out.last() != Some(&(v.state, v.candidate)) {
            out.push((v.state, v.candidate));
        }
    }
    out
}

/// Each change of state as `log` is fed line by line.
pub fn states(kind: AgentKind, log: &[u8]) -> Vec<State> {
    let mut out: Vec<State> = Vec::new();
    for (state, _) in states_with_candidates(kind, log) {
        if out.last() != Some(&state) {
            out.push(state);
        }
    }
    out
}

/// Asserts that the cold path and the incremental one agree (state,
/// candidate, answer, deciding position) on prefixes of each recording,
/// cut every `step` bytes.
pub fn assert_cold_agrees_with_incremental(kind: AgentKind, corpus: &str, names: &[&str], step: usize) {
    for name in names {
        let log = fixture(corpus, name);
        for cut in (0..=log.len()).step_by(step).chain([log.len()]) {
            let cold = kind
                .log()
                .classify_log(&mut Cursor::new(&log[..cut]), false)
                .unwrap()
                .verdict();
            let mut hot = kind.transcript_classifier();
            hot.feed(&log[..cut]);
            let hot = hot.verdict();
            assert_eq!(
                (cold.state, cold.candidate, &cold.answer, cold.offset),
                (hot.state, hot.candidate, &hot.answer, hot.offset),
                "{name} cut at {cut}"
            );
        }
    }
}
