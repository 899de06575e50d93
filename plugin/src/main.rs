//! turnstile.wasm — placeholder glue; the status bar comes with the plugin issue.
use zellij_tile::prelude::*;

#[derive(Default)]
struct State;

impl ZellijPlugin for State {}

#[cfg(not(test))]
register_plugin!(State);
