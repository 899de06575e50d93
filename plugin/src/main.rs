//! turnstile.wasm — the zellij status bar. Thin glue: zellij events become
//! calls into `turnstile_core` (screen matcher, pane table, arbiter, bar),
//! core decisions become zellij commands. Nothing here may panic: a panic
//! removes the bar.
//!
//! Every tab runs its own copy of the bar. One copy, the *leader* (lowest
//! plugin id of this plugin's URL), subscribes to pane output, runs the host
//! command and answers pipes; it sends the other copies the rows to draw.
//!
//! The glue calls zellij host functions that only exist inside zellij, so it
//! is exercised by the e2e tests (`tests/e2e`); host unit tests cover
//! `leader` and everything in core.

// In host test builds `register_plugin!` is compiled out, leaving the glue unused.
#![cfg_attr(test, allow(dead_code))]

mod leader;
mod routing;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{SystemTime, UNIX_EPOCH};
use turnstile_core::bar::{self, Color, Palette, Rendered, Segment};
use turnstile_core::config::Config;
use turnstile_core::panes::PaneTable;
use turnstile_core::protocol::{self, HostReport, PaneReport, PaneSummary, PIPE_PUSH, PIPE_STATE, PIPE_VERDICT};
use turnstile_core::{screen, Millis};
use zellij_tile::prelude::*;

/// Pipe name the leader uses to hand rows to the other copies.
const PIPE_SYNC: &str = "turnstile-sync";
/// Pipe name a copy uses to tell the leader which tabs are viewed.
const PIPE_VIEW: &str = "turnstile-view";
/// Pipe name of routing commands (keybindings: next, prev, resend, …).
const PIPE_ROUTE: &str = "route";
/// Context key of host command runs.
const CTX_KIND: &str = "turnstile";
/// How often the plugin wakes up (ms); the intervals in the config are multiples.
const TICK_MS: Millis = 250;
/// How often a follower copy wakes up (ms).
const FOLLOWER_TICK_MS: Millis = 1_000;
/// Output storm: this many render reports within `STORM_WINDOW_MS`…
const STORM_REPORTS: u32 = 3;
const STORM_WINDOW_MS: Millis = 60;
/// …pause the subscription (longer the more panes stream: the catch-up
/// afterwards reads each of them once), then catch up on the busy ones.
const STORM_PAUSE_MS: Millis = 100;
const STORM_PAUSE_PER_PANE_MS: Millis = 25;
const STORM_PAUSE_MAX_MS: Millis = 600;
/// Delay between the permission requests of copies loading together (s).
const PERMISSION_STAGGER_S: f64 = 0.04;
/// Events kept while permissions are pending.
const MAX_QUEUED_EVENTS: usize = 256;
/// A host run that has not answered after this long is given up and retried.
const HOST_RUN_TIMEOUT_MS: Millis = 10_000;
/// After the watcher died, wait this long before starting it again
/// (doubling up to `WATCHER_RETRY_MAX_MS`); the bar polls meanwhile.
const WATCHER_RETRY_MS: Millis = 2_000;
const WATCHER_RETRY_MAX_MS: Millis = 60_000;

#[derive(Default)]
struct Plugin {
    config: Config,
    problems: Vec<String>,
    table: PaneTable,
    permission_requested: bool,
    granted: bool,
    queued: Vec<Event>,
    role: leader::Role,
    theme: Option<Palette>,
    /// Rows received from the leader (followers only).
    synced: Vec<PaneSummary>,
    rendered: Option<Rendered>,
    host: HostRuns,
    viewed_tabs: BTreeSet<usize>,
    last_hidden_poll: Millis,
    message: Option<(String, Millis)>,
    cols: usize,
    timers: Timers,
    storm: Storm,
    watcher: WatcherRun,
    routing: routing::Routing,
    subscribed: Subscribed,
    /// The last pane list (the leader recomputes focus when views change).
    manifest: Option<PaneManifest>,
    /// A follower draws once more on its next tick (see `on_tick`).
    redraw_again: bool,
    /// Followers (plugin ids) that were sent rows at least once.
    ever_synced: BTreeSet<u32>,
    /// Followers (plugin ids) that have not been sent the latest rows.
    stale_followers: BTreeSet<u32>,
}

