//! The bar's brain: a pure state machine. zellij-independent [`Event`]s come
//! in, each with the time; [`Effect`]s go out (rows to draw, host runs, pane
//! writes, syncs between copies, pipe answers, timers, subscriptions). The
//! plugin only translates zellij events into [`Event`]s and carries the
//! effects out, so everything the bar decides is tested here.
//!
//! Every tab runs its own copy of the bar. One copy, the leader (see
//! [`leader`]), reads screens, runs the host command, routes and answers
//! pipes; it sends the other copies the rows to draw. Every copy observes the
//! reports pushed to all of them, so a copy that takes the lead knows the
//! turns already seen and never routes one twice.
//!
//! Reading a viewport is a query, not an effect: the machine asks it through
//! [`Screens`], which the plugin implements with zellij's scrollback API.

pub mod delivery;
pub mod inbox_view;
pub mod leader;
mod notify;
mod pacing;

use crate::arbiter::Edge;
use crate::attention::{self, Cycle};
use crate::bar::{self, Hit, Palette, Rendered, Segment};
use crate::config::Config;
use crate::inbox::{self, Log};
use crate::panes::PaneTable;
use crate::protocol::{self, HostReport, PaneReport, PaneSummary};
use crate::protocol::{
    PIPE_ATTENTION, PIPE_INBOX, PIPE_INBOX_ACT, PIPE_INBOX_ENTRIES, PIPE_INBOX_HELLO, PIPE_INBOX_UPDATE,
};
use crate::protocol::{PIPE_PANES, PIPE_PUSH, PIPE_ROUTE, PIPE_STATE, PIPE_SYNC, PIPE_VERDICT, PIPE_VIEW};
use crate::screen::InputBox;
use crate::Millis;
use delivery::Delivery;
pub use inbox_view::{InboxView, Key};
use leader::Role;
use notify::Notifier;
use pacing::{HostRuns, Storm, Timers, WatcherRun};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// How often the leader wakes up (ms); the intervals in the config are multiples.
pub const TICK_MS: Millis = 250;
/// How often a follower copy wakes up (ms).
pub const FOLLOWER_TICK_MS: Millis = 1_000;
/// Delay between the permission requests of copies loading together (ms).
pub const PERMISSION_STAGGER_MS: Millis = 40;
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

/// One pane of zellij's pane list.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PaneEntry {
    /// Pane id (terminal and plugin panes have separate id spaces).
    pub id: u32,
    /// Position of its tab.
    pub tab: usize,
    /// The plugin's URL, for a plugin pane (`None`: a terminal pane).
    pub plugin_url: Option<String>,
    /// Title.
    pub title: String,
    /// Focused in its tab.
    pub focused: bool,
    /// The command the pane runs, when zellij knows it.
    pub command: Option<String>,
    /// A floating pane (the inbox view is one; a bar copy never is).
    pub floating: bool,
}

/// One tab of zellij's tab list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TabView {
    /// Its position.
    pub position: usize,
    /// Some client looks at it.
    pub viewed: bool,
}

/// Where a pipe message comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PipeFrom {
    /// `zellij pipe` from a shell: it can be answered.
    Cli(String),
    /// Another plugin (another copy of the bar).
    Plugin(u32),
    /// A keybinding or anything else.
    Other,
}

/// What happens to the bar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The permissions were granted (true) or denied.
    Permission(bool),
    /// zellij's pane list.
    Panes(Vec<PaneEntry>),
    /// zellij's tab list.
    Tabs(Vec<TabView>),
    /// The zellij theme's colours.
    Theme(Palette),
    /// Terminal panes whose screen changed, with their viewports.
    Screens(Vec<(u32, Vec<String>)>),
    /// A host command run ended.
    HostResult {
        /// Its exit code.
        code: Option<i32>,
        /// Its output.
        stdout: Vec<u8>,
        /// Its error output.
        stderr: Vec<u8>,
        /// The context given with [`Effect::RunHost`].
        context: BTreeMap<String, String>,
    },
    /// A timer armed with [`Effect::ArmTimer`] fired.
    Timer,
    /// A terminal pane's command changed.
    CommandChanged,
    /// A pipe message (the empty payload that follows each real one is `None`).
    Pipe {
        /// The pipe's name.
        name: String,
        /// Who sent it.
        from: PipeFrom,
        /// Its payload.
        payload: Option<String>,
    },
    /// A left click on the bar at this column.
    Click(usize),
    /// A key pressed in the inbox view.
    Key(Key),
}

/// Optional event subscriptions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subscription {
    /// Viewports of panes whose screen changed.
    RenderReports,
    /// Commands of terminal panes changing.
    CommandChanges,
}

