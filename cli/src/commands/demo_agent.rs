//! `turnstile demo-agent`: a simulated agent of any kind, for the demo and
//! the tests (the engine is `turnstile_host::simulate`, each kind's turns
//! are its own, in `agent/<kind>/demo.rs`).

use anyhow::Result;
use turnstile_core::agent::AgentKind;
use turnstile_host::simulate::{self, SimOptions};

/// Runs the simulated agent of `kind` until killed.
pub fn run(kind: AgentKind, options: &SimOptions) -> Result<()> {
    Ok(simulate::run(options, simulate::of(kind))?)
}
