//! The host library's error: what failed, in a user's words, and the error
//! that caused it, kept as its `source` so that a caller (the `turnstile`
//! binary, through `anyhow`) shows the whole chain: `cannot read
//! ~/.claude/settings.json: Permission denied (os error 13)`.

use std::error::Error as StdError;
use std::fmt;

/// The host's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What failed, and why (the cause, when another error is the reason).
#[derive(Debug)]
pub struct Error {
    what: String,
    cause: Option<Box<dyn StdError + Send + Sync + 'static>>,
}

impl Error {
    /// An error that says `what`, with no cause behind it.
    pub fn msg(what: impl fmt::Display) -> Error {
        Error {
            what: what.to_string(),
            cause: None,
        }
    }

    /// `what` failed because of `cause`.
    pub fn caused(what: impl fmt::Display, cause: impl Into<Box<dyn StdError + Send + Sync + 'static>>) -> Error {
        Error {
            what: what.to_string(),
            cause: Some(cause.into()),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.what)?;
        // `{:#}` (as anyhow prints a chain) says the causes too.
        if f.alternate() {
            let mut cause = self.source();
            while let Some(error) = cause {
                write!(f, ": {error}")?;
                cause = error.source();
            }
        }
        Ok(())
    }
}

impl StdError for Error {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.cause.as_deref().map(|e| e as &(dyn StdError + 'static))
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error::msg(e)
    }
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Error {
        Error::msg(e)
    }
}

impl From<turnstile_core::Error> for Error {
    fn from(e: turnstile_core::Error) -> Error {
        Error::msg(e)
    }
}

/// Says what was being done when an error happened, or a `None` came.
pub trait Context<T> {
    /// Wraps the failure in `what`.
    fn context(self, what: impl fmt::Display) -> Result<T>;
    /// Wraps the failure in what `what` says (built only on failure).
    fn with_context<D: fmt::Display>(self, what: impl FnOnce() -> D) -> Result<T>;
}

impl<T, E: StdError + Send + Sync + 'static> Context<T> for std::result::Result<T, E> {
    fn context(self, what: impl fmt::Display) -> Result<T> {
        self.map_err(|e| Error::caused(what, e))
    }

    fn with_context<D: fmt::Display>(self, what: impl FnOnce() -> D) -> Result<T> {
        self.map_err(|e| Error::caused(what(), e))
    }
}

impl<T> Context<T> for Option<T> {
    fn context(self, what: impl fmt::Display) -> Result<T> {
        self.ok_or_else(|| Error::msg(what))
    }

    fn with_context<D: fmt::Display>(self, what: impl FnOnce() -> D) -> Result<T> {
        self.ok_or_else(|| Error::msg(what()))
    }
}

/// Returns an [`Error`] that says the formatted text.
macro_rules! bail {
    ($($text:tt)*) => {
        return Err($crate::error::Error::msg(format!($($text)*)))
    };
}
pub(crate) use bail;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_is_the_source_and_the_alternate_form_says_it() {
        let io = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied");
        let inner: Result<()> = Err(io).context("cannot read a.json");
        let outer = inner.context("cannot set up").unwrap_err();
        assert_eq!(outer.to_string(), "cannot set up");
        assert_eq!(format!("{outer:#}"), "cannot set up: cannot read a.json: denied");
        assert_eq!(outer.source().unwrap().to_string(), "cannot read a.json");
        let none: Result<u8> = None.context("no home");
        assert_eq!(none.unwrap_err().to_string(), "no home");
    }
}
