//! The controller's tests: the rig every one drives, then the effect
//! sequences the e2e tests rely on, split like the controller (copies,
//! delivery, attention and the inbox), and property tests over random event
//! sequences.

use super::*;
use crate::ansi;
use crate::verdict::{Source, State, Verdict};
use proptest::prelude::*;

const URL: &str = "file:/turnstile.wasm";
const T0: Millis = 1_000_000;

/// Viewports served on demand, which panes are scrolled back, and the
/// watcher's mailbox where the copy reaches it.
#[derive(Default)]
struct FakeScreens {
    viewports: BTreeMap<u32, Vec<String>>,
    scrolled: BTreeSet<u32>,
    /// How many times a whole scrollback was asked for (each is a copy of
    /// the pane's history).
    scroll_checks: usize,
    mailbox: Option<MemoryFolder>,
    lock: Option<super::permits::MemoryLock>,
}

/// A mailbox folder in memory.
#[derive(Default)]
struct MemoryFolder(BTreeMap<String, Vec<u8>>);

impl crate::mailbox::Folder for MemoryFolder {
    fn read(&mut self, name: &str, _max: u64) -> std::io::Result<Vec<u8>> {
        self.0.get(name).cloned().ok_or(std::io::ErrorKind::NotFound.into())
    }
}

impl Screens for FakeScreens {
    fn ask_lock(&mut self) -> Option<&mut dyn super::permits::AskLock> {
        self.lock.as_mut().map(|l| l as &mut dyn super::permits::AskLock)
    }

    fn mailbox(&mut self) -> Option<&mut dyn crate::mailbox::Folder> {
        self.mailbox.as_mut().map(|m| m as &mut dyn crate::mailbox::Folder)
    }

    fn viewport(&mut self, pane: u32) -> Option<Vec<String>> {
        self.viewports.get(&pane).cloned()
    }

    fn scrolled_back(&mut self, pane: u32) -> bool {
        self.scroll_checks += 1;
        self.scrolled.contains(&pane)
    }
}

fn copy(id: u32, tab: usize) -> PaneEntry {
    PaneEntry {
        id,
        tab,
        plugin_url: Some(URL.into()),
        ..PaneEntry::default()
    }
}

fn terminal(id: u32, tab: usize, title: &str, focused: bool) -> PaneEntry {
    PaneEntry {
        id,
        tab,
        title: title.into(),
        focused,
        command: Some("claude".into()),
        ..PaneEntry::default()
    }
}

/// Two agents (`a` focused, `b`) in tab 0, and the bar copies given.
fn pane_list(copies: &[(u32, usize)]) -> Vec<PaneEntry> {
    let mut panes = vec![terminal(1, 0, "a", true), terminal(2, 0, "b", false)];
    panes.extend(copies.iter().map(|(id, tab)| copy(*id, *tab)));
    panes
}

