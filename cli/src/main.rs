//! The `turnstile` command: the native side of the plugin and a tool for scripts.
//!
//! Every subcommand prints one JSON object (or, for `explain`, text for
//! people) and exits 0 when it produced a verdict; unreadable input gives a
//! one-line error on stderr and exit code 2.

mod commands;

fn main() {
    std::process::exit(commands::run());
}
