//! Routing: handing a finished agent's answer to another pane.
//!
//! Pure decisions; the plugin performs them. A [`Router`] holds the flows
//! (`planner -> coder`), fires only on a *confirmed* done, exactly once per
//! turn, says a payload must wait while the target works, and stops two
//! agents that route to each other after `max_hops`. It remembers sources
//! (turns routed, hop counts of turns); the deliveries themselves, from the
//! decision to the turn they start, live in `controller::delivery`. [`build_payload`] makes the text safe
//! to paste: no escapes or control characters, never a leading `/` (a slash
//! command in the target), and a size cap with an explicit marker.

use crate::ansi;
use std::collections::BTreeMap;

/// One flow: the answer of the pane titled `from` goes to the pane titled `to`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowRule {
    /// Source pane title.
    pub from: String,
    /// Target pane title.
    pub to: String,
}

/// Parses `planner -> coder, reviewer -> author`.
pub fn parse_rules(spec: &str) -> Result<Vec<FlowRule>, crate::Error> {
    spec.split([',', ';'])
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .map(|part| match part.split_once("->") {
            Some((from, to)) if !from.trim().is_empty() && !to.trim().is_empty() => Ok(FlowRule {
                from: from.trim().to_owned(),
                to: to.trim().to_owned(),
            }),
            _ => Err(crate::Error::BadFlow(part.to_owned())),
        })
        .collect()
}

/// How payloads are built and how far they travel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowSettings {
    /// Text put before the answer.
    pub prefix: String,
    /// Text put after the answer.
    pub suffix: String,
    /// Largest payload, in bytes.
    pub max_payload_bytes: usize,
    /// How many routed turns may follow each other before routing stops.
    pub max_hops: u32,
}

impl Default for FlowSettings {
    fn default() -> Self {
        FlowSettings {
            prefix: String::new(),
            suffix: String::new(),
            max_payload_bytes: 16 * 1024,
            max_hops: 4,
        }
    }
}

/// Characters that make the start of an agent's input a command rather
/// than a prompt: `/` slash commands (every agent), `\\` (escaped slash),
/// `!` shell mode (Claude Code, Gemini CLI, Codex), `@` file include
/// (Claude Code, Gemini CLI), `#` memory (Claude Code). One union for every
/// target kind: stripping one from a routed answer's start costs nothing.
const COMMAND_PREFIXES: &[char] = &['/', '\\', '!', '@', '#'];

/// Makes `text` inert to paste into an agent's input: no escapes, no control
/// characters but newlines and tabs, no format characters (zero-width,
/// bidi controls, tag characters), and no command prefix at its start or
/// after the whitespace an agent ignores. Repeated until nothing changes,
/// so removing one layer never uncovers another (`/ /clear`).
pub fn sanitize(text: &str) -> String {
    let mut current = sanitize_once(text);
    loop {
        let next = sanitize_once(&current);
        if next == current {
            return next;
        }
        current = next;
    }
}

fn sanitize_once(text: &str) -> String {
    let plain: String = ansi::strip(text)
        .chars()
        .filter(|c| *c == '\n' || *c == '\t' || !(c.is_control() || is_format(*c)))
        .collect();
    plain
        .trim_start()
        .trim_start_matches(COMMAND_PREFIXES)
        .trim_end()
        .to_owned()
}

/// Unicode format characters (category Cf) and other invisibles that can
/// hide text or reorder it: soft hyphen, zero-width and joiners, bidi marks,
/// embeddings, overrides and isolates, word joiners and invisible operators,
/// the byte order mark, interlinear annotations, tag characters.
pub fn is_format(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
        | '\u{180B}'..='\u{180F}'
        | '\u{200B}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}'
        | '\u{3164}' | '\u{FEFF}' | '\u{FFA0}'
        | '\u{FFF9}'..='\u{FFFB}'
        | '\u{1D173}'..='\u{1D17A}'
        | '\u{E0000}'..='\u{E0FFF}')
}

