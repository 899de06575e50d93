//! `turnstile doctor`: why the bar shows `✓?`, or nothing. Each check says
//! what it found and, when something is wrong, the one command that fixes
//! it: zellij's release, the plugin file against this build, its granted
//! permissions, the layout plain `zellij` uses, each agent's hooks, and per
//! live session its watcher, how each agent pane is bound, and each link to
//! another machine's relay (`links.json`, the watcher's record).

use crate::setup::edits::{self, LAYOUT_NAME};
use crate::zellij::{self, Zellij, ZellijPaths};
use crate::{embedded, files, hooks, report, spool};
use serde::Serialize;
use std::process::Command;
use std::time::Duration;
use turnstile_core::agent::AgentKind;

/// One thing checked.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// What was checked (`zellij`, `plugin`, `permissions`, `layout`, `hooks: codex`).
    pub check: String,
    /// True when it is as it should be.
    pub ok: bool,
    /// What was found.
    pub found: String,
    /// The command that fixes it (when not ok).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

/// An agent pane of a live session.
#[derive(Debug, Clone, Serialize)]
pub struct PaneCheck {
    /// The zellij pane id.
    pub pane: u32,
    /// The agent's kind.
    pub kind: String,
    /// How its log was found: `log file`, `session id`, or `none` (screen only).
    pub binding: String,
    /// The sources that speak for it now.
    pub sources: Vec<String>,
}

/// A live zellij session.
#[derive(Debug, Clone, Serialize)]
pub struct SessionCheck {
    /// Its name.
    pub name: String,
    /// True when its watcher runs (a bar is up there).
    pub watcher: bool,
    /// Its agent panes.
    pub panes: Vec<PaneCheck>,
    /// Its links to relays on other machines, as its watcher records them.
    pub links: Vec<crate::link::LinkRecord>,
}

/// Everything doctor found.
#[derive(Debug, Clone, Serialize)]
pub struct Diagnosis {
    /// True when nothing is wrong.
    pub ok: bool,
    /// This binary's version.
    pub version: &'static str,
    /// The checks, in order.
    pub checks: Vec<Check>,
    /// The live sessions.
    pub sessions: Vec<SessionCheck>,
}

/// Runs every check.
pub fn diagnose(var: &dyn Fn(&str) -> Option<String>) -> Diagnosis {
    let mut checks = Vec::new();
    let zellij = Zellij::find();
    checks.push(match &zellij {
        Ok(z) if z.supported() => ok("zellij", format!("{} ({})", z.version, z.program.display())),
        Ok(z) => bad(
            "zellij",
            format!(
                "{} is not a release turnstile is tested with (0.44.x, 0.45.x)",
                z.version
            ),
            "install zellij 0.45 (cargo install --locked zellij)",
        ),
        Err(e) => bad(
            "zellij",
            format!("{e:#}"),
            "install zellij 0.45 (cargo install --locked zellij)",
        ),
    });
    checks.extend(plugin_checks(var));
    checks.push(layout_check(var));
    checks.extend(hook_checks(var));
    let sessions = zellij.as_ref().map_or_else(|_| Vec::new(), live_sessions);
    Diagnosis {
        ok: checks.iter().all(|c| c.ok),
        version: turnstile_core::identity::LABEL,
        checks,
        sessions,
    }
}

/// The plugin file against this build, and its permission grant.
fn plugin_checks(var: &dyn Fn(&str) -> Option<String>) -> Vec<Check> {
    let (Ok(data), Ok(paths)) = (zellij::data_dir(var), ZellijPaths::from_env(var)) else {
        return vec![bad(
            "plugin",
            "HOME is not set".into(),
            "export HOME=… and run `turnstile setup`",
        )];
    };
    let wasm = data.join("turnstile.wasm");
    let plugin = match files::read_capped(&wasm, 64 << 20) {
        Ok(bytes) if bytes == embedded::PLUGIN => ok(
            "plugin",
            format!(
                "{} (turnstile {}, this build)",
                wasm.display(),
                turnstile_core::identity::LABEL
            ),
        ),
        Ok(bytes) => bad(
            "plugin",
            format!(
                "{} is from another build (fingerprint {}, this build's {})",
                wasm.display(),
                embedded::fingerprint(&bytes),
                embedded::fingerprint(embedded::PLUGIN)
            ),
            "turnstile setup",
        ),
        Err(e) => bad("plugin", format!("{}: {e}", wasm.display()), "turnstile setup"),
    };
    let key = wasm.display().to_string();
    let text = files::read_capped(&paths.permissions, 16 << 20).map(|b| String::from_utf8_lossy(&b).into_owned());
    let permissions = match text.map(|t| (edits::grant(&t, &paths.permissions, &key).ok(), t)) {
        Ok((Some(granted), text)) if granted == text => {
            ok("permissions", format!("granted in {}", paths.permissions.display()))
        }
        Ok(_) => bad(
            "permissions",
            format!(
                "{} does not grant the plugin what it asks: zellij will prompt in every tab",
                paths.permissions.display()
            ),
            "turnstile setup",
        ),
        Err(e) => bad(
            "permissions",
            format!("{}: {e}", paths.permissions.display()),
            "turnstile setup",
        ),
    };
    vec![plugin, permissions]
}

