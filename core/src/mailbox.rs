//! The watcher's mailbox as its readers see it: where it lives, how its
//! files are named, and what is newer than a change number.
//!
//! The watcher (`host::mailbox`) names each report after the number of the
//! change that wrote it (`<number>.<pane>.<w|h>.json`: the watcher's, or a
//! hook's) and appends a line per report to its **journal**
//! (`journal.<generation>`): the name, then, for a small report, a tab and
//! its compact JSON (a larger one is a file of that name). The **head**
//! says, in one fixed-width line written in place, the newest number, the
//! journal's generation and how many of its bytes are written (appends go
//! first, the head after them, so a reader never meets half a line); a
//! check sum over the three tells a head read while it was rewritten. Once
//! a journal grows past a bound, the watcher starts the next generation
//! with each pane's newest reports and removes the old one. Nothing is
//! created or renamed per change (at 64 agents, replacing an index and a
//! head by rename on every change was a third of the watcher's CPU).
//!
//! Two readers share this code: `turnstile pull`, and the bar's leader
//! itself, which reaches the folder through zellij's `/tmp` (zellij maps a
//! plugin's `/tmp` to its own temporary folder, where the watcher puts the
//! mailbox). A look reads the head's few bytes, and, only when it moved,
//! the journal from where the reader's [`Cursor`] left it; of several
//! reports of one pane in what it reads, only the newest is parsed. The
//! folder is never listed (a listing costs zellij's interpreter a file
//! status per entry). Files are reached through a [`Folder`] the caller
//! passes in, so this stays pure.

use crate::protocol::PaneReport;
use std::io;
use std::path::{Path, PathBuf};

/// The file holding the head ([`Head`]).
pub const HEAD: &str = "head";
/// Largest report file read: one capped answer, even if JSON escapes every
/// byte of it.
pub const MAX_REPORT_BYTES: u64 = 16 << 20;
/// Largest report written on its journal line; larger ones get a file.
pub const MAX_INLINE_REPORT_BYTES: usize = 4 << 10;
/// A journal past this many bytes is followed by the next generation.
pub const JOURNAL_LIMIT: u64 = 512 << 10;
/// Largest journal read: past its limit by one flush, or a generation of
/// each pane's newest two (thousands of panes).
const MAX_JOURNAL_BYTES: u64 = JOURNAL_LIMIT + (64 << 20);

/// A mailbox folder's files, read by name.
pub trait Folder {
    /// The bytes of one regular file, at most `max` of them (more is an error).
    fn read(&mut self, name: &str, max: u64) -> io::Result<Vec<u8>>;
    /// Up to `len` bytes of one regular file from byte `from` on (fewer
    /// where it ends first).
    fn read_range(&mut self, name: &str, from: u64, len: u64) -> io::Result<Vec<u8>> {
        let bytes = self.read(name, u64::MAX)?;
        let start = (from as usize).min(bytes.len());
        let end = start.saturating_add(len as usize).min(bytes.len());
        Ok(bytes[start..end].to_vec())
    }
}

/// What the head says: the newest change number, the journal's generation,
/// and its bytes written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Head {
    /// The newest change number.
    pub seq: u64,
    /// The journal's generation (its file is [`journal_name`]).
    pub generation: u64,
    /// The journal's bytes written, whole lines only.
    pub len: u64,
}

/// The head's bytes: three numbers of 20 digits and a check sum in hex.
pub const HEAD_BYTES: usize = 3 * 21 + 17;

impl Head {
    /// The head as written: fixed width, so it is rewritten in place.
    pub fn to_bytes(self) -> Vec<u8> {
        format!(
            "{:020} {:020} {:020} {:016x}\n",
            self.seq,
            self.generation,
            self.len,
            self.check()
        )
        .into_bytes()
    }