/// What the plugin should do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Ask zellij to draw the bar again: what it shows changed.
    Redraw,
    /// Ask for the plugin's permissions.
    RequestPermissions,
    /// Make the bar pane unselectable.
    SetUnselectable,
    /// Give this plugin's pane a title. zellij sends pane lists only when
    /// something changes and drops the ones sent before a copy's grant: a
    /// copy that loads last (often in a hidden tab) would wait for the next
    /// change of any pane; renaming itself is that change.
    RenameSelf(String),
    /// Start receiving these events.
    Subscribe(Subscription),
    /// Stop receiving these events.
    Unsubscribe(Subscription),
    /// Send [`Event::Timer`] after this many ms.
    ArmTimer(Millis),
    /// Run the host command with these arguments and context.
    RunHost {
        /// The command line.
        argv: Vec<String>,
        /// Given back in [`Event::HostResult`].
        context: BTreeMap<String, String>,
    },
    /// Write these characters into a terminal pane.
    WriteToPane {
        /// Terminal pane id.
        pane: u32,
        /// What to write.
        text: String,
    },
    /// Send a pipe message to another copy of the bar.
    SendToCopy {
        /// Its plugin id.
        copy: u32,
        /// The pipe's name.
        name: &'static str,
        /// The payload.
        payload: String,
    },
    /// Answer a `zellij pipe` from a shell.
    AnswerPipe {
        /// The pipe's id.
        pipe: String,
        /// The answer.
        text: String,
    },
    /// Focus a terminal pane, switching to its tab (a click on its
    /// segment, the attention jump, Enter in the inbox).
    FocusPane(u32),
    /// Run the notifier (see [`notify`]) with this environment.
    RunNotifier {
        /// The command line.
        argv: Vec<String>,
        /// Its environment variables.
        env: BTreeMap<String, String>,
        /// Given back in [`Event::HostResult`].
        context: BTreeMap<String, String>,
    },
    /// Put text on the clipboard (zellij's `copy_to_clipboard`).
    CopyToClipboard(String),
    /// Send a pipe message to every plugin.
    Broadcast {
        /// The pipe's name.
        name: &'static str,
        /// The payload.
        payload: String,
    },
    /// Open the inbox view: this plugin, floating, with this configuration
    /// (a message to that URL and configuration: zellij launches it unless
    /// it runs).
    OpenInbox {
        /// The plugin's URL.
        url: String,
        /// Its configuration (the bar's, with `view "inbox"`).
        config: BTreeMap<String, String>,
    },
    /// Show and focus a plugin pane (the open inbox view).
    FocusPlugin(u32),
    /// Close this plugin's pane (the inbox view).
    CloseSelf,
}

/// Viewports read on demand (panes that send no render reports, a check of
/// the scroll position).
pub trait Screens {
    /// The visible rows of a terminal pane.
    fn viewport(&mut self, pane: u32) -> Option<Vec<String>>;
    /// True when the pane is scrolled back into its history.
    fn scrolled_back(&mut self, pane: u32) -> bool;
}

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