/// `prefix + answer + suffix`, sanitized, cut at `max_bytes` (on a character
/// boundary) with a marker saying how much was cut.
pub fn build_payload(answer: &str, settings: &FlowSettings) -> String {
    let text = sanitize(&format!("{}{}{}", settings.prefix, answer, settings.suffix));
    if text.len() <= settings.max_payload_bytes {
        return text;
    }
    let marker_room = 64.min(settings.max_payload_bytes);
    let mut cut = settings.max_payload_bytes - marker_room;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!(
        "{}\n[… truncated by turnstile: {} bytes cut]",
        &text[..cut],
        text.len() - cut
    )
}

/// What the plugin knows about a target pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    /// Terminal pane id.
    pub pane: u32,
    /// The agent there works or waits: deliver later.
    pub busy: bool,
}

/// What a flow's target name finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    /// An agent pane of that title.
    Found(Target),
    /// A pane of that title runs no agent that takes prompts (a shell, `cat`).
    TakesNoPrompts,
    /// No pane has that title.
    Missing,
}

/// What the plugin should do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Paste `payload` into `pane` and press Enter.
    Deliver {
        /// Target pane.
        pane: u32,
        /// Sanitized text.
        payload: String,
        /// Flow hops of the turn it starts (1: from a person's turn).
        hops: u32,
    },
    /// Keep `payload` for `pane` until it stops working, then deliver it.
    Queue {
        /// Target pane (it works or waits now).
        pane: u32,
        /// Sanitized text.
        payload: String,
        /// Flow hops of the turn it starts.
        hops: u32,
    },
    /// Tell the user (routing feedback in the bar).
    Message(String),
}

/// Flow state of a session.
#[derive(Debug, Clone, Default)]
pub struct Router {
    rules: Vec<FlowRule>,
    settings: FlowSettings,
    paused: bool,
    /// Hop count of each pane's current turn (0: started by a person).
    turn_hops: BTreeMap<u32, u32>,
    /// The answer each pane last routed in its current turn (its
    /// [`answer_key`]): a hook and the transcript confirming the same turn
    /// route it once.
    routed: BTreeMap<u32, u64>,
    /// The identities of the turns each pane routed last
    /// ([`crate::panes::Pane::turn_identity`]), newest last, at most
    /// [`ROUTED_TURNS_KEPT`]: kept through new turns, exits and reloads
    /// (only a closed pane forgets them), so a turn end seen again is
    /// never routed again.
    routed_turns: BTreeMap<u32, Vec<String>>,
    /// What `resend` sends: the last turn routed (or why it sent nothing).
    last: Option<Last>,
}

/// How many routed turn identities a pane keeps.
pub const ROUTED_TURNS_KEPT: usize = 16;

/// The last turn a flow or a key routed, for `resend`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Last {
    /// Its payload went (or waits) to this pane.
    Sent(u32, String),
    /// It had nothing to send, for this reason.
    Nothing(String),
}

impl Router {
    /// A router with these flows and settings.
    pub fn new(rules: Vec<FlowRule>, settings: FlowSettings) -> Router {
        Router {
            rules,
            settings,
            ..Router::default()
        }
    }

    /// Replaces the flows (the `flow` pipe).
    pub fn set_rules(&mut self, rules: Vec<FlowRule>) {
        self.rules = rules;
    }

    /// The flows.
    pub fn rules(&self) -> &[FlowRule] {
        &self.rules
    }

    /// Pauses or resumes automatic flows.
    pub fn set_paused(&mut self, paused: bool) {
        self.paused = paused;
    }

    /// True while flows are paused.
    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// A turn started in `pane`, as any source saw it: by a delivery of
    /// `hops` hops, or by a person (0).
    pub fn on_turn_started(&mut self, pane: u32, hops: u32) {
        self.turn_hops.insert(pane, hops);
    }

    /// The transcript or a hook shows `pane` working on a new turn: its next
    /// confirmed done is routed even if it says the same words. (A screen
    /// guess is no such sign: a spinner that comes and goes without a turn
    /// must not route the last answer again.)
    pub fn on_new_turn_evidence(&mut self, pane: u32) {
        self.routed.remove(&pane);
    }

