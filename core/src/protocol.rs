//! Messages between the native `turnstile` command and the plugin.
//!
//! - [`HostReport`]: the JSON `turnstile status --json` prints for the panes
//!   the plugin asks about (one run answers for all of them);
//! - [`PaneReport`]: one pane's verdicts; also the payload of the `verdict`
//!   pipe message a native process pushes to the plugin;
//! - [`PaneSummary`]: one row of the `state` pipe's answer.

use crate::agent::AgentKind;
use crate::verdict::{Millis, Source, State, Verdict};
use serde::{Deserialize, Serialize};

/// Name of the pipe message that asks for the state of all panes.
pub const PIPE_STATE: &str = "state";
/// Name of the pipe message that pushes a [`PaneReport`].
pub const PIPE_VERDICT: &str = "verdict";
/// Name of the watcher's long-lived channel: each message is a JSON array
/// of [`PaneReport`]s (see [`parse_push`]).
pub const PIPE_PUSH: &str = "turnstile-push";
/// Name of the pipe the leading copy of the bar hands rows to the others with.
pub const PIPE_SYNC: &str = "turnstile-sync";
/// The turn end the leader acted on (routed, or said why not), sent to
/// every other copy: `{"pane":1,"turn":"<identity>","answer":<hash>}`. A
/// copy that takes the lead later never routes that turn again, whatever
/// its log replays, nor the same answer before a sign of a new turn.
pub const PIPE_ACTED: &str = "turnstile-acted";
/// Name of the pipe a copy of the bar tells the leader which tabs are viewed with.
pub const PIPE_VIEW: &str = "turnstile-view";
/// Name of the pipe a copy of the bar in a viewed tab hands zellij's pane
/// list to a leader whose tab nobody views (zellij sends pane lists only to
/// the plugins of viewed tabs).
pub const PIPE_PANES: &str = "turnstile-panes";
/// Name of the routing commands' pipe (keybindings: next, prev, resend, …).
pub const PIPE_ROUTE: &str = "route";
/// Name of the pipe that jumps to the next pane that needs you.
pub const PIPE_ATTENTION: &str = "attention";
/// Name of the pipe that opens the inbox view.
pub const PIPE_INBOX: &str = "inbox";
/// Name of the pipe the inbox view greets every plugin with (the leader answers).
pub const PIPE_INBOX_HELLO: &str = "turnstile-inbox-hello";
/// Name of the pipe the leader sends the inbox view its entries with.
pub const PIPE_INBOX_UPDATE: &str = "turnstile-inbox-update";
/// Name of the pipe the leader hands its inbox entries to the other copies with.
pub const PIPE_INBOX_ENTRIES: &str = "turnstile-inbox-entries";
/// Name of the pipe the inbox view asks the leader to copy or route with.
pub const PIPE_INBOX_ACT: &str = "turnstile-inbox-act";

/// The agent process bound to a pane, as the host found it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct AgentBinding {
    /// Process id of the agent (0 when unknown, e.g. in a hook's report).
    pub pid: u32,
    /// Which agent it is.
    #[serde(default)]
    pub kind: AgentKind,
    /// Its working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The Claude Code session id, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The transcript file, when found (on [`AgentBinding::remote`]'s
    /// machine when there is one: never read here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<String>,
    /// The machine the agent runs on when it is another one, reached over
    /// `ssh` (a relay's report): its ids and paths are that machine's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<Remote>,
}

/// Where a remote agent runs, and whether its relay is heard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Remote {
    /// The machine's name (the `ssh` destination's host), for people.
    pub host: String,
    /// True while the link to its relay is lost: nothing but the pane's
    /// screen tells its state.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lost: bool,
}

/// What the host knows about one pane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct PaneReport {
    /// The zellij terminal pane id.
    pub pane: u32,
    /// The agent process in the pane (`None`: no agent runs there).
    #[serde(default)]
    pub agent: Option<AgentBinding>,
    /// Verdicts of the sources the host read (transcript, session, hook).
    #[serde(default)]
    pub verdicts: Vec<Verdict>,
    /// The final answer of the turn, when done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// When the transcript's deciding line was written (ISO 8601), if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
}