/// The state of one copy of the bar.
#[derive(Debug)]
pub struct Controller {
    me: u32,
    my_url: Option<String>,
    settings: BTreeMap<String, String>,
    config: Config,
    problems: Vec<String>,
    table: PaneTable,
    permission: Permission,
    queued: VecDeque<Event>,
    role: Role,
    theme: Option<Palette>,
    /// Rows received from the leader (followers only).
    synced: Vec<PaneSummary>,
    host: HostRuns,
    viewed_tabs: BTreeSet<usize>,
    last_hidden_poll: Millis,
    message: Option<(String, Millis)>,
    cols: usize,
    timers: Timers,
    storm: Storm,
    watcher: WatcherRun,
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
    /// A follower draws once more on its next tick (zellij can drop the
    /// render of a copy whose tab is just being shown).
    redraw_again: bool,
    /// The agent panes (ids and names) each follower was last sent: a copy
    /// in a hidden tab gets the rows again when they change, so it never
    /// shows "no agent panes" or a pane set of the past when its tab is
    /// viewed (state changes alone reach it when it is viewed).
    synced_panes: BTreeMap<u32, Vec<(u32, String)>>,
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
    /// The pane list last handed to a leader whose tab nobody views.
    forwarded: Option<Vec<PaneEntry>>,
    /// The open inbox view's plugin id (leader only).
    inbox_view: Option<u32>,
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
            permission: Permission::NotAsked,
            queued: VecDeque::new(),
            role: Role::Undecided,
            theme: None,
            synced: Vec::new(),
            host: HostRuns::default(),
            viewed_tabs: BTreeSet::new(),
            last_hidden_poll: 0,
            message: None,
            cols: 0,
            timers: Timers::default(),
            storm: Storm::default(),
            watcher: WatcherRun::default(),
            reports_held: false,
            catch_up_screens: false,
            commands_held: false,
            panes: Vec::new(),
            drawn: None,
            redraw_again: false,
            synced_panes: BTreeMap::new(),
            stale_followers: BTreeSet::new(),
            out: Vec::new(),
        };
        // zellij rewrites its permission cache (truncate, then write) when a
        // copy is granted; a copy reading it meanwhile finds it empty and
        // shows a permission prompt. Copies load together: each asks later.
        let stagger = Millis::from(me.saturating_sub(1) % 16) * PERMISSION_STAGGER_MS;
        if stagger == 0 {
            c.request_permissions();
        } else {
            c.timers.arm(now, now + stagger, &mut c.out);
        }
        let effects = std::mem::take(&mut c.out);
        (c, effects)
    }

    /// Handles one event at `now`; the effects to carry out, in order.
    pub fn handle(&mut self, event: Event, now: Millis, screens: &mut dyn Screens) -> Vec<Effect> {
        match (event, self.permission) {
            (Event::Permission(granted), _) => self.on_permission(granted, now, screens),
            // Pipes need no pane permissions to be read; answering is the leader's.
            (event @ Event::Pipe { .. }, _) | (event, Permission::Granted) => self.dispatch(event, now, screens),
            (Event::Timer, Permission::NotAsked) => {
                self.timers.fired();
                self.request_permissions();
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
        self.redraw_if_changed(now);
        std::mem::take(&mut self.out)
    }

    /// The row zellij should show now, `cols` wide (zellij's render call).
    pub fn render(&mut self, cols: usize, now: Millis) -> String {
        self.cols = cols;
        let rendered = self.draw(now);
        let line = rendered.line.clone();
        self.drawn = Some(rendered);
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

    fn on_permission(&mut self, granted: bool, now: Millis, screens: &mut dyn Screens) {
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
        let unchanged = self.drawn.as_ref().is_some_and(|r| r.line == self.draw(now).line);
        if !unchanged {
            self.out.push(Effect::Redraw);
        }
    }

    /// The bar as it would be drawn now.
    fn draw(&self, now: Millis) -> Rendered {
        let segments = self.segments();
        let palette = self.config.palette.or(self.theme).unwrap_or_default();
        let message = self.message_text(now);
        bar::render(&segments, now, self.cols, &palette, message.as_deref())
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
                kind: r.kind,
            })
            .collect()
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
            .filter(|(_, at)| now.saturating_sub(*at) < MESSAGE_MS)
            .map(|(m, _)| m.clone())
            .or_else(|| self.delivery.queue_note(&self.table))
    }

    fn say(&mut self, text: String, now: Millis) {
        self.message = Some((text, now));
    }

    // ---- the pane list, tabs and the copies ----

    fn on_panes(&mut self, panes: Vec<PaneEntry>, now: Millis) {
        if let Some(url) = leader::own_url(self.me, &panes) {
            self.my_url = Some(url.to_owned());
        }
        let role = leader::elect(self.me, self.my_url.as_deref(), &panes, &self.role);
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
            self.start_watcher(now);
            // Leaders tick faster than followers: the first tick is now.
            self.timers.next_tick = now;
            self.arm_next_timer(now);
        }
        if became_leader || lost_leadership {
            self.sync_subscriptions(now);
        }
        let metas = leader::terminal_panes(&panes, &self.viewed_tabs);
        self.panes = panes;
        self.forward_panes();
        let alive: BTreeSet<u32> = metas.iter().map(|m| m.id).collect();
        for closed in self.table.ids().into_iter().filter(|id| !alive.contains(id)) {
            self.delivery.forget(closed);
            self.notifier.forget(closed);
        }
        let changed = self.table.sync(metas) || became_leader;
        self.share_log(&[]);
        if changed {
            self.broadcast();
        } else {
            self.sync_stale_followers();
        }
    }

    fn on_tabs(&mut self, tabs: &[TabView]) {
        let viewed = leader::viewed_tabs(tabs);
        if viewed == self.viewed_tabs {
            return;
        }
        self.set_viewed(viewed);
        self.tell_leader_viewed();
        self.forward_panes();
        if !self.role.is_leader() {
            // zellij may drop the render of a copy whose tab is just shown.
            self.drawn = None;
            self.redraw_again = true;
        }
    }

    /// zellij sends pane lists only to the plugins of viewed tabs: a copy
    /// that gets them hands them to a leader whose tab nobody views (new
    /// panes, titles and focus would wait for that tab to be shown).
    fn forward_panes(&mut self) {
        let Some(leader) = self.role.leader() else {
            return;
        };
        let leader_tab = self
            .panes
            .iter()
            .find(|p| p.id == leader && p.plugin_url.is_some())
            .map(|p| p.tab);
        let leader_sees = leader_tab.is_none_or(|tab| self.viewed_tabs.contains(&tab));
        if leader_sees {
            self.forwarded = None;
            return;
        }
        if self.forwarded.as_ref() == Some(&self.panes) {
            return;
        }
        if let Ok(payload) = serde_json::to_string(&self.panes) {
            self.forwarded = Some(self.panes.clone());
            self.out.push(Effect::SendToCopy {
                copy: leader,
                name: PIPE_PANES,
                payload,
            });
        }
    }

    /// A copy in a tab nobody views gets no tab updates, so the leader may
    /// not know what is viewed: the other copies tell it.
    fn tell_leader_viewed(&mut self) {
        let Some(leader) = self.role.leader() else {
            return;
        };
        if let Ok(payload) = serde_json::to_string(&self.viewed_tabs) {
            self.out.push(Effect::SendToCopy {
                copy: leader,
                name: PIPE_VIEW,
                payload,
            });
        }
    }

    /// The tabs some client views (seen by this copy or told by another):
    /// when they changed, focus marks follow; the leader then hands the rows
    /// to the copies that miss them in viewed tabs.
    fn set_viewed(&mut self, viewed: BTreeSet<usize>) {
        let views_changed = viewed != self.viewed_tabs;
        self.viewed_tabs = viewed;
        if !self.role.is_leader() {
            return;
        }
        let metas = leader::terminal_panes(&self.panes, &self.viewed_tabs);
        if views_changed && self.table.sync(metas) {
            self.broadcast();
        } else {
            self.sync_stale_followers();
        }
    }

    /// Another copy tells which tabs it sees viewed; it gets the rows again
    /// (it may have missed them while its tab was hidden or it loaded late).
    fn on_view(&mut self, from: &PipeFrom, payload: &str) {
        let Ok(viewed) = serde_json::from_str::<BTreeSet<usize>>(payload) else {
            return;
        };
        if let PipeFrom::Plugin(id) = from {
            // It listens now (rows sent before it had loaded are lost): it
            // gets them at once, viewed or not.
            self.stale_followers.insert(*id);
            self.synced_panes.remove(id);
        }
        self.set_viewed(viewed);
    }

    fn on_sync(&mut self, payload: &str) {
        if self.role.is_leader() {
            return;
        }
        if let Ok(rows) = serde_json::from_str::<Vec<PaneSummary>>(payload) {
            self.redraw_again |= rows != self.synced;
            if self.panes.is_empty() {
                self.adopt_rows(&rows);
            }
            self.synced = rows;
        }
    }

    /// A copy that never had a pane list (zellij sends none to hidden tabs)
    /// takes the leader's agent panes from its rows, so the pushes it
    /// observes reach its table and routing memory: should it take the
    /// lead, it does not route a turn again.
    fn adopt_rows(&mut self, rows: &[PaneSummary]) {
        let metas = rows.iter().map(|r| crate::panes::PaneMeta {
            id: r.pane,
            title: r.name.clone(),
            ..Default::default()
        });
        self.table.adopt(metas);
    }

    /// Hands the rows to the copies of the bar in tabs someone views; the
    /// others get them when their tab is viewed again.
    fn broadcast(&mut self) {
        if !self.role.is_leader() {
            return;
        }
        self.stale_followers = self.role.followers().iter().map(|f| f.id).collect();
        self.sync_stale_followers();
    }

    fn sync_stale_followers(&mut self) {
        if !self.role.is_leader() {
            return;
        }
        let summaries = self.table.summaries();
        let panes: Vec<(u32, String)> = summaries.iter().map(|s| (s.pane, s.name.clone())).collect();
        let due: Vec<u32> = self
            .role
            .followers()
            .iter()
            .filter(|f| self.stale_followers.contains(&f.id))
            // A copy whose pane set is out of date gets the rows at once,
            // viewed or not: it would show "no agent panes" (or panes long
            // gone) for a moment when its tab is viewed.
            .filter(|f| self.viewed_tabs.contains(&f.tab) || self.synced_panes.get(&f.id) != Some(&panes))
            .map(|f| f.id)
            .collect();
        if due.is_empty() {
            return;
        }
        let Ok(payload) = serde_json::to_string(&summaries) else {
            return;
        };
        for copy in due {
            self.stale_followers.remove(&copy);
            self.synced_panes.insert(copy, panes.clone());
            self.out.push(Effect::SendToCopy {
                copy,
                name: PIPE_SYNC,
                payload: payload.clone(),
            });
        }
    }

    // ---- screens ----

    fn on_screens(&mut self, report: Vec<(u32, Vec<String>)>, now: Millis, screens: &mut dyn Screens) {
        if !self.role.is_leader() || self.storm.is_paused() {
            return;
        }
        let ids: Vec<u32> = report.iter().map(|(id, _)| *id).collect();
        self.note_report(&ids, now);
        let mut changed = false;
        for (id, viewport) in report {
            if self.screen_matters(id, now) {
                changed |= self.observe_viewport(id, &viewport, now, screens);
            }
        }
        if changed {
            self.broadcast();
        }
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
            // No viewport is read on this path: a routed answer goes out
            // as if the target's input box were empty.
            self.after_edges(edge.map(|e| (id, e)).into_iter().collect(), now, &mut Unread);
        }
        false
    }

    /// The pane's agent status file reaches us through the running watcher.
    fn covered(&self, id: u32) -> bool {
        self.watcher.running && self.table.has_session_status(id)
    }

    /// Runs the screen matcher on a viewport. A new screen state is only
    /// believed when the pane is not scrolled back into its history.
    fn observe_viewport(&mut self, id: u32, viewport: &[String], now: Millis, screens: &mut dyn Screens) -> bool {
        let (kind, title) = self
            .table
            .get(id)
            .map_or_else(Default::default, |p| (p.kind, p.meta.title.as_str()));
        let verdict = kind.classify_screen(viewport, title);
        // Only a turn end read from old history does harm (an old banner is a
        // false done), and the scroll check copies the scrollback: confirm
        // just those edges. A quiet screen may confirm a transcript
        // candidate: as risky.
        let risky = verdict.state.is_turn_end() || (verdict.is_quiet() && self.table.has_candidate(id));
        if risky && self.table.is_screen_edge(id, verdict.state) && screens.scrolled_back(id) {
            return false; // old history on screen: keep what the pane showed before
        }
        let Some(edge) = self.table.observe_screen(id, &verdict, now) else {
            return false;
        };
        self.after_edges(vec![(id, edge)], now, screens);
        // A screen edge: ask the authoritative sources at once (the watcher,
        // when it runs, pushes them by itself).
        if !self.watcher.running {
            self.host.wanted = true;
            self.run_host(now);
        }
        true
    }

    /// Reads the viewports of panes that send no render reports (hidden
    /// tabs, a paused subscription) and runs the screen matcher on them.
    fn read_viewports(&mut self, panes: Vec<u32>, now: Millis, screens: &mut dyn Screens) -> bool {
        let mut changed = false;
        for id in panes {
            if let Some(viewport) = screens.viewport(id) {
                changed |= self.observe_viewport(id, &viewport, now, screens);
            }
        }
        changed
    }

    /// Counts reports; pauses the subscription when they come too fast.
    fn note_report(&mut self, panes: &[u32], now: Millis) {
        let (running, table) = (self.watcher.running, &self.table);
        let uncovered = |streaming: &BTreeSet<u32>| {
            // The catch-up reads only the panes whose screen matters.
            streaming
                .iter()
                .filter(|id| !(running && table.has_session_status(**id)))
                .count()
        };
        if let Some(until) = self.storm.note(panes, now, uncovered) {
            self.sync_subscriptions(now);
            self.timers.arm(now, until, &mut self.out);
        }
    }

    /// Resubscribes and reads the agent panes whose changes the pause hid
    /// (those whose screen matters: a covered pane's status was pushed).
    fn end_storm_pause(&mut self, now: Millis, screens: &mut dyn Screens) {
        let streaming = self.storm.end();
        self.sync_subscriptions(now);
        if !self.role.is_leader() {
            return;
        }
        let hidden_changes: Vec<u32> = self
            .agent_ids()
            .into_iter()
            .filter(|id| streaming.contains(id) && !self.covered(*id))
            .collect();
        if self.read_viewports(hidden_changes, now, screens) {
            self.broadcast();
        }
    }

    /// Subscribes to what this copy needs now, and only to that: render
    /// reports for the leader while some agent's screen matters and no storm
    /// pause runs; command changes for the leader while it polls.
    fn sync_subscriptions(&mut self, now: Millis) {
        let leader = self.role.is_leader();
        let screens_needed = self.screens_needed();
        let reports = leader && !self.storm.is_paused() && screens_needed;
        self.hold(Subscription::RenderReports, reports);
        if leader && !screens_needed {
            for id in self.table.ids() {
                self.screen_matters(id, now);
            }
        }
        let commands = leader && !self.watcher.running;
        self.hold(Subscription::CommandChanges, commands);
    }

    fn hold(&mut self, subscription: Subscription, wanted: bool) {
        let held = match subscription {
            Subscription::RenderReports => &mut self.reports_held,
            Subscription::CommandChanges => &mut self.commands_held,
        };
        if *held == wanted {
            return;
        }
        *held = wanted;
        if wanted && subscription == Subscription::RenderReports {
            self.catch_up_screens = true;
        }
        self.out.push(match wanted {
            true => Effect::Subscribe(subscription),
            false => Effect::Unsubscribe(subscription),
        });
    }

    /// False when every agent pane is covered by its status file through
    /// the running watcher: no screen then adds anything, and zellij need
    /// not copy any viewport to us.
    fn screens_needed(&self) -> bool {
        let agents = self.table.agents();
        agents.is_empty() || agents.iter().any(|p| !self.covered(p.meta.id))
    }

    fn agent_ids(&self) -> Vec<u32> {
        self.table.agents().iter().map(|p| p.meta.id).collect()
    }

    /// Panes zellij sends no render reports for are read every
    /// `hidden_poll_ms`: agents in tabs no client views, and, while the
    /// leader takes no reports at all (every agent covered), the other
    /// panes, where an agent only its screen shows may start (one run over
    /// ssh, say): once seen, reports are taken again.
    fn poll_unreported_panes(&mut self, now: Millis, screens: &mut dyn Screens) -> bool {
        if std::mem::take(&mut self.catch_up_screens) {
            let all: Vec<u32> = self
                .table
                .ids()
                .into_iter()
                .filter(|id| self.screen_matters(*id, now))
                .collect();
            return self.read_viewports(all, now, screens);
        }
        if now.saturating_sub(self.last_hidden_poll) < self.config.hidden_poll_ms {
            return false;
        }
        self.last_hidden_poll = now;
        let reports_flow = self.reports_held || self.storm.is_paused();
        let agents: BTreeSet<u32> = self.agent_ids().into_iter().collect();
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
        let changed = self.read_viewports(unreported, now, screens);
        if !reports_flow {
            self.sync_subscriptions(now);
        }
        changed
    }

    /// Old releases end a turn with an answer that looks like a preamble: a
    /// fresh look at the (unscrolled) screen of such a pane can confirm it.
    fn confirm_candidates(&mut self, now: Millis, screens: &mut dyn Screens) {
        let panes: Vec<u32> = self
            .agent_ids()
            .into_iter()
            .filter(|id| self.table.has_candidate(*id))
            .filter(|id| !screens.scrolled_back(*id))
            .collect();
        self.read_viewports(panes, now, screens);
    }

    // ---- time ----

    fn on_timer(&mut self, now: Millis, screens: &mut dyn Screens) {
        self.timers.fired();
        let said = {
            let mut drafts = input_boxes(&self.table, screens);
            self.delivery.press_due_enters(now, &mut self.out, &mut drafts)
        };
        if let Some(said) = said.filter(|_| self.role.is_leader()) {
            // An open inbox view hears of a delivery given up, too.
            if said.starts_with(delivery::UNCONFIRMED) {
                self.send_inbox(Some(said.clone()));
            }
            self.say(said, now);
        }
        if self.role.is_leader() {
            self.out.extend(self.notifier.run_due(&self.table, now));
        }
        if self.storm.pause_over(now) {
            self.end_storm_pause(now, screens);
        }
        if now >= self.timers.next_tick {
            // Followers only redraw durations: once a second is enough.
            let tick = if self.role.is_leader() {
                TICK_MS
            } else {
                FOLLOWER_TICK_MS
            };
            self.timers.next_tick = now + tick;
            self.on_tick(now, screens);
        }
        self.arm_next_timer(now);
    }

    /// Arms a timer for the earliest deadline unless one is armed for it.
    fn arm_next_timer(&mut self, now: Millis) {
        let deadlines = [
            Some(self.timers.next_tick),
            self.storm.paused_until(),
            self.delivery.next_enter(),
            self.notifier.due().filter(|_| self.role.is_leader()),
        ];
        if let Some(due) = deadlines.into_iter().flatten().min() {
            self.timers.arm(now, due, &mut self.out);
        }
    }

    fn on_tick(&mut self, now: Millis, screens: &mut dyn Screens) {
        // Settled turn ends move the routing memory of every copy.
        let edges = self.table.tick(now);
        let mut changed = !edges.is_empty();
        self.after_edges(edges, now, screens);
        if !self.role.is_leader() {
            if std::mem::take(&mut self.redraw_again) {
                self.drawn = None;
            }
            return;
        }
        changed |= self.poll_unreported_panes(now, screens);
        if self.watcher.restart_due(now) {
            self.start_watcher(now);
        }
        if self.host.give_up_if_lost(now) {
            self.say("the host command did not answer in 10 s; asking again".into(), now);
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
    }

    // ---- the host command and the watcher ----

    fn run_host(&mut self, now: Millis) {
        if self.host.in_flight || !self.host.wanted || !self.role.is_leader() {
            return;
        }
        let ids = self.table.ids();
        if ids.is_empty() {
            return;
        }
        let panes: Vec<String> = ids.iter().map(u32::to_string).collect();
        let request = self.host.start(now);
        let context = BTreeMap::from([
            (CTX_KIND.to_owned(), "status".to_owned()),
            (CTX_REQUEST.to_owned(), request.to_string()),
        ]);
        let argv = [
            self.config.host_command.as_str(),
            "status",
            "--json",
            "--panes",
            &panes.join(","),
        ];
        self.out.push(Effect::RunHost {
            argv: argv.iter().map(|a| a.to_string()).collect(),
            context,
        });
    }

    /// Starts the session's watcher (it exits at once if one already runs).
    fn start_watcher(&mut self, now: Millis) {
        if !self.config.watcher || self.watcher.running {
            return;
        }
        let context = BTreeMap::from([(CTX_KIND.to_owned(), "watch".to_owned())]);
        let argv = vec![self.config.host_command.clone(), "watch".to_owned()];
        self.out.push(Effect::RunHost { argv, context });
        self.watcher.started();
        self.sync_subscriptions(now);
    }

    /// The watcher exited: with [`EXIT_ANOTHER_WATCHER`] another one serves
    /// the session; otherwise fall back to polling and say why.
    fn on_watcher_exit(&mut self, code: Option<i32>, stderr: &[u8], now: Millis) {
        let another_serves = code == Some(EXIT_ANOTHER_WATCHER);
        self.watcher.running = another_serves;
        self.sync_subscriptions(now);
        if another_serves || !self.role.is_leader() {
            return;
        }
        // Poll at once (nothing pushed may be trusted to be current), and
        // start it again a little later.
        self.host.wanted = true;
        self.run_host(now);
        self.watcher.plan_restart(now);
        let why = first_line(stderr).unwrap_or_else(|| "it exited".into());
        self.say(format!("watcher stopped ({why}); polling until it restarts"), now);
    }

    /// The notifier ended; a failure is said in the bar.
    fn on_notifier_exit(&mut self, code: Option<i32>, stderr: &[u8], now: Millis) {
        self.notifier.finished();
        if code != Some(0) {
            let why = first_line(stderr).unwrap_or_else(|| format!("exit code {code:?}"));
            self.say(format!("notify command failed: {why}"), now);
        }
        self.arm_next_timer(now);
    }

    fn on_host_result(
        &mut self,
        code: Option<i32>,
        stdout: &[u8],
        stderr: &[u8],
        context: &BTreeMap<String, String>,
        now: Millis,
        screens: &mut dyn Screens,
    ) {
        match context.get(CTX_KIND).map(String::as_str) {
            Some("watch") => return self.on_watcher_exit(code, stderr, now),
            Some("notify") => return self.on_notifier_exit(code, stderr, now),
            Some("status") => {}
            _ => return,
        }
        if !self.host.answers(context.get(CTX_REQUEST)) {
            return; // an answer to a superseded request
        }
        match (code, HostReport::parse(stdout)) {
            (Some(0), Ok(report)) => {
                self.host.error = None;
                self.apply_reports(report.panes, now, screens);
                self.run_host(now);
            }
            (_, parsed) => {
                let why = match (first_line(stderr), parsed) {
                    (Some(why), _) => why,
                    (None, Err(e)) => e.to_string(),
                    (None, Ok(_)) => format!("exit code {code:?}"),
                };
                self.host.error = Some(format!("host command `{}` failed: {why}", self.config.host_command));
            }
        }
    }

    /// Observes reports (host run, hook, watcher). Every copy keeps its
    /// table and routing memory current; the leader routes their edges and
    /// hands the rows on.
    fn apply_reports(&mut self, reports: Vec<PaneReport>, now: Millis, screens: &mut dyn Screens) {
        let leader = self.role.is_leader();
        let before = leader.then(|| self.table.summaries());
        let mut edges = Vec::new();
        for report in reports {
            let id = report.pane;
            self.delivery.on_report(&report);
            edges.extend(self.table.observe_report(report).map(|e| (id, e)));
        }
        edges.extend(self.table.tick(now));
        self.after_edges(edges, now, screens);
        if !leader {
            return;
        }
        self.confirm_candidates(now, screens);
        self.sync_subscriptions(now);
        if before.is_some_and(|before| self.table.summaries() != before) {
            self.broadcast();
        }
    }

    // ---- pipes and routing ----

    fn on_pipe(&mut self, name: &str, from: &PipeFrom, payload: &str, now: Millis, screens: &mut dyn Screens) {
        let leader = self.role.is_leader();
        match name {
            PIPE_SYNC => self.on_sync(payload),
            // Taken in any role: the leader may not know yet that it leads.
            PIPE_VIEW => self.on_view(from, payload),
            PIPE_STATE if leader => self.answer_state(from),
            PIPE_VERDICT => match serde_json::from_str::<PaneReport>(payload) {
                Ok(report) => self.apply_reports(vec![report], now, screens),
                Err(e) if leader => self.say(format!("bad verdict message: {e}"), now),
                Err(_) => {}
            },
            PIPE_PUSH => match protocol::parse_push(payload) {
                Ok(reports) => self.apply_reports(reports, now, screens),
                Err(e) if leader => self.say(e.to_string(), now),
                Err(_) => {}
            },
            PIPE_ROUTE if leader => self.on_route_command(from, payload, now, screens),
            PIPE_ATTENTION if leader => self.jump_to_attention(from, now),
            PIPE_INBOX if leader => self.open_inbox(from),
            PIPE_INBOX_HELLO if leader => {
                if let PipeFrom::Plugin(view) = from {
                    self.inbox_view = Some(*view);
                    self.send_inbox(None);
                }
            }
            PIPE_INBOX_ACT if leader => self.on_inbox_action(payload, now, screens),
            PIPE_INBOX_ENTRIES => self.on_inbox_entries(payload),
            PIPE_PANES if leader => {
                if let Ok(panes) = serde_json::from_str::<Vec<PaneEntry>>(payload) {
                    self.on_panes(panes, now);
                }
            }
            _ => {}
        }
    }

    // ---- attention and the inbox ----

    /// Focuses the next pane that needs you (see [`attention`]), switching
    /// tab; says so when none does.
    fn jump_to_attention(&mut self, from: &PipeFrom, now: Millis) {
        if !self.role.is_leader() {
            return;
        }
        let segments = self.segments();
        let queue = attention::queue(segments.iter().map(Segment::standing));
        let Some(pane) = self.cycle.next(&queue, now) else {
            self.say("nothing needs you".into(), now);
            return self.answer(from, "nothing needs you\n".into());
        };
        self.out.push(Effect::FocusPane(pane));
        let what = segments
            .iter()
            .find(|s| s.pane == pane)
            .map_or_else(String::new, |s| format!(" {} {}", s.name, s.state));
        self.answer(from, format!("→ {pane}{what}\n"));
    }

    /// Opens the floating inbox view (zellij launches it unless it runs)
    /// and shows the open one.
    fn open_inbox(&mut self, from: &PipeFrom) {
        if let Some(url) = self.my_url.clone() {
            let mut config = self.settings.clone();
            config.insert("view".into(), "inbox".into());
            self.out.push(Effect::OpenInbox { url, config });
        }
        // A view closed since its greeting is not in the pane list.
        let open = self
            .inbox_view
            .filter(|view| self.panes.iter().any(|p| p.id == *view && p.plugin_url.is_some()));
        if let Some(view) = open {
            self.out.push(Effect::FocusPlugin(view));
        }
        self.answer(from, format!("inbox: {} finished turn(s)\n", self.inbox.len()));
    }

    /// Hands the open inbox view the entries (without answers) and the
    /// panes an answer can go to.
    fn send_inbox(&mut self, feedback: Option<String>) {
        let Some(view) = self.inbox_view.filter(|_| self.role.is_leader()) else {
            return;
        };
        let entries = self
            .inbox
            .newest_first()
            .map(|e| inbox::Entry {
                answer: None,
                ..e.clone()
            })
            .collect();
        let agents = self.table.agents();
        let others = self
            .table
            .all()
            .filter(|p| !agents.iter().any(|a| a.meta.id == p.meta.id));
        let panes = agents
            .iter()
            .copied()
            .chain(others)
            .map(|p| (p.meta.id, p.meta.title.clone()))
            .collect();
        let update = inbox::Update {
            entries,
            panes,
            feedback,
        };
        if let Ok(payload) = serde_json::to_string(&update) {
            self.out.push(Effect::SendToCopy {
                copy: view,
                name: PIPE_INBOX_UPDATE,
                payload,
            });
        }
    }

    /// Copies or routes an inbox entry's answer, as the view asked.
    fn on_inbox_action(&mut self, payload: &str, now: Millis, screens: &mut dyn Screens) {
        let feedback = match serde_json::from_str::<inbox::Action>(payload) {
            Err(e) => format!("bad inbox action: {e}"),
            Ok(action) => {
                let id = match action {
                    inbox::Action::Copy(id) | inbox::Action::Route { entry: id, .. } => id,
                };
                match (self.inbox.get(id).and_then(|e| e.answer.clone()), action) {
                    (None, _) => "that turn left no answer".into(),
                    (Some(answer), inbox::Action::Copy(_)) => {
                        let chars = answer.chars().count();
                        self.out.push(Effect::CopyToClipboard(answer));
                        format!("copied {chars} chars")
                    }
                    (Some(answer), inbox::Action::Route { to, .. }) => {
                        let feedback = {
                            let mut drafts = input_boxes(&self.table, screens);
                            self.delivery
                                .send(&self.table, &answer, to, now, &mut self.out, &mut drafts)
                        };
                        self.arm_next_timer(now);
                        feedback
                    }
                }
            }
        };
        self.send_inbox(Some(feedback));
    }

    fn answer_state(&mut self, from: &PipeFrom) {
        let json = serde_json::to_string(&self.table.summaries()).unwrap_or_else(|_| "[]".into());
        self.answer(from, format!("{json}\n"));
    }

    fn answer(&mut self, from: &PipeFrom, text: String) {
        if let PipeFrom::Cli(pipe) = from {
            self.out.push(Effect::AnswerPipe {
                pipe: pipe.clone(),
                text,
            });
        }
    }

    /// Routes on edges (only the leader acts; delivery feedback goes to
    /// the bar), logs finished turns and notes what to notify.
    fn after_edges(&mut self, edges: Vec<(u32, Edge)>, now: Millis, screens: &mut dyn Screens) {
        let act = self.role.is_leader();
        let mut logged = Vec::new();
        for (pane, edge) in edges {
            let feedback = {
                let mut drafts = input_boxes(&self.table, screens);
                let acting = act.then_some((&mut self.out, &mut drafts as &mut delivery::Drafts<'_>));
                self.delivery.on_edge(&self.table, (pane, &edge), now, acting)
            };
            if let Some(last) = feedback.into_iter().last() {
                self.say(last, now);
            }
            if let Some(p) = self.table.get(pane).filter(|_| act) {
                logged.extend(self.inbox.on_edge(p, &edge, now));
                self.notifier.on_edge(pane, &edge, p.unseen, now);
            }
        }
        if !logged.is_empty() {
            self.send_inbox(None);
            self.share_log(&logged);
        }
        self.arm_next_timer(now);
    }

    /// Hands new or changed inbox entries to the other copies; a copy not
    /// sent the log yet gets all of it.
    fn share_log(&mut self, changed: &[inbox::Entry]) {
        if !self.role.is_leader() {
            return;
        }
        let copies: Vec<u32> = self.role.followers().iter().map(|f| f.id).collect();
        let (new, known): (Vec<u32>, Vec<u32>) = copies.into_iter().partition(|c| !self.logged_followers.contains(c));
        self.logged_followers.extend(new.iter().copied());
        // Serialized only when some copy needs it: pane lists come often.
        if !self.inbox.is_empty() && !new.is_empty() {
            let whole: Vec<&inbox::Entry> = self.inbox.oldest_first().collect();
            send_entries(&mut self.out, &new, &whole);
        }
        if !changed.is_empty() && !known.is_empty() {
            send_entries(&mut self.out, &known, changed);
        }
    }

    /// A follower takes the leader's inbox entries.
    fn on_inbox_entries(&mut self, payload: &str) {
        if self.role.is_leader() {
            return;
        }
        if let Ok(entries) = serde_json::from_str::<Vec<inbox::Entry>>(payload) {
            entries.into_iter().for_each(|e| self.inbox.upsert(e));
        }
    }

    fn on_route_command(&mut self, from: &PipeFrom, payload: &str, now: Millis, screens: &mut dyn Screens) {
        let feedback = {
            let mut drafts = input_boxes(&self.table, screens);
            self.delivery
                .command(&self.table, payload, now, &mut self.out, &mut drafts)
        };
        self.answer(from, format!("{feedback}\n"));
        self.arm_next_timer(now);
        self.say(feedback, now);
    }
}

/// Inbox entries for these copies of the bar.
fn send_entries<T: serde::Serialize>(out: &mut Vec<Effect>, copies: &[u32], entries: &[T]) {
    let Ok(payload) = serde_json::to_string(entries) else {
        return;
    };
    out.extend(copies.iter().map(|copy| Effect::SendToCopy {
        copy: *copy,
        name: PIPE_INBOX_ENTRIES,
        payload: payload.clone(),
    }));
}

/// The first line of a command's error output, if any.
fn first_line(bytes: &[u8]) -> Option<String> {
    Some(crate::text::first_line(&String::from_utf8_lossy(bytes))).filter(|l| !l.is_empty())
}

#[cfg(test)]
mod tests;