    /// A confirmed done in `pane` (titled `title`) of the turn `turn` (its
    /// identity, when its source gives one) with its final answer.
    /// `lookup` finds a target pane by title. Each turn is routed once:
    /// a turn already routed, or the same answer again before any sign
    /// of a new turn (a hook and the log confirming one turn), routes
    /// nothing, and says so. Every done of a flow's source is routed or said.
    pub fn on_confirmed_done(
        &mut self,
        pane: u32,
        title: &str,
        turn: Option<&str>,
        answer: Option<&str>,
        lookup: impl Fn(&str) -> Lookup,
    ) -> Vec<Action> {
        let rules: Vec<FlowRule> = self.rules.iter().filter(|r| r.from == title).cloned().collect();
        let same_answer = self.routed.get(&pane) == Some(&answer_key(answer));
        let routed_before = turn.is_some_and(|t| self.remembers(pane, t));
        if rules.is_empty() {
            return Vec::new();
        }
        if (same_answer || routed_before) && answer.is_some() {
            // Never twice, and never in silence: the same turn seen again
            // (another source confirming it, its agent restarted).
            return vec![Action::Message(format!(
                "{title}'s answer went out already: not sent again"
            ))];
        }
        self.routed.insert(pane, answer_key(answer));
        if let Some(turn) = turn {
            self.remember_routed(pane, turn);
        }
        if self.paused {
            return vec![Action::Message(format!("flows paused: {title}'s answer not sent"))];
        }
        let Some(answer) = answer else {
            let why = format!("{title} finished without an answer to send");
            self.last = Some(Last::Nothing(why.clone()));
            return vec![Action::Message(why)];
        };
        let hops = self.turn_hops.get(&pane).copied().unwrap_or(0) + 1;
        if hops > self.settings.max_hops {
            let limit = self.settings.max_hops;
            return vec![Action::Message(format!(
                "flow stopped at {title}: hop limit {limit} reached"
            ))];
        }
        let payload = build_payload(answer, &self.settings);
        rules
            .iter()
            .map(|rule| match lookup(&rule.to) {
                Lookup::Missing => {
                    Action::Message(format!("flow {} → {}: no pane named {}", rule.from, rule.to, rule.to))
                }
                Lookup::TakesNoPrompts => Action::Message(format!(
                    "flow {} → {}: {} is no agent pane (answers go only to panes that take prompts)",
                    rule.from, rule.to, rule.to
                )),
                Lookup::Found(target) => self.send(target, payload.clone(), hops),
            })
            .collect()
    }

    fn send(&mut self, target: Target, payload: String, hops: u32) -> Action {
        self.last = Some(Last::Sent(target.pane, payload.clone()));
        let pane = target.pane;
        match target.busy {
            true => Action::Queue { pane, payload, hops },
            false => Action::Deliver { pane, payload, hops },
        }
    }

    /// A person asked to send `answer` to `target` (keybinding): one hop.
    pub fn manual(&mut self, answer: &str, target: Target) -> Action {
        let payload = build_payload(answer, &self.settings);
        self.send(target, payload, 1)
    }

    /// The last routed turn's answer again (a person asked: one hop), or
    /// why there is none to send.
    pub fn resend(&mut self) -> Action {
        match self.last.clone() {
            Some(Last::Sent(pane, payload)) => Action::Deliver { pane, payload, hops: 1 },
            Some(Last::Nothing(why)) => Action::Message(format!("nothing to resend: {why}")),
            None => Action::Message("nothing sent yet".into()),
        }
    }

    /// True when turn `turn` of `pane` was acted on (routed, or said why not).
    pub fn remembers(&self, pane: u32, turn: &str) -> bool {
        self.routed_turns
            .get(&pane)
            .is_some_and(|ts| ts.iter().any(|t| t == turn))
    }

