//! The pane table: every terminal pane of the session, which of them run an
//! agent, and the fused state of each agent pane.
//!
//! Pure bookkeeping the plugin drives with zellij events: pane lists, screen
//! verdicts, host reports and ticks go in; edges and summaries come out. A
//! pane counts as an agent pane once its screen showed an agent status line,
//! its running command names `claude`, or the host bound an agent process to
//! it. Panes that close disappear; a pane that finished while unfocused stays
//! *unseen* until it is focused.

use crate::agent::AgentKind;
use crate::arbiter::{Edge, PaneArbiter};
use crate::protocol::{PaneReport, PaneSummary};
use crate::screen::{Rule, ScreenVerdict};
use crate::verdict::{Millis, Source, State, Verdict};
use std::collections::BTreeMap;

/// What zellij says about a terminal pane.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PaneMeta {
    /// Terminal pane id.
    pub id: u32,
    /// Title (what users rename).
    pub title: String,
    /// Position of its tab.
    pub tab: usize,
    /// Focused in its tab while that tab is active.
    pub focused: bool,
    /// The command the pane runs, when zellij knows it.
    pub command: Option<String>,
}

/// Why a pane counts as an agent pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentEvidence {
    /// An agent status line appeared on its screen.
    Screen,
    /// Its running command names the agent.
    Command,
    /// The host found the agent process.
    Host,
}

/// One terminal pane.
#[derive(Debug, Clone)]
pub struct Pane {
    /// What zellij says about it.
    pub meta: PaneMeta,
    /// Why it is an agent pane (`None`: it is not).
    pub agent: Option<AgentEvidence>,
    /// Finished while unfocused and not seen since.
    pub unseen: bool,
    /// The final answer of the last confirmed turn (kept while the next
    /// turn runs, for sending it by hand).
    pub answer: Option<String>,
    /// True while `answer` belongs to the pane's current turn: an
    /// authoritative sign of a new turn makes it an earlier turn's answer,
    /// which a later done must never route or log again.
    answer_is_current: bool,
    /// The agent that runs there (Claude Code until something says otherwise).
    pub kind: AgentKind,
    arbiter: PaneArbiter,
    screen_state: Option<State>,
    /// The answer the screen showed with its done, this turn (only a rules
    /// file's agent names one): the answer when no report brings one.
    screen_answer: Option<String>,
    /// The identities of the last edges authoritative sources decided
    /// ([`Pane::edge_identity`]), newest last, at most [`EDGES_REMEMBERED`]:
    /// an edge seen again (its agent's arbiter reset by an exit or a rules
    /// reload, its log read anew from the start) is no edge, so it flags,
    /// notifies, logs and routes nothing twice.
    seen_edges: Vec<String>,
    /// The log its agent's report names (a transcript's offset is only a
    /// turn's identity within one file).
    log: Option<String>,
    /// The host saw its agent exit: what stays on the screen (the last
    /// turn's banner) is no agent, until the host or the pane's command
    /// finds one again.
    exited: bool,
    /// The machine its agent runs on, when it is another one.
    remote: Option<crate::protocol::Remote>,
}

/// A remote agent's note while its relay is not heard.
pub const LINK_LOST: &str = "link lost";

/// How many authoritative edges a pane remembers.
pub const EDGES_REMEMBERED: usize = 32;

impl Pane {
    fn new(meta: PaneMeta) -> Pane {
        Pane {
            meta,
            agent: None,
            unseen: false,
            answer: None,
            answer_is_current: false,
            kind: AgentKind::default(),
            arbiter: PaneArbiter::new(),
            screen_state: None,
            screen_answer: None,
            seen_edges: Vec::new(),
            log: None,
            exited: false,
            remote: None,
        }
    }

    /// The fused state.
    pub fn state(&self) -> State {
        self.arbiter.fused().state
    }

    /// The answer of the current turn: `None` once the transcript or a hook
    /// shows a new turn that has not answered yet. Where no report brought
    /// one, the answer its screen showed with this turn's done, if a rule
    /// names where it is.
    pub fn turn_answer(&self) -> Option<&str> {
        let reported = self.answer.as_deref().filter(|_| self.answer_is_current);
        reported.or(self.screen_answer.as_deref())
    }