/// zellij timers serving every deadline: one outstanding normally, two when
/// a storm pause needs an earlier wake-up. A timer is re-armed only when none
/// is outstanding, so timers never multiply.
#[derive(Default)]
struct Timers {
    outstanding: u32,
    next_tick: Millis,
}

/// Throttling of render reports during output storms: when calm, a banner
/// flips the bar in the same render; in a storm, reports are paused for
/// `STORM_PAUSE_MS` at a time and busy panes are read once afterwards.
#[derive(Default)]
struct Storm {
    window_start: Millis,
    reports: u32,
    paused_until: Option<Millis>,
    /// Panes reported since the window started: the ones that may change unseen.
    streaming: BTreeSet<u32>,
}

/// The session's `turnstile watch`: while it runs it pushes every change
/// and the bar does not poll the host.
#[derive(Default)]
struct WatcherRun {
    running: bool,
    /// When to start it again after it died (`None`: not planned).
    restart_at: Option<Millis>,
    retry_ms: Millis,
}

/// The optional event subscriptions this copy holds.
#[derive(Default)]
struct Subscribed {
    reports: bool,
    commands: bool,
}

/// Bookkeeping of host command runs: never more than one in flight.
#[derive(Default)]
struct HostRuns {
    in_flight: bool,
    wanted: bool,
    last_start: Millis,
    request: u64,
    error: Option<String>,
}

fn now_ms() -> Millis {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as Millis)
}

impl ZellijPlugin for Plugin {
    fn load(&mut self, configuration: BTreeMap<String, String>) {
        let (config, problems) = Config::parse(&configuration);
        self.table = PaneTable::with_watch(config.watch.clone());
        self.routing = routing::Routing::new(&config);
        self.config = config;
        self.problems = problems;
        // zellij rewrites its permission cache (truncate, then write) when
        // a copy is granted; a copy that reads it at that moment finds it
        // empty and shows a permission prompt. Copies in other tabs load
        // together: each asks a little after the other.
        let stagger = (get_plugin_ids().plugin_id.saturating_sub(1) % 16) as f64 * PERMISSION_STAGGER_S;
        if stagger == 0.0 {
            self.request_permissions();
        } else {
            set_timeout(stagger);
        }
        subscribe(&[
            EventType::PermissionRequestResult,
            EventType::PaneUpdate,
            EventType::TabUpdate,
            EventType::ModeUpdate,
            EventType::RunCommandResult,
            EventType::Timer,
            EventType::Mouse,
        ]);
    }

    fn update(&mut self, event: Event) -> bool {
        if let Event::PermissionRequestResult(status) = event {
            return self.on_permission(status);
        }
        if !self.permission_requested && matches!(event, Event::Timer(_)) {
            self.request_permissions();
            return false;
        }
        if !self.granted {
            // Events before permissions are granted are replayed, oldest
            // first; a bounded queue (only the newest matter).
            if self.queued.len() >= MAX_QUEUED_EVENTS {
                self.queued.remove(0);
            }
            self.queued.push(event);
            return false;
        }
        self.handle(event)
    }

    fn pipe(&mut self, message: PipeMessage) -> bool {
        let Some(payload) = message.payload.as_deref() else {
            return false; // the empty message that follows every real one
        };
        match message.name.as_str() {
            PIPE_SYNC => self.on_sync(payload),
            // Taken in any role: the leader may not know yet that it leads.
            PIPE_VIEW => self.on_view(&message.source, payload),
            PIPE_STATE if self.role.is_leader() => {
                self.answer_state(&message.source);
                false
            }
            PIPE_VERDICT if self.role.is_leader() => self.on_pushed_verdict(payload),
            PIPE_PUSH if self.role.is_leader() => self.on_push(payload),
            PIPE_ROUTE if self.role.is_leader() => self.on_route_command(&message.source, payload),
            _ => false,
        }
    }

    fn render(&mut self, _rows: usize, cols: usize) {
        self.cols = cols;
        let rendered = self.draw(now_ms());
        print!("{}", rendered.line);
        self.rendered = Some(rendered);
    }
}

impl Plugin {
    fn request_permissions(&mut self) {
        self.permission_requested = true;
        request_permission(&[
            PermissionType::ReadApplicationState,
            PermissionType::ReadPaneContents,
            PermissionType::RunCommands,
            PermissionType::WriteToStdin,
            PermissionType::ChangeApplicationState,
            PermissionType::ReadCliPipes,
            PermissionType::MessageAndLaunchOtherPlugins,
        ]);
    }