    /// The leading copy acted on turn `turn` of `pane`, routing the answer
    /// of key `answer` (0: none): neither is routed again here.
    pub fn remember_the_leaders(&mut self, pane: u32, turn: &str, answer: u64) {
        self.remember_routed(pane, turn);
        if answer != 0 {
            self.routed.insert(pane, answer);
        }
    }

    /// The [`answer_key`] of the answer `pane` routed in its current turn.
    pub fn routed_answer(&self, pane: u32) -> u64 {
        self.routed.get(&pane).copied().unwrap_or(0)
    }

    /// Remembers that turn `turn` of `pane` was acted on (here, or by the
    /// copy that led before this one): it is never routed again.
    fn remember_routed(&mut self, pane: u32, turn: &str) {
        let turns = self.routed_turns.entry(pane).or_default();
        if turns.iter().any(|t| t == turn) {
            return;
        }
        turns.push(turn.to_owned());
        if turns.len() > ROUTED_TURNS_KEPT {
            turns.remove(0);
        }
    }

    /// Forgets a closed pane.
    pub fn forget(&mut self, pane: u32) {
        self.turn_hops.remove(&pane);
        self.routed.remove(&pane);
        self.routed_turns.remove(&pane);
    }
}

/// A key of a turn's answer (FNV-1a of its words; no answer is the empty
/// one's): two sources confirming one turn bring the same key.
pub fn answer_key(answer: Option<&str>) -> u64 {
    crate::text::fnv1a(answer.unwrap_or_default().bytes())
}

/// The bytes that paste `payload` into a terminal: one bracketed paste
/// (what a terminal sends; the plugin writes its markers apart, as zellij's
/// own paste does). Enter must follow as a separate write, a little later.
pub fn paste_bytes(payload: &str) -> String {
    format!("{PASTE_BEGIN}{payload}{PASTE_END}")
}

/// The start of a bracketed paste.
pub const PASTE_BEGIN: &str = "\u{1b}[200~";
/// The end of a bracketed paste.
pub const PASTE_END: &str = "\u{1b}[201~";

