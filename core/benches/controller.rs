//! What one event costs the bar's brain at 64 agents in 8 tabs: a pushed
//! report for the leader, the same push for a copy that drops it, the
//! leader's looks in the watcher's mailbox (with one new report, and with
//! none), a changed row for the copy in the viewed tab, a hidden copy's
//! tick. zellij 0.45.1 runs the plugin in an
//! interpreter (wasmi), so every native microsecond here is tens inside
//! zellij: these paths must stay small and independent of the agent count.
//!
//! `cargo bench -p turnstile-core --bench controller`
//! (`TURNSTILE_BENCH_AGENTS=128 cargo bench …` for another agent count)

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use std::collections::BTreeMap;
use std::io;
use std::time::{Duration, Instant};
use turnstile_core::controller::{Controller, Effect, Event, PaneEntry, PipeFrom, Screens, TabView};
use turnstile_core::mailbox::{self, Folder};
use turnstile_core::protocol::{AgentBinding, HostReport, PaneReport, PaneSummary, SyncRows, PIPE_PUSH, PIPE_SYNC};
use turnstile_core::verdict::{Source, State, Verdict};

/// The agents in the session: 64, or `TURNSTILE_BENCH_AGENTS` (compare 128
/// with 64: a per-event cost that grows with the agents makes the bar's
/// cost grow with their square).
fn agents_n() -> u32 {
    std::env::var("TURNSTILE_BENCH_AGENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64)
}
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

/// The watcher's mailbox in memory: the head, the journal (reports inline),
/// the next generation past its limit.
#[derive(Default)]
struct Mailbox {
    journal: Vec<u8>,
    newest: BTreeMap<u32, Vec<u8>>,
    head: mailbox::Head,
}

impl Mailbox {
    /// Posts one report as the watcher does: its journal line, then the head.
    fn post(&mut self, report: &PaneReport) {
        self.head.seq += 1;
        let name = mailbox::file_name(self.head.seq, report.pane, false);
        let line = mailbox::journal_line(&name, Some(&serde_json::to_vec(report).unwrap()));
        self.journal.extend_from_slice(&line);
        self.newest.insert(report.pane, line);
        if self.journal.len() as u64 > mailbox::JOURNAL_LIMIT {
            self.head.generation += 1;
            self.journal = self.newest.values().flatten().copied().collect();
        }
        self.head.len = self.journal.len() as u64;
    }
}

impl Folder for Mailbox {
    fn read(&mut self, name: &str, _max: u64) -> io::Result<Vec<u8>> {
        match name {
            mailbox::HEAD => Ok(self.head.to_bytes()),
            _ => Err(io::ErrorKind::NotFound.into()),
        }
    }
    fn read_range(&mut self, name: &str, from: u64, len: u64) -> io::Result<Vec<u8>> {
        if name != mailbox::journal_name(self.head.generation) {
            return Err(io::ErrorKind::NotFound.into());
        }
        Ok(self.journal[from as usize..(from + len) as usize].to_vec())
    }
}

impl Screens for Mailbox {
    fn viewport(&mut self, _pane: u32) -> Option<Vec<String>> {
        None
    }
    fn scrolled_back(&mut self, _pane: u32) -> bool {
        false
    }
    fn mailbox(&mut self) -> Option<&mut dyn Folder> {
        Some(self)
    }
}

/// The agent panes (ids 100..) over 8 tabs and a bar copy (ids 1..=8) in each.
fn pane_list() -> Vec<PaneEntry> {
    let agents = (0..agents_n()).map(|i| PaneEntry {
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
    copy_and_effects(me).0
}

/// Copy `me` and every effect it asked for on the way.
fn copy_and_effects(me: u32) -> (Controller, Vec<Effect>) {
    let (mut c, mut effects) = Controller::new(&BTreeMap::new(), me, T0);
    effects.extend(c.handle(Event::Permission(true), T0, &mut NoScreens));
    c.render(300, T0);
    let tabs = (0..TABS)
        .map(|position| TabView {
            position,
            viewed: position == TABS - 1,
        })
        .collect();
    effects.extend(c.handle(Event::Tabs(tabs), T0, &mut NoScreens));
    effects.extend(c.handle(Event::Panes(pane_list()), T0, &mut NoScreens));
    let all: Vec<PaneReport> = (0..agents_n()).map(|i| report(100 + i, State::Working, T0)).collect();
    effects.extend(c.handle(push(&all), T0, &mut NoScreens));
    (c, effects)
}

fn bench_events(c: &mut Criterion) {
    let mut leader = copy(1);
    let mut n = 0u64;
    c.bench_function("controller/leader takes a pushed report", |b| {
        b.iter(|| {
            n += 1;
            let state = if n.is_multiple_of(2) {
                State::Working
            } else {
                State::Done
            };
            let pane = 100 + (n % u64::from(agents_n())) as u32;
            leader.handle(push(&[report(pane, state, T0 + n)]), T0 + n, &mut NoScreens)
        })
    });
    let mut follower = copy(8);
    let event = push(&[report(100, State::Done, T0 + 1)]);
    c.bench_function("controller/a follower drops a pushed report", |b| {
        b.iter(|| follower.handle(event.clone(), T0 + 1, &mut NoScreens))
    });
    bench_looks(c);
    bench_viewed_copy(c);
    bench_hidden_copy(c);
}

/// The leader of a session whose watcher runs, looking in its mailbox.
fn looking_leader(mailbox: &mut Mailbox) -> Controller {
    let (mut leader, effects) = copy_and_effects(1);
    let pull = effects.into_iter().find_map(|e| match e {
        Effect::RunHost { argv, context } if argv.get(1).is_some_and(|a| a == "pull") => Some(context),
        _ => None,
    });
    let answer = HostReport {
        session: None,
        at: T0,
        panes: vec![report(100, State::Working, T0 + 10)],
        seq: Some(mailbox.head.seq),
    };
    leader.handle(
        Event::HostResult {
            code: Some(0),
            stdout: serde_json::to_vec(&answer).unwrap(),
            stderr: vec![],
            context: pull.expect("the leader pulls once the watcher runs"),
        },
        T0 + 10,
        mailbox,
    );
    leader
}

fn bench_looks(c: &mut Criterion) {
    let mut mailbox = Mailbox::default();
    for i in 0..agents_n() {
        mailbox.post(&report(100 + i, State::Working, T0));
    }
    let mut leader = looking_leader(&mut mailbox);
    let mut now = T0 + 100;
    // The watcher's posting is not the leader's cost: only the look is timed.
    let mut look = |with_news: bool, iters: u64| {
        let mut spent = Duration::ZERO;
        for _ in 0..iters {
            now += 25;
            if with_news {
                let state = if now.is_multiple_of(2) {
                    State::Working
                } else {
                    State::Done
                };
                mailbox.post(&report(100 + (now % u64::from(agents_n())) as u32, state, now));
            }
            let started = Instant::now();
            black_box(leader.handle(Event::Timer, now, &mut mailbox));
            spent += started.elapsed();
            if !with_news {
                // Back to looking, as the next pull with news would.
                mailbox.post(&report(100, State::Working, now));
                now += 25;
                leader.handle(Event::Timer, now, &mut mailbox);
            }
        }
        spent
    };
    c.bench_function("controller/the leader looks and takes one new report", |b| {
        b.iter_custom(|iters| look(true, iters))
    });
    c.bench_function("controller/the leader looks and finds nothing new", |b| {
        b.iter_custom(|iters| look(false, iters))
    });
}

/// One changed row, as the leader sends it to the copy of the viewed tab.
fn changed_row(rows: &[PaneSummary], n: u64) -> Event {
    let count = rows.len() as u64;
    let mut row = rows[(n % count) as usize].clone();
    // Each round over the rows flips them all.
    row.state = if (n / count).is_multiple_of(2) {
        State::Working
    } else {
        State::Done
    };
    row.since = T0 + n;
    let message = SyncRows {
        seq: n + 1,
        base: Some(n),
        rows: vec![row],
        rules: 0,
    };
    Event::Pipe {
        name: PIPE_SYNC.into(),
        from: PipeFrom::Plugin(1),
        payload: Some(serde_json::to_string(&message).unwrap()),
    }
}

fn bench_viewed_copy(c: &mut Criterion) {
    let mut viewed = copy(8);
    let mut rows = copy(1).summaries();
    for r in &mut rows {
        r.reason.clear();
    }
    let all = SyncRows {
        seq: 1,
        base: None,
        rows: rows.clone(),
        rules: 0,
    };
    let all = Event::Pipe {
        name: PIPE_SYNC.into(),
        from: PipeFrom::Plugin(1),
        payload: Some(serde_json::to_string(&all).unwrap()),
    };
    viewed.handle(all, T0 + 1, &mut NoScreens);
    let mut n = 1;
    c.bench_function("controller/the viewed copy takes one changed row and redraws", |b| {
        b.iter(|| {
            let effects = viewed.handle(changed_row(&rows, n), T0 + n, &mut NoScreens);
            // zellij draws a copy that asks for it.
            if effects.contains(&Effect::Redraw) {
                black_box(viewed.render(300, T0 + n));
            }
            n += 1;
            effects
        })
    });
}

fn bench_hidden_copy(c: &mut Criterion) {
    let mut hidden = copy(2);
    let mut now = T0;
    c.bench_function("controller/a copy in a hidden tab ticks", |b| {
        b.iter(|| {
            now += 1_000;
            hidden.handle(Event::Timer, now, &mut NoScreens)
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = bench_events
}
criterion_main!(benches);