    /// The fused view.
    pub fn fused(&self) -> &crate::arbiter::Fused {
        self.arbiter.fused()
    }

    /// What of the pane's fused state its segment draws.
    fn drawn_key(&self) -> (State, bool, Millis, bool, bool) {
        let fused = self.fused();
        (fused.state, fused.confirmed, fused.since, self.unseen, self.link_lost())
    }

    /// True while its agent runs on another machine whose relay is not
    /// heard: only its screen tells its state.
    pub fn link_lost(&self) -> bool {
        self.remote.as_ref().is_some_and(|r| r.lost)
    }

    /// The identity of the turn its fused state belongs to, when an
    /// authoritative source decided it: who, on what evidence (a log's
    /// offset in its file, a hook's event and time), in what state
    /// (`done+:transcript:4096@/home/u/.claude/…/s.jsonl`). `None` for a
    /// screen guess or evidence without a key.
    pub fn turn_identity(&self) -> Option<String> {
        identity(self.fused(), self.log.as_deref())
    }

    fn edge_identity(&self, edge: &Edge) -> Option<String> {
        identity(&edge.now, self.log.as_deref())
    }

    fn apply(&mut self, edge: Option<Edge>) -> Option<Edge> {
        let edge = edge?;
        if let Some(identity) = self.edge_identity(&edge) {
            if self.seen_edges.contains(&identity) {
                return None; // the same evidence again: nothing new happened
            }
            self.seen_edges.push(identity);
            if self.seen_edges.len() > EDGES_REMEMBERED {
                self.seen_edges.remove(0);
            }
        }
        if edge.to.is_turn_end() || edge.to == State::Waiting {
            self.unseen = !self.meta.focused;
        } else if edge.to == State::Working {
            self.unseen = false;
        }
        Some(edge)
    }
}

/// What a segment says after its state: a program's report message, or
/// what a waiting agent asks (`asks: Which database?`, `plan ready:
/// approve?`), without the source's own detail in brackets.
pub fn note_of(kind: AgentKind, state: State, reason: &str) -> Option<&str> {
    if kind == AgentKind::Program {
        // The arbiter may have said why its word decides, before it.
        let report = reason.find("reported ").map_or(reason, |at| &reason[at..]);
        return crate::agent::program::reported_message(report);
    }
    if state != State::Waiting || !crate::question::is_question(reason) {
        return None;
    }
    let detail = reason.rfind(" (").filter(|_| reason.ends_with(')'));
    Some(&reason[..detail.unwrap_or(reason.len())])
}

/// See [`Pane::turn_identity`]. (A rule's id is the same for every turn,
/// so a screen verdict has none.)
fn identity(fused: &crate::arbiter::Fused, log: Option<&str>) -> Option<String> {
    let source = fused.source.filter(|s| s.is_authoritative())?;
    let key = fused.key.as_deref()?;
    let confirmed = if fused.confirmed { "+" } else { "" };
    let file = match source {
        Source::Transcript => log.unwrap_or_default(),
        _ => "",
    };
    Some(format!("{}{confirmed}:{source}:{key}@{file}", fused.state))
}

/// What re-fusing panes at a time did.
#[derive(Debug, Default)]
pub struct Ticked {
    /// The edges, by pane.
    pub edges: Vec<(u32, Edge)>,
    /// The panes whose segment changed (an edge, or a guess that lost its
    /// confirmation without one).
    pub redrawn: Vec<u32>,
}

/// Which panes get a segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Watch {
    /// Panes that show an agent (screen shapes, running command, host binding).
    Auto,
    /// Every terminal pane.
    All,
    /// Only panes with these titles.
    Titles(Vec<String>),
}

/// Every terminal pane of the session.
#[derive(Debug, Clone)]
pub struct PaneTable {
    panes: BTreeMap<u32, Pane>,
    watch: Watch,
}