/// `payload` as one line, for an agent that reads lines
/// ([`crate::agent::Paste::Line`]): each run of white space (line breaks
/// among them) one space, cut on a character boundary to
/// [`crate::agent::LINE_PASTE_BYTES`] (with an explicit marker).
pub fn one_line(payload: &str) -> String {
    let line = payload.split_whitespace().collect::<Vec<_>>().join(" ");
    let limit = crate::agent::LINE_PASTE_BYTES;
    if line.len() <= limit {
        return line;
    }
    let marker = " [… truncated by turnstile]";
    let mut end = limit - marker.len();
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{marker}", &line[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn router(spec: &str) -> Router {
        Router::new(parse_rules(spec).unwrap(), FlowSettings::default())
    }

    fn idle(pane: u32) -> impl Fn(&str) -> Lookup {
        move |_| Lookup::Found(Target { pane, busy: false })
    }

    #[test]
    fn rules_parse_and_bad_ones_are_named() {
        let rules = parse_rules("planner -> coder; reviewer->author").unwrap();
        assert_eq!(
            rules[1],
            FlowRule {
                from: "reviewer".into(),
                to: "author".into()
            }
        );
        assert!(parse_rules("planner coder")
            .unwrap_err()
            .to_string()
            .contains("planner coder"));
        assert!(parse_rules("").unwrap().is_empty());
    }

    #[test]
    fn sanitize_strips_escapes_controls_and_a_leading_slash() {
        assert_eq!(sanitize("\u{1b}[31m/compact\u{1b}[0m now\u{7}"), "compact now");
        assert_eq!(sanitize("  //clear\n\tthen go"), "clear\n\tthen go");
        assert_eq!(sanitize("a/b stays"), "a/b stays");
    }

    /// Issue 21's probes, each with the same input.
    #[test]
    fn sanitize_runs_until_nothing_changes_and_strips_what_hides_a_command() {
        assert_eq!(sanitize("/ /clear"), "clear");
        assert_eq!(sanitize("/\n/compact"), "compact");
        for hidden in [
            "\u{200B}",
            "\u{FEFF}",
            "\u{00AD}",
            "\u{202E}",
            "\u{2066}",
            "\u{2069}",
            "\u{E0041}",
        ] {
            assert_eq!(sanitize(&format!("{hidden}/clear")), "clear", "{hidden:?}");
        }
        assert_eq!(sanitize("a\u{202E}b\u{E0069}c"), "abc");
        assert_eq!(sanitize("!rm -rf ~"), "rm -rf ~");
        assert_eq!(sanitize("@/etc/passwd"), "etc/passwd");
        assert_eq!(sanitize("# remember this"), "remember this");
        assert_eq!(sanitize("a ! b @ c # d"), "a ! b @ c # d", "only at the start");
        assert_eq!(
            sanitize("before\u{1b}]8;;broken link and the rest"),
            "before8;;broken link and the rest"
        );
    }

    #[test]
    fn payload_is_capped_with_a_marker_on_a_char_boundary() {
        let settings = FlowSettings {
            max_payload_bytes: 100,
            ..FlowSettings::default()
        };
        let p = build_payload(&"é".repeat(200), &settings);
        assert!(p.len() <= 100 + 60, "{}", p.len());
        assert!(p.contains("truncated by turnstile"));
        let small = build_payload(
            "short",
            &FlowSettings {
                prefix: "> ".into(),
                ..FlowSettings::default()
            },
        );
        assert_eq!(small, "> short");
    }

    /// What a turn seen again says: never twice, never in silence.
    fn not_again(title: &str) -> Action {
        Action::Message(format!("{title}'s answer went out already: not sent again"))
    }

    #[test]
    fn routes_once_per_turn_to_the_named_pane() {
        let mut r = router("planner -> coder");
        let a = r.on_confirmed_done(1, "planner", None, Some("the plan"), idle(2));
        assert_eq!(
            a,
            vec![Action::Deliver {
                pane: 2,
                payload: "the plan".into(),
                hops: 1
            }]
        );
        assert_eq!(
            r.on_confirmed_done(1, "planner", None, Some("the plan"), idle(2)),
            [not_again("planner")],
            "same turn, second source"
        );
        r.on_turn_started(1, 0);
        assert_eq!(
            r.on_confirmed_done(1, "planner", None, Some("the plan"), idle(2)),
            [not_again("planner")],
            "a turn start only the screen saw is no new turn"
        );
        r.on_new_turn_evidence(1);
        assert_eq!(
            r.on_confirmed_done(1, "planner", None, Some("the plan"), idle(2)).len(),
            1,
            "next turn, same words"
        );
        assert!(
            r.on_confirmed_done(3, "other", None, Some("x"), idle(2)).is_empty(),
            "no flow from it"
        );
    }

    #[test]
    fn missing_target_is_a_message() {
        let mut r = router("planner -> coder");
        let a = r.on_confirmed_done(1, "planner", None, Some("x"), |_| Lookup::Missing);
        assert_eq!(
            a,
            vec![Action::Message("flow planner → coder: no pane named coder".into())]
        );
        let a = r.on_confirmed_done(1, "planner", None, Some("y"), |_| Lookup::TakesNoPrompts);
        assert!(
            matches!(&a[0], Action::Message(m) if m.contains("coder is no agent pane")),
            "{a:?}"
        );
    }

    /// Issue 42: a turn end seen again (its agent quit, the rules reloaded,
    /// its arbiter reset) after a new turn's evidence is still the turn
    /// that was routed: its identity says so, whatever came between.
    #[test]
    fn a_turn_routed_once_is_never_routed_again() {
        let mut r = router("planner -> coder");
        let first = r.on_confirmed_done(1, "planner", Some("transcript:40"), Some("plan"), idle(2));
        assert_eq!(first.len(), 1);
        r.on_new_turn_evidence(1);
        assert_eq!(
            r.on_confirmed_done(1, "planner", Some("transcript:40"), Some("plan"), idle(2)),
            [not_again("planner")]
        );
        let next = r.on_confirmed_done(1, "planner", Some("transcript:90"), Some("plan 2"), idle(2));
        assert_eq!(next.len(), 1, "a new turn routes");
        r.forget(1);
        assert_eq!(
            r.on_confirmed_done(1, "planner", Some("transcript:40"), Some("plan"), idle(2))
                .len(),
            1,
            "a closed pane forgets"
        );
    }

    /// A copy that takes the lead knows what the old leader routed: the
    /// turn (its identity) and its words (their key), so the other source
    /// of that turn, under another identity, routes nothing.
    #[test]
    fn what_the_leader_routed_is_not_routed_again_by_the_next() {
        let mut next = router("planner -> coder");
        next.remember_the_leaders(1, "transcript:40", answer_key(Some("plan")));
        assert_eq!(
            next.on_confirmed_done(1, "planner", Some("transcript:40"), Some("plan"), idle(2)),
            [not_again("planner")]
        );
        assert_eq!(
            next.on_confirmed_done(1, "planner", Some("hook:Stop@7"), Some("plan"), idle(2)),
            [not_again("planner")],
            "the hook of the same turn"
        );
        next.on_new_turn_evidence(1);
        let new_turn = next.on_confirmed_done(1, "planner", Some("hook:Stop@9"), Some("plan"), idle(2));
        assert_eq!(new_turn.len(), 1);
        assert!(matches!(new_turn[0], Action::Deliver { .. }), "{new_turn:?}");
    }

    #[test]
    fn a_busy_target_is_given_the_answer_to_keep() {
        let mut r = router("planner -> coder");
        let a = r.on_confirmed_done(1, "planner", None, Some("plan"), |_| {
            Lookup::Found(Target { pane: 2, busy: true })
        });
        assert_eq!(
            a,
            [Action::Queue {
                pane: 2,
                payload: "plan".into(),
                hops: 1
            }]
        );
    }

    #[test]
    fn ping_pong_stops_at_the_hop_limit() {
        let mut r = Router::new(
            parse_rules("a -> b, b -> a").unwrap(),
            FlowSettings {
                max_hops: 2,
                ..FlowSettings::default()
            },
        );
        let panes = |name: &str| {
            Lookup::Found(Target {
                pane: if name == "a" { 1 } else { 2 },
                busy: false,
            })
        };
        r.on_turn_started(1, 0); // a person starts a
        assert!(matches!(
            r.on_confirmed_done(1, "a", None, Some("x"), panes)[0],
            Action::Deliver { pane: 2, hops: 1, .. }
        ));
        r.on_turn_started(2, 1);
        assert!(matches!(
            r.on_confirmed_done(2, "b", None, Some("y"), panes)[0],
            Action::Deliver { pane: 1, hops: 2, .. }
        ));
        r.on_turn_started(1, 2);
        let a = r.on_confirmed_done(1, "a", None, Some("z"), panes);
        assert!(matches!(&a[0], Action::Message(m) if m.contains("hop limit")), "{a:?}");
    }

    #[test]
    fn pause_and_resend() {
        let mut r = router("planner -> coder");
        r.set_paused(true);
        assert!(matches!(
            &r.on_confirmed_done(1, "planner", None, Some("x"), idle(2))[0],
            Action::Message(_)
        ));
        r.set_paused(false);
        assert_eq!(r.resend(), Action::Message("nothing sent yet".into()));
        r.manual("by hand", Target { pane: 4, busy: false });
        assert_eq!(
            r.resend(),
            Action::Deliver {
                pane: 4,
                payload: "by hand".into(),
                hops: 1
            }
        );
        r.on_confirmed_done(1, "planner", Some("hook:Stop@9"), None, idle(2));
        assert!(
            matches!(r.resend(), Action::Message(m) if m.contains("planner finished without an answer")),
            "the last turn had no answer: no older one is sent"
        );
    }

    #[test]
    fn paste_is_one_bracketed_write() {
        assert_eq!(paste_bytes("hi"), "\u{1b}[200~hi\u{1b}[201~");
    }
}