    /// The bar as it would be drawn now.
    fn draw(&self, now: Millis) -> Rendered {
        let segments = self.segments();
        let palette = self.config.palette.or(self.theme).unwrap_or_default();
        let message = self.message_text(now);
        bar::render(&segments, now, self.cols, &palette, message.as_deref())
    }

    /// True when drawing now would change the row (a duration ticked, a
    /// message expired): time alone never asks zellij for a needless render.
    fn looks_different(&self, now: Millis) -> bool {
        self.rendered.as_ref().is_none_or(|r| r.line != self.draw(now).line)
    }

    fn on_permission(&mut self, status: PermissionStatus) -> bool {
        if status == PermissionStatus::Denied {
            self.queued.clear();
            self.problems
                .push("permissions denied: grant them in permissions.kdl".into());
            return true;
        }
        self.granted = true;
        set_selectable(false);
        self.arm_timer(now_ms());
        let queued = std::mem::take(&mut self.queued);
        let mut changed = true;
        for event in queued {
            changed |= self.handle(event);
        }
        changed
    }

    fn handle(&mut self, event: Event) -> bool {
        let now = now_ms();
        match event {
            Event::PaneUpdate(manifest) => self.on_panes(&manifest),
            Event::TabUpdate(tabs) => self.on_tabs(&tabs),
            Event::ModeUpdate(mode) => self.on_theme(&mode),
            Event::PaneRenderReport(report) => self.on_render_report(report, now),
            Event::RunCommandResult(code, stdout, stderr, context) => {
                self.on_host_result(code, &stdout, &stderr, &context, now)
            }
            Event::Timer(_) => self.on_timer(now),
            Event::Mouse(Mouse::LeftClick(_, col)) => self.on_click(col),
            Event::CommandChanged(PaneId::Terminal(_), _, _, _) => {
                // The watcher finds new agents itself.
                self.host.wanted |= !self.watcher.running;
                false
            }
            _ => false,
        }
    }

    fn on_panes(&mut self, manifest: &PaneManifest) -> bool {
        let me = get_plugin_ids().plugin_id;
        let role = leader::elect(me, manifest, &self.role);
        let became_leader = role.is_leader() && !self.role.is_leader();
        let lost_leadership = !role.is_leader() && self.role.is_leader();
        let new_leader = role.leader().filter(|l| self.role.leader() != Some(*l));
        let known: BTreeSet<u32> = self.role.followers().iter().map(|f| f.id).collect();
        // Copies that appeared since the last pane list have no rows yet.
        self.stale_followers
            .extend(role.followers().iter().map(|f| f.id).filter(|id| !known.contains(id)));
        self.role = role;
        if new_leader.is_some() {
            self.tell_leader_viewed();
        }
        if became_leader {
            self.host.wanted = true;
            self.start_watcher();
        }
        if became_leader || lost_leadership {
            self.sync_subscriptions(now_ms());
        }
        let metas = leader::terminal_panes(manifest, &self.viewed_tabs);
        if self.role.is_leader() {
            self.manifest = Some(manifest.clone());
        }
        let alive: BTreeSet<u32> = metas.iter().map(|m| m.id).collect();
        for closed in self.table.ids().into_iter().filter(|id| !alive.contains(id)) {
            self.routing.forget(closed);
        }
        let changed = self.table.sync(metas) || became_leader;
        if changed && self.role.is_leader() {
            self.broadcast();
        } else if self.role.is_leader() {
            self.sync_stale_followers();
        }
        changed
    }

    fn on_tabs(&mut self, tabs: &[TabInfo]) -> bool {
        let viewed = leader::viewed_tabs(tabs);
        if viewed == self.viewed_tabs {
            return false;
        }
        let changed = self.set_viewed(viewed);
        self.tell_leader_viewed();
        self.redraw_again = !self.role.is_leader();
        changed || self.redraw_again
    }

    /// A copy in a tab nobody views gets no tab updates, so the leader may
    /// not know what is viewed: the other copies tell it.
    fn tell_leader_viewed(&self) {
        let Some(leader) = self.role.leader() else {
            return;
        };
        if let Ok(payload) = serde_json::to_string(&self.viewed_tabs) {
            pipe_message_to_plugin(
                MessageToPlugin::new(PIPE_VIEW)
                    .with_destination_plugin_id(leader)
                    .with_payload(payload),
            );
        }
    }

