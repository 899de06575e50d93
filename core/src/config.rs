//! The plugin's settings, parsed once from the layout's KDL key/value map.
//!
//! Unknown keys and bad values never crash: each problem becomes a message
//! the bar shows, and the setting keeps its default.

use crate::bar::{Color, Palette};
use crate::flow::{parse_rules, FlowRule, FlowSettings};
use std::collections::BTreeMap;

pub use crate::panes::Watch;

/// What this instance of the plugin is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum View {
    /// The status bar (the default).
    #[default]
    Bar,
    /// The floating inbox view the bar opens.
    Inbox,
}

/// Typed plugin settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The native command (`turnstile`), a name on the server's PATH or a path.
    pub host_command: String,
    /// Host polling interval while an agent works or waits (ms).
    pub poll_ms: u64,
    /// Host polling interval otherwise, to discover agents (ms).
    pub idle_poll_ms: u64,
    /// Screen polling interval for agent panes in tabs no client views (ms).
    pub hidden_poll_ms: u64,
    /// Which panes to show.
    pub watch: Watch,
    /// Bar colours (`None`: take them from the zellij theme).
    pub palette: Option<Palette>,
    /// Start `turnstile watch` (push instead of polling).
    pub watcher: bool,
    /// Flows: whose answer goes where.
    pub flows: Vec<FlowRule>,
    /// Payload template and limits of the flows.
    pub flow: FlowSettings,
    /// The command run (through `sh -c`) when a pane nobody looks at turns
    /// done, failed or waiting (`None`: off).
    pub notify: Option<String>,
    /// Least time between two notifier runs (ms).
    pub notify_interval_ms: u64,
    /// Finished turns the inbox keeps.
    pub inbox_size: usize,
    /// Bar or inbox view.
    pub view: View,
    /// The rules file of user-defined agents (`None`: the host's default,
    /// `~/.config/turnstile/agents.kdl`).
    pub rules: Option<String>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            host_command: "turnstile".into(),
            poll_ms: 500,
            idle_poll_ms: 3000,
            hidden_poll_ms: 2000,
            watch: Watch::Auto,
            palette: None,
            watcher: true,
            flows: Vec::new(),
            flow: FlowSettings::default(),
            notify: None,
            notify_interval_ms: 10_000,
            inbox_size: crate::inbox::DEFAULT_CAPACITY,
            view: View::Bar,
            rules: None,
        }
    }
}

const KNOWN: &[&str] = &[
    "host_command",
    "poll_ms",
    "idle_poll_ms",
    "hidden_poll_ms",
    "watch",
    "watcher",
    "flows",
    "flow_prefix",
    "flow_suffix",
    "max_payload_bytes",
    "max_hops",
    "color_text",
    "color_background",
    "color_working",
    "color_done",
    "color_failed",
    "color_waiting",
    "color_muted",
    "notify",
    "notify_interval_ms",
    "inbox_size",
    "view",
    "rules",
];

impl Config {
    /// Parses the settings; returns the config and the problems found.
    pub fn parse(map: &BTreeMap<String, String>) -> (Config, Vec<String>) {
        let mut config = Config::default();
        let mut problems = Vec::new();
        for key in map.keys().filter(|k| !KNOWN.contains(&k.as_str())) {
            problems.push(format!("unknown setting `{key}`"));
        }
        if let Some(cmd) = map.get("host_command") {
            match cmd.trim() {
                "" => problems.push("host_command is empty".into()),
                cmd => config.host_command = cmd.to_owned(),
            }
        }
        for (key, slot) in [
            ("poll_ms", &mut config.poll_ms),
            ("idle_poll_ms", &mut config.idle_poll_ms),
            ("hidden_poll_ms", &mut config.hidden_poll_ms),
        ] {
            if let Some(raw) = map.get(key) {
                match raw.trim().parse::<u64>() {
                    Ok(ms) if (100..=600_000).contains(&ms) => *slot = ms,
                    _ => problems.push(format!(
                        "{key} must be a number of ms between 100 and 600000, not `{raw}`"
                    )),
                }
            }
        }
        if let Some(raw) = map.get("watch") {
            config.watch = match raw.trim() {
                "auto" | "" => Watch::Auto,
                "all" => Watch::All,
                list => Watch::Titles(
                    list.split(',')
                        .map(|t| t.trim().to_owned())
                        .filter(|t| !t.is_empty())
                        .collect(),
                ),
            };
        }
        if let Some(raw) = map.get("watcher") {
            match raw.trim() {
                "on" | "true" => config.watcher = true,
                "off" | "false" => config.watcher = false,
                _ => problems.push(format!("watcher must be on or off, not `{raw}`")),
            }
        }
        if let Some(raw) = map.get("rules") {
            match raw.trim() {
                "" => problems.push("rules is empty: name a rules file, or leave the setting out".into()),
                path => config.rules = Some(path.to_owned()),
            }
        }
        parse_flows(map, &mut config, &mut problems);
        parse_attention(map, &mut config, &mut problems);
        config.palette = parse_palette(map, &mut problems);
        (config, problems)
    }
}