impl Default for PaneTable {
    fn default() -> Self {
        PaneTable::new()
    }
}

impl PaneTable {
    /// An empty table that shows agent panes.
    pub fn new() -> Self {
        PaneTable::with_watch(Watch::Auto)
    }

    /// An empty table that shows the panes `watch` selects.
    pub fn with_watch(watch: Watch) -> Self {
        PaneTable {
            panes: BTreeMap::new(),
            watch,
        }
    }

    fn shows(watch: &Watch, pane: &Pane) -> bool {
        match watch {
            Watch::Auto => pane.agent.is_some(),
            Watch::All => true,
            Watch::Titles(titles) => titles.contains(&pane.meta.title),
        }
    }

    /// A pane by id.
    pub fn get(&self, id: u32) -> Option<&Pane> {
        self.panes.get(&id)
    }

    /// Replaces the pane list: new panes appear, closed ones vanish, titles
    /// and focus update (focusing a pane clears its unseen mark). Returns true
    /// when something an agent segment shows changed.
    pub fn sync(&mut self, metas: Vec<PaneMeta>) -> bool {
        let before = self.panes.len();
        let alive = crate::order::set_of(metas.iter().map(|m| m.id));
        self.panes.retain(|id, _| alive.contains(id));
        let mut changed = self.panes.len() != before;
        for meta in metas {
            let pane = self.panes.entry(meta.id).or_insert_with(|| Pane::new(meta.clone()));
            // A user kind may be known by its title alone; never over a
            // kind the pane's process or reports told.
            let by_title = || AgentKind::of_title(&meta.title).filter(|_| pane.agent.is_none() || pane.kind.is_user());
            if let Some(kind) = meta
                .command
                .as_deref()
                .and_then(AgentKind::of_command)
                .or_else(by_title)
            {
                changed |= pane.agent.is_none() || pane.kind != kind;
                pane.agent.get_or_insert(AgentEvidence::Command);
                pane.kind = kind;
                pane.exited = false;
            }
            if meta.focused && pane.unseen {
                pane.unseen = false;
                changed = true;
            }
            changed |= pane.meta.title != meta.title || pane.meta.tab != meta.tab;
            pane.meta = meta;
        }
        changed
    }

    /// Would this screen state be an edge for the pane? (The plugin confirms
    /// edges against the scroll position before observing them.)
    pub fn is_screen_edge(&self, id: u32, state: State) -> bool {
        self.panes.get(&id).is_none_or(|p| p.screen_state != Some(state))
    }

    /// Records what a pane's screen shows.
    pub fn observe_screen(&mut self, id: u32, screen: &ScreenVerdict<'_>, now: Millis) -> Option<Edge> {
        let pane = self.panes.get_mut(&id)?;
        if screen.rule != Rule::NoStatus && pane.agent.is_none() && !pane.exited {
            pane.agent = Some(AgentEvidence::Screen);
        }
        if !Self::shows(&self.watch, pane) {
            return None;
        }
        pane.screen_state = Some(screen.state);
        match screen.state {
            State::Done if screen.answer.is_some() => pane.screen_answer = screen.answer.clone(),
            State::Working => pane.screen_answer = None,
            _ => {}
        }
        let reason = match screen.line {
            Some(line) => format!("screen rule {}: {line}", screen.rule.id()),
            None => format!("screen rule {}", screen.rule.id()),
        };
        let mut verdict = Verdict::new(screen.state, Source::Screen, reason, now);
        verdict.key = Some(screen.rule.id().to_owned());
        let edge = pane.arbiter.observe(verdict);
        pane.apply(edge)
    }

    /// True while the pane's transcript holds a done candidate that a quiet
    /// screen could confirm (the plugin then makes sure it reads a fresh,
    /// unscrolled viewport).
    pub fn has_candidate(&self, id: u32) -> bool {
        self.panes.get(&id).is_some_and(|p| p.arbiter.has_candidate())
    }

    /// True when only its screen tells the pane's state (no log, hook or
    /// session status has said anything).
    pub fn screen_only(&self, id: u32) -> bool {
        self.panes.get(&id).is_some_and(|p| p.arbiter.screen_only())
    }

