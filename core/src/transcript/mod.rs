//! Agent logs, shared by every kind: what a log says about the current turn
//! ([`TranscriptVerdict`]) and how appended bytes become complete lines
//! ([`lines`]). Each kind's classifier lives in `agent/<kind>/` (Claude
//! Code's transcript, Codex's rollout, Gemini CLI's chat log).

pub mod lines;

use crate::verdict::{Millis, Source, State, Verdict};
use serde::Serialize;

/// What the transcript says about the current turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
