//! Splitting appended bytes into complete JSONL lines: a half-written last
//! line is held until its newline, a line longer than a limit is skipped
//! (and reported) instead of buffered. Shared by every transcript classifier.

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

/// The bytes of a half-written last line.
#[derive(Debug, Clone, Default)]
pub struct LineBuffer {
    partial: Vec<u8>,
    skipped: Option<u64>,
}

impl LineBuffer {
    /// Bytes of a half-written last line being held (or skipped).
    pub fn pending_bytes(&self) -> usize {
        self.skipped.map_or(self.partial.len(), |len| len as usize)
    }

    /// Feeds appended bytes; calls `on_piece` for each line they complete.
    pub fn feed(&mut self, mut bytes: &[u8], max_line: usize, mut on_piece: impl FnMut(Piece<'_>)) {
        while let Some(newline) = memchr::memchr(b'\n', bytes) {
            let (tail, rest) = bytes.split_at(newline + 1);
            match self.skipped.take() {
                Some(len) => on_piece(Piece::TooLong(len + tail.len() as u64)),
                None if self.partial.is_empty() => on_piece(Piece::Line(tail)),
                None => {
                    let mut line = std::mem::take(&mut self.partial);
                    line.extend_from_slice(tail);
                    on_piece(Piece::Line(&line));
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
        buffer.feed(bytes, max, |p| {
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
        b.feed(&[b'x'; 150], 100, |_| {});
        b.feed(b"yy\nok\n", 100, |p| lens.push(p.file_len()));
        assert_eq!(
            lens,
            vec![1 + 150 + 3, 3],
            "the skipped line's length counts every byte"
        );
    }
}
