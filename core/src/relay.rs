//! The relay's wire format: what `turnstile relay` on another machine tells
//! the local watcher over one `ssh` connection, one JSON object per line on
//! its stdout ([`RelayMessage`]), and the reader that takes that stream
//! apart ([`RelayReader`]): a partial line waits for its end, a line over
//! [`MAX_RELAY_LINE`] is skipped and said, a line that is no message is
//! said and the stream goes on, and a stream that closes in the middle of a
//! line drops that half line. Nothing here trusts the other side: what the
//! local watcher keeps of one relay ([`RemotePanes`]) takes a report only
//! for a local pane whose `ssh` reaches that relay's machine, marks it
//! remote, and caps its answer.

use crate::protocol::{capped_answer, AgentBinding, PaneReport, Remote};
use crate::transcript::lines::{LineBuffer, Piece};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

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

/// The bit that marks a pane id a relay made up for an agent whose
/// environment names no pane (its machine's sshd dropped `ZELLIJ_*`): the
/// rest says its `SSH_CLIENT` address and port ([`client_pane`]).
pub const CLIENT_PANE: u32 = 1 << 31;

/// The made-up pane id of an agent that came in from `address` (its
/// `SSH_CLIENT`'s first two words: `127.0.0.1 54321`): the local watcher
/// finds the one pane whose `ssh` has that source address and port. `None`
/// for what is no address and port.
pub fn client_pane(address: &str, port: &str) -> Option<u32> {
    let address: std::net::IpAddr = address.trim().parse().ok()?;
    let port: u16 = port.trim().parse().ok()?;
    // FNV-1a of the address's canonical text, folded to 15 bits.
    let hash = address
        .to_string()
        .bytes()
        .fold(0x811c_9dc5_u32, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193));
    let folded = (hash ^ (hash >> 15) ^ (hash >> 30)) & 0x7fff;
    Some(CLIENT_PANE | (folded << 16) | u32::from(port))
}

/// What the local watcher keeps of one relay: the local panes that may
/// speak through it (those whose `ssh` reaches its machine), and the agent
/// each one reported, to say so when the link is lost.
#[derive(Debug, Clone, Default)]
pub struct RemotePanes {
    host: String,
    trusted: BTreeSet<u32>,
    /// Made-up pane ids ([`client_pane`]) of this machine's panes' `ssh`
    /// connections, to the pane.
    clients: BTreeMap<u32, u32>,
    reported: BTreeMap<u32, AgentBinding>,
    /// Panes reported before the link came back, not yet again.
    stale: BTreeSet<u32>,
    greeted: bool,
}

impl RemotePanes {
    /// A relay on `host` (the `ssh` destination's host, as people name it).
    pub fn new(host: &str) -> RemotePanes {
        RemotePanes {
            host: host.to_owned(),
            ..RemotePanes::default()
        }
    }

    /// The local panes that run an `ssh` to this relay's machine now; an
    /// empty report for each pane it reported that no longer does (its
    /// `ssh` exited: so did the agent, for this session).
    pub fn trust(&mut self, panes: BTreeSet<u32>) -> Vec<PaneReport> {
        self.trust_clients(panes, BTreeMap::new())
    }

    /// [`RemotePanes::trust`], with the made-up pane ids ([`client_pane`])
    /// of the panes' own direct connections: a report for one of them is
    /// that pane's. (Under a ControlMaster or a ProxyJump no pane's process
    /// holds the connection: such an agent shows its screen only.)
    pub fn trust_clients(&mut self, panes: BTreeSet<u32>, clients: BTreeMap<u32, u32>) -> Vec<PaneReport> {
        self.clients = clients.into_iter().filter(|(_, pane)| panes.contains(pane)).collect();
        self.trusted = panes;
        let gone: Vec<u32> = self
            .reported
            .keys()
            .filter(|p| !self.trusted.contains(p))
            .copied()
            .collect();
        gone.into_iter().map(|pane| self.forget(pane)).collect()
    }

    /// True once the relay said hello in this link's version.
    pub fn greeted(&self) -> bool {
        self.greeted
    }