/// Largest answer a report carries: twice the largest routing cap
/// (`max_payload_bytes` ≤ 1 MiB), so no answer a flow may send is cut on
/// the way. A longer one is cut with a marker that says so.
pub const MAX_REPORT_ANSWER_BYTES: usize = 2 << 20;

/// `answer`, cut on a character boundary to [`MAX_REPORT_ANSWER_BYTES`]
/// with a marker saying how much was cut.
pub fn capped_answer(mut answer: String) -> String {
    if answer.len() <= MAX_REPORT_ANSWER_BYTES {
        return answer;
    }
    let mut end = MAX_REPORT_ANSWER_BYTES;
    while !answer.is_char_boundary(end) {
        end -= 1;
    }
    let cut = answer.len() - end;
    answer.truncate(end);
    answer.push_str(&format!("\n[… cut by turnstile: {cut} more bytes]"));
    answer
}

impl PaneReport {
    /// True when an authoritative source (transcript, hook, session) shows
    /// a turn in progress that is not an old answer awaiting confirmation:
    /// a new turn, whose answer is not the last one.
    pub fn starts_a_turn(&self) -> bool {
        self.verdicts
            .iter()
            .any(|v| v.source.is_authoritative() && v.state == crate::State::Working && v.candidate.is_none())
    }
}

/// The answer of one `turnstile status --json` run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct HostReport {
    /// The zellij session asked about.
    #[serde(default)]
    pub session: Option<String>,
    /// When the host read the sources.
    pub at: Millis,
    /// One entry per pane asked about (and per agent pane found).
    pub panes: Vec<PaneReport>,
    /// For `turnstile pull`: the number of the newest change in the
    /// watcher's mailbox (the next pull asks for what is newer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
}

impl HostReport {
    /// Parses the host command's stdout; a clear message for anything else.
    pub fn parse(bytes: &[u8]) -> Result<HostReport, crate::Error> {
        serde_json::from_slice(bytes).map_err(crate::Error::unreadable("JSON from the host command"))
    }
}

/// The answer of `turnstile rules --json`: the user's rules file, its
/// agents, or its first problem.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct RulesReport {
    /// The file read.
    #[serde(default)]
    pub path: Option<String>,
    /// Its agents (none when it is missing or broken).
    #[serde(default)]
    pub rules: crate::agent::user::rules::Rules,
    /// Why it could not be used (line 0: the file as a whole).
    #[serde(default)]
    pub problem: Option<crate::agent::user::rules::RuleError>,
    /// What works but will not do what it says yet (a log glob that
    /// matches no file).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<RuleNote>,
    /// The host's build ([`crate::identity::LABEL`]); the bar compares it
    /// with its own (`None`: a host older than this field).
    #[serde(default)]
    pub build: Option<String>,
    /// The release of the zellij server that ran the host, when it could
    /// tell (the bar names one turnstile is not tested with).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zellij: Option<String>,
}

/// A rules file's agent that loads but may not work as meant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleNote {
    /// The agent's name.
    pub agent: String,
    /// What is off (`log ~/.toy/logs/*.jsonl matches no file: ~/.toy/logs does not exist`).
    pub message: String,
}

impl RulesReport {
    /// Parses the host command's stdout; a clear message for anything else
    /// (a pattern this side cannot compile included).
    pub fn parse(bytes: &[u8]) -> Result<RulesReport, crate::Error> {
        serde_json::from_slice(bytes).map_err(crate::Error::unreadable("JSON from `turnstile rules`"))
    }

    /// Its problem in one line for the bar, the file named.
    pub fn problem_line(&self) -> Option<String> {
        let problem = self.problem.as_ref()?;
        let path = self.path.as_deref().unwrap_or("");
        Some(match problem.line {
            0 => format!("rules file {path}: {}", problem.message),
            line => format!("rules file {path} line {line}: {}", problem.message),
        })
    }
}

