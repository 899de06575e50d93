//! The bar's brain: a pure state machine. zellij-independent [`Event`]s come
//! in, each with the time; [`Effect`]s go out (rows to draw, host runs, pane
//! writes, syncs between copies, pipe answers, timers, subscriptions). The
//! plugin only translates zellij events into [`Event`]s and carries the
//! effects out, so everything the bar decides is tested here.
//!
//! Every tab runs its own copy of the bar. One copy, the leader (see
//! [`leader`]), reads screens, runs the host command, routes and answers
//! pipes; it sends the other copies the rows to draw. zellij hands every
//! pushed report to every copy, and zellij 0.45.1 runs plugins in an
//! interpreter (wasmi): the other copies drop pushes unread. A copy that
//! takes the lead from another one therefore takes each pane's first report
//! as what was already seen (see `baseline`), so it never routes a turn twice.
//!
//! Reading a viewport is a query, not an effect: the machine asks it through
//! [`Screens`], which the plugin implements with zellij's scrollback API.

mod copies;
pub mod delivery;
mod host;
pub mod inbox_view;
mod io;
pub mod leader;
mod notify;
mod outgoing;
mod pacing;
pub mod permits;
mod pipes;
mod ticks;
mod viewports;

use crate::arbiter::Edge;
use crate::attention::{self, Cycle};
use crate::bar::{self, Hit, Palette, Rendered};
use crate::config::Config;
use crate::inbox::{self, Log};
use crate::panes::PaneTable;
use crate::protocol::{self, HostReport, PaneReport, PaneSummary, SyncRows};
use crate::protocol::{PIPE_ACTED, PIPE_PANES, PIPE_PUSH, PIPE_ROUTE, PIPE_STATE, PIPE_SYNC, PIPE_VERDICT, PIPE_VIEW};
use crate::protocol::{
    PIPE_ATTENTION, PIPE_INBOX, PIPE_INBOX_ACT, PIPE_INBOX_ENTRIES, PIPE_INBOX_HELLO, PIPE_INBOX_UPDATE,
};
use crate::screen::InputBox;
use crate::Millis;
use delivery::Delivery;
pub use inbox_view::{InboxView, Key};
pub use io::{Effect, Event, PaneEntry, PipeFrom, Screens, Subscription, TabView};
use leader::Role;
use notify::Notifier;
use pacing::{HostRuns, Pulls, Storm, Timers, WatcherRun};
use permits::{AskTurn, ASK_RETRY_MS};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// How often the leader wakes up (ms); the intervals in the config are multiples.
pub const TICK_MS: Millis = 250;
/// How often a follower copy wakes up (ms).
pub const FOLLOWER_TICK_MS: Millis = 1_000;
/// Events kept while permissions are pending.
pub const MAX_QUEUED_EVENTS: usize = 256;
/// How long a message stays in the bar (ms).
pub const MESSAGE_MS: Millis = 5_000;
/// The title of a bar copy's pane.
pub const BAR_TITLE: &str = "turnstile";
/// Context key naming what a host command run is.
pub const CTX_KIND: &str = "turnstile";
/// Context key of a status run's request number.
pub const CTX_REQUEST: &str = "request";
/// The exit code of `turnstile watch` when another watcher already serves
/// the session (the plugin then counts it as running).
pub const EXIT_ANOTHER_WATCHER: i32 = 3;

/// Screens on a path that reads none.
struct Unread;

impl Screens for Unread {
    fn viewport(&mut self, _pane: u32) -> Option<Vec<String>> {
        None
    }
    fn scrolled_back(&mut self, _pane: u32) -> bool {
        false
    }
}