    /// The tabs some client views (seen by this copy or told by another):
    /// when they changed, focus marks follow; the leader then hands the rows
    /// to the copies that miss them in viewed tabs.
    fn set_viewed(&mut self, viewed: BTreeSet<usize>) -> bool {
        let views_changed = viewed != self.viewed_tabs;
        self.viewed_tabs = viewed;
        if !self.role.is_leader() {
            return false;
        }
        let changed = match (&self.manifest, views_changed) {
            (Some(manifest), true) => self.table.sync(leader::terminal_panes(manifest, &self.viewed_tabs)),
            _ => false,
        };
        if changed {
            self.broadcast();
        } else {
            self.sync_stale_followers();
        }
        changed
    }

    /// Another copy tells which tabs it sees viewed; it gets the rows again
    /// (it may have missed them while its tab was hidden or it loaded late).
    fn on_view(&mut self, source: &PipeSource, payload: &str) -> bool {
        let Ok(viewed) = serde_json::from_str::<BTreeSet<usize>>(payload) else {
            return false;
        };
        if let PipeSource::Plugin(id) = source {
            self.stale_followers.insert(*id);
        }
        self.set_viewed(viewed)
    }

    fn on_theme(&mut self, mode: &ModeInfo) -> bool {
        let colors = &mode.style.colors;
        let theme = Palette {
            text: color(colors.text_unselected.base),
            background: color(colors.text_unselected.background),
            working: color(colors.text_unselected.emphasis_0),
            done: color(colors.exit_code_success.base),
            failed: color(colors.exit_code_error.base),
            waiting: color(colors.text_unselected.emphasis_3),
            muted: Palette::default().muted,
        };
        let changed = self.theme != Some(theme);
        self.theme = Some(theme);
        changed
    }

    fn on_render_report(&mut self, report: HashMap<PaneId, PaneContents>, now: Millis) -> bool {
        if !self.role.is_leader() || self.storm.paused_until.is_some() {
            return false;
        }
        self.note_report(&report, now);
        let mut changed = false;
        for (pane, contents) in report {
            let PaneId::Terminal(id) = pane else { continue };
            if self.screen_matters(id, now) {
                changed |= self.observe_viewport(id, &contents.viewport, now);
            }
        }
        if changed {
            self.broadcast();
        }
        changed
    }

    /// False for a pane whose agent's status file the watcher pushes: its
    /// screen would only repeat that, at a cost. Its old screen guess is
    /// dropped the first time, so it cannot linger.
    fn screen_matters(&mut self, id: u32, now: Millis) -> bool {
        if !self.covered(id) {
            return true;
        }
        if self.table.has_screen_state(id) {
            let edge = self.table.forget_screen(id, now);
            self.after_edges(edge.map(|e| (id, e)).into_iter().collect(), now);
        }
        false
    }

    /// The pane's agent status file reaches us through the running watcher.
    fn covered(&self, id: u32) -> bool {
        self.watcher.running && self.table.has_session_status(id)
    }

    /// Runs the screen matcher on a viewport. A new screen state is only
    /// believed when the pane is not scrolled back into its history.
    fn observe_viewport(&mut self, id: u32, viewport: &[String], now: Millis) -> bool {
        let verdict = screen::classify(viewport);
        // Only a turn end read from old history does harm (an old banner is a
        // false done), and the scroll check copies the scrollback: confirm
        // just those edges.
        // A quiet screen may confirm a transcript candidate: as risky.
        let risky = verdict.state.is_turn_end() || (verdict.is_quiet() && self.table.has_candidate(id));
        if risky && self.table.is_screen_edge(id, verdict.state) && is_scrolled_back(id) {
            // Old history on screen: keep what the pane showed before.
            return false;
        }
        match self.table.observe_screen(id, &verdict, now) {
            Some(edge) => {
                self.after_edges(vec![(id, edge)], now);
                // A screen edge: ask the authoritative sources at once
                // (the watcher, when it runs, pushes them by itself).
                if !self.watcher.running {
                    self.host.wanted = true;
                    self.run_host(now);
                }
                true
            }
            None => false,
        }
    }

