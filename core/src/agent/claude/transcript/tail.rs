//! Cold classification from the end of a transcript file.
//!
//! Transcripts reach hundreds of megabytes. The verdict only depends on the
//! current turn, so the file is read backwards in chunks until the line that
//! started the turn (the last real user prompt); the incremental
//! [`Classifier`] then runs forward from there. The work is proportional to
//! the size of the last turn, bounded by [`TailOptions::max_scan_bytes`],
//! never to the size of the file.

use super::classifier::{Classifier, LATE_PROMPT_WINDOW};
use super::line::{self, Event};
use crate::transcript::TranscriptVerdict;
use std::io::{self, Read, Seek, SeekFrom};

/// Limits of the backward scan.
#[derive(Debug, Clone, Copy)]
pub struct TailOptions {
    /// Size of each backward read.
    pub chunk_bytes: usize,
    /// Give up looking for the turn start after this many bytes; classify
    /// from the earliest line reached (the reason says so).
    pub max_scan_bytes: u64,
    /// Count the lines before the turn start so verdicts name line numbers
    /// (reads the whole file: for `explain`, not for the hot path).
    pub count_lines: bool,
}

impl Default for TailOptions {
    fn default() -> Self {
        TailOptions {
            chunk_bytes: 64 << 10,
            max_scan_bytes: 64 << 20,
            count_lines: false,
        }
    }
}

/// The verdict of a cold read and where the classifier started.
#[derive(Debug, Clone)]
pub struct TailVerdict {
    /// The verdict, as the incremental classifier gives it.
    pub verdict: TranscriptVerdict,
    /// The classifier, positioned after the last complete line: keep feeding
    /// it appended bytes to go on incrementally.
    pub classifier: Classifier,
    /// Offset of the line the forward pass started at.
    pub start: u64,
    /// True when the scan limit was hit before a turn start was found.
    pub truncated: bool,
}

/// Classifies `file` from its tail. Only complete lines count.
pub fn classify_tail<R: Read + Seek>(file: &mut R, options: TailOptions) -> io::Result<TailVerdict> {
    let len = file.seek(SeekFrom::End(0))?;
    let (start, truncated) = find_turn_start(file, len, options)?;
    let lines_before = if options.count_lines {
        Some(count_lines(file, start)?)
    } else {
        None
    };
    let mut classifier = Classifier::starting_at(start, lines_before);
    file.seek(SeekFrom::Start(start))?;
    let mut chunk = vec![0u8; options.chunk_bytes.max(1)];
    let mut remaining = len - start;
    while remaining > 0 {
        let want = chunk.len().min(remaining as usize);
        let got = file.read(&mut chunk[..want])?;
        if got == 0 {
            break; // the file shrank under us: classify what we have
        }
        classifier.feed(&chunk[..got]);
        remaining -= got as u64;
    }
    let mut verdict = classifier.verdict();
    if truncated {
        verdict.reason.push_str(&format!(
            "; no turn start within the last {} bytes, classified from offset {start}",
            options.max_scan_bytes
        ));
    }
    Ok(TailVerdict {
        verdict,
        classifier,
        start,
        truncated,
    })
}

/// Offset of the last prompt line (or of the earliest line within the scan
/// limit, with `true`). A trailing line without newline is not considered.
fn find_turn_start<R: Read + Seek>(file: &mut R, len: u64, options: TailOptions) -> io::Result<(u64, bool)> {
    let chunk_len = options.chunk_bytes.max(1) as u64;
    let mut chunk = Vec::new();
    // `line_end` is the end (after its newline) of the line being delimited;
    // lines after it have been examined already.
    let mut line_end: Option<u64> = None;
    let mut pos = len;
    while pos > 0 {
        let from = pos.saturating_sub(chunk_len);
        read_at(file, from, (pos - from) as usize, &mut chunk)?;
        for i in memchr::memrchr_iter(b'\n', &chunk) {
            let newline_at = from + i as u64;
            if let Some(end) = line_end {
                let start = newline_at + 1;
                if let Some(prompt) = prompt_line(file, start, end, from, &chunk)? {
                    let answered_from = first_answer_before(file, start, &prompt)?;
                    return Ok((answered_from.unwrap_or(start), false));
                }
            }
            line_end = Some(newline_at + 1);
            if len - newline_at > options.max_scan_bytes {
                return Ok((newline_at + 1, true));
            }
        }
        // Checked per chunk too: a file without newlines (a sparse or
        // garbage one) must not be scanned to its start.
        if from > 0 && len - from >= options.max_scan_bytes {
            return Ok((from, true));
        }
        pos = from;
    }
    Ok((0, false))
}

/// Reads `[start, end)` (from the chunk when it lies inside); when it is a
/// real user prompt, returns its metadata.
fn prompt_line<R: Read + Seek>(
    file: &mut R,
    start: u64,
    end: u64,
    chunk_from: u64,
    chunk: &[u8],
) -> io::Result<Option<line::LineMeta>> {
    let chunk_end = chunk_from + chunk.len() as u64;
    let owned;
    let bytes: &[u8] = if start >= chunk_from && end <= chunk_end {
        &chunk[(start - chunk_from) as usize..(end - chunk_from) as usize]
    } else {
        let mut buf = Vec::new();
        read_at(file, start, (end - start) as usize, &mut buf)?;
        owned = buf;
        &owned
    };
    if !line::may_be_prompt(bytes) {
        return Ok(None);
    }
    let (event, meta) = line::parse(bytes);
    Ok((event == Event::Prompt).then_some(meta))
}

