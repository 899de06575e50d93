//! turnstile's own state on the host: `$XDG_STATE_HOME/turnstile` (default
//! `~/.local/state/turnstile`), one folder per zellij session holding the
//! hook bindings, the watcher's lock and the spooled hook reports.

use std::path::PathBuf;

/// `$XDG_STATE_HOME/turnstile` (default `~/.local/state/turnstile`).
pub fn state_dir() -> PathBuf {
    match std::env::var_os("XDG_STATE_HOME") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir).join("turnstile"),
        _ => PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".local/state/turnstile"),
    }
}

/// The folder of one zellij session (its name made safe for a path).
pub fn session_folder(session: &str) -> PathBuf {
    let safe: String = session
        .chars()
        .map(|c| match c.is_ascii_alphanumeric() || c == '-' || c == '_' {
            true => c,
            false => '_',
        })
        .collect();
    state_dir().join("bindings").join(safe)
}