    /// Takes one message: the reports to post (each with whether a hook
    /// made it), or why the relay is refused.
    pub fn hear(&mut self, message: RelayMessage) -> Result<Vec<(PaneReport, bool)>, String> {
        match message {
            RelayMessage::Hello { version, turnstile, .. } if version != RELAY_VERSION => Err(format!(
                "its turnstile {turnstile} speaks relay version {version}, this one {RELAY_VERSION}: \
                 run `turnstile setup --remote {}`",
                self.host
            )),
            RelayMessage::Hello { .. } => {
                self.greeted = true;
                self.stale = self.reported.keys().copied().collect();
                Ok(Vec::new())
            }
            RelayMessage::Report { .. } | RelayMessage::Beat if !self.greeted => {
                Err("it spoke before its hello".to_owned())
            }
            RelayMessage::Report { report, hook } => Ok(self.take(report, hook).into_iter().collect()),
            // A relay says everything it knows before its first beat: what
            // it no longer reports is gone.
            RelayMessage::Beat => {
                let stale: Vec<u32> = std::mem::take(&mut self.stale).into_iter().collect();
                Ok(stale.into_iter().map(|pane| (self.forget(pane), false)).collect())
            }
        }
    }

    /// The link is lost: each pane it reported keeps its agent, marked
    /// lost, and nothing else (its screen alone speaks).
    pub fn lost(&mut self) -> Vec<PaneReport> {
        self.greeted = false;
        let mark = |(pane, agent): (&u32, &AgentBinding)| PaneReport {
            pane: *pane,
            agent: Some(AgentBinding {
                remote: Some(self.remote(true)),
                ..agent.clone()
            }),
            ..PaneReport::default()
        };
        self.reported.iter().map(mark).collect()
    }

    fn take(&mut self, mut report: PaneReport, hook: bool) -> Option<(PaneReport, bool)> {
        if report.pane & CLIENT_PANE != 0 {
            report.pane = *self.clients.get(&report.pane)?;
        }
        if !self.trusted.contains(&report.pane) {
            return None; // a pane this machine's ssh does not run
        }
        self.stale.remove(&report.pane);
        report.answer = report.answer.map(capped_answer);
        match &mut report.agent {
            Some(agent) => {
                agent.remote = Some(self.remote(false));
                self.reported.insert(report.pane, agent.clone());
            }
            None if !hook => {
                self.reported.remove(&report.pane);
            }
            None => {}
        }
        Some((report, hook))
    }

    /// Where its agents run, and whether the link is lost.
    fn remote(&self, lost: bool) -> Remote {
        Remote {
            host: self.host.clone(),
            lost,
        }
    }

    fn forget(&mut self, pane: u32) -> PaneReport {
        self.reported.remove(&pane);
        PaneReport {
            pane,
            ..PaneReport::default()
        }
    }
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

    fn hello() -> RelayMessage {
        RelayMessage::Hello {
            version: RELAY_VERSION,
            turnstile: "0.1.0".into(),
            host: "gpu-01".into(),
        }
    }

    fn agent_report(pane: u32) -> RelayMessage {
        let RelayMessage::Report { mut report, hook } = report(pane) else {
            unreachable!()
        };
        report.agent = Some(AgentBinding {
            pid: 4242,
            transcript: Some("/home/me/.claude/projects/x/s.jsonl".into()),
            ..AgentBinding::default()
        });
        RelayMessage::Report { report, hook }
    }

    fn relay_for(panes: &[u32]) -> RemotePanes {
        let mut relay = RemotePanes::new("gpu");
        relay.trust(panes.iter().copied().collect());
        relay
    }

    #[test]
    fn a_report_is_taken_only_for_a_pane_whose_ssh_reaches_the_relay() {
        let mut relay = relay_for(&[3]);
        assert_eq!(relay.hear(hello()), Ok(vec![]));
        let taken = relay.hear(agent_report(3)).unwrap();
        let remote = taken[0].0.agent.as_ref().unwrap().remote.clone().unwrap();
        assert_eq!(
            (remote.host.as_str(), remote.lost),
            ("gpu", false),
            "marked remote: not a local path"
        );
        assert_eq!(
            relay.hear(agent_report(4)),
            Ok(vec![]),
            "pane 4 runs no ssh to gpu: a neighbour's state is never shown"
        );
    }

