//! # turnstile-core
//!
//! Knows, for a pane running a coding agent (Claude Code first), whether the
//! agent is working, done, failed, interrupted or waiting — from the pane's
//! screen, the session transcript, hooks and Claude Code's session status —
//! and fuses those sources into one verdict per pane.
//!
//! Everything here is pure: bytes and times in, verdicts out. No clock is
//! read and no file is touched except through a reader the caller passes in,
//! so the same code runs in the native CLI and in the wasm plugin.
//!
//! ```
//! use turnstile_core::agent::claude::screen;
//! use turnstile_core::agent::claude::transcript::Classifier;
//! use turnstile_core::State;
//!
//! let rows = ["● Done.", "✻ Brewed for 4s · done 7:23 PM"];
//! assert_eq!(screen::classify(&rows).state, State::Done);
//!
//! let mut c = Classifier::new();
//! c.feed(br#"{"type":"user","message":{"content":"hi"}}"#);
//! c.feed(b"\n");
//! assert_eq!(c.verdict().state, State::Working);
//! ```

#![deny(missing_docs)]

pub mod agent;
pub mod ansi;
pub mod arbiter;
pub mod attention;
pub mod bar;
pub mod config;
pub mod controller;
pub mod error;
pub mod flow;
pub mod hook;
pub mod identity;
pub mod inbox;
pub mod mailbox;
pub mod order;
pub mod panes;
pub mod protocol;
pub mod question;
pub mod relay;
pub mod screen;
pub mod ssh;
pub mod text;
pub mod transcript;
pub mod verdict;

pub use error::Error;
pub use verdict::{Millis, Source, State, Verdict};
