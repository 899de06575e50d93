//! `turnstile hook` (what Claude Code runs for its hook events) and
//! `turnstile install-hooks` / `uninstall-hooks` (its settings).
//!
//! The hook must be fast, never block and never fail the agent: it always
//! exits 0 and prints nothing. It records the pane ↔ session ↔ transcript
//! binding in the state folder and hands the event's verdict to the
//! session's watcher (`spool`), or, when none runs, pushes it to the plugin
//! with `zellij pipe`, without waiting for it.

use super::binding::HookRecord;
use super::clock::now_ms;
use super::home::{ClaudeHome, CodexHome, GeminiHome};
use super::report::classify_file;
use super::{push, spool};
use anyhow::{bail, Context, Result};
use serde_json::{json, Value};
use std::fs;
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use turnstile_core::agent::AgentKind;
use turnstile_core::hook::HookEvent;
use turnstile_core::protocol::{AgentBinding, PaneReport};
use turnstile_core::transcript::TranscriptVerdict;
use turnstile_core::{Millis, Source, State, Verdict};

/// The hook events turnstile listens to by default. Every release we know
/// accepts them; an unknown key makes Claude Code reject the whole settings
/// file (2.1.39 does so for `StopFailure`).
pub const EVENTS: &[&str] = &[
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "Notification",
    "PermissionRequest",
];

/// Events only recent releases know; installed on request.
pub const RECENT_EVENTS: &[&str] = &["StopFailure"];

/// Largest hook payload read from stdin.
const MAX_PAYLOAD: u64 = 8 << 20;

/// The hook events installed for Codex CLI (its hooks are shaped like
/// Claude Code's; an interrupt or a failed turn fires none of them).
pub const CODEX_EVENTS: &[&str] = &["SessionStart", "UserPromptSubmit", "Stop", "PermissionRequest"];

/// The hook events installed for Gemini CLI.
pub const GEMINI_EVENTS: &[&str] = &[
    "SessionStart",
    "BeforeAgent",
    "AfterAgent",
    "Notification",
    "SessionEnd",
];

/// Runs the hook of an agent of `kind`; every failure is swallowed (the
/// agent must not notice).
pub fn run_hook(kind: AgentKind) {
    let _ = hook_inner(kind);
}

fn hook_inner(kind: AgentKind) -> Option<()> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return None;
    }
    let mut payload = Vec::new();
    stdin.lock().take(MAX_PAYLOAD).read_to_end(&mut payload).ok()?;
    let event = HookEvent::parse(&payload).ok()?;
    let pane: u32 = std::env::var("ZELLIJ_PANE_ID").ok()?.trim().parse().ok()?;
    let session = std::env::var("ZELLIJ_SESSION_NAME").ok()?;
    let now = now_ms();
    HookRecord::record(&session, pane, &event, now);
    let report = hook_report(pane, &event, now, kind)?;
    if !spool::hand_over(&session, &report) {
        push::push_to_plugin(&session, &report);
    }
    Some(())
}

/// The verdict report a hook event pushes. A `Stop` is checked against the
/// transcript as it is now ([`HookEvent::verdict_given`]) and carries the
/// answer (from the payload, else from the transcript).
/// Codex fires `Stop` only for a turn that ended well (a few ms before its
/// rollout says so), with the answer: a done as it stands. Gemini CLI's
/// `AfterAgent` fires on every turn end, also on cancel and error: its chat
/// log, read now, says which (a done candidate there is confirmed).
pub fn hook_report(pane: u32, event: &HookEvent, now: Millis, kind: AgentKind) -> Option<PaneReport> {
    let turn_end = matches!(
        (kind, event.hook_event_name.as_str()),
        (AgentKind::Claude, "Stop") | (AgentKind::Gemini, "AfterAgent")
    );
    let transcript = match (turn_end, event.transcript_path.as_deref()) {
        (true, Some(path)) => classify_file(Path::new(path), kind, false).ok(),
        _ => None,
    };
    let verdict = match kind {
        AgentKind::Claude => event.verdict_given(now, transcript.as_ref())?,
        AgentKind::Codex => event.verdict(now)?,
        AgentKind::Gemini if turn_end => gemini_turn_end(now, transcript.as_ref()),
        AgentKind::Gemini => event.verdict(now)?,
    };
    let answer = event
        .last_assistant_message
        .clone()
        .or_else(|| transcript.and_then(|t| t.answer))
        .or_else(|| event.prompt_response.clone().filter(|_| verdict.state == State::Done));
    Some(PaneReport {
        pane,
        agent: Some(AgentBinding {
            pid: 0, // unknown here: the hook runs under a shell of the agent
            kind,
            cwd: event.cwd.clone(),
            session_id: event.session_id.clone(),
            transcript: event.transcript_path.clone(),
        }),
        verdicts: vec![verdict],
        answer,
        since: None,
    })
}

