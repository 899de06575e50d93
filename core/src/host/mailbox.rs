//! The watcher's mailbox: what it knows of each pane, numbered, in one file
//! of the session's private state folder, and `turnstile pull`, which hands
//! the bar's leader what is newer than what it has.
//!
//! Why not a `zellij pipe`: a pipe message reaches every plugin of every tab
//! (each copy of the bar decodes it, in zellij's interpreter), and zellij
//! 0.45.1 sometimes never lets a `zellij pipe` read its second line, so the
//! bar went stale for a whole session. A command the leader runs answers
//! that copy alone (`RunCommandResult`), and nothing waits on zellij.
//!
//! The mailbox holds, per pane, the watcher's newest report and the newest
//! hook report (a hook's verdict must not be replaced by the watcher's),
//! each in its own file named after the number of the change that wrote it
//! (`<number>.<pane>.<w|h>.json`), so a pull reads only what is new, however
//! long the answers in the others. Numbers grow across watchers (the clock
//! in ms, or one more than the last): a leader asking for what is newer
//! than a number of an older watcher gets the new one's. A file is written
//! beside its final name and renamed into place, then the pane's older file
//! is removed. The mailbox has its own folder, which the watcher does not
//! watch (its writes never wake it); a new watcher empties it (it posts
//! every pane again as it starts).

use super::clock::now_ms;
use super::files;
use crate::protocol::PaneReport;
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::time::{Duration, Instant};

/// The mailbox's folder inside the session's state folder.
const FOLDER: &str = "mailbox";
/// Largest report file read: one capped answer, even if JSON escapes every
/// byte of it.
const MAX_REPORT_BYTES: u64 = 16 << 20;

/// A report file's name: its change number, its pane, whose report it is.
fn file_name(seq: u64, pane: u32, hook: bool) -> String {
    format!("{seq:020}.{pane}.{}.json", if hook { "h" } else { "w" })
}

/// The change number of a report file's name (`None`: not one).
fn seq_of(name: &str) -> Option<u64> {
    let mut parts = name.split('.');
    let seq = parts.next()?.parse().ok()?;
    let _pane: u32 = parts.next()?.parse().ok()?;
    matches!(parts.next()?, "w" | "h").then_some(())?;
    (parts.next()? == "json" && parts.next().is_none()).then_some(seq)
}

/// The watcher's side: reports go in, their files follow on [`Mailbox::flush`].
pub struct Mailbox {
    folder: PathBuf,
    seq: u64,
    /// Reports not written yet, in the order they came (the newest of
    /// each pane and kind), keyed by pane and whether it is a hook's.
    pending: Vec<((u32, bool), PaneReport)>,
    /// The file holding each key's newest report.
    written: BTreeMap<(u32, bool), PathBuf>,
    failure: Option<String>,
}

impl Mailbox {
    /// The (emptied) mailbox of the session whose state folder is
    /// `state_folder` (its own folder is created, private).
    pub fn open(state_folder: &Path) -> io::Result<Mailbox> {
        let folder = state_folder.join(FOLDER);
        super::state::ensure_private(&folder)?;
        for entry in std::fs::read_dir(&folder)?.flatten() {
            let _ = std::fs::remove_file(entry.path());
        }
        Ok(Mailbox {
            folder,
            seq: 0,
            pending: Vec::new(),
            written: BTreeMap::new(),
            failure: None,
        })
    }

    /// Puts in the watcher's newest report of a pane.
    pub fn send(&mut self, report: PaneReport) {
        self.put((report.pane, false), report);
    }

    /// Puts in a hook's report (kept apart from the watcher's).
    pub fn send_hook(&mut self, report: PaneReport) {
        self.put((report.pane, true), report);
    }

    fn put(&mut self, key: (u32, bool), report: PaneReport) {
        self.pending.retain(|(k, _)| *k != key);
        self.pending.push((key, report));
    }

