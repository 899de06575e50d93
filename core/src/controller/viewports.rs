//! Screens: render reports and viewports read on demand, what they say
//! about each pane, output-storm pauses, the render-report subscription and
//! the polling of panes that send no reports.

use super::*;
use crate::screen::ScreenVerdict;

impl Controller {
    pub(super) fn on_screens(&mut self, report: Vec<(u32, Vec<String>)>, now: Millis, screens: &mut dyn Screens) {
        if !self.role.is_leader() || self.storm.is_paused() {
            return;
        }
        // Only the panes whose rows are read make a storm: the others' rows
        // are skipped undecoded (`wants_screen`), a report of them costs little.
        let read: Vec<u32> = report
            .iter()
            .map(|(id, _)| *id)
            .filter(|id| !self.covered(*id))
            .collect();
        if !read.is_empty() {
            self.note_report(&read, now);
        }
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

    /// True when a render report's rows of pane `id` are read: by the
    /// leader, outside a storm pause, for a pane whose state the watcher
    /// does not push (the others' rows may be skipped undecoded).
    pub fn wants_screen(&self, id: u32) -> bool {
        self.role.is_leader() && !self.storm.is_paused() && !self.covered(id)
    }

    /// False for a pane whose agent's status file the watcher pushes: its
    /// screen would only repeat that, at a cost. Its old screen guess is
    /// dropped the first time, so it cannot linger.
    pub(super) fn screen_matters(&mut self, id: u32, now: Millis) -> bool {
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
    pub(super) fn covered(&self, id: u32) -> bool {
        self.watcher.running && self.table.has_session_status(id)
    }

    /// Runs the screen matcher on a viewport. A new screen state is only
    /// believed when the pane is not scrolled back into its history.
    pub(super) fn observe_viewport(
        &mut self,
        id: u32,
        viewport: &[String],
        now: Millis,
        screens: &mut dyn Screens,
    ) -> bool {
        let verdict = self.classify_viewport(id, viewport);
        // Only a turn end read from old history does harm (an old banner is a
        // false done), and the scroll check copies the scrollback: confirm
        // just those edges. A quiet screen may confirm a transcript
        // candidate: as risky.
        let risky = verdict.state.is_turn_end() || (verdict.is_quiet() && self.table.has_candidate(id));
        if risky && self.table.is_screen_edge(id, verdict.state) && screens.scrolled_back(id) {
            return false; // old history on screen: keep what the pane showed before
        }
        self.observe_verdict(id, &verdict, now, screens)
    }

    /// What pane `id`'s screen matcher reads in `viewport`.
    pub(super) fn classify_viewport<'a>(&self, id: u32, viewport: &'a [String]) -> ScreenVerdict<'a> {
        let (kind, title) = self
            .table
            .get(id)
            .map_or_else(Default::default, |p| (p.kind, p.meta.title.as_str()));
        kind.classify_screen(viewport, title)
    }

