//! The host command and the watcher: runs of `turnstile status`, the
//! watcher's starts and exits, the pulls of its mailbox, the notifier's
//! exits, and the reports that come back or are pushed.

use super::*;
use crate::protocol::RulesReport;

impl Controller {
    pub(super) fn run_host(&mut self, now: Millis) {
        if self.host.in_flight || !self.host.wanted || !self.role.is_leader() {
            return;
        }
        let ids = self.table.ids();
        if ids.is_empty() {
            return;
        }
        let panes: Vec<String> = ids.iter().map(u32::to_string).collect();
        let request = self.host.start(now);
        let context = crate::order::map_of([
            (CTX_KIND.to_owned(), "status".to_owned()),
            (CTX_REQUEST.to_owned(), request.to_string()),
        ]);
        let argv = self.host_argv(&["status", "--json", "--panes", &panes.join(",")]);
        self.out.push(Effect::RunHost { argv, context });
    }

    /// The host command with `words`, and the `rules` setting's file when
    /// it names one (for the commands that recognise agents).
    fn host_argv(&self, words: &[&str]) -> Vec<String> {
        let mut argv = vec![self.config.host_command.clone()];
        argv.extend(words.iter().map(|w| w.to_string()));
        if let Some(rules) = &self.config.rules {
            argv.extend(["--rules".to_owned(), rules.clone()]);
        }
        argv
    }

    /// Asks the host for the user's rules file: every copy once (each
    /// draws the user's kinds, their tags), and the leader, which reads
    /// their screens, again every [`RULES_RECHECK_MS`] (an edited file
    /// takes effect without reloading the bar).
    pub(super) fn ask_rules(&mut self, now: Millis) {
        let since = self.rules.asked_at.map(|at| now.saturating_sub(at));
        let due = since.is_none_or(|ms| self.role.is_leader() && ms >= RULES_RECHECK_MS);
        // A run whose answer never came (zellij lost it) is given up.
        let waiting = self.rules.in_flight && since.is_some_and(|ms| ms < RULES_GIVE_UP_MS);
        if !due || waiting {
            return;
        }
        self.rules.asked_at = Some(now);
        self.rules.in_flight = true;
        let context = crate::order::map_of([(CTX_KIND.to_owned(), "rules".to_owned())]);
        let argv = self.host_argv(&["rules", "--json"]);
        self.out.push(Effect::RunHost { argv, context });
    }

    /// Asks for the rules now, whoever leads (the leader's are other than
    /// this copy's), unless a run is already on its way.
    pub(super) fn ask_rules_again(&mut self, now: Millis) {
        if !self.rules.in_flight {
            self.rules.asked_at = None;
            self.ask_rules(now);
        }
    }

    /// The user's rules arrived: their agents become kinds, the panes are
    /// recognised again, and a broken file is named in the bar.
    fn on_rules(&mut self, code: Option<i32>, stdout: &[u8], stderr: &[u8], now: Millis) {
        self.rules.in_flight = false;
        let answer = (code, crate::text::fnv1a(stdout.iter().copied()));
        if self.rules.last_answer.replace(answer) == Some(answer) {
            return; // the same file as last time
        }
        self.rules.problem = match (code, RulesReport::parse(stdout)) {
            (Some(0), Ok(report)) => {
                self.rules.mismatch = crate::identity::mismatch(report.build.as_deref(), &self.config.host_command)
                    .or_else(|| crate::identity::zellij_note(report.zellij.as_deref()));
                crate::agent::user::load(&report.rules);
                self.rules.notes = report.notes.clone();
                report.problem_line()
            }
            (_, parsed) => {
                let why = why_it_failed(code, stderr, parsed);
                Some(format!("`{} rules` failed: {why}", self.config.host_command))
            }
        };
        let metas = self.table_metas();
        self.table.sync(metas);
        // Every copy gets the rows with the new answer's check sum, and
        // asks for the rules again (a tag edited shows in every tab).
        self.broadcast();
        self.redraw_if_changed(now);
    }

