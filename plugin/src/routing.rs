//! Routing glue: edges go to `turnstile_core::flow::Router`, its decisions
//! become pane writes. A delivery is one bracketed-paste write, then Enter as
//! a separate write `ENTER_DELAY_MS` later (TUIs swallow an Enter that comes
//! with the paste).

use turnstile_core::arbiter::Edge;
use turnstile_core::config::Config;
use turnstile_core::flow::{parse_rules, paste_bytes, Action, Router, Target};
use turnstile_core::panes::{Pane, PaneTable};
use turnstile_core::{Millis, State};
use zellij_tile::prelude::{write_chars_to_pane_id, PaneId};

/// Delay between the paste and its Enter.
pub const ENTER_DELAY_MS: Millis = 200;

#[derive(Default)]
pub struct Routing {
    router: Router,
    enters: Vec<(Millis, u32)>,
}

fn target_of(pane: &Pane) -> Target {
    Target {
        pane: pane.meta.id,
        busy: matches!(pane.state(), State::Working | State::Waiting),
    }
}

fn find_by_title(table: &PaneTable, title: &str) -> Option<Target> {
    table.all().find(|p| p.meta.title == title).map(target_of)
}

impl Routing {
    pub fn new(config: &Config) -> Routing {
        Routing {
            router: Router::new(config.flows.clone(), config.flow.clone()),
            enters: Vec::new(),
        }
    }

    /// Feeds one edge of `pane`; returns feedback for the bar.
    pub fn on_edge(&mut self, table: &PaneTable, pane: u32, edge: &Edge, now: Millis) -> Vec<String> {
        let mut actions = Vec::new();
        if edge.to == State::Working && edge.from != State::Working {
            self.router.on_turn_started(pane);
        }
        if edge.is_confirmed_done() {
            if let Some(source) = table.get(pane) {
                let answer = source.answer.clone();
                let title = source.meta.title.clone();
                actions.extend(
                    self.router
                        .on_confirmed_done(pane, &title, answer.as_deref(), |name| find_by_title(table, name)),
                );
            }
        }
        if edge.to.is_turn_end() || edge.to == State::Idle {
            actions.extend(self.router.on_idle(pane));
        }
        actions
            .into_iter()
            .filter_map(|a| self.perform(table, a, now))
            .collect()
    }

    fn perform(&mut self, table: &PaneTable, action: Action, now: Millis) -> Option<String> {
        match action {
            Action::Message(text) => Some(text),
            Action::Deliver { pane, payload } => {
                write_chars_to_pane_id(&paste_bytes(&payload), PaneId::Terminal(pane));
                self.enters.push((now + ENTER_DELAY_MS, pane));
                let name = table
                    .get(pane)
                    .map_or_else(|| pane.to_string(), |p| p.meta.title.clone());
                Some(format!("sent {} chars → {name}", payload.chars().count()))
            }
        }
    }

    /// When the next Enter is due.
    pub fn next_enter(&self) -> Option<Millis> {
        self.enters.iter().map(|(due, _)| *due).min()
    }

    /// Presses the Enters that are due.
    pub fn press_due_enters(&mut self, now: Millis) {
        let (due, later): (Vec<_>, Vec<_>) = self.enters.drain(..).partition(|(at, _)| *at <= now);
        self.enters = later;
        for (_, pane) in due {
            write_chars_to_pane_id("\r", PaneId::Terminal(pane));
        }
    }

    /// Payloads waiting for busy targets, for the bar.
    pub fn queue_note(&self, table: &PaneTable) -> Option<String> {
        let parts: Vec<String> = self
            .router
            .queued()
            .map(|(pane, n)| {
                let name = table
                    .get(pane)
                    .map_or_else(|| pane.to_string(), |p| p.meta.title.clone());
                format!("{n} queued → {name}")
            })
            .collect();
        let paused = self.router.is_paused().then(|| "flows paused".to_owned());
        let all: Vec<String> = paused.into_iter().chain(parts).collect();
        (!all.is_empty()).then(|| all.join(", "))
    }

    /// The `route` pipe (keybindings): `next`, `prev`, `to <title>`,
    /// `resend`, `pause`, `resume`, `flows <spec>`. Returns feedback.
    pub fn command(&mut self, table: &PaneTable, command: &str, now: Millis) -> String {
        let command = command.trim();
        match command.split_once(' ').map_or((command, ""), |(a, b)| (a, b.trim())) {
            ("pause", _) => {
                self.router.set_paused(true);
                "flows paused".into()
            }
            ("resume", _) => {
                self.router.set_paused(false);
                "flows resumed".into()
            }
            ("resend", _) => match self.router.resend() {
                Some(action) => self.perform(table, action, now).unwrap_or_default(),
                None => "nothing sent yet".into(),
            },
            ("flows", spec) => match parse_rules(spec) {
                Ok(rules) => {
                    let n = rules.len();
                    self.router.set_rules(rules);
                    format!("{n} flow(s) set")
                }
                Err(e) => e,
            },
            ("next", _) => self.send_focused(table, 1, now),
            ("prev", _) => self.send_focused(table, -1, now),
            ("to", title) => match find_by_title(table, title) {
                Some(target) => self.send_focused_to(table, target, title, now),
                None => format!("no pane named {title}"),
            },
            (other, _) => {
                format!("unknown route command `{other}` (next, prev, to <pane>, resend, pause, resume, flows <spec>)")
            }
        }
    }

    /// The focused agent pane's answer to the next (or previous) agent pane.
    fn send_focused(&mut self, table: &PaneTable, step: isize, now: Millis) -> String {
        let agents = table.agents();
        let Some(at) = agents.iter().position(|p| p.meta.focused) else {
            return "focus an agent pane first".into();
        };
        if agents.len() < 2 {
            return "no other agent pane to send to".into();
        }
        let next = (at as isize + step).rem_euclid(agents.len() as isize) as usize;
        let target = agents[next];
        let title = target.meta.title.clone();
        self.send_focused_to(table, target_of(target), &title, now)
    }

    fn send_focused_to(&mut self, table: &PaneTable, target: Target, title: &str, now: Millis) -> String {
        let Some(source) = table.agents().into_iter().find(|p| p.meta.focused) else {
            return "focus an agent pane first".into();
        };
        let Some(answer) = source.answer.clone() else {
            return format!("{} has no finished answer yet", source.meta.title);
        };
        let action = self.router.manual(&answer, target, title);
        self.perform(table, action, now).unwrap_or_default()
    }

    pub fn forget(&mut self, pane: u32) {
        self.router.forget(pane);
    }
}