/// Gemini's `AfterAgent` judged by the chat log: its cancel or error, else
/// the answer it holds is the turn's end.
fn gemini_turn_end(now: Millis, log: Option<&TranscriptVerdict>) -> Verdict {
    let (state, reason) = match log.map(|t| (t.state, t.candidate)) {
        Some((State::Interrupted | State::Failed, _)) => {
            let state = log.map_or(State::Unknown, |t| t.state);
            (state, format!("AfterAgent hook; the chat log says {state}"))
        }
        Some((State::Done, _) | (_, Some(State::Done))) => (State::Done, "AfterAgent hook: the answer is final".into()),
        _ => (
            State::Working,
            "AfterAgent hook, but the chat log shows the turn going on".into(),
        ),
    };
    let mut verdict = Verdict::new(state, Source::Hook, reason, now);
    verdict.key = Some(format!("AfterAgent@{now}"));
    verdict
}

/// What `install-hooks` changes.
pub struct InstallOptions {
    /// The project's `.claude/settings.json` instead of the user's.
    pub project: bool,
    /// Print the result instead of writing it.
    pub dry_run: bool,
    /// Remove turnstile's hooks instead of adding them.
    pub uninstall: bool,
    /// Also install the events only recent releases know (`StopFailure`).
    pub recent_events: bool,
    /// Whose hooks: Claude Code's settings or Codex's `hooks.json`.
    pub agent: AgentKind,
}

