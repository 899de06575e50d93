//! The pane list, the tabs and the copies of the bar: who leads, which tabs
//! are viewed, zellij's pane lists handed to a leader nobody views, and the
//! rows the leader sends the other copies.

use super::*;

impl Controller {
    pub(super) fn on_panes(&mut self, panes: Vec<PaneEntry>, now: Millis) {
        if let Some(url) = leader::own_url(self.me, &panes) {
            self.my_url = Some(url.to_owned());
        }
        let role = leader::elect(self.me, self.my_url.as_deref(), &panes, &self.role);
        let became_leader = role.is_leader() && !self.role.is_leader();
        // A copy that has seen a leader (itself included) may have missed
        // what another acted on meanwhile; the first leader of a session has not.
        let took_over = became_leader && self.saw_a_leader;
        self.saw_a_leader |= role != Role::Undecided;
        if role != Role::Undecided {
            self.ask_rules(now);
        }
        let lost_leadership = !role.is_leader() && self.role.is_leader();
        let new_leader = role.leader().filter(|l| self.role.leader() != Some(*l));
        let known = crate::order::set_of(self.role.followers().iter().map(|f| f.id));
        // Copies that appeared since the last pane list have no rows yet.
        self.stale_followers
            .extend(role.followers().iter().map(|f| f.id).filter(|id| !known.contains(id)));
        self.role = role;
        if new_leader.is_some() {
            self.tell_leader_viewed();
        }
        if became_leader {
            // Its first pull takes the whole mailbox, a part at a time
            // (`mailbox::READ_BYTES`); one `status` run fills the table at
            // once meanwhile. (Leaving that run out when the watcher serves
            // was tried: at 64 agents in 8 tabs zellij's server then ended
            // ~35 MiB higher in 3 sessions of 9, against none of 11 with
            // it, on one boot; why was not found.)
            self.pulls = Pulls::default();
            self.host.wanted = true;
            self.start_watcher(now);
            // Leaders tick faster than followers: the first tick is now.
            self.timers.next_tick = now;
            self.arm_next_timer(now);
        }
        if became_leader || lost_leadership {
            self.sync_subscriptions(now);
        }
        self.panes = panes;
        self.forward_panes();
        let alive = crate::order::set_of(self.panes.iter().filter(|p| p.plugin_url.is_none()).map(|p| p.id));
        for closed in self.table.ids().into_iter().filter(|id| !alive.contains(id)) {
            self.delivery.forget(closed);
            self.notifier.forget(closed);
        }
        let metas = self.table_metas();
        let changed = self.table.sync(metas) || became_leader;
        if took_over {
            // Another leader acted on what these panes show now.
            self.baseline = crate::order::set_of(self.table.ids());
        } else if !self.role.is_leader() {
            self.baseline.clear();
        }
        self.share_log(&[]);
        if changed {
            self.broadcast();
        } else {
            self.sync_stale_followers();
        }
    }

    /// The terminal panes the pane table holds: the latest pane list's for
    /// the leader, none for another copy. A follower draws the rows the
    /// leader sends; a table of 64 panes would take ~40 KB of its wasm
    /// memory, which never shrinks, in every tab a client has viewed.
    pub(super) fn table_metas(&self) -> Vec<crate::panes::PaneMeta> {
        match self.role.is_leader() {
            true => leader::terminal_panes(&self.panes, &self.viewed_tabs),
            false => Vec::new(),
        }
    }

