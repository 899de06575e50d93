//! `turnstile relay`: the watcher of a machine the zellij session does not
//! run on. It follows the agents there whose environment names the session
//! (`ZELLIJ_SESSION_NAME` and `ZELLIJ_PANE_ID`, sent by the local `ssh`),
//! their logs, status files and hooks, exactly as `turnstile watch` does on
//! the session's own machine, and writes each report to its stdout, one
//! [`turnstile_core::relay::RelayMessage`] a line. It exits when its stdout
//! closes (the `ssh` that read it is gone: a beat each second finds out) or
//! its parent, sshd's session, ends.

use super::outbox::RelayOut;
use super::rules::Reloader;
use super::watch::{self, Parent};
use crate::error::Result;

/// Serves session `session` (default: `$ZELLIJ_SESSION_NAME`) on stdout.
pub fn run(session: Option<String>, rules: Reloader) -> Result<i32> {
    let name = watch::session_name(session)?;
    let open = |_: &str| -> Result<Box<dyn super::outbox::Outbox>> {
        Ok(Box::new(RelayOut::new(std::io::stdout(), &host_name())))
    };
    watch::serve(name, rules, open, Parent::SshSession)
}

/// This machine's name, for people (`uname -n`).
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_owned())
        .unwrap_or_default()
}