    /// Arms the single zellij timer for the earliest deadline.
    fn arm_timer(&mut self, now: Millis) {
        if self.timers.outstanding > 0 {
            return;
        }
        self.wake_at(self.timers.next_tick, now);
    }

    fn wake_at(&mut self, due: Millis, now: Millis) {
        set_timeout(due.saturating_sub(now).max(10) as f64 / 1000.0);
        self.timers.outstanding += 1;
    }

    fn on_timer(&mut self, now: Millis) -> bool {
        self.timers.outstanding = self.timers.outstanding.saturating_sub(1);
        self.routing.press_due_enters(now);
        let mut changed = false;
        if self.storm.paused_until.is_some_and(|until| now >= until) {
            changed |= self.end_storm_pause(now);
        }
        if now >= self.timers.next_tick {
            // Followers only redraw durations: once a second is enough.
            let tick = if self.role.is_leader() {
                TICK_MS
            } else {
                FOLLOWER_TICK_MS
            };
            self.timers.next_tick = now + tick;
            changed |= self.on_tick(now);
        }
        self.arm_timer(now);
        changed
    }

    /// Counts reports; pauses the subscription when they come too fast.
    fn note_report(&mut self, report: &HashMap<PaneId, PaneContents>, now: Millis) {
        if now.saturating_sub(self.storm.window_start) > STORM_WINDOW_MS {
            self.storm.window_start = now;
            self.storm.reports = 0;
            self.storm.streaming.clear();
        }
        self.storm.reports += 1;
        self.storm.streaming.extend(report.keys().filter_map(|p| match p {
            PaneId::Terminal(id) => Some(*id),
            PaneId::Plugin(_) => None,
        }));
        if self.storm.reports >= STORM_REPORTS && self.storm.paused_until.is_none() {
            // The catch-up reads only the panes whose screen matters.
            let to_read = self.storm.streaming.iter().filter(|id| !self.covered(**id)).count();
            let pause = STORM_PAUSE_MS + STORM_PAUSE_PER_PANE_MS * to_read as Millis;
            let until = now + pause.min(STORM_PAUSE_MAX_MS);
            self.storm.paused_until = Some(until);
            self.sync_subscriptions(now);
            self.wake_at(until, now);
        }
    }

    /// Subscribes to what this copy needs now, and only to that: render
    /// reports for the leader while some agent's screen matters and no storm
    /// pause runs; command changes for the leader while it polls.
    fn sync_subscriptions(&mut self, now: Millis) {
        let leader = self.role.is_leader();
        let screens_needed = self.screens_needed();
        let reports = leader && self.storm.paused_until.is_none() && screens_needed;
        hold_subscription(&mut self.subscribed.reports, reports, EventType::PaneRenderReport);
        if leader && !screens_needed {
            let covered: Vec<u32> = self.table.ids();
            for id in covered {
                self.screen_matters(id, now);
            }
        }
        let commands = leader && !self.watcher.running;
        hold_subscription(&mut self.subscribed.commands, commands, EventType::CommandChanged);
    }

    /// False when every agent pane is covered by its status file through
    /// the running watcher: no screen then adds anything, and zellij need
    /// not copy any viewport to us.
    fn screens_needed(&self) -> bool {
        let agents = self.table.agents();
        agents.is_empty() || agents.iter().any(|p| !self.covered(p.meta.id))
    }

    /// Resubscribes and reads the agent panes whose changes the pause hid
    /// (those whose screen matters: a covered pane's status was pushed).
    fn end_storm_pause(&mut self, now: Millis) -> bool {
        let streaming = std::mem::take(&mut self.storm).streaming;
        self.sync_subscriptions(now);
        if !self.role.is_leader() {
            return false;
        }
        let hidden_changes: Vec<u32> = self
            .table
            .agents()
            .iter()
            .map(|p| p.meta.id)
            .filter(|id| streaming.contains(id) && !self.covered(*id))
            .collect();
        let changed = self.read_viewports(hidden_changes, now);
        if changed {
            self.broadcast();
        }
        changed
    }