    /// Writes the reports put in since the last time, each in a new file.
    pub fn flush(&mut self) {
        for ((pane, hook), report) in std::mem::take(&mut self.pending) {
            self.seq = (self.seq + 1).max(now_ms());
            let path = self.folder.join(file_name(self.seq, pane, hook));
            let written = serde_json::to_vec(&report)
                .map_err(io::Error::other)
                .and_then(|bytes| files::replace(&path, &bytes, 0o600));
            match written {
                Ok(()) => {
                    self.failure = None;
                    if let Some(old) = self.written.insert((pane, hook), path) {
                        let _ = std::fs::remove_file(old);
                    }
                }
                Err(e) => self.failure = Some(format!("cannot write {}: {e}", path.display())),
            }
        }
    }

    /// Why the last write failed, while it fails.
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }
}

/// The reports newer than `after` in the mailbox folder, oldest first, and
/// the newest number read. A folder whose numbers are all older than
/// `after` belongs to a watcher started again under a clock set back: all
/// of it is new.
fn newer_than(folder: &Path, after: u64) -> io::Result<(u64, Vec<PaneReport>)> {
    let names = match std::fs::read_dir(folder) {
        Ok(entries) => entries.flatten().filter_map(|e| e.file_name().into_string().ok()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((after, Vec::new())),
        Err(e) => return Err(e),
    };
    let mut numbered: Vec<(u64, String)> = names.filter_map(|n| seq_of(&n).map(|s| (s, n))).collect();
    numbered.sort();
    let newest = numbered.last().map_or(0, |(s, _)| *s);
    let after = if newest < after { 0 } else { after };
    let mut seq = after;
    let mut reports = Vec::new();
    for (number, name) in numbered.into_iter().filter(|(s, _)| *s > after) {
        let bytes = match files::read_capped(&folder.join(&name), MAX_REPORT_BYTES) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue, // replaced meanwhile
            Err(e) => return Err(e),
        };
        let report = serde_json::from_slice(&bytes)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("{name}: {e}")))?;
        reports.push(report);
        seq = number;
    }
    Ok((seq, reports))
}

/// Waits up to `wait` for reports newer than `after`, then answers them
/// (maybe none) with the newest number read. Never blocks past `wait`.
pub fn pull(state_folder: &Path, after: u64, wait: Duration) -> io::Result<(u64, Vec<PaneReport>)> {
    let deadline = Instant::now() + wait;
    let (tx, rx) = channel();
    // Told of every change in the mailbox's folder; polled as well, in
    // case inotify is not there (or the folder is not yet).
    let mut watcher = notify::recommended_watcher(move |event| {
        let _ = tx.send(event);
    })
    .ok();
    let folder = state_folder.join(FOLDER);
    let mut watching = false;
    // A rename into the folder changes it: the folder is listed again only then.
    let mut last_listed = None;
    let mut answer = (after, Vec::new());
    loop {
        if !watching {
            use notify::Watcher;
            watching = watcher
                .as_mut()
                .is_some_and(|w| w.watch(&folder, notify::RecursiveMode::NonRecursive).is_ok());
        }
        let version = identity(&folder);
        if version.is_none() || version != last_listed {
            last_listed = version;
            answer = newer_than(&folder, after)?;
        }
        let now = Instant::now();
        if !answer.1.is_empty() || now >= deadline {
            return Ok(answer);
        }
        let tick = if watching {
            Duration::from_millis(250)
        } else {
            Duration::from_millis(20)
        };
        match rx.recv_timeout(tick.min(deadline - now)) {
            Ok(_) | Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => std::thread::sleep(tick.min(deadline - now)),
        }
    }
}

