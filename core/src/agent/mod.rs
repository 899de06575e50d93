//! The agent model: one place per agent kind. A kind knows how to recognise
//! its process, read its screen and title, and classify its transcript;
//! everything downstream (verdicts, the arbiter, routing, the bar) is the
//! same for every kind. Each kind is one folder ([`claude`], [`codex`],
//! [`gemini`], [`qwen`], [`copilot`], [`opencode`], [`program`]) implementing
//! [`Agent`]; [`AgentKind::agent`] lists them. A family of kinds that share
//! their formats keeps them in a neutral module each kind fills in
//! ([`eventdb`]: OpenCode and its forks). A rules file adds kinds of
//! its own ([`user`]: `AgentKind::User`), through the same traits.

pub mod claude;
pub mod codex;
pub mod copilot;
pub mod eventdb;
pub mod gemini;
pub mod kilo;
pub mod model;
pub mod naming;
pub mod opencode;
pub mod program;
pub mod qwen;
pub mod registry;
#[cfg(test)]
pub mod replay;
pub mod status;
pub mod user;

pub use status::SessionStatus;

pub use model::*;
pub use registry::AgentKind;
