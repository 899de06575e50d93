//! Splitting appended bytes into complete JSONL lines: a half-written last
//! line is held until its newline, a line longer than a limit is skipped
//! (and reported) instead of buffered. Shared by every transcript classifier.

use std::io::{self, Read, Seek, SeekFrom};

/// Reads the last `max` bytes of a log from its first line start within
/// them: `start` is called with that offset (0 for a smaller file) and
/// returns what `feed` then gets the rest of the file in chunks. For the
/// cold path of an append-only log whose turn is decided near its end.
pub fn read_tail<R: Read + Seek, C>(
    file: &mut R,
    max: u64,
    start: impl FnOnce(u64) -> C,
    mut feed: impl FnMut(&mut C, &[u8]),
) -> io::Result<C> {
    let len = file.seek(SeekFrom::End(0))?;
    let from = len.saturating_sub(max);
    let mut offset = from;
    if from > 0 {
        // Skip to the first line that starts inside the tail.
        file.seek(SeekFrom::Start(from - 1))?;
        let mut byte = [0u8; 1];
        while file.read(&mut byte)? == 1 && byte[0] != b'\n' {
            offset += 1;
        }
    } else {
        file.seek(SeekFrom::Start(0))?;
    }
    let mut classifier = start(offset);
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        let n = file.read(&mut chunk)?;
        if n == 0 {
            return Ok(classifier);
        }
        feed(&mut classifier, &chunk[..n]);
    }
}

/// A line longer than this is skipped (and reported) instead of buffered,
/// by every log classifier alike.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// One complete line out of the appended bytes.
pub enum Piece<'a> {
    /// A line, newline included.
    Line(&'a [u8]),
    /// A line longer than the limit, skipped; its length, newline included.
    TooLong(u64),
}

impl Piece<'_> {
    /// Its length in the file, newline included.
    pub fn file_len(&self) -> u64 {
        match self {
            Piece::Line(line) => line.len() as u64,
            Piece::TooLong(len) => *len,
        }
    }
}

/// The bytes of a half-written last line, and where the complete ones end.
#[derive(Debug, Clone, Default)]
pub struct LineBuffer {
    partial: Vec<u8>,
    skipped: Option<u64>,
    offset: u64,
}

impl LineBuffer {
    /// A buffer for a file read from `offset`, a line start.
    pub fn starting_at(offset: u64) -> Self {
        LineBuffer {
            offset,
            ..LineBuffer::default()
        }
    }

    /// Bytes consumed so far as complete lines (the next line's start).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Bytes of a half-written last line being held (or skipped).
    pub fn pending_bytes(&self) -> usize {
        self.skipped.map_or(self.partial.len(), |len| len as usize)
    }