    /// Takes what pane `id`'s screen says, read from a viewport already
    /// known not to be old history; true on an edge.
    pub(super) fn observe_verdict(
        &mut self,
        id: u32,
        verdict: &ScreenVerdict<'_>,
        now: Millis,
        screens: &mut dyn Screens,
    ) -> bool {
        let Some(edge) = self.table.observe_screen(id, verdict, now) else {
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
    pub(super) fn read_viewports(&mut self, panes: Vec<u32>, now: Millis, screens: &mut dyn Screens) -> bool {
        let mut changed = false;
        for id in panes {
            if let Some(viewport) = screens.viewport(id) {
                changed |= self.observe_viewport(id, &viewport, now, screens);
            }
        }
        changed
    }

    /// Counts reports; pauses the subscription when they come too fast.
    pub(super) fn note_report(&mut self, panes: &[u32], now: Millis) {
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

    /// Resubscribes and reads the panes whose changes the pause hid (those
    /// whose screen matters: a covered pane's status was pushed): every
    /// one, at once, when reports flow again (zellij reports only what
    /// changes after), else the agents that streamed. Waiting for the next
    /// tick to catch up left a banner drawn during the pause unseen for up
    /// to a tick more.
    pub(super) fn end_storm_pause(&mut self, now: Millis, screens: &mut dyn Screens) {
        let streaming = self.storm.end();
        self.sync_subscriptions(now);
        if !self.role.is_leader() {
            return;
        }
        let changed = match std::mem::take(&mut self.catch_up_screens) {
            true => self.catch_up(now, screens),
            false => {
                let hidden_changes: Vec<u32> = self
                    .agent_ids()
                    .into_iter()
                    .filter(|id| streaming.contains(id) && !self.covered(*id))
                    .collect();
                self.read_viewports(hidden_changes, now, screens)
            }
        };
        if changed {
            self.broadcast();
        }
    }

    /// Reads every pane whose screen matters (reports start again, or a
    /// copy takes the lead).
    fn catch_up(&mut self, now: Millis, screens: &mut dyn Screens) -> bool {
        let all: Vec<u32> = self
            .table
            .ids()
            .into_iter()
            .filter(|id| self.screen_matters(*id, now))
            .collect();
        self.read_viewports(all, now, screens)
    }

    /// Subscribes to what this copy needs now, and only to that: render
    /// reports for the leader while some agent's screen matters and no storm
    /// pause runs; command changes for the leader while it polls.
    pub(super) fn sync_subscriptions(&mut self, now: Millis) {
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

    pub(super) fn hold(&mut self, subscription: Subscription, wanted: bool) {
        let held = match subscription {
            Subscription::RenderReports => &mut self.reports_held,
            Subscription::CommandChanges => &mut self.commands_held,
            Subscription::KeybindingsOnce => return,
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
    pub(super) fn screens_needed(&self) -> bool {
        self.table.no_agents() || self.table.any_agent(|p| !self.covered(p.meta.id))
    }

    pub(super) fn agent_ids(&self) -> Vec<u32> {
        self.table.agents().iter().map(|p| p.meta.id).collect()
    }

    /// Panes zellij sends no render reports for are read every
    /// `hidden_poll_ms`: agents in tabs no client views, and, while the
    /// leader takes no reports at all (every agent covered), the other
    /// panes, where an agent only its screen shows may start (one run over
    /// ssh, say): once seen, reports are taken again.
    pub(super) fn poll_unreported_panes(&mut self, now: Millis, screens: &mut dyn Screens) -> bool {
        if std::mem::take(&mut self.catch_up_screens) {
            return self.catch_up(now, screens);
        }
        if now.saturating_sub(self.last_hidden_poll) < self.config.hidden_poll_ms {
            return self.poll_hidden_screen_only(screens, now);
        }
        self.last_hidden_poll = now;
        let reports_flow = self.reports_held || self.storm.is_paused();
        let agents = crate::order::set_of(self.agent_ids());
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

    /// Agents in tabs no client views whose state only their screen tells
    /// (no log, hook or session status: a rules file's agent that has none)
    /// are read on every tick, not every `hidden_poll_ms`: nothing else
    /// would show their turn's end.
    fn poll_hidden_screen_only(&mut self, screens: &mut dyn Screens, now: Millis) -> bool {
        let hidden: Vec<u32> = self
            .table
            .agents()
            .iter()
            .filter(|p| !self.viewed_tabs.contains(&p.meta.tab) && self.table.screen_only(p.meta.id))
            .map(|p| p.meta.id)
            .collect();
        self.read_viewports(hidden, now, screens)
    }

    /// Old releases end a turn with an answer that looks like a preamble: a
    /// fresh look at the (unscrolled) screen of such a pane can confirm it.
    pub(super) fn confirm_candidates_of(&mut self, ids: &[u32], now: Millis, screens: &mut dyn Screens) {
        let panes: Vec<u32> = ids
            .iter()
            .copied()
            .filter(|id| self.table.is_agent(*id) && self.table.has_candidate(*id))
            .filter(|id| !screens.scrolled_back(*id))
            .collect();
        self.read_viewports(panes, now, screens);
    }
}