fn settings(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// A copy with plugin id `me`, permissions granted, drawn once.
struct Rig {
    c: Controller,
    screens: FakeScreens,
    now: Millis,
}

impl Rig {
    fn new(me: u32, pairs: &[(&str, &str)]) -> Rig {
        let (c, _) = Controller::new(&settings(pairs), me, T0);
        let mut rig = Rig {
            c,
            screens: FakeScreens::default(),
            now: T0,
        };
        rig.send(Event::Permission(true));
        rig.c.render(120, rig.now);
        rig
    }

    /// A leader of two agent panes, with the watcher running.
    fn leader(pairs: &[(&str, &str)]) -> Rig {
        let mut rig = Rig::new(1, pairs);
        rig.send(Event::Tabs(vec![TabView {
            position: 0,
            viewed: true,
        }]));
        rig.send(Event::Panes(pane_list(&[(1, 0), (5, 1)])));
        rig
    }

    /// Hands the copy an event; like zellij for a copy in a viewed tab,
    /// draws it when it asks.
    fn send(&mut self, event: Event) -> Vec<Effect> {
        let effects = self.c.handle(event, self.now, &mut self.screens);
        if effects.contains(&Effect::Redraw) {
            self.c.render(120, self.now);
        }
        effects
    }

    /// Advances the clock to `at` and fires a timer.
    fn timer_at(&mut self, at: Millis) -> Vec<Effect> {
        self.now = at;
        self.send(Event::Timer)
    }

    fn push(&mut self, reports: &[PaneReport]) -> Vec<Effect> {
        let payload = serde_json::to_string(reports).unwrap();
        self.send(pipe(PIPE_PUSH, PipeFrom::Other, &payload))
    }

    /// Binds `pane` to a Codex agent (idle), as the watcher would.
    fn bind_codex(&mut self, pane: u32) -> Vec<Effect> {
        self.push(&[codex(report(pane, State::Idle, Source::Session, self.now, None))])
    }

    fn state_of(&self, pane: u32) -> State {
        self.c.table.get(pane).map_or(State::Unknown, |p| p.state())
    }
}

/// A leader's message with all these rows.
fn all_rows(rows: &[PaneSummary]) -> String {
    serde_json::to_string(&SyncRows {
        seq: 1,
        base: None,
        rows: rows.to_vec(),
        rules: 0,
    })
    .unwrap()
}

fn pipe(name: &str, from: PipeFrom, payload: &str) -> Event {
    Event::Pipe {
        name: name.into(),
        from,
        payload: Some(payload.into()),
    }
}

fn report(pane: u32, state: State, source: Source, at: Millis, answer: Option<&str>) -> PaneReport {
    PaneReport {
        pane,
        agent: Some(protocol::AgentBinding::default()),
        verdicts: vec![Verdict::new(state, source, "test", at)],
        answer: answer.map(str::to_owned),
        since: None,
    }
}

/// The report, about a Codex agent.
fn codex(mut report: PaneReport) -> PaneReport {
    report.agent = Some(protocol::AgentBinding {
        kind: crate::agent::AgentKind::Codex,
        ..protocol::AgentBinding::default()
    });
    report
}

/// A `turnstile rules --json` answer as a host of this build gives it
/// (its `build` added when missing; what is not a JSON object is left).
fn this_build(answer: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(answer) {
        Ok(serde_json::Value::Object(mut fields)) => {
            let label = serde_json::Value::String(crate::identity::LABEL.to_owned());
            fields.entry("build").or_insert(label);
            serde_json::Value::Object(fields).to_string()
        }
        _ => answer.to_owned(),
    }
}

fn host_runs(effects: &[Effect], kind: &str) -> Vec<BTreeMap<String, String>> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::RunHost { context, .. } if context.get(CTX_KIND).map(String::as_str) == Some(kind) => {
                Some(context.clone())
            }
            _ => None,
        })
        .collect()
}

/// What the effects type into panes (a paste as the bytes a terminal gets).
fn writes(effects: &[Effect]) -> Vec<(u32, String)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::WriteToPane { pane, text } => Some((*pane, text.clone())),
            Effect::PasteToPane { pane, text } => Some((*pane, crate::flow::paste_bytes(text))),
            _ => None,
        })
        .collect()
}

fn done_banner() -> Vec<String> {
    vec!["● Done.".into(), "✻ Brewed for 4s".into()]
}

/// A leader with `a` (focused) and `b` in tab 0, `c` in hidden tab 1.
fn three_agents(pairs: &[(&str, &str)]) -> Rig {
    let mut rig = Rig::leader(pairs);
    let mut panes = pane_list(&[(1, 0), (5, 1)]);
    panes.push(terminal(3, 1, "c", true));
    rig.send(Event::Panes(panes));
    rig
}

/// The payloads sent to copy `to` on pipe `name`.
fn sent_to<'e>(effects: &'e [Effect], to: u32, pipe: &str) -> Vec<&'e String> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::SendToCopy { copy, name, payload } if *copy == to && *name == pipe => Some(payload),
            _ => None,
        })
        .collect()
}

fn focuses(effects: &[Effect]) -> Vec<u32> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::FocusPane(p) => Some(*p),
            _ => None,
        })
        .collect()
}

fn notifier_runs(effects: &[Effect]) -> Vec<(Vec<String>, BTreeMap<String, String>)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::RunNotifier { argv, env, .. } => Some((argv.clone(), env.clone())),
            _ => None,
        })
        .collect()
}

mod attention_inbox;
mod bar_copies;
mod properties;
mod routing;
mod routing_once;
mod user_kinds;
