//! Claude Code JSONL transcripts: the authoritative source of a turn's state.
//!
//! - [`line`] turns one line into the event it means for the turn;
//! - [`classifier`] folds events incrementally (feed appended bytes);
//! - [`tail`] classifies a file cold, reading backwards from its end.
//!
//! Rules (ARCHITECTURE.md, invariants): the last meaningful line decides; a response
//! with a tool call, a tool result or a prompt means working; a final
//! response with no pending tool call and no unreported background agent is
//! done; an interrupt marker is interrupted; a synthetic API error is failed.
//! A final-looking answer without a stop reason (old releases) is only a
//! *candidate* done until a later end marker or another source confirms it.

pub mod classifier;
pub mod line;
pub mod lines;
pub mod tail;

pub use classifier::Classifier;
pub use tail::{classify_tail, TailOptions, TailVerdict};

use crate::verdict::{Millis, Source, State, Verdict};
use serde::Serialize;

/// What the transcript says about the current turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TranscriptVerdict {
    /// The state of the current turn.
    pub state: State,
    /// Why, naming the deciding line.
    pub reason: String,
    /// The Claude Code session id, from the lines read.
    pub session_id: Option<String>,
    /// When the deciding line was written (its `timestamp`, ISO 8601).
    pub since: Option<String>,
    /// The final answer of the turn when it is done (or a done candidate).
    pub answer: Option<String>,
    /// `Some(Done)` when the turn looks finished but nothing confirms it yet.
    pub candidate: Option<State>,
    /// 1-based number of the deciding line, when known.
    pub line: Option<u64>,
    /// Byte offset just after the deciding line.
    pub offset: Option<u64>,
    /// Tool calls still waiting for their result.
    pub pending_tools: usize,
    /// Background agents launched in this turn that have not reported back.
    pub background_agents: usize,
    /// Lines that could not be read (broken JSON).
    pub invalid_lines: u64,
}

impl TranscriptVerdict {
    /// The generic verdict for the arbiter, observed at `at`.
    pub fn to_verdict(&self, at: Millis) -> Verdict {
        Verdict {
            candidate: self.candidate,
            key: self.offset.map(|o| o.to_string()),
            ..Verdict::new(self.state, Source::Transcript, self.reason.clone(), at)
        }
    }
}