    /// Starts the session's watcher (it exits at once if one already runs).
    pub(super) fn start_watcher(&mut self, now: Millis) {
        if !self.config.watcher || self.watcher.running {
            return;
        }
        let context = crate::order::map_of([(CTX_KIND.to_owned(), "watch".to_owned())]);
        let argv = self.host_argv(&["watch"]);
        self.out.push(Effect::RunHost { argv, context });
        self.watcher.started();
        self.sync_subscriptions(now);
        self.pull(now);
    }

    /// Keeps one `turnstile pull` of the watcher's mailbox in flight while
    /// the watcher runs and the leader does not look itself (see
    /// [`pacing::Pulls`]): its answer reaches this copy alone (a pipe
    /// message would reach every copy).
    pub(super) fn pull(&mut self, now: Millis) {
        let wanted = self.watcher_serves() && !self.pulls.looking();
        if !wanted || !self.pulls.due(now) {
            return;
        }
        let request = self.pulls.start(now);
        let context = crate::order::map_of([
            (CTX_KIND.to_owned(), "pull".to_owned()),
            (CTX_REQUEST.to_owned(), request.to_string()),
        ]);
        let argv = vec![
            self.config.host_command.clone(),
            "pull".to_owned(),
            "--after".to_owned(),
            self.pulls.after.to_string(),
            "--wait-ms".to_owned(),
            pacing::PULL_WAIT_MS.to_string(),
        ];
        self.out.push(Effect::RunHost { argv, context });
    }

    /// True for the leader while the watcher serves the session.
    pub(super) fn watcher_serves(&self) -> bool {
        self.role.is_leader() && self.config.watcher && self.watcher.running
    }

    /// While news flow, the leader looks in the watcher's mailbox itself
    /// (one small read when nothing is new); a few empty looks in a row, or
    /// one that fails, hand back to a pull. True when it brought news.
    pub(super) fn look_in_the_mailbox(&mut self, now: Millis, screens: &mut dyn Screens) -> bool {
        if !self.watcher_serves() || !self.pulls.looking() {
            return false;
        }
        let Some(folder) = screens.mailbox() else {
            self.pulls.stop_looking();
            self.pull(now);
            return false;
        };
        self.pulls.looked_at = now;
        match crate::mailbox::news(folder, self.pulls.after, self.pulls.cursor) {
            Ok(Some(news)) if news.seq != self.pulls.after || !news.reports.is_empty() => {
                self.pulls.start_looking(now);
                self.pulls.after = news.seq;
                self.pulls.cursor = news.cursor;
                self.apply_reports(news.reports, now, screens);
                true
            }
            Ok(_) => {
                if self.pulls.quiet_look() {
                    self.pull(now);
                }
                false
            }
            // Not there (another temporary folder, a watcher starting): pulls.
            Err(_) => {
                self.pulls.stop_looking();
                self.pull(now);
                false
            }
        }
    }

    /// A pull answered: its reports are applied; with news the leader
    /// looks next where it can, else the next pull starts. A failure waits
    /// a little (said in the bar from the third in a row).
    fn on_pull_result(
        &mut self,
        code: Option<i32>,
        stdout: &[u8],
        stderr: &[u8],
        context: &BTreeMap<String, String>,
        now: Millis,
        screens: &mut dyn Screens,
    ) {
        if !self.pulls.answers(context.get(CTX_REQUEST)) || !self.role.is_leader() {
            return;
        }
        match (code, HostReport::parse(stdout)) {
            (Some(0), Ok(report)) => {
                self.pulls.failures = 0;
                let seq = report.seq.unwrap_or(self.pulls.after);
                let news = seq != self.pulls.after || !report.panes.is_empty();
                self.pulls.after = seq;
                self.apply_reports(report.panes, now, screens);
                if news && self.watcher_serves() && screens.mailbox().is_some() {
                    self.pulls.start_looking(now);
                    self.arm_next_timer(now);
                } else {
                    self.pull(now);
                }
            }
            (_, parsed) => {
                self.pulls.failed(now);
                if self.pulls.failures >= 3 {
                    let why = why_it_failed(code, stderr, parsed);
                    self.say(format!("cannot read the watcher's news: {why}"), now);
                }
            }
        }
    }