    fn on_tick(&mut self, now: Millis) -> bool {
        if !self.role.is_leader() {
            // Followers only redraw running durations, and once more after
            // new rows or a tab switch: zellij can drop the render of a
            // copy whose tab is just being shown.
            let again = std::mem::take(&mut self.redraw_again);
            return again || self.looks_different(now);
        }
        let edges = self.table.tick(now);
        let mut changed = !edges.is_empty();
        self.after_edges(edges, now);
        changed |= self.poll_unreported_panes(now);
        self.restart_watcher_when_due(now);
        if self.host.in_flight && now.saturating_sub(self.host.last_start) >= HOST_RUN_TIMEOUT_MS {
            // It never answered: give it up (its late answer is ignored) and retry.
            self.host.in_flight = false;
            self.host.wanted = true;
        }
        let interval = if self.table.any_active() {
            self.config.poll_ms
        } else {
            self.config.idle_poll_ms
        };
        if !self.watcher.running && now.saturating_sub(self.host.last_start) >= interval {
            self.host.wanted = true;
        }
        self.run_host(now);
        if changed {
            self.broadcast();
        }
        changed || self.looks_different(now)
    }

    /// Panes zellij sends no render reports for are read every
    /// `hidden_poll_ms`: agents in tabs no client views, and, while the
    /// leader takes no reports at all (every agent covered), the other
    /// panes, where an agent only its screen shows may start (one run over
    /// ssh, say): once seen, reports are taken again.
    fn poll_unreported_panes(&mut self, now: Millis) -> bool {
        if now.saturating_sub(self.last_hidden_poll) < self.config.hidden_poll_ms {
            return false;
        }
        self.last_hidden_poll = now;
        let reports_flow = self.subscribed.reports || self.storm.paused_until.is_some();
        let agents: BTreeSet<u32> = self.table.agents().iter().map(|p| p.meta.id).collect();
        let unreported: Vec<u32> = self
            .table
            .all()
            .filter(|p| match agents.contains(&p.meta.id) {
                true => !self.viewed_tabs.contains(&p.meta.tab),
                false => !reports_flow,
            })
            .map(|p| p.meta.id)
            .collect();
        let unreported = unreported
            .into_iter()
            .filter(|id| self.screen_matters(*id, now))
            .collect();
        let changed = self.read_viewports(unreported, now);
        if !reports_flow {
            self.sync_subscriptions(now);
        }
        changed
    }

    /// Old releases end a turn with an answer that looks like a preamble: a
    /// fresh look at the (unscrolled) screen of such a pane can confirm it.
    fn confirm_candidates(&mut self, now: Millis) -> bool {
        let panes: Vec<u32> = self
            .table
            .agents()
            .iter()
            .map(|p| p.meta.id)
            .filter(|id| self.table.has_candidate(*id))
            .filter(|id| !is_scrolled_back(*id))
            .collect();
        self.read_viewports(panes, now)
    }

    /// Reads the viewports of panes that send no render reports (hidden
    /// tabs, a paused subscription) and runs the screen matcher on them.
    fn read_viewports(&mut self, panes: Vec<u32>, now: Millis) -> bool {
        let mut changed = false;
        for id in panes {
            if let Ok(contents) = get_pane_scrollback(PaneId::Terminal(id), false) {
                changed |= self.observe_viewport(id, &contents.viewport, now);
            }
        }
        changed
    }

    fn run_host(&mut self, now: Millis) {
        if self.host.in_flight || !self.host.wanted || !self.role.is_leader() {
            return;
        }
        let ids = self.table.ids();
        if ids.is_empty() {
            return;
        }
        let panes: Vec<String> = ids.iter().map(u32::to_string).collect();
        let panes = panes.join(",");
        self.host.request += 1;
        let context = BTreeMap::from([
            (CTX_KIND.to_owned(), "status".to_owned()),
            ("request".to_owned(), self.host.request.to_string()),
        ]);
        let cmd = self.config.host_command.clone();
        run_command(&[cmd.as_str(), "status", "--json", "--panes", &panes], context);
        self.host.in_flight = true;
        self.host.wanted = false;
        self.host.last_start = now;
    }

    /// Starts the session's watcher (it exits at once if one already runs).
    fn start_watcher(&mut self) {
        if !self.config.watcher || self.watcher.running {
            return;
        }
        let context = BTreeMap::from([(CTX_KIND.to_owned(), "watch".to_owned())]);
        let cmd = self.config.host_command.clone();
        run_command(&[cmd.as_str(), "watch"], context);
        self.watcher.running = true;
        self.watcher.restart_at = None;
        self.sync_subscriptions(now_ms());
    }