/// Installs (or removes) the hooks; returns a one-line summary.
pub fn install(options: &InstallOptions) -> Result<String> {
    let path = settings_path(options.project, options.agent)?;
    let original = match fs::read(&path) {
        Ok(bytes) => Some(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let mut settings: Value = match &original {
        Some(bytes) if !bytes.iter().all(u8::is_ascii_whitespace) => serde_json::from_slice(bytes)
            .with_context(|| format!("{} is not valid JSON; not touching it", path.display()))?,
        _ => json!({}),
    };
    if !settings.is_object() {
        bail!("{} does not hold a JSON object; not touching it", path.display());
    }
    let command = hook_command(options.agent)?;
    let events: Vec<&str> = match options.agent {
        AgentKind::Claude => EVENTS
            .iter()
            .chain(if options.recent_events { RECENT_EVENTS } else { &[] })
            .copied()
            .collect(),
        AgentKind::Codex => CODEX_EVENTS.to_vec(),
        AgentKind::Gemini => GEMINI_EVENTS.to_vec(),
    };
    let changed = if options.uninstall {
        remove_hooks(&mut settings)
    } else {
        add_hooks(&mut settings, &command, &events)
    };
    let text = serde_json::to_string_pretty(&settings)? + "\n";
    if options.dry_run {
        print!("{text}");
        return Ok(format!(
            "dry run: {} would {}change",
            path.display(),
            if changed { "" } else { "not " }
        ));
    }
    if !changed {
        return Ok(format!(
            "{} already {}",
            path.display(),
            if options.uninstall {
                "has no turnstile hooks"
            } else {
                "has the turnstile hooks"
            }
        ));
    }
    write_with_backup(&path, original.as_deref(), &text)?;
    let verb = if options.uninstall {
        "removed turnstile hooks from"
    } else {
        "installed turnstile hooks into"
    };
    Ok(format!("{verb} {}", path.display()))
}

fn settings_path(project: bool, agent: AgentKind) -> Result<PathBuf> {
    if agent == AgentKind::Gemini {
        if project {
            return Ok(std::env::current_dir()
                .context("no current directory")?
                .join(".gemini/settings.json"));
        }
        let home = GeminiHome::of_user().context("HOME is not set")?;
        return Ok(home.settings());
    }
    if agent == AgentKind::Codex {
        if project {
            bail!("Codex reads hooks from $CODEX_HOME/hooks.json only: drop --project");
        }
        let home = CodexHome::of_user().context("neither CODEX_HOME nor HOME is set")?;
        return Ok(home.hooks_file());
    }
    if project {
        return Ok(std::env::current_dir()
            .context("no current directory")?
            .join(".claude/settings.json"));
    }
    let home = ClaudeHome::of_user().context("neither CLAUDE_CONFIG_DIR nor HOME is set")?;
    Ok(home.settings())
}

fn hook_command(agent: AgentKind) -> Result<String> {
    let exe = std::env::current_exe().context("cannot find the turnstile executable")?;
    let exe = shell_quote(&exe.display().to_string());
    Ok(match agent {
        AgentKind::Claude => format!("{exe} hook"),
        AgentKind::Codex => format!("{exe} hook --agent codex"),
        AgentKind::Gemini => format!("{exe} hook --agent gemini"),
    })
}

fn shell_quote(s: &str) -> String {
    if s.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c)) {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// True for a hook command that runs turnstile's hook.
fn is_ours(hook: &Value) -> bool {
    hook.get("command").and_then(Value::as_str).is_some_and(|c| {
        let c = c
            .trim_end()
            .trim_end_matches(" --agent codex")
            .trim_end_matches(" --agent gemini");
        c.ends_with("turnstile hook") || c.ends_with("turnstile' hook")
    })
}

fn add_hooks(settings: &mut Value, command: &str, events: &[&str]) -> bool {
    let hooks = settings
        .as_object_mut()
        .map(|o| o.entry("hooks").or_insert_with(|| json!({})));
    let Some(hooks) = hooks.and_then(Value::as_object_mut) else {
        return false;
    };
    let mut changed = false;
    for event in events {
        let groups = hooks.entry(event.to_string()).or_insert_with(|| json!([]));
        let Some(groups) = groups.as_array_mut() else { continue };
        let present = groups
            .iter()
            .filter_map(|g| g.get("hooks").and_then(Value::as_array))
            .flatten()
            .any(is_ours);
        if !present {
            let mut group = json!({"hooks": [{"type": "command", "command": command, "timeout": 5}]});
            if command.ends_with("--agent gemini") {
                // Gemini CLI wants a matcher on every group, and counts its
                // timeouts in milliseconds (5 would kill the hook at once).
                group["matcher"] = json!("*");
                group["hooks"][0]["timeout"] = json!(5_000);
            }
            groups.push(group);
            changed = true;
        }
    }
    changed
}

fn remove_hooks(settings: &mut Value) -> bool {
    let Some(hooks) = settings.get_mut("hooks").and_then(Value::as_object_mut) else {
        return false;
    };
    let mut changed = false;
    for groups in hooks.values_mut().filter_map(Value::as_array_mut) {
        for group in groups.iter_mut() {
            if let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) {
                let before = list.len();
                list.retain(|h| !is_ours(h));
                changed |= list.len() != before;
            }
        }
        groups.retain(|g| g.get("hooks").and_then(Value::as_array).is_none_or(|l| !l.is_empty()));
    }
    hooks.retain(|_, groups| groups.as_array().is_none_or(|g| !g.is_empty()));
    if hooks.is_empty() {
        if let Some(o) = settings.as_object_mut() {
            o.remove("hooks");
        }
    }
    changed
}

fn write_with_backup(path: &Path, original: Option<&[u8]>, text: &str) -> Result<()> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    if let Some(bytes) = original {
        let backup = path.with_extension("json.turnstile-backup");
        fs::write(&backup, bytes).with_context(|| format!("cannot write the backup {}", backup.display()))?;
    }
    let tmp = path.with_extension("json.turnstile-tmp");
    fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    fs::rename(&tmp, path).with_context(|| format!("cannot replace {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adding_twice_changes_once_and_keeps_user_hooks() {
        let mut s =
            json!({"model": "x", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}});
        assert!(add_hooks(&mut s, "/bin/turnstile hook", EVENTS));
        assert!(!add_hooks(&mut s, "/bin/turnstile hook", EVENTS));
        let stop = s["hooks"]["Stop"].as_array().unwrap();
        assert_eq!(stop.len(), 2);
        assert_eq!(stop[0]["hooks"][0]["command"], "notify-send done");
        assert_eq!(s["model"], "x");
        assert!(remove_hooks(&mut s));
        assert_eq!(s["hooks"]["Stop"].as_array().unwrap().len(), 1);
        assert!(s["hooks"].get("UserPromptSubmit").is_none());
    }

    #[test]
    fn removing_the_last_hook_drops_the_hooks_key() {
        let mut s = json!({});
        add_hooks(&mut s, "'/my dir/turnstile' hook", EVENTS);
        assert!(remove_hooks(&mut s));
        assert_eq!(s, json!({}));
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("/usr/bin/turnstile"), "/usr/bin/turnstile");
        assert_eq!(shell_quote("/my dir/turnstile"), "'/my dir/turnstile'");
    }
}
