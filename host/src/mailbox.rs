//! The watcher's side of its mailbox (the format and the reading are
//! `turnstile_core::mailbox`'s), and `turnstile pull`, which hands the bar's leader
//! what is newer than what it has when it cannot read the folder itself.
//!
//! Why not a `zellij pipe`: a pipe message reaches every plugin of every tab
//! (each copy of the bar decodes it, in zellij's interpreter), and zellij
//! 0.45.1 sometimes never lets a `zellij pipe` read its second line, so the
//! bar went stale for a whole session. The leader reads the mailbox itself
//! (through zellij's `/tmp`), or runs `turnstile pull`, whose answer reaches
//! that copy alone (`RunCommandResult`); nothing waits on zellij.
//!
//! Numbers grow across watchers (the clock in ms, or one more than the
//! last): a reader asking for what is newer than a number of an older
//! watcher gets the new one's. A small report goes on its journal line; a
//! larger one is written beside its final name and renamed into place
//! first. Then the lines are appended to the journal, then the head is
//! rewritten in place, then a replaced report's file is removed. Past
//! [`JOURNAL_LIMIT`] the next generation's journal is written whole (each
//! pane's newest reports), the head names it, and the old one goes. The
//! mailbox has its own folder, which the watcher does not watch (its
//! writes never wake it); a new watcher empties it (it posts every pane
//! again as it starts).

use super::clock::now_ms;
use super::files;
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::time::{Duration, Instant};
use turnstile_core::mailbox::{
    file_name, journal_line, journal_name, news, Cursor, Folder, Head, HEAD, JOURNAL_LIMIT, MAX_INLINE_REPORT_BYTES,
};
use turnstile_core::protocol::PaneReport;

/// A report in the mailbox: its name, and its JSON when it is written on
/// its journal line (else a file of that name holds it).
struct Written {
    seq: u64,
    name: String,
    inline: Option<Vec<u8>>,
}

/// The watcher's side: reports go in, their lines follow on [`Mailbox::flush`].
pub struct Mailbox {
    folder: PathBuf,
    seq: u64,
    /// Reports not written yet, in the order they came (the newest of
    /// each pane and kind), keyed by pane and whether it is a hook's.
    pending: Vec<((u32, bool), PaneReport)>,
    /// Each key's newest report, as the journal names it.
    written: BTreeMap<(u32, bool), Written>,
    /// Journal lines not appended yet (an append failed).
    unjournaled: Vec<u8>,
    /// Report files no longer the newest: removed once the head moved.
    stale_files: Vec<PathBuf>,
    /// The journal being appended to.
    journal: File,
    /// The head file, rewritten in place (`None` until the first flush).
    head_file: Option<File>,
    head: Head,
    /// The next flush writes the journal anew (a write failed: the old one
    /// may be gone with its folder).
    rewrite: bool,
    failure: Option<String>,
}