    fn restart_watcher_when_due(&mut self, now: Millis) {
        if self.watcher.restart_at.is_some_and(|at| now >= at) {
            self.start_watcher();
        }
    }

    /// The watcher exited: with 0 another one serves the session; otherwise
    /// fall back to polling and say why.
    fn on_watcher_exit(&mut self, code: Option<i32>, stderr: &[u8], now: Millis) -> bool {
        let another_serves = code == Some(0) && String::from_utf8_lossy(stderr).contains("already serves");
        self.watcher.running = another_serves;
        self.sync_subscriptions(now);
        if another_serves || !self.role.is_leader() {
            return false;
        }
        // Poll at once (nothing pushed may be trusted to be current), and
        // start it again a little later.
        self.host.wanted = true;
        self.run_host(now);
        let retry = self.watcher.retry_ms.clamp(WATCHER_RETRY_MS, WATCHER_RETRY_MAX_MS);
        self.watcher.restart_at = Some(now + retry);
        self.watcher.retry_ms = (retry * 2).min(WATCHER_RETRY_MAX_MS);
        let why = String::from_utf8_lossy(stderr)
            .lines()
            .next()
            .unwrap_or("it exited")
            .to_owned();
        self.message = Some((format!("watcher stopped ({why}); polling until it restarts"), now));
        true
    }

    fn on_host_result(
        &mut self,
        code: Option<i32>,
        stdout: &[u8],
        stderr: &[u8],
        context: &BTreeMap<String, String>,
        now: Millis,
    ) -> bool {
        if context.get(CTX_KIND).map(String::as_str) == Some("watch") {
            return self.on_watcher_exit(code, stderr, now);
        }
        if context.get(CTX_KIND).map(String::as_str) != Some("status") {
            return false;
        }
        if context.get("request") != Some(&self.host.request.to_string()) {
            return false; // an answer to a superseded request
        }
        self.host.in_flight = false;
        let report = match (code, HostReport::parse(stdout)) {
            (Some(0), Ok(report)) => report,
            (_, parsed) => {
                let why = String::from_utf8_lossy(stderr)
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .to_owned();
                let why = match parsed {
                    Err(e) if why.is_empty() => e,
                    _ => why,
                };
                let error = format!("host command `{}` failed: {why}", self.config.host_command);
                let changed = self.host.error.as_ref() != Some(&error);
                self.host.error = Some(error);
                return changed;
            }
        };
        let had_error = self.host.error.take().is_some();
        let changed = self.apply_reports(report.panes, now);
        self.run_host(now);
        had_error || changed
    }

    /// Observes reports (host run, hook, watcher), routes their edges and
    /// hands the rows to the other copies; true when the bar shows something new.
    fn apply_reports(&mut self, reports: Vec<PaneReport>, now: Millis) -> bool {
        let before = self.segments();
        let mut edges = Vec::new();
        for report in reports {
            let id = report.pane;
            edges.extend(self.table.observe_report(report).map(|e| (id, e)));
        }
        edges.extend(self.table.tick(now));
        self.after_edges(edges, now);
        self.confirm_candidates(now);
        self.sync_subscriptions(now);
        let changed = self.segments() != before;
        if changed {
            self.broadcast();
        }
        changed
    }

    fn on_pushed_verdict(&mut self, payload: &str) -> bool {
        match serde_json::from_str::<PaneReport>(payload) {
            Ok(report) => self.apply_reports(vec![report], now_ms()),
            Err(e) => {
                self.message = Some((format!("bad verdict message: {e}"), now_ms()));
                true
            }
        }
    }

    /// A batch from the watcher's channel.
    fn on_push(&mut self, payload: &str) -> bool {
        match protocol::parse_push(payload) {
            Ok(reports) => self.apply_reports(reports, now_ms()),
            Err(e) => {
                self.message = Some((e, now_ms()));
                true
            }
        }
    }

    fn answer_state(&self, source: &PipeSource) {
        let json = serde_json::to_string(&self.table.summaries()).unwrap_or_else(|_| "[]".into());
        if let PipeSource::Cli(pipe_id) = source {
            cli_pipe_output(pipe_id, &format!("{json}\n"));
        }
    }

    fn on_sync(&mut self, payload: &str) -> bool {
        if self.role.is_leader() {
            return false;
        }
        match serde_json::from_str::<Vec<PaneSummary>>(payload) {
            Ok(rows) => {
                let changed = rows != self.synced;
                self.synced = rows;
                self.redraw_again |= changed;
                changed
            }
            Err(_) => false,
        }
    }