/// Parses one `turnstile-push` pipe message: a JSON array of pane reports
/// (a trailing newline is fine). A clear message for anything else.
pub fn parse_push(payload: &str) -> Result<Vec<PaneReport>, crate::Error> {
    serde_json::from_str(payload.trim_end()).map_err(crate::Error::unreadable("push from the watcher"))
}

/// Rows the leader sends another copy of the bar to draw: all of them, or
/// (with `base`) those that changed since the message numbered `base`. A
/// copy that does not hold `base` asks for all of them again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncRows {
    /// This message's number.
    pub seq: u64,
    /// The message these rows change (`None`: all the rows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<u64>,
    /// The rows, in drawing order (a change: only the changed ones).
    pub rows: Vec<PaneSummary>,
    /// The check sum of the leader's rules file answer (0: none yet): a
    /// copy that holds other rules asks for them again (a tag edited).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rules: u64,
}

/// A [`PIPE_ACTED`] message: the turn of `pane` the leader acted on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Acted {
    /// The source pane.
    pub pane: u32,
    /// The turn's identity (`Pane::turn_identity`).
    pub turn: String,
    /// A hash of the answer it routed ([`crate::flow::answer_key`]): the
    /// other source of the same turn (hook against log) brings the same
    /// words under another identity.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub answer: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One agent pane: a row of the bar, and of the `state` pipe's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaneSummary {
    /// The zellij terminal pane id.
    pub pane: u32,
    /// The pane's title.
    pub name: String,
    /// The fused state.
    pub state: State,
    /// The source that decided.
    pub source: Option<Source>,
    /// True for a transcript/hook-backed turn end.
    pub confirmed: bool,
    /// When the state began (ms since the epoch).
    pub since: Millis,
    /// The pane finished while it was not focused and has not been seen since.
    pub unseen: bool,
    /// The agent that runs there.
    #[serde(default)]
    pub kind: AgentKind,
    /// Why, for people. A row the bar draws (`PaneTable::drawn_rows`)
    /// carries only its note here: what the agent said with its state.
    pub reason: String,
}

impl PaneSummary {
    /// Where it stands for attention.
    pub fn standing(&self) -> crate::attention::Standing {
        crate::attention::Standing {
            pane: self.pane,
            state: self.state,
            unseen: self.unseen,
            since: self.since,
        }
    }

    /// A drawn row's note (`turnstile report waiting --message "approve
    /// deploy?"`), shown after its state at full detail.
    pub fn note(&self) -> Option<&str> {
        (!self.reason.is_empty()).then_some(self.reason.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_longer_than_any_routing_cap_are_cut_with_a_marker() {
        assert_eq!(capped_answer("short".into()), "short");
        let long = capped_answer("é".repeat(MAX_REPORT_ANSWER_BYTES));
        assert!(long.len() < MAX_REPORT_ANSWER_BYTES + 64);
        assert!(long.ends_with(&format!("[… cut by turnstile: {} more bytes]", MAX_REPORT_ANSWER_BYTES)));
    }

    #[test]
    fn host_report_round_trips_and_tolerates_missing_fields() {
        let r = HostReport::parse(br#"{"at":5,"panes":[{"pane":2}]}"#).unwrap();
        assert_eq!(r.panes[0].pane, 2);
        assert!(r.panes[0].verdicts.is_empty());
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(HostReport::parse(json.as_bytes()).unwrap(), r);
    }

    #[test]
    fn a_push_is_a_batch_of_reports_ending_in_a_newline() {
        let reports = parse_push("[{\"pane\":1},{\"pane\":4}]\n").unwrap();
        assert_eq!(reports.iter().map(|r| r.pane).collect::<Vec<_>>(), [1, 4]);
        assert!(parse_push("{\"pane\":1}")
            .unwrap_err()
            .to_string()
            .contains("unreadable push"));
    }

    #[test]
    fn garbage_from_the_host_is_a_clear_error() {
        assert!(HostReport::parse(b"panic!")
            .unwrap_err()
            .to_string()
            .contains("unreadable JSON"));
    }
}