    /// True when the agent's session status file covers the pane: its screen
    /// then adds nothing the pushed status does not say as fast.
    pub fn has_session_status(&self, id: u32) -> bool {
        self.panes.get(&id).is_some_and(|p| p.arbiter.has_session_status())
    }

    /// True while the pane holds a screen observation.
    pub fn has_screen_state(&self, id: u32) -> bool {
        self.panes.get(&id).is_some_and(|p| p.screen_state.is_some())
    }

    /// Drops a pane's screen guess (its viewport is scrolled into history).
    pub fn forget_screen(&mut self, id: u32, now: Millis) -> Option<Edge> {
        let pane = self.panes.get_mut(&id)?;
        pane.screen_state = None;
        let edge = pane.arbiter.forget(Source::Screen, now);
        pane.apply(edge)
    }

    /// Records what the host (or a pushed `verdict` pipe) knows about a pane.
    pub fn observe_report(&mut self, report: PaneReport) -> Option<Edge> {
        let pane = self.panes.get_mut(&report.pane)?;
        if let Some(agent) = &report.agent {
            pane.agent = Some(AgentEvidence::Host);
            pane.exited = false;
            pane.kind = agent.kind;
            pane.log.clone_from(&agent.transcript);
            pane.remote.clone_from(&agent.remote);
            if pane.link_lost() {
                // What the relay said may no longer be so: the screen alone
                // speaks (the next tick re-fuses).
                pane.arbiter.forget_authoritative();
            }
        } else if pane.agent == Some(AgentEvidence::Host) && report.verdicts.is_empty() {
            // The agent process exited (or a rules reload dropped its
            // kind); the pane stays open. Its screen's word is kept: should
            // the agent be found again (the rules fixed), a `✓?` stays one.
            pane.agent = None;
            pane.exited = true;
            let screen = pane.arbiter.screen_verdict().cloned();
            pane.arbiter = PaneArbiter::new();
            if let Some(verdict) = screen {
                pane.arbiter.observe(verdict);
            }
            return None;
        }
        if report.starts_a_turn() {
            pane.answer_is_current = false;
            pane.screen_answer = None;
        }
        if report.answer.is_some() {
            pane.answer = report.answer;
            pane.answer_is_current = true;
        }
        let mut last = None;
        for verdict in report.verdicts {
            if let Some(edge) = pane.arbiter.observe(verdict) {
                last = Some(edge);
            }
        }
        pane.apply(last)
    }

    /// Re-fuses every agent pane at `now` (settles pending turn ends).
    pub fn tick(&mut self, now: Millis) -> Ticked {
        let ids: Vec<u32> = self.panes.keys().copied().collect();
        self.tick_panes(&ids, now)
    }

    /// [`PaneTable::tick`] for these panes only (the ones a batch of
    /// reports touched: the others wait for the next tick).
    pub fn tick_panes(&mut self, ids: &[u32], now: Millis) -> Ticked {
        let mut ticked = Ticked::default();
        for id in ids {
            let Some(pane) = self.panes.get_mut(id).filter(|p| Self::shows(&self.watch, p)) else {
                continue;
            };
            let before = pane.drawn_key();
            let edge = pane.arbiter.refuse(now);
            if let Some(edge) = pane.apply(edge) {
                ticked.edges.push((*id, edge));
            }
            if pane.drawn_key() != before {
                ticked.redrawn.push(*id);
            }
        }
        ticked
    }

    /// True when pane `id` is an agent pane the bar shows.
    pub fn is_agent(&self, id: u32) -> bool {
        self.panes.get(&id).is_some_and(|p| Self::shows(&self.watch, p))
    }

    /// True when some agent pane matches.
    pub fn any_agent(&self, mut matches: impl FnMut(&Pane) -> bool) -> bool {
        self.panes.values().any(|p| Self::shows(&self.watch, p) && matches(p))
    }

    /// True when the table shows no agent pane.
    pub fn no_agents(&self) -> bool {
        !self.any_agent(|_| true)
    }

