//! A hook's report piped to the bar when no watcher runs: a detached
//! `zellij pipe … verdict` ([`push_to_plugin`]), the report on its stdin.
//! (With a watcher, hooks hand their reports to it and the bar's leader
//! pulls them from its mailbox: see [`super::mailbox`].) [`zellij_binary`]
//! finds the zellij to run.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use turnstile_core::protocol::{PaneReport, PIPE_VERDICT};

/// An executable named `name` on PATH.
fn find_on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// The zellij binary: `$TURNSTILE_ZELLIJ`, the parent process when it is
/// zellij (the watcher), `zellij` on PATH, else a running zellij's executable.
pub fn zellij_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("TURNSTILE_ZELLIJ") {
        return PathBuf::from(path);
    }
    let is_zellij = |exe: &Path| {
        exe.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("zellij"))
    };
    let parent = fs::read_link(format!("/proc/{}/exe", std::os::unix::process::parent_id())).ok();
    if let Some(exe) = parent.filter(|e| is_zellij(e)) {
        return exe;
    }
    if let Some(path) = find_on_path("zellij") {
        return path;
    }
    fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| fs::read_link(e.path().join("exe")).ok())
        .find(|exe| is_zellij(exe))
        .unwrap_or_else(|| PathBuf::from("zellij"))
}

/// Starts `zellij pipe` and does not wait for it.
pub fn push_to_plugin(session: &str, report: &PaneReport) {
    push_with(&zellij_binary(), session, report);
}

/// How long a `zellij pipe` may live: against a session that is going
/// away it can hang (and spin), so it runs under coreutils' `timeout`.
const PIPE_TIMEOUT_SECS: &str = "5";

/// Starts `<zellij> pipe` and does not wait for it to finish. The report
/// (which may hold an answer) goes through the child's stdin, one line:
/// never on its command line, where every local user could read it and a
/// large one fails with E2BIG.
pub fn push_with(zellij: &Path, session: &str, report: &PaneReport) {
    let Ok(payload) = serde_json::to_string(report) else {
        return;
    };
    let mut command = match find_on_path("timeout") {
        Some(timeout) => {
            let mut c = Command::new(timeout);
            c.args(["-k", "1", PIPE_TIMEOUT_SECS]).arg(zellij);
            c
        }
        None => Command::new(zellij),
    };
    let child = command
        .args(["--session", session, "pipe", "--name", PIPE_VERDICT])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    if let Some(mut stdin) = child.ok().and_then(|mut c| c.stdin.take()) {
        let _ = stdin.write_all(format!("{payload}\n").as_bytes());
    }
}
