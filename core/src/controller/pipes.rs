//! Pipes and routing: the pipe messages the bar takes, the attention jump,
//! the inbox (its view, its actions, its entries shared with every copy),
//! edges fed to routing, logging and notifications.

use super::*;

impl Controller {
    pub(super) fn on_pipe(
        &mut self,
        name: &str,
        from: &PipeFrom,
        payload: &str,
        now: Millis,
        screens: &mut dyn Screens,
    ) {
        let leader = self.role.is_leader();
        match name {
            PIPE_SYNC => self.on_sync(from, payload, now),
            // Taken in any role: the leader may not know yet that it leads.
            PIPE_VIEW => self.on_view(from, payload),
            PIPE_STATE if leader => self.answer_state(from),
            // Reports reach every copy; only the leader reads them (a
            // follower's parse would cost as much as the leader's, per copy).
            PIPE_VERDICT if leader => match serde_json::from_str::<PaneReport>(payload) {
                Ok(report) => self.apply_reports(vec![report], now, screens),
                Err(e) => self.say(format!("bad verdict message: {e}"), now),
            },
            PIPE_PUSH if leader => match protocol::parse_push(payload) {
                Ok(reports) => self.apply_reports(reports, now, screens),
                Err(e) => self.say(e.to_string(), now),
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
            PIPE_ACTED if !leader => self.on_acted(payload),
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
    pub(super) fn jump_to_attention(&mut self, from: &PipeFrom, now: Millis) {
        if !self.role.is_leader() {
            return;
        }
        let rows = self.rows().into_owned();
        let queue = attention::queue(rows.iter().map(PaneSummary::standing));
        let Some(pane) = self.cycle.next(&queue, now) else {
            self.say("nothing needs you".into(), now);
            return self.answer(from, "nothing needs you\n".into());
        };
        self.out.push(Effect::FocusPane(pane));
        let what = rows
            .iter()
            .find(|s| s.pane == pane)
            .map_or_else(String::new, |s| format!(" {} {}", s.name, s.state));
        self.answer(from, format!("→ {pane}{what}\n"));
    }

    /// Opens the floating inbox view (zellij launches it unless it runs)
    /// and shows the open one.
    pub(super) fn open_inbox(&mut self, from: &PipeFrom) {
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
    pub(super) fn send_inbox(&mut self, feedback: Option<String>) {
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
    pub(super) fn on_inbox_action(&mut self, payload: &str, now: Millis, screens: &mut dyn Screens) {
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

    pub(super) fn answer_state(&mut self, from: &PipeFrom) {
        let json = serde_json::to_string(&self.table.summaries()).unwrap_or_else(|_| "[]".into());
        self.answer(from, format!("{json}\n"));
    }

    pub(super) fn answer(&mut self, from: &PipeFrom, text: String) {
        if let PipeFrom::Cli(pipe) = from {
            self.out.push(Effect::AnswerPipe {
                pipe: pipe.clone(),
                text,
            });
        }
    }

    /// Routes on edges (only the leader acts; delivery feedback goes to
    /// the bar), logs finished turns and notes what to notify.
    pub(super) fn after_edges(&mut self, edges: Vec<(u32, Edge)>, now: Millis, screens: &mut dyn Screens) {
        let act = self.role.is_leader();
        let mut logged = Vec::new();
        let baseline = &self.baseline;
        let edges: Vec<(u32, Edge)> = edges.into_iter().filter(|(pane, _)| !baseline.contains(pane)).collect();
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

    /// Hands inbox entries to the other copies at once (a copy may take the
    /// lead any moment: its tab's closing ends the leader): a copy not sent
    /// the log yet gets all of it, the others the new or changed entries.
    pub(super) fn share_log(&mut self, changed: &[inbox::Entry]) {
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
    pub(super) fn on_inbox_entries(&mut self, payload: &str) {
        if self.role.is_leader() {
            return;
        }
        if let Ok(entries) = serde_json::from_str::<Vec<inbox::Entry>>(payload) {
            entries.into_iter().for_each(|e| self.inbox.upsert(e));
        }
    }

    pub(super) fn on_route_command(&mut self, from: &PipeFrom, payload: &str, now: Millis, screens: &mut dyn Screens) {
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

/// Inbox entries for these copies of the bar: one message to every plugin
/// when more than one copy needs them (the leader encodes it once; the
/// others take entries they have already as they are), else to the one.
pub(super) fn send_entries<T: serde::Serialize>(out: &mut Vec<Effect>, copies: &[u32], entries: &[T]) {
    let Ok(payload) = serde_json::to_string(entries) else {
        return;
    };
    let name = PIPE_INBOX_ENTRIES;
    match copies {
        [] => {}
        [copy] => out.push(Effect::SendToCopy {
            copy: *copy,
            name,
            payload,
        }),
        _ => out.push(Effect::Broadcast { name, payload }),
    }
}
