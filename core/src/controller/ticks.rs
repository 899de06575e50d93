//! Time: the timer, its one armed deadline, and what each tick settles
//! (the leader's looks in the mailbox, turn ends, Enters due, dones
//! awaiting their screen's answer, notifications, host runs, watcher
//! restarts).

use super::*;

impl Controller {
    pub(super) fn on_timer(&mut self, now: Millis, screens: &mut dyn Screens) {
        self.timers.fired();
        self.news |= self.look_in_the_mailbox(now, screens);
        let said = {
            let mut drafts = input_boxes(&self.table, screens);
            self.delivery
                .press_due_enters(&self.table, now, &mut self.out, &mut drafts)
        };
        if let Some(said) = said.filter(|_| self.role.is_leader()) {
            // An open inbox view hears of a delivery given up, too.
            if said.starts_with(delivery::UNCONFIRMED) {
                self.send_inbox(Some(said.clone()));
            }
            self.say(said, now);
        }
        if self.role.is_leader() {
            self.route_awaited_answers(now, screens);
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

    /// Reads the screens of confirmed dones that wait for their screen's
    /// answer, and routes those that show one, or waited long enough; the
    /// inbox takes the answers that came. A screen is believed only at the
    /// bottom of its scrollback, checked once it shows an answer (the check
    /// asks for the whole scrollback: not on every look).
    fn route_awaited_answers(&mut self, now: Millis, screens: &mut dyn Screens) {
        for id in self.delivery.screens_to_read(now) {
            let Some(viewport) = screens.viewport(id) else {
                continue;
            };
            if self.table.get(id).is_none() {
                continue;
            }
            // Classified once, and the scroll checked once: the look that
            // takes an answer is the one that checked it.
            let verdict = self.classify_viewport(id, &viewport);
            if verdict.answer.is_some() && !screens.scrolled_back(id) {
                self.observe_verdict(id, &verdict, now, screens);
            }
        }
        let (said, answered) = {
            let mut drafts = input_boxes(&self.table, screens);
            self.delivery
                .route_awaited(&self.table, now, &mut self.out, &mut drafts)
        };
        if let Some(said) = said {
            self.say(said, now);
        }
        let table = &self.table;
        let logged: Vec<inbox::Entry> = answered
            .into_iter()
            .filter_map(|id| table.get(id).and_then(|p| self.inbox.on_late_answer(p)))
            .collect();
        if !logged.is_empty() {
            self.send_inbox(None);
            self.share_log(&logged);
        }
    }

    /// The deadlines a timer serves, besides the leader's next look in the
    /// mailbox: the tick, a storm pause's end, Enters, notifications.
    fn deadlines_besides_looks(&self) -> impl Iterator<Item = Millis> {
        let deadlines = [
            Some(self.timers.next_tick),
            self.storm.paused_until(),
            self.delivery.next_enter(),
            self.notifier.due().filter(|_| self.role.is_leader()),
        ];
        deadlines.into_iter().flatten()
    }

    /// True when a timer firing now would only look in the mailbox: the
    /// bar need not be drawn again unless the look brings news.
    pub(super) fn only_a_look_is_due(&self, now: Millis) -> bool {
        self.deadlines_besides_looks().all(|due| due > now)
    }

    /// Arms a timer for the earliest deadline unless one is armed for it.
    pub(super) fn arm_next_timer(&mut self, now: Millis) {
        let look = self.pulls.next_look().filter(|_| self.watcher_serves());
        if let Some(due) = self.deadlines_besides_looks().chain(look).min() {
            self.timers.arm(now, due, &mut self.out);
        }
    }

    pub(super) fn on_tick(&mut self, now: Millis, screens: &mut dyn Screens) {
        // Settled turn ends move the routing memory of every copy.
        let ticked = self.table.tick(now);
        self.after_edges(ticked.edges, now, screens);
        if !self.role.is_leader() {
            if std::mem::take(&mut self.redraw_again) {
                self.drawn = None;
            }
            return;
        }
        let screens_changed = self.poll_unreported_panes(now, screens);
        self.ask_rules(now);
        if self.watcher.restart_due(now) {
            self.start_watcher(now);
        }
        self.pull(now);
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
        match screens_changed {
            true => self.broadcast_changes(),
            false => self.broadcast_changes_of(&ticked.redrawn),
        }
    }
}