/// The layout plain `zellij` uses, and whether it has the bar.
fn layout_check(var: &dyn Fn(&str) -> Option<String>) -> Check {
    let Ok(paths) = ZellijPaths::from_env(var) else {
        return bad("layout", "HOME is not set".into(), "turnstile setup");
    };
    let config = files::read_capped(&paths.config_file, 16 << 20).map(|b| String::from_utf8_lossy(&b).into_owned());
    let config = match config {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => {
            return bad(
                "layout",
                format!("{}: {e}", paths.config_file.display()),
                "turnstile setup",
            )
        }
    };
    let doc = match edits::parse(&config, &paths.config_file) {
        Ok(doc) => doc,
        Err(e) => {
            return bad(
                "layout",
                format!("{e:#}"),
                "fix the config's syntax, then `turnstile setup`",
            )
        }
    };
    let name = edits::default_layout(&doc).unwrap_or_else(|| "default".into());
    let dir = paths.layout_dir(edits::layout_dir(&doc).as_deref());
    let file = zellij::layout_file(&name, &dir);
    let text = files::read_capped(&file, 16 << 20).map(|b| String::from_utf8_lossy(&b).into_owned());
    let has = text
        .ok()
        .and_then(|t| edits::parse(&t, &file).ok())
        .is_some_and(|d| edits::has_bar(&d, ""));
    match has {
        true => ok(
            "layout",
            format!("plain `zellij` uses {} ({}), which has the bar", name, file.display()),
        ),
        false if name == LAYOUT_NAME => bad(
            "layout",
            format!("{} is missing or has no bar", file.display()),
            "turnstile setup",
        ),
        false => bad(
            "layout",
            format!("plain `zellij` uses the layout {name:?}, which has no turnstile bar"),
            "turnstile setup",
        ),
    }
}

/// Per agent found on the machine: whether its hooks are installed.
fn hook_checks(var: &dyn Fn(&str) -> Option<String>) -> Vec<Check> {
    crate::setup::agents_found(var).into_iter().map(hook_check).collect()
}

fn hook_check(kind: AgentKind) -> Check {
    let name = kind.agent().name();
    let check = format!("hooks: {name}");
    let fix = format!("turnstile install-hooks --agent {name}");
    match hooks::planned(kind) {
        Ok((target, _, None)) => ok(&check, format!("installed in {}", target.display())),
        Ok((target, _, Some(_))) => bad(
            &check,
            format!(
                "not installed in {}: its dones show as `✓?` (the screen's guess), never routed",
                target.display()
            ),
            &fix,
        ),
        Err(e) => bad(&check, format!("{e:#}"), &fix),
    }
}

/// The live sessions (`zellij list-sessions`), each with its watcher and agent panes.
fn live_sessions(zellij: &Zellij) -> Vec<SessionCheck> {
    let program = zellij.program.clone();
    let listed = files::within(Duration::from_secs(5), move || {
        Command::new(program)
            .args(["list-sessions", "--short", "--no-formatting"])
            .output()
            .ok()
    });
    let Some(Some(out)) = listed else { return Vec::new() };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::trim)
        .filter(|name| !name.is_empty() && !name.contains(' '))
        .map(|name| SessionCheck {
            name: name.to_owned(),
            watcher: spool::watcher_runs(name).unwrap_or(false),
            panes: session_panes(name),
            links: spool::state_folder(name)
                .map(|folder| crate::link::recorded(&folder))
                .unwrap_or_default(),
        })
        .collect()
}

fn session_panes(session: &str) -> Vec<PaneCheck> {
    let Ok(report) = report::host_report(Some(session.to_owned()), &[]) else {
        return Vec::new();
    };
    report
        .panes
        .iter()
        .filter_map(|pane| {
            let agent = pane.agent.as_ref()?;
            let binding = match (&agent.transcript, &agent.session_id) {
                (Some(_), _) => "log file",
                (None, Some(_)) => "session id",
                (None, None) => "none (the screen alone)",
            };
            Some(PaneCheck {
                pane: pane.pane,
                kind: agent.kind.agent().name().to_owned(),
                binding: binding.to_owned(),
                sources: pane.verdicts.iter().map(|v| v.source.to_string()).collect(),
            })
        })
        .collect()
}

/// The diagnosis for people: one line per check, its fix beneath.
pub fn table(d: &Diagnosis) -> String {
    let mut out = format!("turnstile {}\n", d.version);
    for c in &d.checks {
        let mark = if c.ok { "ok " } else { "!! " };
        out += &format!("{mark} {:<16} {}\n", c.check, c.found);
        if let Some(fix) = &c.fix {
            out += &format!("    {:<16} fix: {fix}\n", "");
        }
    }
    for s in &d.sessions {
        let watcher = if s.watcher {
            "watcher runs"
        } else {
            "no watcher (no bar up, or one from before setup)"
        };
        out += &format!("session {}: {watcher}\n", s.name);
        for p in &s.panes {
            out += &format!(
                "    pane {:<4} {:<10} bound by {}; sources: {}\n",
                p.pane,
                p.kind,
                p.binding,
                p.sources.join(", ")
            );
        }
        for l in &s.links {
            let why = if l.why.is_empty() {
                String::new()
            } else {
                format!(" ({})", l.why)
            };
            out += &format!("    link to {:<12} {}{why}: ssh {}\n", l.host, l.state, l.link);
        }
    }
    out += if d.ok {
        "nothing is wrong\n"
    } else {
        "something is wrong: run the fixes above\n"
    };
    out
}

fn ok(check: &str, found: String) -> Check {
    Check {
        check: check.to_owned(),
        ok: true,
        found,
        fix: None,
    }
}

fn bad(check: &str, found: String, fix: &str) -> Check {
    Check {
        check: check.to_owned(),
        ok: false,
        found,
        fix: Some(fix.to_owned()),
    }
}