    /// Feeds appended bytes; calls `on_piece` for each line they complete,
    /// with the offset just after it.
    pub fn feed(&mut self, mut bytes: &[u8], max_line: usize, mut on_piece: impl FnMut(Piece<'_>, u64)) {
        while let Some(newline) = memchr::memchr(b'\n', bytes) {
            let (tail, rest) = bytes.split_at(newline + 1);
            let piece_len = self.partial.len() as u64 + tail.len() as u64 + self.skipped.unwrap_or(0);
            self.offset += piece_len;
            match self.skipped.take() {
                Some(len) => on_piece(Piece::TooLong(len + tail.len() as u64), self.offset),
                None if self.partial.is_empty() => on_piece(Piece::Line(tail), self.offset),
                None => {
                    let mut line = std::mem::take(&mut self.partial);
                    line.extend_from_slice(tail);
                    on_piece(Piece::Line(&line), self.offset);
                }
            }
            bytes = rest;
        }
        match &mut self.skipped {
            Some(len) => *len += bytes.len() as u64,
            None if self.partial.len() + bytes.len() > max_line => {
                self.skipped = Some((self.partial.len() + bytes.len()) as u64);
                self.partial = Vec::new();
            }
            None => self.partial.extend_from_slice(bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(buffer: &mut LineBuffer, bytes: &[u8], max: usize) -> Vec<Option<Vec<u8>>> {
        let mut out = Vec::new();
        buffer.feed(bytes, max, |p, _| {
            out.push(match p {
                Piece::Line(l) => Some(l.to_vec()),
                Piece::TooLong(_) => None,
            })
        });
        out
    }

    #[test]
    fn lines_complete_across_feeds_and_long_ones_are_skipped() {
        let mut b = LineBuffer::default();
        assert!(pieces(&mut b, b"{\"a\":", 100).is_empty());
        assert_eq!(b.pending_bytes(), 5);
        assert_eq!(
            pieces(&mut b, b"1}\n{}\n{", 100),
            vec![Some(b"{\"a\":1}\n".to_vec()), Some(b"{}\n".to_vec())]
        );
        let mut lens = Vec::new();
        let mut ends = Vec::new();
        b.feed(&[b'x'; 150], 100, |_, _| {});
        b.feed(b"yy\nok\n", 100, |p, end| {
            lens.push(p.file_len());
            ends.push(end);
        });
        assert_eq!(
            lens,
            vec![1 + 150 + 3, 3],
            "the skipped line's length counts every byte"
        );
        assert_eq!(
            ends,
            vec![11 + 154, 11 + 154 + 3],
            "each piece with the offset after it"
        );
        assert_eq!(b.offset(), 11 + 157);
    }
}

/// A complete line parsed as `T`, when it is not blank and `may_matter` (a
/// cheap filter on its bytes, before any parsing) lets it through; a line
/// that may matter but does not parse is counted in `invalid`.
pub fn parse_line<T: serde::de::DeserializeOwned>(
    bytes: &[u8],
    may_matter: fn(&[u8]) -> bool,
    invalid: &mut u64,
) -> Option<T> {
    let trimmed = bytes.trim_ascii();
    if trimmed.is_empty() || !may_matter(trimmed) {
        return None;
    }
    let parsed = serde_json::from_slice(trimmed).ok();
    *invalid += u64::from(parsed.is_none());
    parsed
}

/// What one kind's classifier of an append-only JSONL log decides, line by
/// line: the rules [`LineClassifier`] feeds complete lines to.
pub trait LineRules: std::fmt::Debug + Default + Clone + Send + 'static {
    /// Applies the complete line that ends at byte `end`.
    fn apply(&mut self, line: &[u8], end: u64);
    /// Counts a line too long to read.
    fn skip_too_long(&mut self);
    /// The verdict after the lines applied so far.
    fn verdict(&self) -> crate::transcript::TranscriptVerdict;
}

/// The rules of a kind that keeps no log: nothing ever decides.
#[derive(Debug, Clone, Default)]
pub struct NoLog;

impl LineRules for NoLog {
    fn apply(&mut self, _line: &[u8], _end: u64) {}
    fn skip_too_long(&mut self) {}
    fn verdict(&self) -> crate::transcript::TranscriptVerdict {
        crate::transcript::Turn::default().verdict()
    }
}

/// An incremental classifier of an append-only JSONL log: appended bytes
/// in, complete lines out to its [`LineRules`] (a half-written last line
/// held, an over-long one skipped); O(appended bytes).
#[derive(Debug, Clone, Default)]
pub struct LineClassifier<R> {
    lines: LineBuffer,
    rules: R,
}

impl<R: LineRules> LineClassifier<R> {
    /// A classifier that starts at `offset`, a line start.
    pub fn starting_at(offset: u64) -> Self {
        LineClassifier::with_rules(offset, R::default())
    }

    /// A classifier with these `rules` (rules read from a file, say) that
    /// starts at `offset`, a line start.
    pub fn with_rules(offset: u64, rules: R) -> Self {
        LineClassifier {
            lines: LineBuffer::starting_at(offset),
            rules,
        }
    }

    /// Classifies a log cold from its last `tail` bytes (from the first
    /// line that starts within them).
    pub fn from_tail<F: Read + Seek>(file: &mut F, tail: u64) -> io::Result<Self> {
        LineClassifier::from_tail_with(file, tail, R::default())
    }

    /// [`LineClassifier::from_tail`], with these `rules`.
    pub fn from_tail_with<F: Read + Seek>(file: &mut F, tail: u64, rules: R) -> io::Result<Self> {
        read_tail(
            file,
            tail,
            |offset| Self::with_rules(offset, rules),
            |c, bytes| c.feed(bytes),
        )
    }

    /// Bytes consumed so far as complete lines.
    pub fn offset(&self) -> u64 {
        self.lines.offset()
    }

    /// Bytes of a half-written last line being held.
    pub fn pending_bytes(&self) -> usize {
        self.lines.pending_bytes()
    }

    /// Feeds bytes appended to the log. Only complete lines count.
    pub fn feed(&mut self, bytes: &[u8]) {
        let rules = &mut self.rules;
        self.lines.feed(bytes, MAX_LINE_BYTES, |piece, end| match piece {
            Piece::Line(line) => rules.apply(line, end),
            Piece::TooLong(_) => rules.skip_too_long(),
        });
    }

    /// The verdict after everything fed so far.
    pub fn verdict(&self) -> crate::transcript::TranscriptVerdict {
        self.rules.verdict()
    }

    /// Its rules, with what they gathered so far.
    pub fn rules(&self) -> &R {
        &self.rules
    }
}
