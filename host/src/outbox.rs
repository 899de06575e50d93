//! Where a watcher's reports go ([`Outbox`]): the session's mailbox on
//! this machine, or, for `turnstile relay` on another machine, its stdout
//! ([`RelayOut`]: one [`RelayMessage`] a line, read over `ssh` by the
//! watcher of the machine the zellij session runs on).

use super::mailbox::Mailbox;
use crate::error::{Error, Result};
use std::io::Write;
use std::time::{Duration, Instant};
use turnstile_core::protocol::PaneReport;
use turnstile_core::relay::{RelayMessage, RELAY_VERSION};

/// Takes a watcher's reports.
pub trait Outbox {
    /// Puts in a report from an agent's log or status file.
    fn send(&mut self, report: PaneReport);
    /// Puts in a hook's report.
    fn send_hook(&mut self, report: PaneReport);
    /// Hands over what was put in since the last time.
    fn flush(&mut self);
    /// Called once a second, whatever changed.
    fn tick(&mut self) {}
    /// How the watcher ends, once it must: with this exit code, or this error.
    fn ended(&mut self) -> Option<Result<i32>>;
}

impl Outbox for Mailbox {
    fn send(&mut self, report: PaneReport) {
        Mailbox::send(self, report);
    }

    fn send_hook(&mut self, report: PaneReport) {
        Mailbox::send_hook(self, report);
    }

    fn flush(&mut self) {
        Mailbox::flush(self);
    }

    fn ended(&mut self) -> Option<Result<i32>> {
        self.failure().map(|why| Err(Error::msg(why)))
    }
}

/// How long a relay stays silent at most: then it says it is alive, and
/// finds out whether anyone still reads it.
pub const BEAT_EVERY: Duration = Duration::from_secs(1);

/// A relay's stdout: each report one line, a beat each second of silence.
/// The first write that fails (the `ssh` that read it is gone) ends the
/// relay, with exit code 0.
pub struct RelayOut<W: Write> {
    out: W,
    pending: Vec<RelayMessage>,
    last_write: Instant,
    closed: bool,
}

impl<W: Write> RelayOut<W> {
    /// A relay writing to `out`; says hello first.
    pub fn new(out: W, host: &str) -> RelayOut<W> {
        let mut relay = RelayOut {
            out,
            pending: Vec::new(),
            last_write: Instant::now(),
            closed: false,
        };
        relay.write(&[RelayMessage::Hello {
            version: RELAY_VERSION,
            turnstile: env!("CARGO_PKG_VERSION").to_owned(),
            host: host.to_owned(),
        }]);
        relay
    }

    fn write(&mut self, messages: &[RelayMessage]) {
        if self.closed {
            return;
        }
        let bytes: String = messages.iter().map(RelayMessage::to_line).collect();
        self.closed = self
            .out
            .write_all(bytes.as_bytes())
            .and_then(|()| self.out.flush())
            .is_err();
        self.last_write = Instant::now();
    }

    /// The writer, for tests.
    pub fn into_inner(self) -> W {
        self.out
    }
}

impl<W: Write> Outbox for RelayOut<W> {
    fn send(&mut self, report: PaneReport) {
        self.pending.push(RelayMessage::Report { report, hook: false });
    }

    fn send_hook(&mut self, report: PaneReport) {
        self.pending.push(RelayMessage::Report { report, hook: true });
    }

    fn flush(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        if !pending.is_empty() {
            self.write(&pending);
        }
    }

    fn tick(&mut self) {
        if self.last_write.elapsed() >= BEAT_EVERY {
            self.write(&[RelayMessage::Beat]);
        }
    }

    fn ended(&mut self) -> Option<Result<i32>> {
        self.closed.then_some(Ok(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnstile_core::relay::RelayReader;

    /// A pipe whose reader went away after `room` bytes.
    struct Closing {
        written: Vec<u8>,
        room: usize,
    }

    impl Write for Closing {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.written.len() + buf.len() > self.room {
                return Err(std::io::ErrorKind::BrokenPipe.into());
            }
            self.written.extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn report(pane: u32) -> PaneReport {
        PaneReport {
            pane,
            agent: None,
            verdicts: Vec::new(),
            answer: None,
            since: None,
        }
    }

    #[test]
    fn reports_go_out_as_lines_after_the_hello_and_only_on_flush() {
        let mut relay = RelayOut::new(Vec::new(), "box");
        relay.send(report(3));
        relay.send_hook(report(4));
        let said_before_flush = relay.out.len();
        relay.flush();
        let bytes = relay.into_inner();
        let messages = RelayReader::new().feed(&bytes);
        assert!(said_before_flush > 0, "the hello is said at once");
        assert!(matches!(
            messages[0],
            Ok(RelayMessage::Hello {
                version: RELAY_VERSION,
                ..
            })
        ));
        assert_eq!(
            messages[1],
            Ok(RelayMessage::Report {
                report: report(3),
                hook: false
            })
        );
        assert_eq!(
            messages[2],
            Ok(RelayMessage::Report {
                report: report(4),
                hook: true
            })
        );
    }

    #[test]
    fn a_closed_stdout_ends_the_relay_quietly() {
        let mut relay = RelayOut::new(
            Closing {
                written: Vec::new(),
                room: 200,
            },
            "box",
        );
        assert!(relay.ended().is_none());
        for pane in 0..10 {
            relay.send(report(pane));
            relay.flush();
        }
        assert!(matches!(relay.ended(), Some(Ok(0))), "the reader is gone: exit 0");
    }

    #[test]
    fn a_silent_relay_beats_so_a_closed_stdout_is_found() {
        let mut relay = RelayOut::new(
            Closing {
                written: Vec::new(),
                room: 100,
            },
            "box",
        );
        relay.last_write -= BEAT_EVERY;
        relay.tick();
        let beats = RelayReader::new().feed(&relay.out.written);
        assert_eq!(beats.last(), Some(&Ok(RelayMessage::Beat)));
        relay.out.room = 0;
        relay.last_write -= BEAT_EVERY;
        relay.tick();
        assert!(matches!(relay.ended(), Some(Ok(0))));
    }
}
