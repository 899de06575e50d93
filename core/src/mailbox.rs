//! The watcher's mailbox as its readers see it: where it lives, how its
//! files are named, and what is newer than a change number.
//!
//! The watcher (`host::mailbox`) keeps, per pane, its newest report and the
//! newest hook report, each named after the number of the change that wrote
//! it (`<number>.<pane>.<w|h>.json`); in [`INDEX`] those names, newest
//! first, a line each, a small report written on its name's line after a
//! tab (one line of compact JSON), a larger one in a file of that name; and
//! in [`HEAD`] the newest number (written last). Small reports inline cost
//! the watcher no file of their own and the reader no read of its own. Two readers share
//! this code: `turnstile pull`, and the bar's leader itself, which reaches
//! the folder through zellij's `/tmp` (zellij maps a plugin's `/tmp` to its
//! own temporary folder, where the watcher puts the mailbox): a look reads
//! the few bytes of the head, and the index and the new reports only when
//! the head moved. The folder is never listed (a listing costs zellij's
//! interpreter a file status per entry), and the index is read only down
//! to the first name already seen. Files are reached through a [`Folder`] the caller
//! passes in, so this stays pure.

use crate::protocol::PaneReport;
use std::io;
use std::path::{Path, PathBuf};

/// The file holding the newest change number (decimal).
pub const HEAD: &str = "head";
/// The file naming the report files, newest first.
pub const INDEX: &str = "index";
/// Largest report file read: one capped answer, even if JSON escapes every
/// byte of it.
pub const MAX_REPORT_BYTES: u64 = 16 << 20;
/// Largest head file read.
const MAX_HEAD_BYTES: u64 = 32;
/// Largest index read: a name of at most 40 bytes for each of 2 × 2^16
/// panes, and the reports written inline ([`MAX_INLINE_BYTES`] in all).
const MAX_INDEX_BYTES: u64 = (6 << 20) + MAX_INLINE_BYTES as u64;
/// Largest report written on its index line; larger ones get a file.
pub const MAX_INLINE_REPORT_BYTES: usize = 4 << 10;
/// Most bytes of reports an index holds inline; beyond, reports get files.
pub const MAX_INLINE_BYTES: usize = 1 << 20;

/// A mailbox folder's files, read by name.
pub trait Folder {
    /// The bytes of one regular file, at most `max` of them (more is an error).
    fn read(&mut self, name: &str, max: u64) -> io::Result<Vec<u8>>;
}

/// The index's text: the report files' names, newest first, a line each.
pub fn index_text<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let entries = index_bytes(names.into_iter().map(|n| (n, None)));
    String::from_utf8(entries).unwrap_or_default()
}

/// The index's bytes: each report's name, newest first, a line each, with
/// the report's JSON after a tab when it is written inline.
pub fn index_bytes<'a>(entries: impl IntoIterator<Item = (&'a str, Option<&'a [u8]>)>) -> Vec<u8> {
    let mut entries: Vec<(&str, Option<&[u8]>)> = entries.into_iter().collect();
    entries.sort_by_key(|(n, _)| std::cmp::Reverse(seq_of(n)));
    let mut out = Vec::new();
    for (name, inline) in entries {
        out.extend_from_slice(name.as_bytes());
        if let Some(json) = inline {
            out.push(b'\t');
            out.extend_from_slice(json);
        }
        out.push(b'\n');
    }
    out
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
    let mut parts = name.split('.');
    let seq = parts.next()?.parse().ok()?;
    let _pane: u32 = parts.next()?.parse().ok()?;
    matches!(parts.next()?, "w" | "h").then_some(())?;
    (parts.next()? == "json" && parts.next().is_none()).then_some(seq)
}

/// The newest change number, as [`HEAD`] says it.
pub fn head(folder: &mut dyn Folder) -> io::Result<u64> {
    let bytes = folder.read(HEAD, MAX_HEAD_BYTES)?;
    let text = std::str::from_utf8(&bytes).unwrap_or_default().trim();
    text.parse()
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, format!("{HEAD}: not a number: {text:?}")))
}