    /// Hands the rows to the copies of the bar in tabs someone views; the
    /// others get them when their tab is viewed again.
    fn broadcast(&mut self) {
        let followers = self.role.followers().to_vec();
        self.stale_followers = followers.iter().map(|f| f.id).collect();
        self.sync_stale_followers();
    }

    fn sync_stale_followers(&mut self) {
        let due: Vec<u32> = self
            .role
            .followers()
            .iter()
            .filter(|f| self.stale_followers.contains(&f.id))
            // A copy that never had rows gets them at once: it would show
            // "no agent panes" for a moment when its tab is viewed.
            .filter(|f| self.viewed_tabs.contains(&f.tab) || !self.ever_synced.contains(&f.id))
            .map(|f| f.id)
            .collect();
        if due.is_empty() {
            return;
        }
        let Ok(payload) = serde_json::to_string(&self.table.summaries()) else {
            return;
        };
        for id in due {
            self.stale_followers.remove(&id);
            self.ever_synced.insert(id);
            pipe_message_to_plugin(
                MessageToPlugin::new(PIPE_SYNC)
                    .with_destination_plugin_id(id)
                    .with_payload(payload.clone()),
            );
        }
    }

    fn segments(&self) -> Vec<Segment> {
        let rows = if self.role.is_leader() {
            self.table.summaries()
        } else {
            self.synced.clone()
        };
        rows.into_iter()
            .map(|r| Segment {
                pane: r.pane,
                name: r.name,
                state: r.state,
                confirmed: r.confirmed,
                since: r.since,
                unseen: r.unseen,
            })
            .collect()
    }

    /// Routes on edges; delivery feedback goes to the bar.
    fn after_edges(&mut self, edges: Vec<(u32, turnstile_core::arbiter::Edge)>, now: Millis) {
        for (pane, edge) in edges {
            let feedback = self.routing.on_edge(&self.table, pane, &edge, now);
            if let Some(last) = feedback.into_iter().last() {
                self.message = Some((last, now));
            }
        }
        if let Some(due) = self.routing.next_enter() {
            self.wake_at(due, now);
        }
    }

    fn on_route_command(&mut self, source: &PipeSource, payload: &str) -> bool {
        let now = now_ms();
        let feedback = self.routing.command(&self.table, payload, now);
        if let PipeSource::Cli(pipe_id) = source {
            cli_pipe_output(pipe_id, &format!("{feedback}\n"));
        }
        if let Some(due) = self.routing.next_enter() {
            self.wake_at(due, now);
        }
        self.message = Some((feedback, now));
        true
    }

    fn message_text(&self, now: Millis) -> Option<String> {
        if let Some(problem) = self.problems.first() {
            return Some(format!("turnstile config: {problem}"));
        }
        if let Some(error) = &self.host.error {
            return Some(error.clone());
        }
        self.message
            .as_ref()
            .filter(|(_, at)| now.saturating_sub(*at) < 5_000)
            .map(|(m, _)| m.clone())
            .or_else(|| self.routing.queue_note(&self.table))
    }

    fn on_click(&mut self, col: usize) -> bool {
        if let Some(pane) = self.rendered.as_ref().and_then(|r| r.pane_at(col)) {
            focus_terminal_pane(pane, false, false);
        }
        false
    }
}

/// Subscribes to or unsubscribes from `event` when `wanted` differs from `held`.
fn hold_subscription(held: &mut bool, wanted: bool, event: EventType) {
    if *held == wanted {
        return;
    }
    *held = wanted;
    if wanted {
        subscribe(&[event]);
    } else {
        unsubscribe(&[event]);
    }
}

/// True when the pane's viewport is scrolled back into its history.
fn is_scrolled_back(id: u32) -> bool {
    get_pane_scrollback(PaneId::Terminal(id), true).is_ok_and(|c| !c.lines_below_viewport.is_empty())
}

fn color(c: PaletteColor) -> Color {
    match c {
        PaletteColor::Rgb((r, g, b)) => Color::Rgb(r, g, b),
        PaletteColor::EightBit(i) => Color::Indexed(i),
    }
}

#[cfg(not(test))]
register_plugin!(Plugin);