/// How far before a prompt its answers may have been written (old releases
/// flush a session's first prompt after the lines that answer it).
const LATE_PROMPT_BYTES: u64 = 64 << 10;

/// When the prompt at `prompt_start` was written late, the start of the
/// first line that answers it (the turn's real start in the file).
fn first_answer_before<R: Read + Seek>(
    file: &mut R,
    prompt_start: u64,
    prompt: &line::LineMeta,
) -> io::Result<Option<u64>> {
    let Some(uuid) = prompt.uuid.as_deref() else {
        return Ok(None);
    };
    let from = prompt_start.saturating_sub(LATE_PROMPT_BYTES);
    let mut window = Vec::new();
    read_at(file, from, (prompt_start - from) as usize, &mut window)?;
    if memchr::memmem::find(&window, uuid.as_bytes()).is_none() {
        return Ok(None);
    }
    let mut starts: Vec<usize> = memchr::memchr_iter(b'\n', &window).map(|i| i + 1).collect();
    starts.pop(); // the prompt's own start
    if from == 0 {
        starts.insert(0, 0);
    }
    let recent = &starts[starts.len().saturating_sub(LATE_PROMPT_WINDOW)..];
    Ok(recent.iter().find_map(|&start| {
        let end = memchr::memchr(b'\n', &window[start..]).map_or(window.len(), |i| start + i + 1);
        let bytes = &window[start..end];
        let names_it = memchr::memmem::find(bytes, uuid.as_bytes()).is_some()
            && line::parse(bytes).1.parent_uuid.as_deref() == Some(uuid);
        names_it.then_some(from + start as u64)
    }))
}

fn count_lines<R: Read + Seek>(file: &mut R, end: u64) -> io::Result<u64> {
    file.seek(SeekFrom::Start(0))?;
    let mut reader = file.take(end);
    let mut buf = vec![0u8; 1 << 16];
    let mut lines = 0;
    loop {
        match reader.read(&mut buf)? {
            0 => return Ok(lines),
            n => lines += memchr::memchr_iter(b'\n', &buf[..n]).count() as u64,
        }
    }
}

fn read_at<R: Read + Seek>(file: &mut R, from: u64, len: usize, buf: &mut Vec<u8>) -> io::Result<()> {
    buf.clear();
    file.seek(SeekFrom::Start(from))?;
    file.take(len as u64).read_to_end(buf)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::State;
    use std::io::Cursor;

    fn cold(bytes: &[u8], chunk: usize) -> TailVerdict {
        let options = TailOptions {
            chunk_bytes: chunk,
            ..TailOptions::default()
        };
        classify_tail(&mut Cursor::new(bytes), options).unwrap()
    }

    const PROMPT: &str = r#"{"type":"user","message":{"content":"go"}}"#;
    const FINAL: &str =
        r#"{"type":"assistant","message":{"id":"m","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn"}}"#;

    #[test]
    fn starts_at_the_last_prompt() {
        let text = format!("{PROMPT}\n{FINAL}\n{PROMPT}\n{FINAL}\n");
        for chunk in [1, 7, 64, 1 << 16] {
            let t = cold(text.as_bytes(), chunk);
            assert_eq!(t.start as usize, PROMPT.len() + FINAL.len() + 2, "chunk {chunk}");
            assert_eq!(t.verdict.state, State::Done);
        }
    }

    #[test]
    fn ignores_a_half_written_last_line() {
        let text = format!("{PROMPT}\n{}", &FINAL[..30]);
        assert_eq!(cold(text.as_bytes(), 16).verdict.state, State::Working);
    }

    #[test]
    fn empty_file_is_unknown() {
        let t = cold(b"", 16);
        assert_eq!((t.verdict.state, t.start), (State::Unknown, 0));
    }

    #[test]
    fn scan_limit_classifies_from_the_earliest_line_reached() {
        let mut text = format!("{PROMPT}\n");
        for _ in 0..100 {
            text.push_str(FINAL);
            text.push('\n');
        }
        let options = TailOptions {
            chunk_bytes: 256,
            max_scan_bytes: 1000,
            count_lines: true,
        };
        let t = classify_tail(&mut Cursor::new(text.as_bytes()), options).unwrap();
        assert!(t.truncated);
        assert!(t.start > 0);
        assert_eq!(t.verdict.state, State::Done);
        assert!(t.verdict.reason.contains("no turn start"));
        assert_eq!(t.verdict.line, Some(101), "counted lines name the deciding line");
    }

    #[test]
    fn cold_classifier_keeps_going_incrementally() {
        let text = format!("{PROMPT}\n");
        let mut t = cold(text.as_bytes(), 8);
        t.classifier.feed(format!("{FINAL}\n").as_bytes());
        assert_eq!(t.classifier.verdict().state, State::Done);
    }
}
