//! What zellij hands the plugin on stdin: one line, `[8,1,18,…]\r\n`, a JSON
//! array of a protobuf message's bytes (an event, a pipe message, a host
//! call's answer).
//!
//! zellij-tile reads that line whole into a `String` (up to four characters
//! a byte, in a buffer that doubles as it grows) and only then parses it into
//! a `Vec<u8>` that doubles too: about nine times the message at once. A wasm
//! memory never shrinks, so the largest message a copy of the bar was ever
//! handed set its memory for good, in every tab. This reads the line in the
//! reader's chunks and hands each byte to a [`Sink`]: a `Vec` keeps them (at
//! most twice the message), a scanner keeps what it looks for (a pane's
//! whole scrollback, only to learn whether it is scrolled back).

use std::io::BufRead;

/// Where the bytes of a message go as they are read.
pub trait Sink {
    /// Takes the next byte.
    fn take(&mut self, byte: u8);
}

impl Sink for Vec<u8> {
    fn take(&mut self, byte: u8) {
        self.push(byte);
    }
}

/// The bytes of the message on stdin (`None`: the line is not a JSON array
/// of bytes; it is consumed all the same).
pub fn bytes() -> Option<Vec<u8>> {
    read_bytes(std::io::stdin().lock())
}

/// Hands the bytes of the message on stdin to `sink`; false when the line
/// is not a JSON array of bytes.
pub fn read_into(sink: &mut impl Sink) -> bool {
    read_line(std::io::stdin().lock(), sink)
}

/// Reads one line holding a JSON array of numbers 0–255 from `input`, and
/// nothing after the line's end.
pub fn read_bytes(input: impl BufRead) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    read_line(input, &mut bytes).then_some(bytes)
}

fn read_line(mut input: impl BufRead, sink: &mut impl Sink) -> bool {
    let mut line = ByteArray {
        sink,
        number: None,
        stage: Stage::Before,
    };
    loop {
        let Ok(chunk) = input.fill_buf() else {
            return false;
        };
        if chunk.is_empty() {
            return line.stage == Stage::After; // the input ended without a line end
        }
        let (used, ended) = line.feed(chunk);
        input.consume(used);
        if ended {
            return line.stage == Stage::After;
        }
    }
}

/// Where the parser stands in the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Before the `[`.
    Before,
    /// Right after the `[`.
    Opened,
    /// Inside the array: after a `,` (`number` empty) or in a number.
    Inside,
    /// After the `]`, up to the line end.
    After,
    /// Not an array of bytes: the rest of the line is skipped.
    Broken,
}

/// A streaming parser of one line `[n,n,…]`.
struct ByteArray<'a, S> {
    sink: &'a mut S,
    /// The number being read (`None`: no digit since `[` or `,`).
    number: Option<u16>,
    stage: Stage,
}