    /// A head read back; `None` when it is not one (or was read while it
    /// was rewritten: its check sum then disagrees).
    pub fn parse(bytes: &[u8]) -> Option<Head> {
        let text = std::str::from_utf8(bytes).ok()?.strip_suffix('\n')?;
        let mut fields = text.split(' ');
        let mut number = || fields.next().filter(|f| f.len() == 20)?.parse::<u64>().ok();
        let head = Head {
            seq: number()?,
            generation: number()?,
            len: number()?,
        };
        let check = u64::from_str_radix(fields.next()?, 16).ok()?;
        (fields.next().is_none() && check == head.check()).then_some(head)
    }

    /// FNV-1a over the three numbers.
    fn check(self) -> u64 {
        let numbers = [self.seq, self.generation, self.len];
        crate::text::fnv1a(numbers.into_iter().flat_map(u64::to_le_bytes))
    }
}

/// The journal file of a generation.
pub fn journal_name(generation: u64) -> String {
    format!("journal.{generation}")
}

/// A report's journal line: its name, and its JSON after a tab when it is
/// written inline.
pub fn journal_line(name: &str, inline: Option<&[u8]>) -> Vec<u8> {
    let mut line = Vec::with_capacity(name.len() + 2 + inline.map_or(0, <[u8]>::len));
    line.extend_from_slice(name.as_bytes());
    if let Some(json) = inline {
        line.push(b'\t');
        line.extend_from_slice(json);
    }
    line.push(b'\n');
    line
}

/// Where a reader left the journal: the bytes before it are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Cursor {
    generation: u64,
    offset: u64,
}

/// What a read of the mailbox brought.
#[derive(Debug, Clone, PartialEq)]
pub struct News {
    /// The newest change number seen.
    pub seq: u64,
    /// The reports newer than the number asked for, oldest first, each
    /// pane's newest of its kind.
    pub reports: Vec<PaneReport>,
    /// Where to read next time.
    pub cursor: Cursor,
}

/// The mailbox folder of a session under zellij's temporary folder `root`
/// (`$TMPDIR/zellij-<uid>` on the host, `/tmp` inside a plugin).
pub fn folder_in(root: &Path, session: &str) -> PathBuf {
    root.join("turnstile")
        .join(session_folder_name(session))
        .join("mailbox")
}

/// The folder name of a session: ASCII letters, digits and `-` stay, every
/// other byte becomes `_` and two hex digits (so `x.y` → `x_2ey`, `x_y` →
/// `x_5fy`): one session, one folder (the state folder's naming too).
pub fn session_folder_name(session: &str) -> String {
    let mut name = String::with_capacity(session.len());
    for byte in session.bytes() {
        match byte {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' => name.push(byte as char),
            other => name.push_str(&format!("_{other:02x}")),
        }
    }
    if name.is_empty() {
        name.push('_');
    }
    name
}

/// A report file's name: its change number, its pane, whose report it is.
pub fn file_name(seq: u64, pane: u32, hook: bool) -> String {
    format!("{seq:020}.{pane}.{}.json", if hook { "h" } else { "w" })
}

/// The change number of a report file's name (`None`: not one).
pub fn seq_of(name: &str) -> Option<u64> {
    name_parts(name).map(|(seq, _)| seq)
}

/// A report name's change number and whose report it is (pane, hook's).
fn name_parts(name: &str) -> Option<(u64, (u32, bool))> {
    let mut parts = name.split('.');
    let seq = parts.next()?.parse().ok()?;
    let pane: u32 = parts.next()?.parse().ok()?;
    let hook = match parts.next()? {
        "w" => false,
        "h" => true,
        _ => return None,
    };
    (parts.next()? == "json" && parts.next().is_none()).then_some((seq, (pane, hook)))
}

/// The head, as [`HEAD`] says it; `Ok(None)` when it was read while being
/// rewritten (read it again).
pub fn head(folder: &mut dyn Folder) -> io::Result<Option<Head>> {
    let bytes = folder.read(HEAD, HEAD_BYTES as u64)?;
    if bytes.len() != HEAD_BYTES {
        let what = format!("{HEAD}: not a head ({} bytes)", bytes.len());
        return Err(io::Error::new(io::ErrorKind::InvalidData, what));
    }
    Ok(Head::parse(&bytes))
}

