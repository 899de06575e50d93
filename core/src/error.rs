//! The library's error type: outside input that cannot be read. Parsing
//! of transcripts never fails (bad lines become reasons in verdicts); these
//! are the whole messages that do (a hook payload, a status file, a host
//! report, a push, a flow rule).

use std::fmt;

/// Why outside input was refused.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A JSON message that does not parse as what it should be.
    Unreadable {
        /// What it was meant to be ("hook payload", "session status", …).
        what: &'static str,
        /// Why serde refused it.
        source: serde_json::Error,
    },
    /// A flow rule that does not look like `from -> to`.
    BadFlow(String),
}

impl Error {
    /// A parse failure of `what`.
    pub fn unreadable(what: &'static str) -> impl FnOnce(serde_json::Error) -> Error {
        move |source| Error::Unreadable { what, source }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Unreadable { what, source } => write!(f, "unreadable {what}: {source}"),
            Error::BadFlow(part) => write!(f, "flow `{part}` must look like `from -> to`"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Unreadable { source, .. } => Some(source),
            Error::BadFlow(_) => None,
        }
    }
}