    pub(super) fn on_tabs(&mut self, tabs: &[TabView]) {
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
    pub(super) fn forward_panes(&mut self) {
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
        let key = pane_list_key(&self.panes);
        if self.forwarded == Some(key) {
            return;
        }
        if let Ok(payload) = serde_json::to_string(&self.panes) {
            self.forwarded = Some(key);
            self.out.push(Effect::SendToCopy {
                copy: leader,
                name: PIPE_PANES,
                payload,
            });
        }
    }

    /// A copy in a tab nobody views gets no tab updates, so the leader may
    /// not know what is viewed: the other copies tell it.
    pub(super) fn tell_leader_viewed(&mut self) {
        if let Some(leader) = self.role.leader() {
            self.tell_viewed(leader);
        }
    }

    /// Tells copy `leader` which tabs this copy sees viewed (it answers
    /// with all the rows).
    fn tell_viewed(&mut self, leader: u32) {
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
    pub(super) fn set_viewed(&mut self, viewed: BTreeSet<usize>) {
        let views_changed = viewed != self.viewed_tabs;
        let was_hidden = self.in_a_hidden_tab();
        self.viewed_tabs = viewed;
        if !self.role.is_leader() {
            return;
        }
        if was_hidden && !self.in_a_hidden_tab() {
            self.drawn = None; // what it last drew is old: draw now
        }
        let metas = self.table_metas();
        if views_changed && self.table.sync(metas) {
            self.broadcast();
        } else {
            self.sync_stale_followers();
        }
    }

    /// Another copy tells which tabs it sees viewed; it gets the rows again
    /// (it may have missed them while its tab was hidden or it loaded late).
    pub(super) fn on_view(&mut self, from: &PipeFrom, payload: &str) {
        let Ok(viewed) = serde_json::from_str::<BTreeSet<usize>>(payload) else {
            return;
        };
        if let PipeFrom::Plugin(id) = from {
            // It listens now (rows sent before it had loaded are lost): it
            // gets them all at once, viewed or not.
            self.stale_followers.insert(*id);
            self.current_copies.remove(id);
            self.synced_panes.retain(|(copy, _)| copy != id);
        }
        self.set_viewed(viewed);
    }

    pub(super) fn on_sync(&mut self, from: &PipeFrom, payload: &str, now: Millis) {
        if self.role.is_leader() {
            return;
        }
        self.saw_a_leader = true;
        let Ok(message) = serde_json::from_str::<SyncRows>(payload) else {
            return;
        };
        if self.rules.leader_changed(message.rules) {
            self.ask_rules_again(now);
        }
        let changed = match message.base {
            None => {
                let changed = message.rows != self.synced;
                self.synced = message.rows;
                Some(changed)
            }
            Some(base) if base == self.synced_seq => put_changes(&mut self.synced, message.rows),
            Some(_) => None,
        };
        let Some(changed) = changed else {
            // Out of step (a message lost, or this copy just loaded): the
            // sender (this copy may not know yet that it leads) sends all.
            self.synced_seq = 0;
            if let PipeFrom::Plugin(leader) = from {
                self.tell_viewed(*leader);
            }
            return;
        };
        self.redraw_again |= changed;
        self.synced_seq = message.seq;
    }

    /// The leader acted on a turn end (a follower's memory of it, for the
    /// day it leads: see [`protocol::PIPE_ACTED`]).
    pub(super) fn on_acted(&mut self, payload: &str) {
        if let Ok(acted) = serde_json::from_str::<protocol::Acted>(payload) {
            self.delivery.leader_acted_on(acted.pane, &acted.turn, acted.answer);
        }
    }

    /// Tells every other copy, viewed or not, of the turn ends this leader
    /// acted on since the last time.
    pub(super) fn tell_acted(&mut self) {
        let acted = self.delivery.take_acted();
        if acted.is_empty() || !self.role.is_leader() {
            return;
        }
        for (pane, turn, answer) in acted {
            let Ok(payload) = serde_json::to_string(&protocol::Acted { pane, turn, answer }) else {
                continue;
            };
            for follower in self.role.followers() {
                self.out.push(Effect::SendToCopy {
                    copy: follower.id,
                    name: protocol::PIPE_ACTED,
                    payload: payload.clone(),
                });
            }
        }
    }

    /// Hands the rows to the copies of the bar in tabs someone views; the
    /// others get them when their tab is viewed again.
    pub(super) fn broadcast(&mut self) {
        if !self.role.is_leader() {
            return;
        }
        self.all_followers_stale();
        self.sync_stale_followers();
    }

    /// [`Controller::broadcast`] when the rows changed since they were
    /// last sent (the rows are built once, and nothing is sent for a batch
    /// of reports that changed nothing the copies draw).
    pub(super) fn broadcast_changes(&mut self) {
        if !self.role.is_leader() || self.role.followers().is_empty() {
            return;
        }
        let rows = self.table.drawn_rows();
        if rows == self.rows_sent {
            return;
        }
        self.all_followers_stale();
        self.send_rows(rows);
    }

    /// [`Controller::broadcast_changes`] after a batch of reports that
    /// touched these panes only: their rows are compared with the ones last
    /// sent (the others cannot have changed), so a batch costs what it
    /// touches. A pane that joins or leaves the rows, or rows that lag the
    /// table, send the whole table's.
    pub(super) fn broadcast_changes_of(&mut self, touched: &[u32]) {
        if !self.role.is_leader() || self.role.followers().is_empty() {
            return;
        }
        if self.rows_lag {
            return self.broadcast_changes();
        }
        let mut changes = Vec::with_capacity(touched.len());
        for id in touched {
            let slot = self.rows_sent.iter().position(|r| r.pane == *id);
            match (self.table.drawn_row(*id), slot) {
                (Some(row), Some(slot)) if row != self.rows_sent[slot] => changes.push((slot, row)),
                (Some(_), Some(_)) | (None, None) => {}
                // A pane that joined or left the rows.
                _ => return self.broadcast_changes(),
            }
        }
        if changes.is_empty() {
            return;
        }
        self.all_followers_stale();
        self.send_changes(changes);
    }

    /// Every other copy is to get the rows again.
    fn all_followers_stale(&mut self) {
        self.stale_followers = crate::order::set_of(self.role.followers().iter().map(|f| f.id));
    }

    pub(super) fn sync_stale_followers(&mut self) {
        if !self.role.is_leader() || self.stale_followers.is_empty() {
            return;
        }
        let rows = self.table.drawn_rows();
        self.send_rows(rows);
    }

    /// Sends `rows` to the stale copies that need them now: a change to
    /// those that hold the last rows sent, all of them to the others.
    fn send_rows(&mut self, rows: Vec<PaneSummary>) {
        let panes = pane_set_key(&rows);
        let due = self.due_copies(panes);
        if due.is_empty() {
            self.rows_lag |= rows != self.rows_sent;
            return;
        }
        let change = changed_rows(&self.rows_sent, &rows);
        self.rows_sent = rows;
        self.rows_sent_key = panes;
        self.deliver(due, change, panes);
    }

    /// [`Controller::send_rows`] for rows that differ from the last sent in
    /// these slots only (`(slot, row)`), at the cost of the change: the
    /// rows sent are updated in place, not built and compared whole. A
    /// renamed pane changes the set of panes, so it sends the whole rows.
    fn send_changes(&mut self, changes: Vec<(usize, PaneSummary)>) {
        if changes.iter().any(|(slot, row)| self.rows_sent[*slot].name != row.name) {
            let mut rows = self.rows_sent.clone();
            for (slot, row) in changes {
                rows[slot] = row;
            }
            return self.send_rows(rows);
        }
        let panes = self.rows_sent_key;
        let due = self.due_copies(panes);
        if due.is_empty() {
            self.rows_lag = true;
            return;
        }
        let mut changed = Vec::with_capacity(changes.len());
        for (slot, row) in changes {
            changed.push(row.clone());
            self.rows_sent[slot] = row;
        }
        self.deliver(due, Some(changed), panes);
    }

    /// The stale copies that are to get the rows now: those in a viewed
    /// tab, and any whose pane set (`panes`) is out of date, viewed or not:
    /// it would show "no agent panes" (or panes long gone) for a moment
    /// when its tab is viewed.
    fn due_copies(&self, panes: u64) -> Vec<u32> {
        self.role
            .followers()
            .iter()
            .filter(|f| self.stale_followers.contains(&f.id))
            .filter(|f| self.viewed_tabs.contains(&f.tab) || !self.synced_panes.contains(&(f.id, panes)))
            .map(|f| f.id)
            .collect()
    }

    /// Sends the rows now sent (`rows_sent`, whose pane set is `panes`) to
    /// the `due` copies: `change` (the rows that differ from the last sent;
    /// `None`: the panes differ) to those that hold the last rows, all of
    /// them to the others.
    fn deliver(&mut self, due: Vec<u32>, change: Option<Vec<PaneSummary>>, panes: u64) {
        let rules = self.rules.check_sum();
        let base = self.synced_seq;
        self.synced_seq += 1;
        let seq = self.synced_seq;
        let change = change.and_then(|rows| {
            serde_json::to_string(&SyncRows {
                seq,
                base: Some(base),
                rows,
                rules,
            })
            .ok()
        });
        let full = || {
            serde_json::to_string(&SyncRows {
                seq,
                base: None,
                rows: self.rows_sent.clone(),
                rules,
            })
            .ok()
        };
        let (mut full_payload, current) = (None, std::mem::take(&mut self.current_copies));
        for copy in due {
            let payload = match (&change, current.contains(&copy)) {
                (Some(change), true) => change.clone(),
                _ => match full_payload.get_or_insert_with(full) {
                    Some(full) => full.clone(),
                    None => continue,
                },
            };
            self.stale_followers.remove(&copy);
            self.synced_panes.retain(|(c, _)| *c != copy);
            self.synced_panes.push((copy, panes));
            self.current_copies.insert(copy);
            self.out.push(Effect::SendToCopy {
                copy,
                name: PIPE_SYNC,
                payload,
            });
        }
        self.rows_lag = false;
    }
}

/// The rows of `now` that differ from `before`, when both show the same
/// panes in the same order (`None`: they do not, send them all).
fn changed_rows(before: &[PaneSummary], now: &[PaneSummary]) -> Option<Vec<PaneSummary>> {
    let same_panes = before.len() == now.len() && before.iter().zip(now).all(|(b, n)| b.pane == n.pane);
    same_panes.then(|| {
        now.iter()
            .zip(before)
            .filter(|(n, b)| n != b)
            .map(|(n, _)| n.clone())
            .collect()
    })
}

/// Puts each changed row in place in `rows`; true when one differed
/// (`None`, and `rows` untouched: a change names a pane the rows lack).
fn put_changes(rows: &mut [PaneSummary], changes: Vec<PaneSummary>) -> Option<bool> {
    let slots: Vec<usize> = changes
        .iter()
        .map(|change| rows.iter().position(|r| r.pane == change.pane))
        .collect::<Option<_>>()?;
    let mut changed = false;
    for (slot, change) in slots.into_iter().zip(changes) {
        changed |= rows[slot] != change;
        rows[slot] = change;
    }
    Some(changed)
}

/// A key of a pane list, every field of every entry.
fn pane_list_key(panes: &[PaneEntry]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    panes.hash(&mut hasher);
    hasher.finish()
}

/// A key of the set of agent panes (ids and names) the rows show: FNV-1a
/// over them, so a copy's last set is one number to compare.
pub(super) fn pane_set_key(rows: &[PaneSummary]) -> u64 {
    crate::text::fnv1a(
        rows.iter()
            .flat_map(|r| r.pane.to_le_bytes().into_iter().chain(r.name.bytes()).chain([0])),
    )
}
