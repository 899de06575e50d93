//! Claude Code's own session status file, `~/.claude/sessions/<pid>.json`.
//!
//! Recent releases keep one file per running process with the session id and
//! a `status`: `busy`, `shell` (a shell command runs), `waiting` (with
//! `waitingFor`, e.g. "permission prompt") or `idle`. It is the only source
//! that shows a permission wait and an Escape during an API retry; it says
//! nothing about how a turn ended, so `idle` maps to [`State::Idle`].

use crate::verdict::{Millis, Source, State, Verdict};
use serde::Deserialize;

/// The fields turnstile reads from a session status file.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStatus {
    /// The Claude Code process id.
    #[serde(default)]
    pub pid: Option<u32>,
    /// The session id (the transcript's file stem).
    #[serde(default)]
    pub session_id: Option<String>,
    /// The project folder.
    #[serde(default)]
    pub cwd: Option<String>,
    /// `busy` / `shell` / `waiting` / `idle` (absent right after start).
    #[serde(default)]
    pub status: Option<String>,
    /// What a `waiting` status waits for.
    #[serde(default)]
    pub waiting_for: Option<String>,
    /// When the status last changed (ms since the epoch).
    #[serde(default)]
    pub status_updated_at: Option<Millis>,
}

impl SessionStatus {
    /// Parses the file's bytes; a clear message for anything else.
    pub fn parse(bytes: &[u8]) -> Result<SessionStatus, crate::Error> {
        serde_json::from_slice(bytes).map_err(crate::Error::unreadable("session status"))
    }

    /// The state the status names (`None` when it names none).
    pub fn state(&self) -> Option<State> {
        match self.status.as_deref()? {
            "busy" | "shell" => Some(State::Working),
            "waiting" => Some(State::Waiting),
            "idle" => Some(State::Idle),
            _ => None,
        }
    }

    /// A verdict observed at `at`, or `None` when the status names no state.
    pub fn to_verdict(&self, at: Millis) -> Option<Verdict> {
        let state = self.state()?;
        let status = self.status.as_deref().unwrap_or("");
        let reason = match &self.waiting_for {
            Some(w) if state == State::Waiting => format!("session status {status} ({w})"),
            _ => format!("session status {status}"),
        };
        let mut verdict = Verdict::new(state, Source::Session, reason, at);
        verdict.key = self.status_updated_at.map(|t| t.to_string());
        Some(verdict)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_status_file_fields() {
        let raw = br#"{"pid":29868,"sessionId":"73ab","cwd":"/p","status":"waiting","waitingFor":"permission prompt","statusUpdatedAt":17,"peerFeatures":["x"]}"#;
        let s = SessionStatus::parse(raw).unwrap();
        assert_eq!(s.state(), Some(State::Waiting));
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
            let s = SessionStatus::parse(format!(r#"{{"status":"{status}"}}"#).as_bytes()).unwrap();
            assert_eq!(s.state(), state);
        }
        assert_eq!(SessionStatus::parse(b"{}").unwrap().state(), None);
    }

    #[test]
    fn garbage_is_a_clear_error() {
        assert!(SessionStatus::parse(b"\xff{")
            .unwrap_err()
            .to_string()
            .contains("unreadable"));
    }
}