/// Which folder or file is at `path` now, and when it last changed.
fn identity(path: &Path) -> Option<(u64, i64, i64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path)
        .ok()
        .map(|m| (m.ino(), m.mtime(), m.mtime_nsec()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::AgentBinding;
    use crate::verdict::{Source, State, Verdict};

    fn report(pane: u32, state: State, source: Source) -> PaneReport {
        PaneReport {
            pane,
            agent: Some(AgentBinding::default()),
            verdicts: vec![Verdict::new(state, source, "test", 1)],
            answer: None,
            since: None,
        }
    }

    #[test]
    fn a_pull_gets_each_panes_newest_reports_after_a_number_and_hooks_apart() {
        let dir = tempfile::tempdir().unwrap();
        let mut mailbox = Mailbox::open(dir.path()).unwrap();
        mailbox.send(report(1, State::Working, Source::Transcript));
        mailbox.flush();
        let (first, all) = pull(dir.path(), 0, Duration::ZERO).unwrap();
        assert_eq!(all.len(), 1);
        mailbox.send(report(2, State::Working, Source::Transcript));
        mailbox.send_hook(report(1, State::Done, Source::Hook));
        mailbox.send(report(1, State::Done, Source::Transcript));
        mailbox.flush();
        let (_, newer) = pull(dir.path(), first, Duration::ZERO).unwrap();
        let seen: Vec<(u32, State, Source)> = newer
            .iter()
            .map(|r| (r.pane, r.verdicts[0].state, r.verdicts[0].source))
            .collect();
        assert_eq!(
            seen,
            vec![
                (2, State::Working, Source::Transcript),
                (1, State::Done, Source::Hook),
                (1, State::Done, Source::Transcript)
            ]
        );
    }

    #[test]
    fn a_pull_waits_for_the_next_change_and_no_longer_than_asked() {
        let dir = tempfile::tempdir().unwrap();
        let mut mailbox = Mailbox::open(dir.path()).unwrap();
        mailbox.send(report(1, State::Working, Source::Transcript));
        mailbox.flush();
        let (seq, _) = pull(dir.path(), 0, Duration::ZERO).unwrap();
        let started = Instant::now();
        let (same, none) = pull(dir.path(), seq, Duration::from_millis(300)).unwrap();
        assert!(none.is_empty() && same == seq);
        assert!(started.elapsed() >= Duration::from_millis(300) && started.elapsed() < Duration::from_secs(2));
        let folder = dir.path().to_path_buf();
        let waiter = std::thread::spawn(move || pull(&folder, seq, Duration::from_secs(10)).unwrap());
        std::thread::sleep(Duration::from_millis(100));
        mailbox.send(report(1, State::Done, Source::Transcript));
        mailbox.flush();
        let (newer, reports) = waiter.join().unwrap();
        assert!(newer > seq && reports.len() == 1, "{reports:?}");
    }

    #[test]
    fn no_mailbox_yet_is_no_news_and_a_broken_report_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(pull(dir.path(), 7, Duration::ZERO).unwrap(), (7, Vec::new()));
        std::fs::create_dir(dir.path().join(FOLDER)).unwrap();
        std::fs::write(dir.path().join(FOLDER).join(file_name(9, 1, false)), b"{half").unwrap();
        assert!(pull(dir.path(), 7, Duration::ZERO).is_err());
        assert_eq!(seq_of("x.json"), None);
        assert_eq!(seq_of(&file_name(12, 3, true)), Some(12));
    }

    #[test]
    fn a_mailbox_numbered_below_what_the_leader_has_is_all_new_and_a_new_one_starts_empty() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join(FOLDER);
        std::fs::create_dir(&folder).unwrap();
        let old = serde_json::to_vec(&report(1, State::Idle, Source::Session)).unwrap();
        std::fs::write(folder.join(file_name(5, 1, false)), &old).unwrap();
        assert_eq!(pull(dir.path(), 99, Duration::ZERO).unwrap().1.len(), 1);
        assert!(pull(dir.path(), 5, Duration::ZERO).unwrap().1.is_empty());
        let _mailbox = Mailbox::open(dir.path()).unwrap();
        assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 0);
    }

    #[test]
    fn each_pane_keeps_one_file_of_each_kind() {
        let dir = tempfile::tempdir().unwrap();
        let mut mailbox = Mailbox::open(dir.path()).unwrap();
        for state in [State::Working, State::Done, State::Working] {
            mailbox.send(report(1, state, Source::Transcript));
            mailbox.send_hook(report(1, state, Source::Hook));
            mailbox.flush();
        }
        assert_eq!(std::fs::read_dir(dir.path().join(FOLDER)).unwrap().count(), 2);
    }
}
