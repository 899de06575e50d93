//! What one event costs the bar's brain at 64 agents in 8 tabs: a pushed
//! report for the leader, the same push for a copy that drops it, rows for
//! the copy in the viewed tab. zellij 0.45.1 runs the plugin in an
//! interpreter (wasmi), so every native microsecond here is tens inside
//! zellij: these paths must stay small and independent of the agent count.
//!
//! `cargo bench -p turnstile-core --bench controller`

use criterion::{criterion_group, criterion_main, Criterion};
use std::collections::BTreeMap;
use turnstile_core::controller::{Controller, Event, PaneEntry, PipeFrom, Screens, TabView};
use turnstile_core::protocol::{AgentBinding, PaneReport, PIPE_PUSH, PIPE_SYNC};
use turnstile_core::verdict::{Source, State, Verdict};

const AGENTS: u32 = 64;
const TABS: usize = 8;
const URL: &str = "file:/turnstile.wasm";
const T0: u64 = 1_000_000;

struct NoScreens;

impl Screens for NoScreens {
    fn viewport(&mut self, _pane: u32) -> Option<Vec<String>> {
        None
    }
    fn scrolled_back(&mut self, _pane: u32) -> bool {
        false
    }
}

/// 64 agent panes (ids 100..) over 8 tabs and a bar copy (ids 1..=8) in each.
fn pane_list() -> Vec<PaneEntry> {
    let agents = (0..AGENTS).map(|i| PaneEntry {
        id: 100 + i,
        tab: i as usize % TABS,
        title: format!("agent-{i}"),
        command: Some("claude".into()),
        ..PaneEntry::default()
    });
    let copies = (0..TABS).map(|tab| PaneEntry {
        id: tab as u32 + 1,
        tab,
        plugin_url: Some(URL.into()),
        ..PaneEntry::default()
    });
    agents.chain(copies).collect()
}

fn report(pane: u32, state: State, at: u64) -> PaneReport {
    let mut verdict = Verdict::new(state, Source::Transcript, "bench", at);
    verdict.key = Some(format!("{pane}-{at}"));
    PaneReport {
        pane,
        agent: Some(AgentBinding::default()),
        verdicts: vec![verdict],
        answer: (state == State::Done).then(|| format!("answer {at}")),
        since: None,
    }
}

fn push(reports: &[PaneReport]) -> Event {
    Event::Pipe {
        name: PIPE_PUSH.into(),
        from: PipeFrom::Other,
        payload: Some(serde_json::to_string(reports).unwrap()),
    }
}

/// Copy `me` of the bar, in the session above, the last tab viewed.
fn copy(me: u32) -> Controller {
    let (mut c, _) = Controller::new(&BTreeMap::new(), me, T0);
    c.handle(Event::Permission(true), T0, &mut NoScreens);
    c.render(300, T0);
    let tabs = (0..TABS)
        .map(|position| TabView {
            position,
            viewed: position == TABS - 1,
        })
        .collect();
    c.handle(Event::Tabs(tabs), T0, &mut NoScreens);
    c.handle(Event::Panes(pane_list()), T0, &mut NoScreens);
    let all: Vec<PaneReport> = (0..AGENTS).map(|i| report(100 + i, State::Working, T0)).collect();
    c.handle(push(&all), T0, &mut NoScreens);
    c
}

fn bench_events(c: &mut Criterion) {
    let mut leader = copy(1);
    let mut n = 0u64;
    c.bench_function("controller/leader takes a pushed report (64 agents, 8 tabs)", |b| {
        b.iter(|| {
            n += 1;
            let state = if n.is_multiple_of(2) {
                State::Working
            } else {
                State::Done
            };
            let pane = 100 + (n % u64::from(AGENTS)) as u32;
            leader.handle(push(&[report(pane, state, T0 + n)]), T0 + n, &mut NoScreens)
        })
    });
    let mut follower = copy(8);
    let event = push(&[report(100, State::Done, T0 + 1)]);
    c.bench_function("controller/a follower drops a pushed report", |b| {
        b.iter(|| follower.handle(event.clone(), T0 + 1, &mut NoScreens))
    });
    let rows = serde_json::to_string(&leader.summaries()).unwrap();
    let sync = Event::Pipe {
        name: PIPE_SYNC.into(),
        from: PipeFrom::Plugin(1),
        payload: Some(rows),
    };
    c.bench_function("controller/the viewed copy takes the leader's rows", |b| {
        b.iter(|| follower.handle(sync.clone(), T0 + 2, &mut NoScreens))
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = bench_events
}
criterion_main!(benches);
