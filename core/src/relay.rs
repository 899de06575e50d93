//! The relay's wire format: what `turnstile relay` on another machine tells
//! the local watcher over one `ssh` connection, one JSON object per line on
//! its stdout ([`RelayMessage`]), and the reader that takes that stream
//! apart ([`RelayReader`]): a partial line waits for its end, a line over
//! [`MAX_RELAY_LINE`] is skipped and said, a line that is no message is
//! said and the stream goes on, and a stream that closes in the middle of a
//! line drops that half line. Nothing here trusts the other side: the host
//! checks each report against the local panes before it posts it.

use crate::protocol::PaneReport;
use crate::transcript::lines::{LineBuffer, Piece};
use serde::{Deserialize, Serialize};

/// The version of this format; a relay of another version is refused.
pub const RELAY_VERSION: u32 = 1;

/// The longest line a relay may send: a report with the largest answer
/// ([`crate::protocol::MAX_REPORT_ANSWER_BYTES`], escaped up to 6 bytes a
/// byte in JSON) and its verdicts.
pub const MAX_RELAY_LINE: usize = 6 * crate::protocol::MAX_REPORT_ANSWER_BYTES + (64 << 10);

/// One line of a relay's stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "relay", rename_all = "snake_case")]
pub enum RelayMessage {
    /// The first line: who speaks.
    Hello {
        /// The format's version ([`RELAY_VERSION`]).
        version: u32,
        /// The remote `turnstile`'s own version.
        turnstile: String,
        /// The remote machine's name (`uname -n`), for people.
        host: String,
    },
    /// A pane's report, as its watcher there made it: from the agent's log
    /// and status file (`hook: false`) or from a hook (`hook: true`).
    Report {
        /// The report (its pane is the local zellij pane id the remote
        /// agent's environment names).
        report: PaneReport,
        /// Whether a hook made it.
        #[serde(default)]
        hook: bool,
    },
    /// Nothing changed; the link is alive (sent every second, so that a
    /// relay whose stdout closed finds out and exits).
    Beat,
}

impl RelayMessage {
    /// The message as one line, newline included.
    pub fn to_line(&self) -> String {
        let mut line = serde_json::to_string(self).unwrap_or_else(|_| r#"{"relay":"beat"}"#.to_owned());
        line.push('\n');
        line
    }
}

/// What went wrong with one line of a relay's stream (the stream goes on).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineFault {
    /// A line over [`MAX_RELAY_LINE`] bytes, skipped; its length.
    TooLong(u64),
    /// A line that is no relay message: why, and its start.
    NotAMessage(String),
}

impl std::fmt::Display for LineFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LineFault::TooLong(len) => write!(f, "a {len}-byte line, over the relay's limit, skipped"),
            LineFault::NotAMessage(why) => write!(f, "a line that is no relay message ({why})"),
        }
    }
}

/// Takes a relay's stdout apart into messages, across reads of any size.
#[derive(Debug, Default)]
pub struct RelayReader {
    lines: LineBuffer,
    max_line: usize,
}

impl RelayReader {
    /// A reader with the relay's line limit.
    pub fn new() -> RelayReader {
        RelayReader::with_limit(MAX_RELAY_LINE)
    }

    /// A reader that skips lines over `max_line` bytes.
    pub fn with_limit(max_line: usize) -> RelayReader {
        RelayReader {
            lines: LineBuffer::default(),
            max_line,
        }
    }

    /// Feeds bytes read from the stream; returns what the lines they
    /// complete say, in order.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<Result<RelayMessage, LineFault>> {
        let mut out = Vec::new();
        self.lines.feed(bytes, self.max_line, |piece, _| match piece {
            Piece::TooLong(len) => out.push(Err(LineFault::TooLong(len))),
            Piece::Line(line) if line.iter().all(u8::is_ascii_whitespace) => {}
            Piece::Line(line) => out.push(parse(line)),
        });
        out
    }

    /// Bytes of a line not ended yet (dropped if the stream closes now).
    pub fn pending_bytes(&self) -> usize {
        self.lines.pending_bytes()
    }
}

