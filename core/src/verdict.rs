//! Verdicts: what one source says about one agent pane.
//!
//! A [`Verdict`] is a [`State`] plus the [`Source`] that produced it, a
//! human-readable reason and the time it was observed. Every classifier in
//! this crate answers with these types, and the [`crate::arbiter`] fuses them.

use serde::{Deserialize, Serialize};
use std::fmt;

/// What an agent is doing, as far as one source (or the fused view) can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum State {
    /// Nothing to say yet: no turn seen, or the evidence is not decisive.
    #[default]
    Unknown,
    /// A turn is running (model streaming, tool running, retrying, sub-agents busy).
    Working,
    /// The agent needs the user: a permission prompt or a dialog.
    Waiting,
    /// The turn ended normally; the answer is final.
    Done,
    /// The turn ended with an error (API error, prompt too long, retries exhausted).
    Failed,
    /// The user interrupted the turn (Escape).
    Interrupted,
    /// The agent sits at its prompt and no turn runs, but this source cannot
    /// tell how the last turn ended (Claude Code's session status `idle`).
    Idle,
}

impl State {
    /// The state a word names: turnstile's names, and the Program Status
    /// Protocol's (`idle`, `working`, `done`, `blocked`, `error`), and a few
    /// synonyms (`busy`, `finished`, `cancelled`). `None`: no state (`clear`
    /// is not one). What `turnstile report` and a rules file accept.
    pub fn from_word(word: &str) -> Option<State> {
        Some(match word.to_ascii_lowercase().as_str() {
            "working" | "busy" | "running" => State::Working,
            "done" | "finished" => State::Done,
            "failed" | "error" => State::Failed,
            "interrupted" | "cancelled" | "canceled" => State::Interrupted,
            "waiting" | "blocked" => State::Waiting,
            "idle" => State::Idle,
            _ => return None,
        })
    }

    /// All states, in display order.
    pub const ALL: [State; 7] = [
        State::Unknown,
        State::Working,
        State::Waiting,
        State::Done,
        State::Failed,
        State::Interrupted,
        State::Idle,
    ];

    /// The lowercase name used in JSON and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Unknown => "unknown",
            State::Working => "working",
            State::Waiting => "waiting",
            State::Done => "done",
            State::Failed => "failed",
            State::Interrupted => "interrupted",
            State::Idle => "idle",
        }
    }

    /// Parses the lowercase name; `None` for anything else.
    pub fn parse(name: &str) -> Option<State> {
        State::ALL.into_iter().find(|s| s.as_str() == name)
    }

    /// True for the states that end a turn (done, failed, interrupted).
    pub fn is_turn_end(self) -> bool {
        matches!(self, State::Done | State::Failed | State::Interrupted)
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a verdict comes from. Transcript and hook are authoritative; session
/// is Claude Code's own status file; screen is a fast guess.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The agent's own log of its session: a transcript, a rollout, a chat
    /// log, a database's rows (named `transcript` in JSON).
    Transcript,
    /// A hook event the agent ran `turnstile hook` for (`Stop`,
    /// `AfterAgent`, `agentStop`, `session.idle`, …).
    Hook,
    /// The agent's session status file, for kinds that keep one (busy /
    /// idle / waiting: Claude Code's `sessions/<pid>.json`, Qwen Code's).
    Session,
    /// The pane's visible screen and title.
    Screen,
}

impl Source {
    /// The lowercase name used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Transcript => "transcript",
            Source::Hook => "hook",
            Source::Session => "session",
            Source::Screen => "screen",
        }
    }

    /// Parses the lowercase name; `None` for anything else.
    pub fn parse(name: &str) -> Option<Source> {
        [Source::Transcript, Source::Hook, Source::Session, Source::Screen]
            .into_iter()
            .find(|s| s.as_str() == name)
    }

    /// Transcript and hook verdicts are authoritative: they may confirm a
    /// done and correct a screen guess.
    pub fn is_authoritative(self) -> bool {
        matches!(self, Source::Transcript | Source::Hook)
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Milliseconds since the Unix epoch. Time is always passed in, never read here.
pub type Millis = u64;

/// One source's verdict about one pane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// What the source says.
    pub state: State,
    /// Who says it.
    pub source: Source,
    /// Why, for people (`explain`, tooltips, logs).
    pub reason: String,
    /// When it was observed (ms since the epoch).
    pub at: Millis,
    /// A done the source suspects but cannot confirm alone (old transcripts
    /// whose final answer looks like a preamble). Only ever `Some(Done)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate: Option<State>,
    /// Identity of the evidence (e.g. the deciding transcript offset): the
    /// same state with a new key is a new observation (a second done).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// A hook's: how far its agent's log was decided when it ran (the
    /// offset of the log verdict it read), so a done it says can be told
    /// to belong to the turn the log shows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_seen: Option<u64>,
}

impl Verdict {
    /// A verdict with no candidate.
    pub fn new(state: State, source: Source, reason: impl Into<String>, at: Millis) -> Self {
        Verdict {
            state,
            source,
            reason: reason.into(),
            at,
            candidate: None,
            key: None,
            log_seen: None,
        }
    }

    /// True when this is a done that routing may act on (transcript or hook).
    pub fn is_confirmed_done(&self) -> bool {
        self.state == State::Done && self.source.is_authoritative()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_names_round_trip() {
        for s in State::ALL {
            assert_eq!(State::parse(s.as_str()), Some(s));
        }
        assert_eq!(State::parse("DONE"), None);
    }

    #[test]
    fn only_transcript_and_hook_confirm_done() {
        let mut v = Verdict::new(State::Done, Source::Screen, "banner", 0);
        assert!(!v.is_confirmed_done());
        v.source = Source::Hook;
        assert!(v.is_confirmed_done());
        v.state = State::Working;
        assert!(!v.is_confirmed_done());
    }

    #[test]
    fn serializes_lowercase() {
        let v = Verdict::new(State::Interrupted, Source::Transcript, "x", 5);
        let j = serde_json::to_string(&v).unwrap();
        assert!(j.contains("\"interrupted\"") && j.contains("\"transcript\""));
        assert!(!j.contains("candidate"));
    }
}
