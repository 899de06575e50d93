//! Agent logs, shared by every kind: what a log says about the current turn
//! ([`TranscriptVerdict`]) and how appended bytes become complete lines
//! ([`lines`]). Each kind's classifier lives in `agent/<kind>/` (Claude
//! Code's transcript, Codex's rollout, Gemini CLI's chat log).

pub mod lines;

use crate::verdict::{Millis, Source, State, Verdict};
use serde::Serialize;

/// What the transcript says about the current turn (the default: nothing
/// read yet, `unknown`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct TranscriptVerdict {
    /// The state of the current turn.
    pub state: State,
    /// Why, naming the deciding line.
    pub reason: String,
    /// The agent's session id, from the lines read.
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

/// What a line-by-line classifier of an append-only log has decided of the
/// current turn, and its verdict (Qwen Code's chat log and Copilot CLI's
/// events share it).
#[derive(Debug, Clone, Default)]
pub struct Turn {
    /// The session id, from the lines read.
    pub session_id: Option<String>,
    /// The state decided so far (`None`: no turn yet).
    pub state: Option<State>,
    /// The state is working, and the answer may be the turn's end.
    pub candidate: bool,
    /// The answer of the turn, once written.
    pub answer: Option<String>,
    /// Tool calls without their result yet.
    pub pending: usize,
    /// Lines that could not be read.
    pub invalid_lines: u64,
    /// Positions are records of a database (OpenCode's rows), not bytes.
    pub positions_are_rows: bool,
    reason: String,
    decided_offset: Option<u64>,
    decided_at: Option<String>,
}

impl Turn {
    /// Records what the line ending at `end`, written at `at`, decided.
    pub fn decide(&mut self, state: State, candidate: bool, reason: String, end: u64, at: Option<String>) {
        self.state = Some(state);
        self.candidate = candidate;
        self.reason = reason;
        self.decided_offset = Some(end);
        self.decided_at = at;
    }

    /// True while a turn runs with nothing that may end it yet.
    pub fn runs(&self) -> bool {
        self.state == Some(State::Working) && !self.candidate
    }

    /// The verdict after the lines read so far.
    pub fn verdict(&self) -> TranscriptVerdict {
        // Where it was decided is the verdict's `offset` (for scripts and
        // `explain`), not words for people.
        let (state, reason) = match self.state {
            Some(state) => (state, self.reason.clone()),
            None => (State::Unknown, "no turn yet".to_owned()),
        };
        TranscriptVerdict {
            state,
            reason,
            session_id: self.session_id.clone(),
            since: self.decided_at.clone(),
            answer: self.answer.clone(),
            candidate: self.candidate.then_some(State::Done),
            line: None,
            offset: self.decided_offset,
            pending_tools: if state == State::Working { self.pending } else { 0 },
            background_agents: 0,
            invalid_lines: self.invalid_lines,
        }
    }
}