impl<S: Sink> ByteArray<'_, S> {
    /// Takes a chunk of the line; returns how much of it belongs to the line
    /// and whether the line ended there.
    fn feed(&mut self, chunk: &[u8]) -> (usize, bool) {
        for (i, &c) in chunk.iter().enumerate() {
            if c == b'\n' {
                return (i + 1, true);
            }
            self.stage = self.step(c);
        }
        (chunk.len(), false)
    }

    fn step(&mut self, c: u8) -> Stage {
        match (self.stage, c) {
            (Stage::Broken, _) => Stage::Broken,
            (Stage::Before | Stage::After, b' ' | b'\t' | b'\r') => self.stage,
            (Stage::Before, b'[') => Stage::Opened,
            (Stage::Opened, b']') => Stage::After,
            (Stage::Opened | Stage::Inside, b'0'..=b'9') => self.digit(c - b'0'),
            (Stage::Inside, b',') => self.end_number(Stage::Inside),
            (Stage::Inside, b']') => self.end_number(Stage::After),
            _ => Stage::Broken,
        }
    }

    fn digit(&mut self, d: u8) -> Stage {
        let number = self.number.unwrap_or(0) * 10 + u16::from(d);
        if number > 255 || self.number == Some(0) {
            return Stage::Broken; // not a byte, or a leading zero
        }
        self.number = Some(number);
        Stage::Inside
    }

    fn end_number(&mut self, next: Stage) -> Stage {
        match self.number.take() {
            Some(n) => {
                self.sink.take(n as u8);
                next
            }
            None => Stage::Broken, // `[,` or `,,` or `,]`
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufReader, Read};

    /// zellij's line for `bytes`.
    fn line(bytes: &[u8]) -> String {
        format!("{}\r\n", serde_json::to_string(bytes).unwrap())
    }

    /// Reads through a buffer of `capacity` bytes (chunks that cut numbers).
    fn read_in_chunks(text: &str, capacity: usize) -> (Option<Vec<u8>>, String) {
        let mut reader = BufReader::with_capacity(capacity, text.as_bytes());
        let got = read_bytes(&mut reader);
        let mut rest = String::new();
        reader.read_to_string(&mut rest).unwrap();
        (got, rest)
    }

    #[test]
    fn the_bytes_come_back_whatever_the_chunks() {
        let bytes: Vec<u8> = (0..=255).chain((0..700).map(|i| (i * 37 % 256) as u8)).collect();
        for capacity in [1, 2, 3, 7, 64, 8192] {
            let (got, rest) = read_in_chunks(&line(&bytes), capacity);
            assert_eq!(got.as_deref(), Some(&bytes[..]), "capacity {capacity}");
            assert_eq!(rest, "", "capacity {capacity}");
        }
    }

    #[test]
    fn nothing_after_the_line_is_read() {
        let text = format!("{}{}", line(&[1, 2]), line(&[3]));
        let (got, rest) = read_in_chunks(&text, 4);
        assert_eq!(got, Some(vec![1, 2]));
        assert_eq!(rest, line(&[3]));
    }

    #[test]
    fn an_empty_array_and_a_line_without_its_end_are_read() {
        assert_eq!(read_in_chunks("[]\r\n", 8).0, Some(vec![]));
        assert_eq!(read_in_chunks("[7,8]", 8).0, Some(vec![7, 8]));
        assert_eq!(read_in_chunks(" [ 7,8] \n", 8).0, None, "no spaces inside the array");
    }

    #[test]
    fn what_is_no_array_of_bytes_is_refused_and_its_line_consumed() {
        for bad in [
            "[256]", "[1,,2]", "[1,]", "[,1]", "[01]", "[1", "{}", "\"x\"", "[-1]", "[1.5]", "",
        ] {
            let text = format!("{bad}\n[9]\n");
            let (got, rest) = read_in_chunks(&text, 3);
            assert_eq!(got, None, "{bad:?}");
            assert_eq!(rest, "[9]\n", "{bad:?}");
        }
    }

    /// Set in the child process of the test below, which then reads stdin
    /// with zellij-tile's own reader.
    const READ_AS_ZELLIJ_TILE: &str = "TURNSTILE_SHIM_READ_AS_ZELLIJ_TILE";

    /// zellij's lines (`wasi_write_object`: `serde_json`, then `\r\n`)
    /// read by zellij-tile's `bytes_from_stdin` in a child process (this
    /// test binary, running only this test) and by [`read_bytes`] give the
    /// same bytes, line after line.
    #[test]
    fn it_reads_what_zellij_tiles_own_reader_reads() {
        if std::env::var_os(READ_AS_ZELLIJ_TILE).is_some() {
            while let Ok(bytes) = zellij_tile::shim::bytes_from_stdin() {
                println!("zellij-tile read {}", serde_json::to_string(&bytes).unwrap());
            }
            return;
        }
        let messages: Vec<Vec<u8>> = [0usize, 1, 2, 255, 256, 4097, 100_000]
            .iter()
            .enumerate()
            .map(|(n, &len)| (0..len).map(|i| ((i * 131 + n * 7) % 256) as u8).collect())
            .collect();
        let text: String = messages.iter().map(|m| line(m)).collect();
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "stdin::tests::it_reads_what_zellij_tiles_own_reader_reads",
                "--nocapture",
            ])
            .args(["--test-threads", "1"])
            .env(READ_AS_ZELLIJ_TILE, "1")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        let writer = std::thread::spawn({
            let text = text.clone();
            move || std::io::Write::write_all(&mut input, text.as_bytes())
        });
        let output = child.wait_with_output().unwrap();
        writer.join().unwrap().unwrap();
        assert!(output.status.success());
        let theirs: Vec<Vec<u8>> = String::from_utf8(output.stdout)
            .unwrap()
            .lines()
            // The harness starts the line ("test … ") that the first one ends.
            .filter_map(|l| l.split_once("zellij-tile read ").map(|(_, read)| read))
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(theirs, messages, "zellij-tile read every line");
        let mut reader = BufReader::with_capacity(7, text.as_bytes());
        let ours: Vec<Vec<u8>> = messages.iter().map(|_| read_bytes(&mut reader).unwrap()).collect();
        assert_eq!(ours, theirs);
    }

    #[test]
    fn it_agrees_with_serde_json_on_what_zellij_writes() {
        for len in [0, 1, 10, 1000] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 131 % 251) as u8).collect();
            let text = line(&bytes);
            let by_serde: Vec<u8> = serde_json::from_str(text.trim_end()).unwrap();
            assert_eq!(read_in_chunks(&text, 5).0, Some(by_serde));
        }
    }
}