    /// Agent panes in display order (tab, then id).
    pub fn agents(&self) -> Vec<&Pane> {
        let mut agents: Vec<&Pane> = self.panes.values().filter(|p| Self::shows(&self.watch, p)).collect();
        crate::order::sort_by_rank(&mut agents, |p| {
            crate::order::rank2(p.meta.tab as u64, u64::from(p.meta.id))
        });
        agents
    }

    /// Every terminal pane.
    pub fn all(&self) -> impl Iterator<Item = &Pane> {
        self.panes.values()
    }

    /// Ids of every terminal pane (what the host is asked about).
    pub fn ids(&self) -> Vec<u32> {
        self.panes.keys().copied().collect()
    }

    /// True while any agent pane works or waits (the host is polled then).
    pub fn any_active(&self) -> bool {
        self.any_agent(|p| matches!(p.state(), State::Working | State::Waiting))
    }

    /// The `state` pipe's answer.
    pub fn summaries(&self) -> Vec<PaneSummary> {
        self.rows(true)
    }

    /// The rows the bar draws: summaries without their source, their reason
    /// only the segment's note ([`note_of`]).
    pub fn drawn_rows(&self) -> Vec<PaneSummary> {
        self.rows(false)
    }

    /// The row pane `id` draws as (`None`: not an agent pane).
    pub fn drawn_row(&self, id: u32) -> Option<PaneSummary> {
        self.panes
            .get(&id)
            .filter(|p| Self::shows(&self.watch, p))
            .map(|p| Self::row(p, false))
    }

    fn rows(&self, why: bool) -> Vec<PaneSummary> {
        self.agents().into_iter().map(|p| Self::row(p, why)).collect()
    }

