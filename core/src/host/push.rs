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
//! line, and writes the next only once the child has read the last one
//! (nothing is left unread in its stdin). `zellij pipe` reads a line only
//! when zellij has handed the previous one to every plugin, so while zellij
//! is busy new reports pile up and leave together: under load there are
//! fewer, fuller lines, never a backlog.
//!
//! A child that exits is started again. So is one that leaves a line unread
//! for [`STALL`]: zellij holds a pipe's line until every plugin has taken
//! it, and a plugin that waits for its permissions to be answered takes
//! nothing; the line's reports are sent again through the new child. When
//! the child cannot be kept alive or going, the channel reports itself dead
//! and the watcher exits, so the bar falls back to polling and restarts it.
//!
//! Without a watcher, a hook pushes its one report with a detached
//! `zellij pipe … verdict` ([`push_to_plugin`]). [`zellij_binary`] finds
//! the zellij to run.

use crate::protocol::{PaneReport, PIPE_PUSH, PIPE_VERDICT};
use crate::verdict::Source;
use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Restarts of the child allowed within [`RESTART_WINDOW`] before the
/// channel gives up.
const MAX_RESTARTS: u32 = 5;
const RESTART_WINDOW: Duration = Duration::from_secs(30);
/// How long a line may wait unread before the child counts as stuck.
pub const STALL: Duration = Duration::from_secs(4);
/// How often the writer looks whether the child has read the last line.
const DRAIN_POLL: Duration = Duration::from_millis(5);

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
        Channel::open_with_stall(zellij, session, STALL)
    }

    /// [`Channel::open`], with a child counted stuck after `stall`.
    fn open_with_stall(zellij: &Path, session: &str, stall: Duration) -> Channel {
        let shared: Shared = Arc::default();
        let pipe = PipeChild {
            zellij: zellij.to_path_buf(),
            session: session.to_owned(),
            stall,
            child: None,
        };
        // Detached: the writer is never waited for (see `Drop`).
        let writer_shared = shared.clone();
        std::thread::spawn(move || write_loop(&writer_shared, pipe));
        Channel { shared }
    }

    /// Queues a report; an older queued report of the same pane is replaced
    /// (a whole binding it carried stays, when the new one is its brief).
    pub fn send(&self, mut report: PaneReport) {
        let (lock, wake) = &*self.shared;
        if let Ok(mut pending) = lock.lock() {
            let older = pending.reports.get(&report.pane).and_then(|r| r.agent.as_ref());
            if let (Some(older), Some(new)) = (older, report.agent.as_ref()) {
                if *new == older.brief() {
                    report.agent = Some(older.clone());
                }
            }
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

/// Writes batches until the channel closes or dies: each once the child
/// has read the last line, with everything pending by then.
fn write_loop(shared: &Shared, mut pipe: PipeChild) {
    let mut restarts: Vec<Instant> = Vec::new();
    // The batch of the last line written, until the child has read it.
    let mut unread: Vec<PaneReport> = Vec::new();
    while wait_for_reports(shared) {
        let written = pipe.wait_until_read(|| is_closing(shared)).and_then(|()| {
            unread = take_batch(shared);
            match serde_json::to_string(&unread) {
                Ok(line) => pipe.write_line(&format!("{line}\n")),
                Err(_) => Ok(()),
            }
        });
        let Err(why) = written else {
            continue;
        };
        requeue(shared, std::mem::take(&mut unread));
        let now = Instant::now();
        restarts.retain(|t| now.duration_since(*t) < RESTART_WINDOW);
        restarts.push(now);
        if restarts.len() as u32 > MAX_RESTARTS {
            if let Ok(mut pending) = shared.0.lock() {
                pending.dead = Some(format!("cannot keep `zellij pipe` going: {why}"));
            }
            return;
        }
        std::thread::sleep(Duration::from_millis(50 << restarts.len().min(4)));
    }
}

/// Blocks until reports are pending (true) or the channel closes (false).
fn wait_for_reports(shared: &Shared) -> bool {
    let (lock, wake) = &**shared;
    let Ok(mut pending) = lock.lock() else {
        return false;
    };
    loop {
        if pending.closing {
            return false;
        }
        if !pending.reports.is_empty() || !pending.hooks.is_empty() {
            return true;
        }
        match wake.wait(pending) {
            Ok(p) => pending = p,
            Err(_) => return false,
        }
    }
}

fn is_closing(shared: &Shared) -> bool {
    shared.0.lock().map_or(true, |p| p.closing)
}

/// Everything pending: the newest report per pane, then the hooks' in order.
fn take_batch(shared: &Shared) -> Vec<PaneReport> {
    let Ok(mut pending) = shared.0.lock() else {
        return Vec::new();
    };
    let mut batch: Vec<PaneReport> = std::mem::take(&mut pending.reports).into_values().collect();
    batch.append(&mut pending.hooks);
    batch
}

/// Puts back a batch whose line may never have been read: a pane's report
/// only where no newer one is pending, hook reports before the newer ones.
fn requeue(shared: &Shared, batch: Vec<PaneReport>) {
    let Ok(mut pending) = shared.0.lock() else {
        return;
    };
    let (hooks, reports): (Vec<PaneReport>, Vec<PaneReport>) = batch
        .into_iter()
        .partition(|r| r.verdicts.iter().any(|v| v.source == Source::Hook));
    for report in reports {
        pending.reports.entry(report.pane).or_insert(report);
    }
    let newer = std::mem::replace(&mut pending.hooks, hooks);
    pending.hooks.extend(newer);
}

/// The `zellij pipe` child, started on demand.
struct PipeChild {
    zellij: PathBuf,
    session: String,
    /// How long a line may stay unread.
    stall: Duration,
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

    /// Waits until the child has read all that was written to it. A child
    /// that exited, or left a line unread too long, is stopped (`Err`).
    fn wait_until_read(&mut self, closing: impl Fn() -> bool) -> Result<(), String> {
        let (started, stall) = (Instant::now(), self.stall);
        loop {
            let Some((child, stdin)) = self.child.as_mut() else {
                return Ok(());
            };
            if !matches!(child.try_wait(), Ok(None)) {
                self.stop();
                return Err("`zellij pipe` exited".into());
            }
            if unread_bytes(stdin) == 0 || closing() {
                return Ok(());
            }
            if started.elapsed() >= stall {
                self.stop();
                return Err(format!(
                    "zellij took no line for {}s (a copy of the bar may be waiting for its permissions)",
                    stall.as_secs()
                ));
            }
            std::thread::sleep(DRAIN_POLL);
        }
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

/// Bytes written to the child's stdin that it has not read yet.
fn unread_bytes(stdin: &ChildStdin) -> usize {
    let mut unread: libc::c_int = 0;
    // SAFETY: FIONREAD writes one c_int for a pipe descriptor we own.
    let ok = unsafe { libc::ioctl(stdin.as_raw_fd(), libc::FIONREAD, &mut unread) } == 0;
    if ok {
        unread.max(0) as usize
    } else {
        0
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::AgentBinding;
    use crate::verdict::{State, Verdict};

    fn report(pane: u32, state: State) -> PaneReport {
        PaneReport {
            pane,
            agent: Some(AgentBinding::default()),
            verdicts: vec![Verdict::new(state, Source::Transcript, "test", 1)],
            answer: None,
            since: None,
        }
    }

    /// Lines the fake zellij children read, in order, once `count` are there.
    fn lines(calls: &Path, count: usize) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let text = fs::read_to_string(calls).unwrap_or_default();
            let lines: Vec<String> = text.lines().map(str::to_owned).collect();
            if lines.len() >= count || Instant::now() > deadline {
                return lines;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A fake `zellij pipe`: the first child reads one line and then no
    /// more (zellij waits for a plugin that never takes it); later ones
    /// read everything.
    fn stuck_once(dir: &Path) -> PathBuf {
        let fake = dir.join("zellij");
        let script = format!(
            "#!/bin/sh\nif mkdir {d}/first 2>/dev/null; then head -n 1 >> {d}/calls; exec sleep 60; fi\nexec cat >> {d}/calls\n",
            d = dir.display()
        );
        fs::write(&fake, script).unwrap();
        Command::new("chmod").arg("+x").arg(&fake).status().unwrap();
        fake
    }

    #[test]
    fn a_child_that_stops_reading_is_replaced_and_nothing_is_lost() {
        let dir = tempfile::tempdir().unwrap();
        let channel = Channel::open_with_stall(&stuck_once(dir.path()), "s", Duration::from_millis(300));
        channel.send(report(1, State::Working));
        lines(&dir.path().join("calls"), 1);
        // Read by nobody: the first child is stuck after its first line.
        channel.send(report(2, State::Working));
        std::thread::sleep(Duration::from_millis(50));
        channel.send(report(1, State::Done));
        let read = lines(&dir.path().join("calls"), 2);
        assert_eq!(read.len(), 2, "{read:?}");
        let last: Vec<PaneReport> = serde_json::from_str(&read[1]).unwrap();
        let states: Vec<(u32, State)> = last.iter().map(|r| (r.pane, r.verdicts[0].state)).collect();
        assert_eq!(
            states,
            vec![(1, State::Done), (2, State::Working)],
            "the newest of each pane, once"
        );
        assert!(channel.dead().is_none());
    }

    #[test]
    fn reports_sent_while_a_line_is_unread_leave_together() {
        let dir = tempfile::tempdir().unwrap();
        // A slow zellij: it takes a line every 300 ms.
        let fake = dir.path().join("zellij");
        let script = format!(
            "#!/bin/sh\nwhile IFS= read -r l; do echo \"$l\" >> {d}/calls; sleep 0.3; done\n",
            d = dir.path().display()
        );
        fs::write(&fake, script).unwrap();
        Command::new("chmod").arg("+x").arg(&fake).status().unwrap();
        let channel = Channel::open(&fake, "s");
        channel.send(report(1, State::Working));
        lines(&dir.path().join("calls"), 1);
        for pane in 2..12 {
            channel.send(report(pane, State::Working));
            std::thread::sleep(Duration::from_millis(10));
        }
        let read = lines(&dir.path().join("calls"), 3);
        let batches: Vec<usize> = read
            .iter()
            .map(|l| serde_json::from_str::<Vec<PaneReport>>(l).unwrap().len())
            .collect();
        assert_eq!(batches.iter().sum::<usize>(), 11, "{batches:?}");
        assert!(
            batches.len() <= 3,
            "one line per report instead of batches: {batches:?}"
        );
    }
}