    /// The watcher exited: with [`EXIT_ANOTHER_WATCHER`] another one serves
    /// the session; otherwise fall back to polling and say why.
    pub(super) fn on_watcher_exit(&mut self, code: Option<i32>, stderr: &[u8], now: Millis) {
        let another_serves = code == Some(EXIT_ANOTHER_WATCHER);
        self.watcher.running = another_serves;
        self.pulls.stop_looking();
        self.sync_subscriptions(now);
        if another_serves {
            return self.pull(now);
        }
        if !self.role.is_leader() {
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
    pub(super) fn on_notifier_exit(&mut self, code: Option<i32>, stderr: &[u8], now: Millis) {
        self.notifier.finished();
        if code != Some(0) {
            let why = first_line(stderr).unwrap_or_else(|| format!("exit code {code:?}"));
            self.say(format!("notify command failed: {why}"), now);
        }
        self.arm_next_timer(now);
    }

    pub(super) fn on_host_result(
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
            Some("pull") => return self.on_pull_result(code, stdout, stderr, context, now, screens),
            Some("rules") => return self.on_rules(code, stdout, stderr, now),
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
                let why = why_it_failed(code, stderr, parsed);
                self.host.error = Some(format!("host command `{}` failed: {why}", self.config.host_command));
            }
        }
    }

    /// Observes reports (host run, hook, watcher): the leader routes their
    /// edges and hands the rows on. A pane's first report after taking the
    /// lead from another copy only sets what was already seen.
    ///
    /// Only the panes the reports name are looked at again (their turn
    /// ends settled, their screen guesses confirmed): the others wait for
    /// the next tick, so a batch costs what it touches, not the table.
    pub(super) fn apply_reports(&mut self, reports: Vec<PaneReport>, now: Millis, screens: &mut dyn Screens) {
        let mut edges = Vec::new();
        let mut touched = Vec::with_capacity(reports.len());
        let mut user_kind_lost = false;
        for report in reports {
            let id = report.pane;
            // A rules file's agent no longer bound: its file may have
            // broken (the watcher reads it each second); the bar says so
            // now rather than at its next look.
            user_kind_lost |= report.agent.is_none() && self.table.get(id).is_some_and(|p| p.kind.is_user());
            self.delivery.on_report(&report);
            let edge = self.table.observe_report(report);
            if !self.baseline.remove(&id) {
                edges.extend(edge.map(|e| (id, e)));
            }
            touched.push(id);
        }
        edges.extend(self.table.tick_panes(&touched, now).edges);
        self.after_edges(edges, now, screens);
        if !self.role.is_leader() {
            return;
        }
        if user_kind_lost {
            self.ask_rules_again(now);
        }
        self.confirm_candidates_of(&touched, now, screens);
        self.sync_subscriptions(now);
        self.broadcast_changes_of(&touched);
    }
}

/// Why a host command failed: its first line of errors, else why its output
/// does not parse, else its exit code.
fn why_it_failed<T>(code: Option<i32>, stderr: &[u8], parsed: Result<T, crate::Error>) -> String {
    match (first_line(stderr), parsed) {
        (Some(why), _) => why,
        (None, Err(e)) => e.to_string(),
        (None, Ok(_)) => format!("exit code {code:?}"),
    }
}

/// The first line of a command's error output, if any.
fn first_line(bytes: &[u8]) -> Option<String> {
    Some(crate::text::first_line(&String::from_utf8_lossy(bytes))).filter(|l| !l.is_empty())
}