    #[test]
    fn nothing_is_taken_before_a_hello_of_this_version() {
        let mut relay = relay_for(&[3]);
        assert!(relay.hear(agent_report(3)).is_err());
        let old = RelayMessage::Hello {
            version: RELAY_VERSION + 1,
            turnstile: "9.0.0".into(),
            host: "gpu".into(),
        };
        let why = relay.hear(old).unwrap_err();
        assert!(why.contains("turnstile setup --remote gpu"), "{why}");
        assert!(!relay.greeted());
    }

    #[test]
    fn a_lost_link_keeps_the_agents_marked_lost_and_a_reconnect_drops_the_gone() {
        let mut relay = relay_for(&[3, 5]);
        relay.hear(hello()).unwrap();
        relay.hear(agent_report(3)).unwrap();
        relay.hear(agent_report(5)).unwrap();
        let lost = relay.lost();
        assert_eq!(lost.len(), 2);
        assert!(lost
            .iter()
            .all(|r| r.verdicts.is_empty() && r.agent.as_ref().unwrap().remote.as_ref().unwrap().lost));
        assert!(relay.hear(agent_report(3)).is_err(), "a new link says hello first");
        relay.hear(hello()).unwrap();
        relay.hear(agent_report(3)).unwrap();
        let gone = relay.hear(RelayMessage::Beat).unwrap();
        assert_eq!(gone.len(), 1, "the agent of pane 5 ended while the link was down");
        assert_eq!((gone[0].0.pane, gone[0].0.agent.is_none()), (5, true));
        assert_eq!(relay.hear(RelayMessage::Beat), Ok(vec![]));
    }

    #[test]
    fn a_pane_whose_ssh_exits_loses_its_agent_and_a_huge_answer_is_capped() {
        let mut relay = relay_for(&[3]);
        relay.hear(hello()).unwrap();
        let RelayMessage::Report { mut report, .. } = agent_report(3) else {
            unreachable!()
        };
        report.answer = Some("a".repeat(crate::protocol::MAX_REPORT_ANSWER_BYTES + 10));
        let taken = relay.hear(RelayMessage::Report { report, hook: false }).unwrap();
        assert!(taken[0].0.answer.as_ref().unwrap().len() < crate::protocol::MAX_REPORT_ANSWER_BYTES + 100);
        let gone = relay.trust(BTreeSet::new());
        assert_eq!((gone.len(), gone[0].agent.is_none()), (1, true));
        assert!(relay.lost().is_empty());
    }

    #[test]
    fn an_agent_that_names_no_pane_is_its_direct_connections_pane_and_no_other() {
        let client = client_pane("127.0.0.1", "54321").unwrap();
        assert_ne!(client, client_pane("127.0.0.2", "54321").unwrap());
        assert_eq!(
            client_pane("::1", "22"),
            client_pane("0:0:0:0:0:0:0:1", "22"),
            "one text per address"
        );
        assert_eq!(client_pane("box", "22"), None);
        let mut relay = RemotePanes::new("gpu");
        relay.trust_clients(BTreeSet::from([3, 4]), BTreeMap::from([(client, 4)]));
        relay.hear(hello()).unwrap();
        let RelayMessage::Report { mut report, hook } = agent_report(0) else {
            unreachable!()
        };
        report.pane = client;
        let taken = relay
            .hear(RelayMessage::Report {
                report: report.clone(),
                hook,
            })
            .unwrap();
        assert_eq!(taken[0].0.pane, 4);
        report.pane = client_pane("127.0.0.1", "1111").unwrap();
        assert_eq!(
            relay.hear(RelayMessage::Report { report, hook }),
            Ok(vec![]),
            "no pane has that connection"
        );
    }
}
