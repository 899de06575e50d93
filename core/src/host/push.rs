//! The watcher's one long-lived channel to the bar.
//!
//! A single `zellij pipe --name turnstile-push` child reads lines from its
//! stdin; each line is one message to the plugin holding a JSON array of
//! [`PaneReport`]s. One client connection serves the whole session, so a
//! change costs one pipe message instead of a process and a client connect
//! (every connect makes zellij send pane and tab updates to every plugin of
//! every tab).
//!
//! Reports are coalesced: the caller [`Channel::send`]s, a writer thread
//! takes everything pending (the newest report per pane) and writes it as one
//! line. While zellij is still busy with the previous line (the child waits
//! for the plugin to take it), new reports pile up and leave together.
//!
//! A child that exits is started again; when it cannot be kept alive the
//! channel reports itself dead and the watcher exits, so the bar falls back
//! to polling and restarts it.
//!
//! Without a watcher, a hook pushes its one report with a detached
//! `zellij pipe … verdict` ([`push_to_plugin`]). [`zellij_binary`] finds
//! the zellij to run.

use crate::protocol::{PaneReport, PIPE_PUSH, PIPE_VERDICT};
use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Restarts of the child allowed within [`RESTART_WINDOW`] before the
/// channel gives up.
const MAX_RESTARTS: u32 = 5;
const RESTART_WINDOW: Duration = Duration::from_secs(30);

/// Reports waiting to be written: the watcher's newest per pane, and every
/// hook report in order (a hook's verdict must not replace the watcher's).
#[derive(Default)]
struct Pending {
    reports: BTreeMap<u32, PaneReport>,
    hooks: Vec<PaneReport>,
    closing: bool,
    dead: Option<String>,
}

type Shared = Arc<(Mutex<Pending>, Condvar)>;

/// The push channel of one zellij session.
pub struct Channel {
    shared: Shared,
}

impl Channel {
    /// Opens the channel to `session` through the `zellij` binary.
    pub fn open(zellij: &Path, session: &str) -> Channel {
        let shared: Shared = Arc::default();
        let pipe = PipeChild {
            zellij: zellij.to_path_buf(),
            session: session.to_owned(),
            child: None,
        };
        // Detached: the writer is never waited for (see `Drop`).
        let writer_shared = shared.clone();
        std::thread::spawn(move || write_loop(&writer_shared, pipe));
        Channel { shared }
    }

    /// Queues a report; an older queued report of the same pane is replaced.
    pub fn send(&self, report: PaneReport) {
        let (lock, wake) = &*self.shared;
        if let Ok(mut pending) = lock.lock() {
            pending.reports.insert(report.pane, report);
            wake.notify_one();
        }
    }

    /// Queues a hook's report; it is never coalesced away.
    pub fn send_hook(&self, report: PaneReport) {
        let (lock, wake) = &*self.shared;
        if let Ok(mut pending) = lock.lock() {
            pending.hooks.push(report);
            wake.notify_one();
        }
    }

    /// Why the channel gave up, once it has.
    pub fn dead(&self) -> Option<String> {
        self.shared.0.lock().ok().and_then(|p| p.dead.clone())
    }
}

impl Drop for Channel {
    /// Tells the writer to stop, without waiting for it: a write into a
    /// `zellij pipe` whose session is gone may never return, and the watcher
    /// must still exit (its child is killed with it).
    fn drop(&mut self) {
        let (lock, wake) = &*self.shared;
        if let Ok(mut pending) = lock.lock() {
            pending.closing = true;
            wake.notify_one();
        }
    }
}

/// Takes batches and writes them until the channel closes or dies.
fn write_loop(shared: &Shared, mut pipe: PipeChild) {
    let mut restarts: Vec<Instant> = Vec::new();
    while let Some(batch) = next_batch(shared) {
        let Ok(mut line) = serde_json::to_string(&batch) else {
            continue;
        };
        line.push('\n');
        while let Err(why) = pipe.write_line(&line) {
            let now = Instant::now();
            restarts.retain(|t| now.duration_since(*t) < RESTART_WINDOW);
            restarts.push(now);
            if restarts.len() as u32 > MAX_RESTARTS {
                if let Ok(mut pending) = shared.0.lock() {
                    pending.dead = Some(format!("cannot keep `zellij pipe` running: {why}"));
                }
                return;
            }
            std::thread::sleep(Duration::from_millis(50 << restarts.len().min(4)));
        }
    }
}

/// Blocks until reports are pending (then takes them all) or the channel closes.
fn next_batch(shared: &Shared) -> Option<Vec<PaneReport>> {
    let (lock, wake) = &**shared;
    let mut pending = lock.lock().ok()?;
    loop {
        if pending.closing {
            return None;
        }
        if !pending.reports.is_empty() || !pending.hooks.is_empty() {
            let mut batch: Vec<PaneReport> = std::mem::take(&mut pending.reports).into_values().collect();
            batch.append(&mut pending.hooks);
            return Some(batch);
        }
        pending = wake.wait(pending).ok()?;
    }
}

/// The `zellij pipe` child, started on demand.
struct PipeChild {
    zellij: PathBuf,
    session: String,
    child: Option<(Child, ChildStdin)>,
}

impl PipeChild {
    /// Writes one line, starting the child first when none runs. A failed
    /// write leaves no child behind: the next call starts a fresh one.
    fn write_line(&mut self, line: &str) -> Result<(), String> {
        if self
            .child
            .as_mut()
            .is_some_and(|(c, _)| !matches!(c.try_wait(), Ok(None)))
        {
            self.stop();
        }
        if self.child.is_none() {
            self.child = Some(self.start()?);
        }
        let Some((_, stdin)) = self.child.as_mut() else {
            return Err("no child".into());
        };
        let written = stdin.write_all(line.as_bytes()).and_then(|()| stdin.flush());
        if let Err(e) = written {
            self.stop();
            return Err(format!("write failed: {e}"));
        }
        Ok(())
    }

    fn start(&self) -> Result<(Child, ChildStdin), String> {
        let mut command = Command::new(&self.zellij);
        command
            .args(["--session", &self.session, "pipe", "--name", PIPE_PUSH])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        die_with_parent(&mut command);
        let mut child = command
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", self.zellij.display()))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        Ok((child, stdin))
    }

    fn stop(&mut self) {
        if let Some((mut child, stdin)) = self.child.take() {
            drop(stdin);
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for PipeChild {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The child is killed when the watcher dies, however it dies: a `zellij
/// pipe` whose server went away spins instead of exiting.
fn die_with_parent(command: &mut Command) {
    // SAFETY: prctl is async-signal-safe and touches only the calling (child) process.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
}
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
