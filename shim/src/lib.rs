//! # turnstile-shim
//!
//! The edge between turnstile's plugin and zellij 0.45: what zellij-tile's
//! shim does, for the few commands and events the bar uses, in a fraction of
//! its size and without a single unwrap (a panic removes the bar).
//!
//! - [`exports`]: the functions zellij calls (`load`, `update`, `pipe`,
//!   `render`, `plugin_version`), written by [`register!`] for a
//!   [`exports::Plugin`];
//! - [`command`]: each plugin command, encoded as zellij-tile encodes it,
//!   written to stdout and run by zellij's one host import,
//!   [`run_plugin_command`];
//! - [`decode`]: the events, pane updates and render reports zellij hands
//!   the plugin, read straight from its encoding;
//! - [`stdin`]: the line zellij writes to the plugin's stdin, read as it
//!   streams.
//!
//! Each edge is tested against zellij-tile itself on the host: the
//! encodings byte for byte, stdin against zellij-tile's own reader, and
//! the built plugin's exports and imports against what zellij 0.45.1 looks
//! up (`turnstile-host`'s embedded-plugin test).

pub mod command;
pub mod decode;
pub mod exports;
pub mod stdin;

#[cfg(target_arch = "wasm32")]
#[link(wasm_import_module = "zellij")]
extern "C" {
    /// zellij's host call for a plugin command written to stdout (the one
    /// zellij-tile's calls make; it answers on stdin).
    fn host_run_plugin_command();
}

/// Runs the plugin command written to stdout (nothing off wasm).
pub fn run_plugin_command() {
    // SAFETY: a call into zellij with no arguments, as zellij-tile makes it.
    #[cfg(target_arch = "wasm32")]
    unsafe {
        host_run_plugin_command()
    };
}