fn parse(line: &[u8]) -> Result<RelayMessage, LineFault> {
    serde_json::from_slice(line).map_err(|e| {
        let start: String = String::from_utf8_lossy(&line[..line.len().min(40)])
            .chars()
            .filter(|c| !c.is_control())
            .collect();
        LineFault::NotAMessage(format!("{e}; it starts `{start}`"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::{Source, State, Verdict};

    fn report(pane: u32) -> RelayMessage {
        RelayMessage::Report {
            report: PaneReport {
                pane,
                agent: None,
                verdicts: vec![Verdict::new(State::Done, Source::Transcript, "turn ended", 7)],
                answer: Some("the answer".into()),
                since: None,
            },
            hook: false,
        }
    }

    #[test]
    fn messages_survive_the_line_and_come_back_the_same() {
        let hello = RelayMessage::Hello {
            version: RELAY_VERSION,
            turnstile: "0.1.0".into(),
            host: "box".into(),
        };
        let stream = [hello.to_line(), report(3).to_line(), RelayMessage::Beat.to_line()].concat();
        let got: Vec<_> = RelayReader::new().feed(stream.as_bytes());
        assert_eq!(got, vec![Ok(hello), Ok(report(3)), Ok(RelayMessage::Beat)]);
    }

    #[test]
    fn a_partial_line_waits_for_its_end_whatever_the_reads() {
        let line = report(4).to_line();
        let mut reader = RelayReader::new();
        let mut got = Vec::new();
        for byte in line.as_bytes() {
            got.extend(reader.feed(std::slice::from_ref(byte)));
        }
        assert_eq!(got, vec![Ok(report(4))]);
        assert_eq!(reader.pending_bytes(), 0);
        assert!(
            reader.feed(&line.as_bytes()[..10]).is_empty(),
            "half a line says nothing"
        );
        assert_eq!(reader.pending_bytes(), 10, "a stream closed now drops it");
    }

    #[test]
    fn a_hostile_line_is_said_and_the_stream_goes_on() {
        let mut reader = RelayReader::new();
        let stream = [
            "not json at all\n",
            "{\"relay\":\"run\",\"command\":\"rm -rf ~\"}\n",
            "\u{1b}]0;title\u{7}{\"relay\":\"beat\"}\n",
            "\n",
            "{\"relay\":\"report\",\"report\":{\"pane\":\"x\"}}\n",
            &RelayMessage::Beat.to_line(),
        ]
        .concat();
        let mut bytes = stream.into_bytes();
        bytes.extend_from_slice(b"\xff\xfe{\"relay\":\"beat\"}\n");
        let got = reader.feed(&bytes);
        assert_eq!(got.len(), 6, "{got:?}");
        assert!(
            got[..4].iter().all(|m| matches!(m, Err(LineFault::NotAMessage(_)))),
            "{got:?}"
        );
        assert_eq!(got[4], Ok(RelayMessage::Beat));
        assert!(matches!(got[5], Err(LineFault::NotAMessage(_))), "not UTF-8");
        let said = got[2].as_ref().unwrap_err().to_string();
        assert!(!said.contains('\u{1b}'), "no escape reaches a person: {said}");
    }

    #[test]
    fn a_huge_line_is_skipped_and_said_once() {
        let mut reader = RelayReader::with_limit(1_000);
        let mut got = reader.feed(&vec![b'{'; 700]);
        got.extend(reader.feed(&vec![b'x'; 5_000]));
        assert!(got.is_empty(), "nothing until its end");
        assert!(reader.pending_bytes() > 1_000, "its length is counted, not kept");
        got.extend(reader.feed(format!("x\n{}", RelayMessage::Beat.to_line()).as_bytes()));
        assert_eq!(got, vec![Err(LineFault::TooLong(5_702)), Ok(RelayMessage::Beat)]);
    }

    #[test]
    fn the_largest_answer_fits_the_line_limit() {
        let answer = "\"".repeat(crate::protocol::MAX_REPORT_ANSWER_BYTES);
        let mut message = report(1);
        if let RelayMessage::Report { report, .. } = &mut message {
            report.answer = Some(answer);
        }
        assert!(message.to_line().len() < MAX_RELAY_LINE);
        assert_eq!(RelayReader::new().feed(message.to_line().as_bytes()), vec![Ok(message)]);
    }
}
