//! Claude Code's JSONL transcripts: the authoritative source of a turn's state.
//!
//! - [`line`](mod@line) turns one line into the event it means for the turn;
//! - [`classifier`] folds events incrementally (feed appended bytes);
//! - [`tail`] classifies a file cold, reading backwards from its end.
//!
//! Rules (ARCHITECTURE.md, invariants; docs/design-notes.md): the last meaningful line decides; a response
//! with a tool call, a tool result or a prompt means working; a final
//! response with no pending tool call and no unreported background agent is
//! done; an interrupt marker is interrupted; a synthetic API error is failed.
//! A final-looking answer without a stop reason (old releases) is only a
//! *candidate* done until a later end marker or another source confirms it.

pub mod classifier;
pub mod line;
pub mod tail;

pub use classifier::Classifier;
pub use tail::{classify_tail, TailOptions, TailVerdict};