impl Mailbox {
    /// The mailbox in `folder` (a private folder the caller made), emptied.
    pub fn open(folder: &Path) -> io::Result<Mailbox> {
        for entry in std::fs::read_dir(folder)?.flatten() {
            let _ = std::fs::remove_file(entry.path());
        }
        let generation = now_ms();
        Ok(Mailbox {
            folder: folder.to_path_buf(),
            seq: 0,
            pending: Vec::new(),
            written: BTreeMap::new(),
            unjournaled: Vec::new(),
            stale_files: Vec::new(),
            journal: files::create_new(&folder.join(journal_name(generation)), 0o600)?,
            head_file: None,
            head: Head {
                seq: 0,
                generation,
                len: 0,
            },
            rewrite: false,
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

    /// Writes the reports put in since the last time (a large one in a
    /// file), appends their lines to the journal, then moves the head. A
    /// report that cannot be written stays in, with those after it, for the
    /// next flush; so do lines the journal did not take.
    pub fn flush(&mut self) {
        if self.pending.is_empty() && self.failure.is_none() {
            return;
        }
        self.write_pending();
        if self.head.seq == self.seq && self.unjournaled.is_empty() && !self.rewrite {
            return;
        }
        let journaled = if self.rewrite || self.head.len + self.unjournaled.len() as u64 > JOURNAL_LIMIT {
            self.next_generation()
        } else {
            self.append()
        };
        if let Err(e) = journaled.and_then(|()| self.move_head()) {
            self.failure = Some(format!("cannot write the mailbox in {}: {e}", self.folder.display()));
            self.rewrite = true;
            self.head_file = None;
            return;
        }
        self.rewrite = false;
        for old in self.stale_files.drain(..) {
            let _ = std::fs::remove_file(old);
        }
        if self.pending.is_empty() {
            self.failure = None;
        }
    }

    /// Turns pending reports into journal lines (a large report's file first).
    fn write_pending(&mut self) {
        while !self.pending.is_empty() {
            let ((pane, hook), report) = &self.pending[0];
            let seq = (self.seq + 1).max(now_ms());
            let name = file_name(seq, *pane, *hook);
            let json = match serde_json::to_vec(report) {
                Ok(json) => json,
                Err(e) => {
                    self.failure = Some(format!("cannot write report {name}: {e}"));
                    break;
                }
            };
            let inline = json.len() <= MAX_INLINE_REPORT_BYTES;
            if !inline {
                let path = self.folder.join(&name);
                if let Err(e) = files::replace(&path, &json, 0o600) {
                    self.failure = Some(format!("cannot write {}: {e}", path.display()));
                    break;
                }
            }
            let (key, _) = self.pending.remove(0);
            self.seq = seq;
            let inline = inline.then_some(json);
            self.unjournaled.extend(journal_line(&name, inline.as_deref()));
            if let Some(old) = self.written.insert(key, Written { seq, name, inline }) {
                if old.inline.is_none() {
                    self.stale_files.push(self.folder.join(old.name));
                }
            }
        }
    }

    /// Appends the lines not yet in the journal, where its whole lines end.
    fn append(&mut self) -> io::Result<()> {
        self.journal.write_all_at(&self.unjournaled, self.head.len)?;
        self.head.len += self.unjournaled.len() as u64;
        self.unjournaled.clear();
        Ok(())
    }

    /// Starts the next generation: a journal of each pane's newest reports.
    fn next_generation(&mut self) -> io::Result<()> {
        let generation = self.head.generation + 1;
        let mut entries: Vec<&Written> = self.written.values().collect();
        entries.sort_by_key(|w| w.seq);
        let bytes: Vec<u8> = entries
            .iter()
            .flat_map(|w| journal_line(&w.name, w.inline.as_deref()))
            .collect();
        let path = self.folder.join(journal_name(generation));
        let _ = std::fs::remove_file(&path); // a try that failed half way
        let journal = files::create_new(&path, 0o600)?;
        journal.write_all_at(&bytes, 0)?;
        let old = self.folder.join(journal_name(self.head.generation));
        self.journal = journal;
        self.head.generation = generation;
        self.head.len = bytes.len() as u64;
        self.unjournaled.clear();
        self.stale_files.push(old);
        Ok(())
    }

    /// Rewrites the head in place (created whole, by rename, the first time:
    /// a reader never meets an empty one).
    fn move_head(&mut self) -> io::Result<()> {
        let head = Head {
            seq: self.seq,
            ..self.head
        };
        let bytes = head.to_bytes();
        match &self.head_file {
            Some(file) => file.write_all_at(&bytes, 0)?,
            None => {
                let path = self.folder.join(HEAD);
                files::replace(&path, &bytes, 0o600)?;
                let file = OpenOptions::new()
                    .write(true)
                    .custom_flags(libc::O_NOFOLLOW)
                    .open(&path)?;
                self.head_file = Some(file);
            }
        }
        self.head = head;
        Ok(())
    }

    /// Why the last write failed, while it fails; also when the head or
    /// the journal was removed under it (a cleaner of temporary files):
    /// writes into them would reach no reader.
    pub fn failure(&mut self) -> Option<&str> {
        let gone = |name: String| self.head_file.is_some() && !self.folder.join(name).exists();
        if self.failure.is_none() && (gone(HEAD.to_owned()) || gone(journal_name(self.head.generation))) {
            self.failure = Some(format!("the mailbox in {} was removed", self.folder.display()));
        }
        self.failure.as_deref()
    }
}

/// A mailbox folder on this machine: regular files only, never blocking on
/// a FIFO or a device.
pub struct Files<'a>(pub &'a Path);

impl Folder for Files<'_> {
    fn read(&mut self, name: &str, max: u64) -> io::Result<Vec<u8>> {
        files::read_capped(&self.0.join(name), max)
    }

    fn read_range(&mut self, name: &str, from: u64, len: u64) -> io::Result<Vec<u8>> {
        let mut file = files::open_regular(&self.0.join(name))?;
        file.seek(SeekFrom::Start(from))?;
        let mut bytes = Vec::new();
        file.take(len).read_to_end(&mut bytes)?;
        Ok(bytes)
    }
}

/// Waits up to `wait` for reports newer than `after` in the mailbox
/// `folder`, then answers them (maybe none) with the newest number read:
/// one part of the journal ([`turnstile_core::mailbox::READ_BYTES`]), the rest
/// from that number on.
/// No mailbox yet is no news. Never blocks past `wait`.
pub fn pull(folder: &Path, after: u64, wait: Duration) -> io::Result<(u64, Vec<PaneReport>)> {
    pull_from(folder, &mut Files(folder), after, wait)
}

/// [`pull`], reading through `files` (the folder at `path`).
fn pull_from(path: &Path, files: &mut dyn Folder, after: u64, wait: Duration) -> io::Result<(u64, Vec<PaneReport>)> {
    let deadline = Instant::now() + wait;
    let (tx, rx) = channel();
    // Told of every change in the mailbox's folder; polled as well, in
    // case inotify is not there (or the folder is not yet). Reads are no
    // change: the leader's looks and this pull's own would wake it for ever.
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if event.is_ok_and(|e| !matches!(e.kind, notify::EventKind::Access(_))) {
            let _ = tx.send(());
        }
    })
    .ok();
    let mut watching = false;
    loop {
        if !watching {
            use notify::Watcher;
            watching = watcher
                .as_mut()
                .is_some_and(|w| w.watch(path, notify::RecursiveMode::NonRecursive).is_ok());
        }
        match news(files, after, Cursor::default()) {
            Ok(Some(answer)) => return Ok((answer.seq, answer.reports)),
            Ok(None) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok((after, Vec::new()));
        }
        let tick = if watching {
            Duration::from_millis(250)
        } else {
            Duration::from_millis(20)
        };
        match rx.recv_timeout(tick.min(deadline - now)) {
            Ok(()) | Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => std::thread::sleep(tick.min(deadline - now)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnstile_core::protocol::AgentBinding;
    use turnstile_core::verdict::{Source, State, Verdict};

    fn report(pane: u32, state: State, source: Source) -> PaneReport {
        PaneReport {
            pane,
            agent: Some(AgentBinding::default()),
            verdicts: vec![Verdict::new(state, source, "test", 1)],
            answer: None,
            since: None,
        }
    }

    /// A mailbox in `dir` holding one working report, and its number.
    fn posted_once(dir: &Path) -> (Mailbox, u64) {
        let mut mailbox = Mailbox::open(dir).unwrap();
        mailbox.send(report(1, State::Working, Source::Transcript));
        mailbox.flush();
        let (seq, _) = pull(dir, 0, Duration::ZERO).unwrap();
        (mailbox, seq)
    }

    /// The names of the report files in `dir`.
    fn report_files(dir: &Path) -> Vec<String> {
        let names = std::fs::read_dir(dir).unwrap().flatten();
        let names = names.map(|e| e.file_name().to_string_lossy().into_owned());
        names.filter(|n| turnstile_core::mailbox::seq_of(n).is_some()).collect()
    }

    #[test]
    fn small_reports_go_on_their_journal_line_and_a_large_one_in_a_file_removed_once_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let mut mailbox = Mailbox::open(dir.path()).unwrap();
        mailbox.send(report(1, State::Working, Source::Transcript));
        mailbox.flush();
        assert!(report_files(dir.path()).is_empty(), "inline: no file of its own");
        let mut large = report(1, State::Done, Source::Transcript);
        large.answer = Some("x".repeat(MAX_INLINE_REPORT_BYTES));
        mailbox.send(large.clone());
        mailbox.flush();
        assert_eq!(report_files(dir.path()).len(), 1);
        let (seq, reports) = pull(dir.path(), 0, Duration::ZERO).unwrap();
        assert_eq!(reports, vec![large]);
        mailbox.send(report(1, State::Working, Source::Transcript));
        mailbox.flush();
        assert!(report_files(dir.path()).is_empty(), "the large one's file went with it");
        let (_, newer) = pull(dir.path(), seq, Duration::ZERO).unwrap();
        assert_eq!(newer, vec![report(1, State::Working, Source::Transcript)]);
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
        let (mut mailbox, seq) = posted_once(dir.path());
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
        let folder = dir.path().join("mailbox");
        assert_eq!(pull(&folder, 7, Duration::ZERO).unwrap(), (7, Vec::new()));
        std::fs::create_dir(&folder).unwrap();
        let line = journal_line(&file_name(9, 1, false), Some(b"{half"));
        std::fs::write(folder.join(journal_name(3)), &line).unwrap();
        let head = Head {
            seq: 9,
            generation: 3,
            len: line.len() as u64,
        };
        std::fs::write(folder.join(HEAD), head.to_bytes()).unwrap();
        assert!(pull(&folder, 7, Duration::ZERO).is_err());
        std::fs::write(folder.join(HEAD), b"9").unwrap();
        assert!(pull(&folder, 7, Duration::ZERO).is_err(), "not a head");
    }

    /// A mailbox folder whose reads are counted.
    struct Counted<'a>(Files<'a>, usize);

    impl Folder for Counted<'_> {
        fn read(&mut self, name: &str, max: u64) -> io::Result<Vec<u8>> {
            self.1 += 1;
            self.0.read(name, max)
        }
    }

    #[test]
    fn a_waiting_pull_is_not_woken_by_reads_its_own_or_the_leaders() {
        let dir = tempfile::tempdir().unwrap();
        let (_mailbox, seq) = posted_once(dir.path());
        let reader = dir.path().to_path_buf();
        let leader = std::thread::spawn(move || {
            for _ in 0..20 {
                let _ = turnstile_core::mailbox::head(&mut Files(&reader));
                std::thread::sleep(Duration::from_millis(25));
            }
        });
        let mut counted = Counted(Files(dir.path()), 0);
        let (same, none) = pull_from(dir.path(), &mut counted, seq, Duration::from_millis(600)).unwrap();
        leader.join().unwrap();
        assert!(same == seq && none.is_empty());
        // One look at the start, one per 250 ms tick, one per look of the
        // leader's at most (its opens are no change): never a spin.
        assert!(counted.1 <= 30, "{} reads while nothing changed", counted.1);
    }

    #[test]
    fn a_fifo_in_the_mailbox_is_an_error_not_a_hang() {
        let dir = tempfile::tempdir().unwrap();
        let head = dir.path().join(HEAD);
        let path = std::ffi::CString::new(head.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
        assert!(pull(dir.path(), 7, Duration::ZERO).is_err());
    }

    #[test]
    fn a_new_mailbox_starts_empty_and_the_head_follows_each_flush() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(file_name(5, 1, false)), b"{}").unwrap();
        let mut mailbox = Mailbox::open(dir.path()).unwrap();
        assert!(report_files(dir.path()).is_empty());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "an empty journal");
        mailbox.send(report(1, State::Working, Source::Transcript));
        mailbox.flush();
        let head = turnstile_core::mailbox::head(&mut Files(dir.path())).unwrap().unwrap();
        assert_eq!(
            pull(dir.path(), 0, Duration::ZERO).unwrap(),
            (head.seq, vec![report(1, State::Working, Source::Transcript)])
        );
    }

    #[test]
    fn a_report_that_cannot_be_written_is_kept_for_the_next_flush() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("mailbox");
        std::fs::create_dir(&folder).unwrap();
        let mut mailbox = Mailbox::open(&folder).unwrap();
        std::fs::remove_dir_all(&folder).unwrap();
        mailbox.send(report(1, State::Working, Source::Transcript));
        mailbox.flush();
        assert!(mailbox.failure().is_some());
        std::fs::create_dir(&folder).unwrap();
        mailbox.flush();
        assert!(mailbox.failure().is_none());
        assert_eq!(pull(&folder, 0, Duration::ZERO).unwrap().1.len(), 1);
        // Removed under a running watcher: said, so that it starts again.
        std::fs::remove_dir_all(&folder).unwrap();
        assert!(mailbox.failure().is_some_and(|f| f.contains("removed")));
    }

    #[test]
    fn the_journal_is_appended_to_and_past_its_limit_started_anew_with_each_panes_newest() {
        let dir = tempfile::tempdir().unwrap();
        let mut mailbox = Mailbox::open(dir.path()).unwrap();
        let mut reader = (0, Cursor::default());
        let mut generations = std::collections::BTreeSet::new();
        let mut answer = report(2, State::Done, Source::Transcript);
        answer.answer = Some("a".repeat(3000));
        for round in 0..400u32 {
            mailbox.send(report(
                1,
                if round % 2 == 0 { State::Working } else { State::Done },
                Source::Transcript,
            ));
            mailbox.send(answer.clone());
            mailbox.flush();
            let news = news(&mut Files(dir.path()), reader.0, reader.1).unwrap().unwrap();
            assert_eq!(news.reports.len(), 2, "round {round}: each pane's newest");
            reader = (news.seq, news.cursor);
            generations.insert(
                turnstile_core::mailbox::head(&mut Files(dir.path()))
                    .unwrap()
                    .unwrap()
                    .generation,
            );
        }
        assert!(generations.len() > 1, "a new generation past the limit");
        let journals = std::fs::read_dir(dir.path()).unwrap().flatten();
        let journals = journals.filter(|e| e.file_name().to_string_lossy().starts_with("journal."));
        assert_eq!(journals.count(), 1, "the old generation is removed");
        let (_, all) = pull(dir.path(), 0, Duration::ZERO).unwrap();
        assert_eq!(all.len(), 2, "a reader from scratch gets each pane's newest");
    }

    #[test]
    fn each_pane_keeps_one_report_of_each_kind() {
        let dir = tempfile::tempdir().unwrap();
        let mut mailbox = Mailbox::open(dir.path()).unwrap();
        let large = |state, source| PaneReport {
            answer: Some("x".repeat(MAX_INLINE_REPORT_BYTES)),
            ..report(1, state, source)
        };
        for state in [State::Working, State::Done, State::Working] {
            mailbox.send(report(1, state, Source::Transcript));
            mailbox.send_hook(report(1, state, Source::Hook));
            mailbox.flush();
        }
        let (_, reports) = pull(dir.path(), 0, Duration::ZERO).unwrap();
        assert_eq!(reports.len(), 2, "{reports:?}");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            2,
            "the journal and the head"
        );
        for state in [State::Working, State::Done, State::Working] {
            mailbox.send(large(state, Source::Transcript));
            mailbox.send_hook(large(state, Source::Hook));
            mailbox.flush();
        }
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            4,
            "two report files, the journal and the head"
        );
    }
}
