//! What an agent's session status file says, in neutral terms. A kind that
//! keeps such a file reads it into a [`SessionStatus`] through
//! [`super::AgentLog::read_status`]; everything downstream (binding, the
//! `session` source's verdict) reads only this. [`parse`] reads the one
//! shape known: Claude Code's `~/.claude/sessions/<pid>.json`, which Qwen
//! Code's `~/.qwen/sessions/<pid>.json` shares.
//!
//! Claude Code keeps one file per running process with the session id and
//! a `status`: `busy`, `shell` (a shell command runs), `waiting` (with
//! `waitingFor`, e.g. "permission prompt") or `idle`. It is the only source
//! that shows a permission wait and an Escape during an API retry; it says
//! nothing about how a turn ended, so `idle` maps to [`State::Idle`].

use crate::verdict::{Millis, Source, State, Verdict};
use serde::Deserialize;

/// The fields turnstile reads from a session status file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SessionStatus {
    /// The agent's process id.
    pub pid: Option<u32>,
    /// The session id (its log's file stem).
    pub session_id: Option<String>,
    /// The project folder.
    pub cwd: Option<String>,
    /// The state the file names (`None`: none, or a word not known).
    pub state: Option<State>,
    /// The file's own word for it (`busy`, `shell`, `waiting`, `idle`).
    pub word: Option<String>,
    /// What a waiting agent waits for ("permission prompt").
    pub waiting_for: Option<String>,
    /// When the status last changed (ms since the epoch).
    pub updated_at: Option<Millis>,
}

impl SessionStatus {
    /// A verdict observed at `at`, or `None` when the status names no state.
    pub fn to_verdict(&self, at: Millis) -> Option<Verdict> {
        let state = self.state?;
        let word = self.word.as_deref().unwrap_or("");
        let reason = match &self.waiting_for {
            Some(w) if state == State::Waiting => format!("session status {word} ({w})"),
            _ => format!("session status {word}"),
        };
        let mut verdict = Verdict::new(state, Source::Session, reason, at);
        verdict.key = self.updated_at.map(|t| t.to_string());
        Some(verdict)
    }
}

/// The file as Claude Code (and Qwen Code) write it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StatusFile {
    #[serde(default)]
    pid: Option<u32>,
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    cwd: Option<String>,
    /// `busy` / `shell` / `waiting` / `idle` (absent right after start).
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    waiting_for: Option<String>,
    #[serde(default)]
    status_updated_at: Option<Millis>,
}

/// Parses the file's bytes; a clear message for anything else.
pub fn parse(bytes: &[u8]) -> Result<SessionStatus, crate::Error> {
    let file: StatusFile = serde_json::from_slice(bytes).map_err(crate::Error::unreadable("session status"))?;
    Ok(SessionStatus {
        pid: file.pid,
        session_id: file.session_id,
        cwd: file.cwd,
        state: file.status.as_deref().and_then(state_of),
        word: file.status,
        waiting_for: file.waiting_for,
        updated_at: file.status_updated_at,
    })
}

/// The state a status word names (`None` for a word not known).
fn state_of(word: &str) -> Option<State> {
    match word {
        "busy" | "shell" => Some(State::Working),
        "waiting" => Some(State::Waiting),
        "idle" => Some(State::Idle),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_status_file_fields() {
        let raw = br#"{"pid":29868,"sessionId":"73ab","cwd":"/p","status":"waiting","waitingFor":"permission prompt","statusUpdatedAt":17,"peerFeatures":["x"]}"#;
        let s = parse(raw).unwrap();
        assert_eq!(s.state, Some(State::Waiting));
        let v = s.to_verdict(20).unwrap();
        assert_eq!((v.source, v.key.as_deref()), (Source::Session, Some("17")));
        assert!(v.reason.contains("permission prompt"));
    }

    #[test]
    fn statuses_map_to_states() {
        for (status, state) in [
            ("busy", Some(State::Working)),
            ("shell", Some(State::Working)),
            ("idle", Some(State::Idle)),
            ("new", None),
        ] {
            let s = parse(format!(r#"{{"status":"{status}"}}"#).as_bytes()).unwrap();
            assert_eq!(s.state, state);
        }
        assert_eq!(parse(b"{}").unwrap().state, None);
    }

    #[test]
    fn garbage_is_a_clear_error() {
        assert!(parse(b"\xff{").unwrap_err().to_string().contains("unreadable"));
    }
}