/// Most of the journal read at once: a reader holds at most this much of
/// it (and the reports in it), however long the journal (up to
/// [`JOURNAL_LIMIT`] and more) and however many panes. At 64 agents a
/// whole generation read at once was 40 KB of reports, handed to the
/// leader in one pull's output: its wasm memory grew for good (zellij
/// keeps every page of it resident), and zellij's own buffers for it too.
pub const READ_BYTES: u64 = 16 << 10;

/// What is newer than `after`: `None` when the head has not moved (one
/// small read) or is being rewritten, else the reports newer than `after`
/// and the newest number they reach. The journal is read from `cursor`
/// when it is the head's generation, [`READ_BYTES`] at a time, and the
/// answer is the first part that holds news: its number is then that
/// part's newest, not the head's, and the next read goes on from its
/// cursor. A mailbox whose head is older than `after` belongs to a
/// watcher started again under a clock set back: all of it is new.
pub fn news(folder: &mut dyn Folder, after: u64, cursor: Cursor) -> io::Result<Option<News>> {
    let Some(head) = head(folder)? else {
        return Ok(None);
    };
    if head.seq == after {
        return Ok(None);
    }
    let after = if head.seq < after { 0 } else { after };
    let resume = cursor.generation == head.generation && cursor.offset <= head.len && after > 0;
    let mut from = if resume { cursor.offset } else { 0 };
    if head.len > MAX_JOURNAL_BYTES {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "journal: too large"));
    }
    loop {
        let Some(part) = journal_part(folder, head, from)? else {
            // The next generation began meanwhile: the next head names it.
            return Ok(None);
        };
        from += part.len() as u64;
        let newest = newest_entries(&part, after);
        let at_end = from == head.len;
        if newest.is_empty() && !at_end {
            continue;
        }
        let newest_seq = newest.iter().map(|(s, _, _)| *s).max();
        let seq = match at_end {
            true => newest_seq.map_or(head.seq, |s| s.max(head.seq)),
            false => newest_seq.unwrap_or(after),
        };
        let reports = read_reports(folder, newest)?;
        let cursor = Cursor {
            generation: head.generation,
            offset: from,
        };
        return Ok(Some(News { seq, reports, cursor }));
    }
}

/// The whole lines of the journal `head` names from byte `from` on, about
/// [`READ_BYTES`] of them (more only for a line longer than that); `None`
/// when the journal is gone (the next generation began).
fn journal_part(folder: &mut dyn Folder, head: Head, from: u64) -> io::Result<Option<Vec<u8>>> {
    let name = journal_name(head.generation);
    let mut want = READ_BYTES;
    loop {
        let len = want.min(head.len - from);
        let mut bytes = match folder.read_range(&name, from, len) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        if bytes.len() as u64 != len {
            let what = format!("{name}: shorter than its head says");
            return Err(io::Error::new(io::ErrorKind::InvalidData, what));
        }
        if from + len == head.len {
            return Ok(Some(bytes));
        }
        if let Some(end) = memchr::memrchr(b'\n', &bytes) {
            bytes.truncate(end + 1);
            return Ok(Some(bytes));
        }
        want = want.saturating_mul(2);
    }
}

/// A journal entry: its change number, name and inline JSON.
type Entry<'a> = (u64, &'a str, Option<&'a [u8]>);