    fn row(pane: &Pane, why: bool) -> PaneSummary {
        let fused = pane.fused();
        PaneSummary {
            pane: pane.meta.id,
            name: pane.meta.title.clone(),
            state: fused.state,
            source: fused.source.filter(|_| why),
            confirmed: fused.confirmed,
            since: fused.since,
            unseen: pane.unseen,
            reason: match why {
                true if pane.link_lost() => format!("{} (link lost: the screen only)", fused.reason),
                true => fused.reason.clone(),
                false if pane.link_lost() => LINK_LOST.to_owned(),
                false => note_of(pane.kind, fused.state, &fused.reason)
                    .unwrap_or_default()
                    .to_owned(),
            },
            kind: pane.kind,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::claude::screen;

    fn meta(id: u32, title: &str, focused: bool) -> PaneMeta {
        PaneMeta {
            id,
            title: title.into(),
            tab: 0,
            focused,
            command: None,
        }
    }

    fn see(table: &mut PaneTable, id: u32, rows: &[&str], now: Millis) -> Option<Edge> {
        let v = screen::classify(rows);
        table.observe_screen(id, &v, now)
    }

    #[test]
    fn an_agent_that_exited_is_not_brought_back_by_the_banner_it_left() {
        let mut t = PaneTable::new();
        t.sync(vec![meta(1, "shell", false)]);
        let found = |pid| PaneReport {
            pane: 1,
            agent: Some(crate::protocol::AgentBinding {
                pid,
                ..Default::default()
            }),
            ..PaneReport::default()
        };
        t.observe_report(found(7));
        see(&mut t, 1, &["● Done.", "✻ Baked for 3s"], 1);
        assert_eq!(t.agents().len(), 1);
        t.observe_report(PaneReport {
            pane: 1,
            ..PaneReport::default()
        });
        assert!(t.agents().is_empty(), "the agent exited");
        // The shell's prompt under the banner the agent left: a new read of the screen.
        see(&mut t, 1, &["● Done.", "✻ Baked for 3s", "$"], 2);
        assert!(t.agents().is_empty(), "its last banner is no agent: {:?}", t.agents());
        t.observe_report(found(8));
        assert_eq!(t.agents().len(), 1, "an agent started again is one");
    }

    #[test]
    fn a_remote_agent_whose_link_is_lost_falls_back_to_its_screen_and_says_so() {
        let mut t = PaneTable::new();
        t.sync(vec![meta(3, "gpu", false)]);
        let remote = |lost| crate::protocol::AgentBinding {
            remote: Some(crate::protocol::Remote {
                host: "gpu".into(),
                lost,
            }),
            ..Default::default()
        };
        let working = Verdict::new(State::Working, Source::Transcript, "a tool runs", 10);
        t.observe_report(PaneReport {
            pane: 3,
            agent: Some(remote(false)),
            verdicts: vec![working],
            ..PaneReport::default()
        });
        see(&mut t, 3, &["● Done.", "✻ Baked for 3s"], 11);
        assert_eq!(
            t.get(3).unwrap().state(),
            State::Working,
            "the relay's log outranks the screen"
        );
        t.observe_report(PaneReport {
            pane: 3,
            agent: Some(remote(true)),
            ..PaneReport::default()
        });
        t.tick(12);
        let pane = t.get(3).unwrap();
        assert_eq!(pane.state(), State::Done, "the screen alone");
        assert!(!pane.fused().confirmed, "a screen's done is never confirmed");
        assert_eq!(t.drawn_rows()[0].reason, LINK_LOST);
    }

    #[test]
    fn a_plain_shell_is_not_an_agent_pane() {
        let mut t = PaneTable::new();
        t.sync(vec![meta(1, "shell", false)]);
        assert!(see(&mut t, 1, &["$ ls", "README.md"], 1).is_none());
        assert!(t.agents().is_empty());
    }

    #[test]
    fn a_spinner_makes_an_agent_pane_and_a_banner_an_unseen_guess() {
        let mut t = PaneTable::new();
        t.sync(vec![meta(1, "api", false)]);
        see(&mut t, 1, &["✽ Pondering… (1s)"], 1);
        assert_eq!(t.agents().len(), 1);
        let edge = see(&mut t, 1, &["✻ Baked for 3s"], 2).unwrap();
        assert!(!edge.is_confirmed_done());
        assert!(t.get(1).unwrap().unseen);
        t.sync(vec![meta(1, "api", true)]);
        assert!(!t.get(1).unwrap().unseen, "focusing the pane clears unseen");
    }

    #[test]
    fn closed_panes_vanish_and_renames_show() {
        let mut t = PaneTable::new();
        t.sync(vec![PaneMeta {
            command: Some("/usr/bin/claude --resume".into()),
            ..meta(1, "a", false)
        }]);
        assert_eq!(t.agents().len(), 1);
        assert!(t.sync(vec![PaneMeta {
            command: None,
            ..meta(1, "renamed", false)
        }]));
        assert_eq!(t.summaries()[0].name, "renamed");
        assert!(t.sync(vec![]));
        assert!(t.agents().is_empty());
    }

    #[test]
    fn host_report_confirms_done_with_its_answer() {
        let mut t = PaneTable::new();
        t.sync(vec![meta(4, "docs", false)]);
        let report = PaneReport {
            pane: 4,
            agent: Some(Default::default()),
            verdicts: vec![Verdict {
                key: Some("9".into()),
                ..Verdict::new(State::Done, Source::Transcript, "turn done", 10)
            }],
            answer: Some("All good.".into()),
            since: None,
        };
        let edge = t.observe_report(report).unwrap();
        assert!(edge.is_confirmed_done());
        assert_eq!(t.get(4).unwrap().answer.as_deref(), Some("All good."));
        // The agent exits: the segment goes away, the pane stays.
        t.observe_report(PaneReport {
            pane: 4,
            ..Default::default()
        });
        assert!(t.agents().is_empty());
    }

    #[test]
    fn watching_titles_shows_those_panes_only() {
        let mut t = PaneTable::with_watch(Watch::Titles(vec!["api".into()]));
        t.sync(vec![meta(1, "api", false), meta(2, "other", false)]);
        see(&mut t, 2, &["✽ Pondering… (1s)"], 1);
        let shown: Vec<u32> = t.agents().iter().map(|p| p.meta.id).collect();
        assert_eq!(shown, vec![1]);
    }
}
