//! # turnstile-host
//!
//! The host library: everything the `turnstile` commands do with files,
//! processes and zellij, over the pure decisions of `turnstile-core`, kept
//! apart from the commands themselves (the `turnstile` binary), which only
//! parse arguments and print.
//!
//! - [`files`]: bounded, non-blocking reads and atomic writes;
//! - [`state`]: the private per-user, per-session state folder;
//! - [`home`]: the simulated agents' homes (a real agent's home is its kind's, in `agent/<kind>/home.rs`);
//! - [`discovery`]: agent processes under a zellij session, from /proc;
//! - [`binding`]: which log belongs to which pane;
//! - [`report`]: a pane's verdicts, read from its log and session file;
//! - [`spool`]: hook reports handed to the watcher; [`mailbox`]: the
//!   watcher's reports, pulled by the bar's leader; [`push`]: a hook's
//!   report piped to the bar when no watcher runs;
//! - [`rules`]: the user's rules file, loaded into the agent model;
//! - [`settings`]: safe edits of an agent's settings file;
//! - [`hooks`]: what a hook event reports, and installing the hooks;
//! - [`watch`]: the session's watcher, which posts changes to the mailbox;
//! - [`clock`]: the wall clock in milliseconds;
//! - [`embedded`]: the plugin built into the binary;
//! - [`zellij`]: the user's zellij (paths, release, built-in layouts);
//! - [`setup`]: plain `zellij` with the bar, and its undo;
//! - [`doctor`]: what is missing when the bar is not what it should be;
//! - [`demo`]: the demo's own zellij folder, from the binary alone;
//! - [`simulate`]: the simulated agents (`turnstile demo-agent`), one file per kind;
//! - [`store`]: logs kept in a database rather than in files (OpenCode's).

pub mod binding;
pub mod clock;
pub mod demo;
pub mod discovery;
pub mod doctor;
pub mod embedded;
pub mod error;
pub mod files;
pub mod home;
pub mod hooks;
pub mod link;
pub mod mailbox;
pub mod outbox;
pub mod program;
pub mod push;
pub mod relay;
pub mod report;
pub mod reported;
pub mod rules;
pub mod settings;
pub mod setup;
pub mod simulate;
pub mod spool;
pub mod state;
pub mod store;
pub mod watch;
pub mod zellij;