/// Each pane's newest entry of each kind newer than `after`, oldest first.
/// The journal is in the order of its numbers, so it is read backwards, up
/// to the first line already seen: no sort, no map.
fn newest_entries(journal: &[u8], after: u64) -> Vec<Entry<'_>> {
    let mut seen: Vec<(u32, bool)> = Vec::new();
    let mut newest = Vec::new();
    for line in journal.rsplit(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let (name, inline) = match memchr::memchr(b'\t', line) {
            Some(tab) => (&line[..tab], Some(&line[tab + 1..])),
            None => (line, None),
        };
        let Some((name, (seq, key))) = std::str::from_utf8(name).ok().and_then(|n| Some((n, name_parts(n)?))) else {
            continue;
        };
        if seq <= after {
            break;
        }
        if !seen.contains(&key) {
            seen.push(key);
            newest.push((seq, name, inline));
        }
    }
    newest.reverse();
    newest
}

/// The entries' reports, in their order: inline, or from their files.
fn read_reports(folder: &mut dyn Folder, entries: Vec<Entry<'_>>) -> io::Result<Vec<PaneReport>> {
    let mut reports = Vec::with_capacity(entries.len());
    for (_, name, inline) in entries {
        let bytes = match inline {
            Some(json) => json.to_vec(),
            None => match folder.read(name, MAX_REPORT_BYTES) {
                Ok(bytes) => bytes,
                // Replaced meanwhile by a newer report, which the next head names.
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            },
        };
        let report = serde_json::from_slice(&bytes)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("{name}: {e}")))?;
        reports.push(report);
    }
    Ok(reports)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A folder in memory, written as the watcher writes it.
    #[derive(Default)]
    struct Memory {
        files: BTreeMap<String, Vec<u8>>,
        head: Head,
        reads: usize,
    }

    impl Memory {
        /// Appends a report's line (inline, or in a file of its own) and moves the head.
        fn post(&mut self, seq: u64, pane: u32, inline: bool) {
            let name = file_name(seq, pane, false);
            let json = report(pane);
            if !inline {
                self.files.insert(name.clone(), json.clone());
            }
            self.append(seq, &journal_line(&name, inline.then_some(&json[..])));
        }

        /// Appends a journal line of change `seq` and moves the head.
        fn append(&mut self, seq: u64, line: &[u8]) {
            let journal = self.files.entry(journal_name(self.head.generation)).or_default();
            journal.extend_from_slice(line);
            self.head.seq = seq;
            self.head.len = journal.len() as u64;
            self.files.insert(HEAD.into(), self.head.to_bytes());
        }
    }

    impl Folder for Memory {
        fn read(&mut self, name: &str, max: u64) -> io::Result<Vec<u8>> {
            self.reads += 1;
            let bytes = self.files.get(name).cloned().ok_or(io::ErrorKind::NotFound)?;
            if bytes.len() as u64 > max {
                return Err(io::ErrorKind::InvalidData.into());
            }
            Ok(bytes)
        }
    }

    fn report(pane: u32) -> Vec<u8> {
        serde_json::to_vec(&PaneReport {
            pane,
            agent: None,
            verdicts: Vec::new(),
            answer: None,
            since: None,
        })
        .unwrap()
    }

    fn panes(news: &News) -> Vec<u32> {
        news.reports.iter().map(|r| r.pane).collect()
    }

    #[test]
    fn news_reads_the_journal_only_when_the_head_moved_and_from_where_it_left() {
        let mut folder = Memory::default();
        let start = Cursor::default();
        assert_eq!(news(&mut folder, 0, start).unwrap_err().kind(), io::ErrorKind::NotFound);
        folder.post(5, 1, true);
        folder.post(9, 2, false);
        assert_eq!(news(&mut folder, 9, start).unwrap(), None);
        let all = news(&mut folder, 0, start).unwrap().unwrap();
        assert_eq!((all.seq, panes(&all)), (9, vec![1, 2]), "oldest first, inline or not");
        assert_eq!(panes(&news(&mut folder, 5, start).unwrap().unwrap()), vec![2]);
        folder.post(12, 3, true);
        let next = news(&mut folder, all.seq, all.cursor).unwrap().unwrap();
        assert_eq!((next.seq, panes(&next)), (12, vec![3]));
        folder.reads = 0;
        folder.post(13, 4, true);
        news(&mut folder, next.seq, next.cursor).unwrap().unwrap();
        assert_eq!(folder.reads, 2, "the head, and the journal's new bytes");
    }

    /// Appends a report of `pane` whose answer is `seq`, inline, padded
    /// with `pad` bytes.
    fn post_numbered(folder: &mut Memory, seq: u64, pane: u32, pad: usize) {
        let json = serde_json::to_vec(&PaneReport {
            pane,
            agent: None,
            verdicts: Vec::new(),
            answer: Some(format!("{seq}{}", " ".repeat(pad))),
            since: None,
        })
        .unwrap();
        folder.append(seq, &journal_line(&file_name(seq, pane, false), Some(&json)));
    }

    /// Follows the news from `after` and `cursor` until none is left:
    /// each pane's last answer seen, and the most bytes of reports one read brought.
    fn follow(folder: &mut Memory, mut after: u64, mut cursor: Cursor) -> (BTreeMap<u32, u64>, usize) {
        let (mut last, mut most) = (BTreeMap::new(), 0);
        while let Some(news) = news(folder, after, cursor).unwrap() {
            let bytes: usize = news.reports.iter().map(|r| serde_json::to_vec(r).unwrap().len()).sum();
            most = most.max(bytes);
            for r in &news.reports {
                let seq = r.answer.as_deref().unwrap().trim().parse().unwrap();
                assert!(
                    last.insert(r.pane, seq).is_none_or(|before| before < seq),
                    "older after newer"
                );
            }
            (after, cursor) = (news.seq, news.cursor);
        }
        (last, most)
    }

    #[test]
    fn a_long_journal_is_read_a_bounded_part_at_a_time_and_nothing_is_lost() {
        let mut folder = Memory::default();
        let mut newest = BTreeMap::new();
        // 300 panes, each reported twice: about 70 KB, several parts.
        for seq in 1..=600u64 {
            let pane = (seq % 300) as u32;
            post_numbered(&mut folder, seq, pane, 80);
            newest.insert(pane, seq);
        }
        assert!(folder.head.len > 4 * READ_BYTES, "{}", folder.head.len);
        let (last, most) = follow(&mut folder, 0, Cursor::default());
        assert_eq!(last, newest, "every pane's newest report arrives");
        assert!(most as u64 <= READ_BYTES, "{most} bytes of reports in one read");
        // A pull starts from the journal's beginning with a number: only
        // what is newer arrives, however far in the journal it is.
        let (last, _) = follow(&mut folder, 590, Cursor::default());
        let expected: BTreeMap<u32, u64> = newest
            .iter()
            .filter(|(_, s)| **s > 590)
            .map(|(p, s)| (*p, *s))
            .collect();
        assert_eq!(last, expected);
    }

    #[test]
    fn a_journal_line_longer_than_a_part_is_read_whole() {
        let mut folder = Memory::default();
        post_numbered(&mut folder, 1, 1, 10);
        post_numbered(&mut folder, 2, 2, 3 * READ_BYTES as usize);
        post_numbered(&mut folder, 3, 3, 10);
        let (last, _) = follow(&mut folder, 0, Cursor::default());
        assert_eq!(last, BTreeMap::from([(1, 1), (2, 2), (3, 3)]));
    }

    #[test]
    fn of_several_reports_of_a_pane_only_the_newest_is_read() {
        let mut folder = Memory::default();
        folder.post(5, 1, false);
        folder.post(6, 1, false);
        folder.files.remove(&file_name(5, 1, false)); // replaced: removed
        folder.post(7, 2, true);
        folder.post(8, 1, true);
        let news = news(&mut folder, 0, Cursor::default()).unwrap().unwrap();
        assert_eq!((news.seq, panes(&news)), (8, vec![2, 1]));
    }

    #[test]
    fn a_head_read_while_rewritten_is_read_again_and_a_broken_one_is_an_error() {
        let mut folder = Memory::default();
        folder.post(5, 1, true);
        let good = folder.head.to_bytes();
        let mut torn = Head { seq: 6, ..folder.head }.to_bytes();
        torn[40..].copy_from_slice(&good[40..]);
        folder.files.insert(HEAD.into(), torn);
        assert_eq!(news(&mut folder, 0, Cursor::default()).unwrap(), None);
        folder.files.insert(HEAD.into(), b"5".to_vec());
        assert_eq!(head(&mut folder).unwrap_err().kind(), io::ErrorKind::InvalidData);
        folder.files.insert(HEAD.into(), vec![b'9'; 400]);
        assert_eq!(head(&mut folder).unwrap_err().kind(), io::ErrorKind::InvalidData);
        assert_eq!(Head::parse(&good), Some(folder.head));
    }

    #[test]
    fn a_broken_report_or_a_journal_shorter_than_its_head_is_an_error() {
        let mut folder = Memory::default();
        folder.post(5, 1, true);
        let journal = journal_name(0);
        let line = journal_line(&file_name(6, 2, false), Some(b"{half"));
        folder.files.get_mut(&journal).unwrap().extend_from_slice(&line);
        folder.head = Head {
            seq: 6,
            generation: 0,
            len: folder.files[&journal].len() as u64,
        };
        folder.files.insert(HEAD.into(), folder.head.to_bytes());
        assert!(news(&mut folder, 0, Cursor::default()).is_err());
        folder.head.len += 10;
        folder.files.insert(HEAD.into(), folder.head.to_bytes());
        assert_eq!(
            news(&mut folder, 0, Cursor::default()).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
    }

    #[test]
    fn a_new_generation_is_read_whole_and_a_mailbox_numbered_below_the_reader_is_all_new() {
        let mut folder = Memory::default();
        folder.post(5, 1, true);
        let first = news(&mut folder, 0, Cursor::default()).unwrap().unwrap();
        folder.head = Head {
            seq: 5,
            generation: 1,
            len: 0,
        };
        folder.post(7, 2, true);
        folder.files.remove(&journal_name(0));
        let next = news(&mut folder, first.seq, first.cursor).unwrap().unwrap();
        assert_eq!((next.seq, panes(&next)), (7, vec![2]), "read from its start");
        let restarted = news(&mut folder, 99, next.cursor).unwrap().unwrap();
        assert_eq!((restarted.seq, panes(&restarted)), (7, vec![2]));
    }

    #[test]
    fn names_are_parsed_back_and_sessions_map_to_folders_one_to_one() {
        assert_eq!(seq_of("x.json"), None);
        assert_eq!(seq_of(HEAD), None);
        assert_eq!(seq_of(&file_name(12, 3, true)), Some(12));
        assert_eq!(name_parts(&file_name(12, 3, true)), Some((12, (3, true))));
        assert_eq!(session_folder_name("x.y"), "x_2ey");
        assert_eq!(session_folder_name("x_y"), "x_5fy");
        assert_eq!(session_folder_name("plain-Name9"), "plain-Name9");
        assert_eq!(session_folder_name("../up"), "_2e_2e_2fup");
        assert_eq!(session_folder_name("é"), "_c3_a9");
        assert_eq!(session_folder_name(""), "_");
        assert_eq!(
            folder_in(Path::new("/tmp"), "a.b"),
            Path::new("/tmp/turnstile/a_2eb/mailbox")
        );
    }

    proptest::proptest! {
        /// Whatever bytes the head holds, reading it never panics, and a
        /// head written reads back.
        #[test]
        fn any_head_bytes_read_without_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..100),
                                              seq in 0u64.., generation in 0u64.., len in 0u64..) {
            let _ = Head::parse(&bytes);
            let head = Head { seq, generation, len };
            proptest::prop_assert_eq!(Head::parse(&head.to_bytes()), Some(head));
        }
    }
}