/// What each pane's input box holds now, read from its screen by its
/// kind's rules.
fn input_boxes<'a>(table: &'a PaneTable, screens: &'a mut dyn Screens) -> impl FnMut(u32) -> InputBox + 'a {
    move |pane| match (table.get(pane), screens.viewport(pane)) {
        (Some(p), Some(rows)) => p.kind.input_box(&rows),
        _ => InputBox::Unknown,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Permission {
    NotAsked,
    Asked,
    Granted,
    Denied,
}

/// How often the leader asks for the rules file again (ms).
pub const RULES_RECHECK_MS: Millis = 10_000;

/// How long a run of `turnstile rules` may go unanswered before it is
/// taken for lost (ms).
pub const RULES_GIVE_UP_MS: Millis = 30_000;

/// The runs of `turnstile rules` and what the last one said.
#[derive(Debug, Default)]
struct RulesRuns {
    /// When this copy last asked.
    asked_at: Option<Millis>,
    /// One is running.
    in_flight: bool,
    /// The last answer's exit code and check sum: the same answer again
    /// changes nothing.
    last_answer: Option<(Option<i32>, u64)>,
    /// Why the rules file is not in use (named in the bar).
    problem: Option<String>,
    /// The host comes from another build than this bar, or runs in a zellij
    /// turnstile is not tested with (named in the bar before anything else:
    /// it explains whatever else goes wrong).
    mismatch: Option<String>,
    /// Its agents that may not work as meant (named in the bar while one
    /// of them runs and nothing else is to be said).
    notes: Vec<crate::protocol::RuleNote>,
    /// The leader's answer's check sum, as its rows last said (followers).
    leaders: u64,
}

impl RulesRuns {
    /// The check sum of the last answer (0: none yet).
    fn check_sum(&self) -> u64 {
        self.last_answer.map_or(0, |(_, sum)| sum)
    }

    /// True when the leader's rows name an answer this copy has not seen
    /// from it, and that is not this copy's own.
    fn leader_changed(&mut self, leaders: u64) -> bool {
        let new = leaders != 0 && leaders != self.leaders;
        if new {
            self.leaders = leaders;
        }
        new && leaders != self.check_sum()
    }
}

/// The state of one copy of the bar.
#[derive(Debug)]
pub struct Controller {
    me: u32,
    my_url: Option<String>,
    settings: BTreeMap<String, String>,
    config: Config,
    problems: Vec<String>,
    /// The user's rules file, as asked of the host.
    rules: RulesRuns,
    table: PaneTable,
    permission: Permission,
    /// This copy's turn to ask for permissions.
    ask_turn: AskTurn,
    queued: VecDeque<Event>,
    role: Role,
    theme: Option<Palette>,
    /// Rows received from the leader (followers only).
    synced: Vec<PaneSummary>,
    /// The number of the leader's last rows message: the one this follower
    /// holds, or the one the leader sent last.
    synced_seq: u64,
    /// The rows the leader sent last (as sent), and the copies that hold
    /// them: they are sent only the rows that change.
    rows_sent: Vec<PaneSummary>,
    /// The key of the pane set `rows_sent` shows (`copies::pane_set_key`).
    rows_sent_key: u64,
    /// The table changed since the rows were last sent, and no copy was
    /// due to get them (the next rows are built from the whole table).
    rows_lag: bool,
    current_copies: BTreeSet<u32>,
    host: HostRuns,
    viewed_tabs: BTreeSet<usize>,
    last_hidden_poll: Millis,
    message: Option<(String, Millis)>,
    cols: usize,
    timers: Timers,
    storm: Storm,
    watcher: WatcherRun,
    pulls: Pulls,
    /// A look in the mailbox brought news: the bar may change.
    news: bool,
    delivery: Delivery,
    reports_held: bool,
    /// Render reports were just subscribed to: what panes drew before is
    /// in no report (a pane that printed once before the bar loaded, on a
    /// busy machine): every pane is read once at the next tick.
    catch_up_screens: bool,
    commands_held: bool,
    /// The last pane list (views changing recompute focus).
    panes: Vec<PaneEntry>,
    /// What zellij shows, as far as this copy knows (`None`: unknown).
    drawn: Option<Rendered>,
    /// The row a redraw was asked for with, and when it was drawn.
    next_draw: Option<(Millis, Rendered)>,
    /// A redraw was asked for and zellij has not drawn since (it draws no
    /// copy in a hidden tab): the bar is drawn when it does, not before.
    render_pending: bool,
    /// A follower draws once more on its next tick (zellij can drop the
    /// render of a copy whose tab is just being shown).
    redraw_again: bool,
    /// The agent panes (ids and names) each follower was last sent: a copy
    /// in a hidden tab gets the rows again when they change, so it never
    /// shows "no agent panes" or a pane set of the past when its tab is
    /// viewed (state changes alone reach it when it is viewed).
    synced_panes: Vec<(u32, u64)>,
    /// Followers that have not been sent the latest rows.
    stale_followers: BTreeSet<u32>,
    /// Where the attention jumps have been.
    cycle: Cycle,
    notifier: Notifier,
    /// Finished turns: the leader logs them and hands them on, every copy
    /// keeps them (the leader may move).
    inbox: Log,
    /// Followers that were sent the whole log.
    logged_followers: BTreeSet<u32>,
    /// A hash of the pane list last handed to a leader whose tab nobody
    /// views (a copy of the list would be a second one kept for good in a
    /// follower's wasm memory, which never shrinks).
    forwarded: Option<u64>,
    /// The open inbox view's plugin id (leader only).
    inbox_view: Option<u32>,
    /// Panes whose state a copy that took the lead from another has not
    /// seen in a report yet: their first report (and any edge before it)
    /// is what the old leader already acted on, never an edge to act on.
    baseline: BTreeSet<u32>,
    /// This copy has led, followed or been sent rows by a leader.
    saw_a_leader: bool,
    out: Vec<Effect>,
}

impl Controller {
    /// A copy of the bar with plugin id `me` and these settings, loaded at
    /// `now`; the effects to carry out on load.
    pub fn new(settings: &BTreeMap<String, String>, me: u32, now: Millis) -> (Controller, Vec<Effect>) {
        let (config, problems) = Config::parse(settings);
        let mut c = Controller {
            me,
            my_url: None,
            settings: settings.clone(),
            cycle: Cycle::default(),
            notifier: Notifier::new(config.notify.clone(), config.notify_interval_ms),
            inbox: Log::new(config.inbox_size),
            logged_followers: BTreeSet::new(),
            forwarded: None,
            inbox_view: None,
            table: PaneTable::with_watch(config.watch.clone()),
            delivery: Delivery::new(&config),
            config,
            problems,
            rules: RulesRuns::default(),
            permission: Permission::NotAsked,
            ask_turn: AskTurn::default(),
            queued: VecDeque::new(),
            role: Role::Undecided,
            theme: None,
            synced: Vec::new(),
            synced_seq: 0,
            rows_sent: Vec::new(),
            rows_sent_key: copies::pane_set_key(&[]),
            rows_lag: false,
            current_copies: BTreeSet::new(),
            host: HostRuns::default(),
            viewed_tabs: BTreeSet::new(),
            last_hidden_poll: 0,
            message: None,
            cols: 0,
            timers: Timers::default(),
            storm: Storm::default(),
            watcher: WatcherRun::default(),
            pulls: Pulls::default(),
            news: false,
            reports_held: false,
            catch_up_screens: false,
            commands_held: false,
            panes: Vec::new(),
            drawn: None,
            next_draw: None,
            render_pending: false,
            redraw_again: false,
            synced_panes: Vec::new(),
            stale_followers: BTreeSet::new(),
            baseline: BTreeSet::new(),
            saw_a_leader: false,
            out: Vec::new(),
        };
        // Permissions are asked in turn (see `permits`), from the first timer.
        c.timers.arm(now, now, &mut c.out);
        let effects = std::mem::take(&mut c.out);
        (c, effects)
    }

    /// Handles one event at `now`; the effects to carry out, in order.
    pub fn handle(&mut self, event: Event, now: Millis, screens: &mut dyn Screens) -> Vec<Effect> {
        let may_change_the_bar = self.may_change_the_bar(&event, now);
        match (event, self.permission) {
            (Event::Permission(granted), _) => self.on_permission(granted, now, screens),
            // Pipes need no pane permissions to be read; answering is the leader's.
            (event @ Event::Pipe { .. }, _) | (event, Permission::Granted) => self.dispatch(event, now, screens),
            (Event::Timer, Permission::NotAsked) => {
                self.timers.fired();
                self.ask_permissions_in_turn(now, screens);
            }
            (_, Permission::Denied) => {}
            (event, _) => {
                // Replayed once granted; only the newest matter.
                if self.queued.len() >= MAX_QUEUED_EVENTS {
                    self.queued.pop_front();
                }
                self.queued.push_back(event);
            }
        }
        self.tell_acted();
        let news = std::mem::take(&mut self.news);
        if may_change_the_bar || news {
            self.redraw_if_changed(now);
        }
        std::mem::take(&mut self.out)
    }

    /// False for a pipe message this copy drops or keeps aside (the bar
    /// drawn from the same rows again would cost a render for nothing, and
    /// every copy gets every pushed report), and for a timer that only
    /// looks in the mailbox (drawn again if the look brings news).
    fn may_change_the_bar(&self, event: &Event, now: Millis) -> bool {
        let name = match event {
            Event::Pipe { name, .. } => name,
            Event::Timer => return !self.only_a_look_is_due(now),
            _ => return true,
        };
        match self.role.is_leader() {
            true => matches!(
                name.as_str(),
                PIPE_STATE
                    | PIPE_VERDICT
                    | PIPE_PUSH
                    | PIPE_VIEW
                    | PIPE_PANES
                    | PIPE_ROUTE
                    | PIPE_ATTENTION
                    | PIPE_INBOX
                    | PIPE_INBOX_HELLO
                    | PIPE_INBOX_ACT
            ),
            false => name == PIPE_SYNC,
        }
    }

    /// The row zellij should show now, `cols` wide (zellij's render call).
    pub fn render(&mut self, cols: usize, now: Millis) -> String {
        let ahead = self
            .next_draw
            .take()
            .filter(|(at, _)| cols == self.cols && now.saturating_sub(*at) < 1_000);
        self.cols = cols;
        let rendered = ahead.map_or_else(|| self.draw(now), |(_, rendered)| rendered);
        let line = rendered.line.clone();
        self.drawn = Some(rendered);
        self.render_pending = false;
        line
    }

    /// This copy's role.
    pub fn role(&self) -> &Role {
        &self.role
    }

    /// The rows of the agent panes, as the `state` pipe answers them.
    pub fn summaries(&self) -> Vec<PaneSummary> {
        self.table.summaries()
    }

    /// How many timers are armed and have not fired yet.
    pub fn timers_armed(&self) -> usize {
        self.timers.armed()
    }

    fn dispatch(&mut self, event: Event, now: Millis, screens: &mut dyn Screens) {
        match event {
            Event::Permission(_) => {}
            Event::Panes(panes) => self.on_panes(panes, now),
            Event::Tabs(tabs) => self.on_tabs(&tabs),
            Event::Theme(palette) => self.theme = Some(palette),
            Event::Screens(report) => self.on_screens(report, now, screens),
            Event::HostResult {
                code,
                stdout,
                stderr,
                context,
            } => self.on_host_result(code, &stdout, &stderr, &context, now, screens),
            Event::Timer => self.on_timer(now, screens),
            Event::CommandChanged => self.host.wanted |= !self.watcher.running,
            Event::Pipe { name, from, payload } => {
                // A keybinding without a payload sends one message with none;
                // a shell's pipe ends each message with an empty one.
                let command = matches!(name.as_str(), PIPE_ATTENTION | PIPE_INBOX) && from == PipeFrom::Other;
                if let Some(payload) = payload.or_else(|| command.then(String::new)) {
                    self.on_pipe(&name, &from, &payload, now, screens);
                }
            }
            Event::Click(col) => match self.drawn.as_ref().and_then(|r| r.at(col)) {
                Some(Hit::Pane(pane)) => self.out.push(Effect::FocusPane(pane)),
                Some(Hit::Attention) => match self.role.leader() {
                    // The leader keeps the cycle: a follower's click is its.
                    Some(leader) => self.out.push(Effect::SendToCopy {
                        copy: leader,
                        name: PIPE_ATTENTION,
                        payload: String::new(),
                    }),
                    None => self.jump_to_attention(&PipeFrom::Other, now),
                },
                None => {}
            },
            Event::Key(_) => {}
        }
    }

    fn request_permissions(&mut self) {
        self.permission = Permission::Asked;
        self.out.push(Effect::RequestPermissions);
    }

    /// Asks for permissions if it is this copy's turn (see `permits`);
    /// tries again shortly if not.
    fn ask_permissions_in_turn(&mut self, now: Millis, screens: &mut dyn Screens) {
        if self.ask_turn.take(screens.ask_lock(), self.me, now) {
            self.request_permissions();
        } else {
            self.timers.arm(now, now + ASK_RETRY_MS, &mut self.out);
        }
    }

    fn on_permission(&mut self, granted: bool, now: Millis, screens: &mut dyn Screens) {
        // zellij has rewritten its permission cache: the next copy may ask.
        self.ask_turn.release(screens.ask_lock());
        if self.permission == Permission::Granted {
            return; // a result answers a request: nothing revokes a grant
        }
        if !granted {
            self.permission = Permission::Denied;
            self.queued.clear();
            self.problems
                .push("permissions denied: grant them in permissions.kdl".into());
            return;
        }
        self.permission = Permission::Granted;
        // Only now: zellij hands the keymap at once, needing no permission,
        // and the copies are granted one at a time.
        self.out.push(Effect::Subscribe(Subscription::KeybindingsOnce));
        self.out.push(Effect::SetUnselectable);
        self.out.push(Effect::RenameSelf(BAR_TITLE.into()));
        self.timers.next_tick = now;
        self.arm_next_timer(now);
        for event in std::mem::take(&mut self.queued) {
            self.dispatch(event, now, screens);
        }
    }

    /// Asks zellij to draw again when the row it shows would change (or
    /// when this copy does not know what it shows).
    fn redraw_if_changed(&mut self, now: Millis) {
        if self.in_a_hidden_tab() {
            return; // drawn again when its tab is viewed (see `set_viewed`)
        }
        if self.render_pending {
            // zellij has not drawn the last one (a copy in a hidden tab, of
            // which it is told nothing): asked again, drawn when zellij does.
            self.next_draw = None;
            self.out.push(Effect::Redraw);
            return;
        }
        let rendered = self.draw(now);
        if self.drawn.as_ref().is_some_and(|r| r.line == rendered.line) {
            return;
        }
        // zellij asks for it next: drawn once, not twice.
        self.next_draw = Some((now, rendered));
        self.render_pending = true;
        self.out.push(Effect::Redraw);
    }

    /// True for a leader whose tab no client views: zellij draws what it
    /// renders nowhere. (A follower in a hidden tab is told nothing of tabs.)
    fn in_a_hidden_tab(&self) -> bool {
        self.role.is_leader() && self.own_tab().is_some_and(|tab| !self.viewed_tabs.contains(&tab))
    }

    /// The tab of this copy, as the last pane list shows it.
    fn own_tab(&self) -> Option<usize> {
        let own = self
            .panes
            .iter()
            .find(|p| p.id == self.me && p.plugin_url.is_some() && !p.floating);
        own.map(|p| p.tab)
    }

    /// The bar as it would be drawn now.
    fn draw(&self, now: Millis) -> Rendered {
        let rows = self.rows();
        let mut segments: Vec<&PaneSummary> = rows.iter().collect();
        self.own_tab_first(&mut segments);
        let palette = self.config.palette.or(self.theme).unwrap_or_default();
        let message = self.message_text(now);
        bar::render(&segments, now, self.cols, &palette, message.as_deref())
    }

    /// Puts the agents of this copy's tab first (those its viewer sees
    /// beside it: with many agents the bar's end is cut off), the others
    /// after them, each in their order. Unchanged when the pane list does
    /// not say where this copy is.
    fn own_tab_first(&self, segments: &mut Vec<&PaneSummary>) {
        let own = |p: &&PaneEntry| p.plugin_url.is_some() && p.id == self.me;
        let Some(tab) = self.panes.iter().find(own).map(|p| p.tab) else {
            return;
        };
        let here = crate::order::set_of(
            self.panes
                .iter()
                .filter(|p| p.plugin_url.is_none() && p.tab == tab)
                .map(|p| p.id),
        );
        if segments.iter().all(|s| here.contains(&s.pane)) {
            return;
        }
        crate::order::sort_by_rank(segments, |s| u128::from(!here.contains(&s.pane)));
    }

    /// The rows this copy draws: the leader's own, a follower's as sent.
    fn rows(&self) -> Cow<'_, [PaneSummary]> {
        match self.role.is_leader() {
            true => Cow::Owned(self.table.drawn_rows()),
            false => Cow::Borrowed(&self.synced),
        }
    }

    fn message_text(&self, now: Millis) -> Option<String> {
        if let Some(mismatch) = &self.rules.mismatch {
            return Some(mismatch.clone());
        }
        if let Some(problem) = self.problems.first() {
            return Some(format!("turnstile config: {problem}"));
        }
        if let Some(problem) = &self.rules.problem {
            return Some(problem.clone());
        }
        if let Some(error) = &self.host.error {
            return Some(error.clone());
        }
        self.message
            .as_ref()
            .filter(|(_, at)| now.saturating_sub(*at) < MESSAGE_MS)
            .map(|(m, _)| m.clone())
            .or_else(|| self.delivery.queue_note(&self.table))
            .or_else(|| self.rules_note())
    }

    /// The first note of the rules file about an agent that runs now.
    fn rules_note(&self) -> Option<String> {
        let runs = |agent: &str| self.table.agents().iter().any(|p| p.kind.name() == agent);
        let note = self.rules.notes.iter().find(|n| runs(&n.agent))?;
        Some(format!("agent {}: {}", note.agent, note.message))
    }

    fn say(&mut self, text: String, now: Millis) {
        self.message = Some((text, now));
    }
}

#[cfg(test)]
mod tests;