/// What is newer than `after`: `None` when the head has not moved (one
/// small read), else the reports newer than `after`, oldest first, and the
/// newest number seen. A mailbox whose head is older than `after` belongs
/// to a watcher started again under a clock set back: all of it is new.
pub fn news(folder: &mut dyn Folder, after: u64) -> io::Result<Option<(u64, Vec<PaneReport>)>> {
    let head = head(folder)?;
    if head == after {
        return Ok(None);
    }
    let after = if head < after { 0 } else { after };
    let index = folder.read(INDEX, MAX_INDEX_BYTES)?;
    // Newest first: only the lines above the first one already seen (the
    // rest of the index is not even split into lines).
    let mut newer: Vec<(u64, &str, Option<&[u8]>)> = index
        .split(|b| *b == b'\n')
        .map_while(|line| {
            let (name, inline) = match line.iter().position(|b| *b == b'\t') {
                Some(tab) => (&line[..tab], Some(&line[tab + 1..])),
                None => (line, None),
            };
            let name = std::str::from_utf8(name).ok()?;
            seq_of(name).filter(|s| *s > after).map(|s| (s, name, inline))
        })
        .collect();
    newer.reverse();
    let newest = newer.last().map_or(head, |(s, _, _)| head.max(*s));
    let mut reports = Vec::new();
    for (_, name, inline) in newer {
        let bytes = match inline {
            Some(json) => json.to_vec(),
            None => match folder.read(name, MAX_REPORT_BYTES) {
                Ok(bytes) => bytes,
                // Replaced meanwhile by a newer file, which the next head names.
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            },
        };
        let report = serde_json::from_slice(&bytes)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("{name}: {e}")))?;
        reports.push(report);
    }
    Ok(Some((newest, reports)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A folder in memory.
    #[derive(Default)]
    struct Memory(BTreeMap<String, Vec<u8>>);

    impl Memory {
        /// The watcher's head over the report files held.
        fn move_head(&mut self, seq: u64) {
            let names: Vec<String> = self.0.keys().filter(|n| seq_of(n).is_some()).cloned().collect();
            let text = index_text(names.iter().map(String::as_str));
            self.0.insert(INDEX.into(), text.into_bytes());
            self.0.insert(HEAD.into(), seq.to_string().into_bytes());
        }
    }

    impl Folder for Memory {
        fn read(&mut self, name: &str, max: u64) -> io::Result<Vec<u8>> {
            let bytes = self.0.get(name).cloned().ok_or(io::ErrorKind::NotFound)?;
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

    #[test]
    fn news_reads_the_reports_only_when_the_head_moved() {
        let mut folder = Memory::default();
        assert_eq!(news(&mut folder, 0).unwrap_err().kind(), io::ErrorKind::NotFound);
        folder.0.insert(file_name(5, 1, false), report(1));
        folder.0.insert(file_name(9, 2, true), report(2));
        folder.move_head(9);
        assert_eq!(news(&mut folder, 9).unwrap(), None);
        let (seq, reports) = news(&mut folder, 5).unwrap().unwrap();
        assert_eq!((seq, reports.len(), reports[0].pane), (9, 1, 2));
        assert_eq!(news(&mut folder, 0).unwrap().unwrap().1.len(), 2);
    }

    #[test]
    fn a_head_that_is_not_a_number_or_a_broken_report_is_an_error() {
        let mut folder = Memory::default();
        folder.0.insert(HEAD.into(), b"x".to_vec());
        assert_eq!(head(&mut folder).unwrap_err().kind(), io::ErrorKind::InvalidData);
        folder.0.insert(HEAD.into(), vec![b'9'; 40]);
        assert_eq!(
            head(&mut folder).unwrap_err().kind(),
            io::ErrorKind::InvalidData,
            "too long"
        );
        folder.0.insert(file_name(9, 1, false), b"{half".to_vec());
        folder.move_head(9);
        assert!(news(&mut folder, 0).is_err());
    }

    #[test]
    fn a_mailbox_numbered_below_what_the_reader_has_is_all_new() {
        let mut folder = Memory::default();
        folder.0.insert(file_name(5, 1, false), report(1));
        folder.move_head(5);
        assert_eq!(
            news(&mut folder, 99).unwrap().unwrap(),
            (5, vec![serde_json::from_slice(&report(1)).unwrap()])
        );
    }

    #[test]
    fn a_file_gone_since_the_head_was_written_is_skipped_and_no_other_file_is_read() {
        let mut folder = Memory::default();
        folder.0.insert(file_name(5, 1, false), report(1));
        folder.0.insert(file_name(7, 2, false), report(2));
        folder.move_head(7);
        folder.0.remove(&file_name(5, 1, false));
        folder.0.insert(file_name(8, 3, false), report(3));
        let (seq, reports) = news(&mut folder, 0).unwrap().unwrap();
        assert_eq!(
            (seq, reports.len(), reports[0].pane),
            (7, 1, 2),
            "only what the index names"
        );
        folder.move_head(8);
        assert_eq!(news(&mut folder, 7).unwrap().unwrap().1.len(), 1);
    }

    #[test]
    fn reports_written_inline_are_read_from_the_index_with_no_file_of_their_own() {
        let mut folder = Memory::default();
        folder.0.insert(file_name(5, 1, false), report(1));
        let (small, big) = (report(2), report(3));
        let (n5, n7, n8) = (file_name(5, 1, false), file_name(7, 2, false), file_name(8, 3, true));
        folder.0.insert(n8.clone(), big.clone());
        let index = index_bytes([
            (n5.as_str(), None),
            (n7.as_str(), Some(&small[..])),
            (n8.as_str(), None),
        ]);
        assert!(index.starts_with(n8.as_bytes()), "newest first");
        folder.0.insert(INDEX.into(), index);
        folder.0.insert(HEAD.into(), b"8".to_vec());
        let (seq, reports) = news(&mut folder, 0).unwrap().unwrap();
        let panes: Vec<u32> = reports.iter().map(|r| r.pane).collect();
        assert_eq!((seq, panes), (8, vec![1, 2, 3]), "oldest first, inline or not");
        assert_eq!(news(&mut folder, 7).unwrap().unwrap().1.len(), 1);
        folder
            .0
            .insert(INDEX.into(), index_bytes([(n7.as_str(), Some(&b"{half"[..]))]));
        assert!(news(&mut folder, 0).is_err(), "a broken inline report is an error");
    }

    #[test]
    fn names_are_parsed_back_and_sessions_map_to_folders_one_to_one() {
        assert_eq!(seq_of("x.json"), None);
        assert_eq!(seq_of(HEAD), None);
        assert_eq!(seq_of(&file_name(12, 3, true)), Some(12));
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
}