fn parse_flows(map: &BTreeMap<String, String>, config: &mut Config, problems: &mut Vec<String>) {
    if let Some(spec) = map.get("flows") {
        match parse_rules(spec) {
            Ok(rules) => config.flows = rules,
            Err(e) => problems.push(e.to_string()),
        }
    }
    let flow = &mut config.flow;
    flow.prefix = map.get("flow_prefix").cloned().unwrap_or_default();
    flow.suffix = map.get("flow_suffix").cloned().unwrap_or_default();
    if let Some(raw) = map.get("max_payload_bytes") {
        match raw.trim().parse::<usize>() {
            Ok(n) if (256..=1 << 20).contains(&n) => flow.max_payload_bytes = n,
            _ => problems.push(format!(
                "max_payload_bytes must be between 256 and 1048576, not `{raw}`"
            )),
        }
    }
    if let Some(raw) = map.get("max_hops") {
        match raw.trim().parse::<u32>() {
            Ok(n) if (1..=100).contains(&n) => flow.max_hops = n,
            _ => problems.push(format!("max_hops must be between 1 and 100, not `{raw}`")),
        }
    }
}

fn parse_attention(map: &BTreeMap<String, String>, config: &mut Config, problems: &mut Vec<String>) {
    config.notify = map.get("notify").map(|c| c.trim().to_owned()).filter(|c| !c.is_empty());
    if let Some(raw) = map.get("notify_interval_ms") {
        match raw.trim().parse::<u64>() {
            Ok(ms) if ms <= 3_600_000 => config.notify_interval_ms = ms,
            _ => problems.push(format!(
                "notify_interval_ms must be a number of ms up to 3600000, not `{raw}`"
            )),
        }
    }
    if let Some(raw) = map.get("inbox_size") {
        match raw.trim().parse::<usize>() {
            Ok(n) if (1..=10_000).contains(&n) => config.inbox_size = n,
            _ => problems.push(format!("inbox_size must be between 1 and 10000, not `{raw}`")),
        }
    }
    if let Some(raw) = map.get("view") {
        match raw.trim() {
            "bar" | "" => config.view = View::Bar,
            "inbox" => config.view = View::Inbox,
            _ => problems.push(format!("view must be bar or inbox, not `{raw}`")),
        }
    }
}

fn parse_palette(map: &BTreeMap<String, String>, problems: &mut Vec<String>) -> Option<Palette> {
    let mut palette = Palette::default();
    let mut any = false;
    for (key, slot) in [
        ("color_text", &mut palette.text),
        ("color_background", &mut palette.background),
        ("color_working", &mut palette.working),
        ("color_done", &mut palette.done),
        ("color_failed", &mut palette.failed),
        ("color_waiting", &mut palette.waiting),
        ("color_muted", &mut palette.muted),
    ] {
        if let Some(raw) = map.get(key) {
            match parse_color(raw) {
                Some(c) => {
                    *slot = c;
                    any = true;
                }
                None => problems.push(format!("{key} must be #rrggbb or 0-255, not `{raw}`")),
            }
        }
    }
    any.then_some(palette)
}

/// `#rrggbb` or a 256-colour index.
pub fn parse_color(raw: &str) -> Option<Color> {
    let raw = raw.trim();
    if let Some(hex) = raw.strip_prefix('#') {
        if hex.len() != 6 || !hex.is_ascii() {
            return None;
        }
        let byte = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
        return Some(Color::Rgb(byte(0)?, byte(2)?, byte(4)?));
    }
    raw.parse::<u8>().ok().map(Color::Indexed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn defaults_without_settings() {
        let (c, problems) = Config::parse(&BTreeMap::new());
        assert_eq!(c, Config::default());
        assert!(problems.is_empty());
    }

    #[test]
    fn good_settings_are_taken() {
        let (c, problems) = Config::parse(&map(&[
            ("host_command", "/opt/bin/turnstile"),
            ("poll_ms", "250"),
            ("watch", "api, docs"),
            ("watcher", "off"),
            ("flows", "planner -> coder"),
            ("max_hops", "2"),
            ("color_done", "#00ff7f"),
            ("notify", " notify-send turnstile \"$TURNSTILE_SUMMARY\" "),
            ("notify_interval_ms", "0"),
            ("inbox_size", "50"),
        ]));
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(c.host_command, "/opt/bin/turnstile");
        assert_eq!(c.poll_ms, 250);
        assert_eq!(c.watch, Watch::Titles(vec!["api".into(), "docs".into()]));
        assert_eq!(c.palette.unwrap().done, Color::Rgb(0, 255, 127));
        assert!(!c.watcher);
        assert_eq!((c.flows.len(), c.flow.max_hops), (1, 2));
        assert_eq!(
            c.notify.as_deref(),
            Some("notify-send turnstile \"$TURNSTILE_SUMMARY\"")
        );
        assert_eq!((c.notify_interval_ms, c.inbox_size, c.view), (0, 50, View::Bar));
    }

    #[test]
    fn bad_settings_become_messages_and_keep_defaults() {
        let (c, problems) = Config::parse(&map(&[
            ("poll_ms", "fast"),
            ("idle_poll_ms", "5"),
            ("color_failed", "#zz0000"),
            ("color_done", "#ü0000"),
            ("colour", "red"),
            ("host_command", "  "),
            ("flows", "planner coder"),
            ("inbox_size", "0"),
            ("view", "popup"),
        ]));
        assert_eq!(c.poll_ms, Config::default().poll_ms);
        assert_eq!(c.host_command, "turnstile");
        assert_eq!(problems.len(), 9, "{problems:?}");
        assert!(problems.iter().any(|p| p.contains("unknown setting `colour`")));
    }
}
