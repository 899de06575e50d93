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
use super::report::classify_file;
use super::settings::SettingsEdit;
use super::{files, push, spool};
use crate::error::{Context, Result};
use serde_json::{json, Value};
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;
use turnstile_core::agent::AgentKind;
use turnstile_core::hook::HookEvent;
use turnstile_core::protocol::{capped_answer, AgentBinding, PaneReport};
use turnstile_core::{Millis, State};

/// Largest hook payload read from stdin.
const MAX_PAYLOAD: u64 = 8 << 20;

/// How long a hook may take, whatever it is given (Claude Code and Codex
/// are told 5 s, Gemini CLI 5000 ms): past it the hook exits 0 and the
/// unfinished work dies with the process.
pub const HOOK_BUDGET: Duration = Duration::from_millis(3_000);

/// How long a turn-end hook reads the transcript; past it the event is
/// reported as the payload alone says.
const TRANSCRIPT_BUDGET: Duration = Duration::from_millis(1_500);

/// Runs the hook of an agent of `kind` within [`HOOK_BUDGET`]; every
/// failure is swallowed (the agent must not notice).
pub fn run_hook(kind: AgentKind, event: Option<String>) {
    let _ = files::within(HOOK_BUDGET, move || hook_inner(kind, event.as_deref()));
}

fn hook_inner(kind: AgentKind, name: Option<&str>) -> Option<()> {
    let stdin = std::io::stdin();
    let mut payload = Vec::new();
    if !stdin.is_terminal() {
        stdin.lock().take(MAX_PAYLOAD).read_to_end(&mut payload).ok()?;
    }
    if kind.is_user() && payload.trim_ascii().is_empty() {
        // A user-defined agent's hook may pass nothing but its event's name.
        payload = b"{}".to_vec();
    }
    let mut event = HookEvent::parse_named(&payload, name).ok()?;
    if event.transcript_path.is_none() {
        event.transcript_path = log_of_session(kind, &event);
    }
    if is_subordinate(kind, event.transcript_path.as_deref()) {
        // A subagent's session: its turn ends are not the pane's.
        return None;
    }
    let pane: u32 = std::env::var("ZELLIJ_PANE_ID").ok()?.trim().parse().ok()?;
    let session = std::env::var("ZELLIJ_SESSION_NAME").ok()?;
    let now = now_ms();
    event.previous = HookRecord::read(&session, pane)
        .filter(|r| r.session_id.is_some() && r.session_id == event.session_id)
        .map(|r| (r.event, r.at));
    HookRecord::record(&session, pane, &event, now);
    let report = hook_report(pane, &event, now, kind)?;
    if !spool::hand_over(&session, &report) {
        push::push_to_plugin(&session, &report);
    }
    Some(())
}

/// True when the event's log is a subagent's session, inside a database
/// that says so (OpenCode's `task` tool).
fn is_subordinate(kind: AgentKind, log: Option<&str>) -> bool {
    let (Some(store), Some(log)) = (crate::store::of(kind), log) else {
        return false;
    };
    let log = Path::new(log);
    store.keeps(log) && store.is_subordinate(log)
}

/// The log of the event's session, for agents whose hook payloads name the
/// session but not its log (Copilot CLI's, but at a turn's end).
fn log_of_session(kind: AgentKind, event: &HookEvent) -> Option<String> {
    let home = kind.log().home(&|name| std::env::var(name).ok())?;
    let path = kind.log().log_of_session(&home, event.session_id.as_deref()?)?;
    Some(path.to_string_lossy().into_owned())
}

/// The verdict report a hook event pushes. A `Stop` is checked against the
/// transcript as it is now (Claude Code's `verdict_given`) and carries the
/// answer (from the payload, else from the transcript).
/// Codex fires `Stop` only for a turn that ended well (a few ms before its
/// rollout says so), with the answer: a done as it stands. Gemini CLI's
/// `AfterAgent` fires on every turn end, also on cancel and error: its chat
/// log, read now, says which (a done candidate there is confirmed).
pub fn hook_report(pane: u32, event: &HookEvent, now: Millis, kind: AgentKind) -> Option<PaneReport> {
    let hooks = kind.hooks();
    let turn_end = hooks.ends_a_turn(&event.hook_event_name);
    let transcript = match (turn_end, event.transcript_path.clone()) {
        (true, Some(path)) => files::within(TRANSCRIPT_BUDGET, move || {
            classify_file(Path::new(&path), kind, false).ok()
        })
        .flatten(),
        _ => None,
    };
    // The event's own time orders it among the pane's hook reports.
    let mut verdict = hooks.hook_verdict(event, event.time(now), transcript.as_ref())?;
    verdict.log_seen = transcript.as_ref().and_then(|t| t.offset);
    let answer = event
        .last_assistant_message
        .clone()
        .or_else(|| transcript.and_then(|t| t.answer))
        .or_else(|| event.prompt_response.clone().filter(|_| verdict.state == State::Done))
        .map(capped_answer);
    Some(PaneReport {
        pane,
        agent: Some(AgentBinding {
            pid: 0, // unknown here: the hook runs under a shell of the agent
            kind,
            cwd: event.cwd.clone(),
            session_id: event.session_id.clone(),
            transcript: event.transcript_path.clone(),
            remote: None,
        }),
        verdicts: vec![verdict],
        answer,
        since: None,
    })
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

/// Installs (or removes) the hooks; returns a one-line summary. The edit
/// goes through [`SettingsEdit`]: locked, at a symlink's target, atomic,
/// with a backup per change.
pub fn install(options: &InstallOptions) -> Result<String> {
    let path = settings_path(options.project, options.agent)?;
    let edit = SettingsEdit::begin(&path)?;
    let command = hook_command(options.agent)?;
    if let Some(source) = options.agent.hooks().plugin(&command) {
        return install_plugin(options, edit, &source);
    }
    let mut settings = edit.parse()?;
    let events = options.agent.hooks().hook_events(options.recent_events);
    let changed = if options.uninstall {
        remove_hooks(&mut settings)
    } else {
        let hooks = options.agent.hooks();
        hooks.prepare_hooks_file(&mut settings);
        add_hooks(&mut settings, &|event| hooks.hook_entry(&command, event), &events)
    }
    .map_err(|odd| crate::error::Error::msg(format!("{}: {odd}; not touching it", edit.target.display())))?;
    let text = serde_json::to_string_pretty(&settings)? + "\n";
    let shown = edit.target.display().to_string();
    if options.dry_run {
        print!("{text}");
        return Ok(format!(
            "dry run: {shown} would {}change",
            if changed { "" } else { "not " }
        ));
    }
    if !changed {
        let has = if options.uninstall {
            "has no turnstile hooks"
        } else {
            "has the turnstile hooks"
        };
        return Ok(format!("{shown} already {has}"));
    }
    let backup = edit.commit(&text)?;
    let verb = if options.uninstall {
        "removed turnstile hooks from"
    } else {
        "installed turnstile hooks into"
    };
    let kept = backup.map_or_else(String::new, |b| format!(" (previous version kept in {})", b.display()));
    Ok(format!("{verb} {shown}{kept}"))
}

/// What installing `agent`'s hooks would make of its user-wide hooks
/// file, read without locking or writing anything: the file (a symlink's
/// target), the bytes it has (`None`: missing), and its new text (`None`:
/// it has the hooks already). `setup` plans with it.
pub fn planned(agent: AgentKind) -> Result<(PathBuf, Option<Vec<u8>>, Option<String>)> {
    let target = super::settings::resolve(&settings_path(false, agent)?)?;
    let original = match files::read_capped(&target, super::settings::MAX_SETTINGS_BYTES) {
        Ok(bytes) => Some(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", target.display())),
    };
    let text = with_hooks(agent, &target, original.as_deref())?;
    Ok((target, original, text))
}

/// `original`, the bytes of `agent`'s hooks file at `target` (`None`:
/// missing), with turnstile's hooks added: the new text, `None` when it has
/// them already. A file that is not the agent's settings JSON, or a plugin
/// file that is not turnstile's, is an error (nothing is written then).
/// `install-hooks` and `setup` both edit through it.
pub fn with_hooks(agent: AgentKind, target: &Path, original: Option<&[u8]>) -> Result<Option<String>> {
    let command = hook_command(agent)?;
    let hooks = agent.hooks();
    if let Some(source) = hooks.plugin(&command) {
        if plugin_is_ours(original, &source) == Some(false) {
            crate::error::bail!("{} is not turnstile's plugin; not touching it", target.display());
        }
        return Ok((original != Some(source.as_bytes())).then_some(source));
    }
    let mut settings = parse_settings(target, original)?;
    hooks.prepare_hooks_file(&mut settings);
    let events = hooks.hook_events(false);
    let changed = add_hooks(&mut settings, &|event| hooks.hook_entry(&command, event), &events)
        .map_err(|odd| crate::error::Error::msg(format!("{}: {odd}; not touching it", target.display())))?;
    let text = serde_json::to_string_pretty(&settings)? + "\n";
    Ok(changed.then_some(text))
}

/// A settings file's bytes as JSON: `{}` for a missing or blank file.
fn parse_settings(target: &Path, original: Option<&[u8]>) -> Result<serde_json::Value> {
    match original {
        Some(bytes) if !bytes.iter().all(u8::is_ascii_whitespace) => serde_json::from_slice(bytes)
            .with_context(|| format!("{} is not valid JSON; not touching it", target.display())),
        _ => Ok(serde_json::Value::Object(serde_json::Map::new())),
    }
}

/// Whether a plugin file holding `original` is turnstile's (its first line
/// is the one turnstile writes); `None` when there is no file.
fn plugin_is_ours(original: Option<&[u8]>, source: &str) -> Option<bool> {
    let first_line = |text: &[u8]| text.split(|b| *b == b'\n').next().map(<[u8]>::to_vec);
    original.map(|text| first_line(text) == first_line(source.as_bytes()))
}

/// Installs (or removes) a kind's plugin file: a whole file, turnstile's
/// when its first line is the one turnstile writes; anyone else's file
/// there is left untouched.
fn install_plugin(options: &InstallOptions, edit: SettingsEdit, source: &str) -> Result<String> {
    let shown = edit.target.display().to_string();
    let ours = plugin_is_ours(edit.original.as_deref(), source);
    if ours == Some(false) {
        crate::error::bail!("{shown} is not turnstile's plugin; not touching it");
    }
    let current = edit.original.as_deref() == Some(source.as_bytes());
    let changed = match options.uninstall {
        true => ours.is_some(),
        false => !current,
    };
    if options.dry_run {
        if !options.uninstall {
            print!("{source}");
        }
        let would = if changed { "" } else { "not " };
        return Ok(format!("dry run: {shown} would {would}change"));
    }
    if !changed {
        let has = if options.uninstall {
            "does not exist"
        } else {
            "is turnstile's plugin already"
        };
        return Ok(format!("{shown} {has}"));
    }
    let (verb, backup) = match options.uninstall {
        true => ("removed turnstile's plugin", edit.remove()?),
        false => ("installed turnstile's plugin as", edit.commit(source)?),
    };
    let kept = backup.map_or_else(String::new, |b| format!(" (previous version kept in {})", b.display()));
    Ok(format!("{verb} {shown}{kept}"))
}

fn settings_path(project: bool, agent: AgentKind) -> Result<PathBuf> {
    let project = match project {
        true => Some(std::env::current_dir().context("no current directory")?),
        false => None,
    };
    let var = |name: &str| std::env::var(name).ok();
    agent
        .hooks()
        .hooks_file(&var, project.as_deref())
        .map_err(crate::error::Error::msg)
}

/// The command an agent's settings run: `turnstile hook`, with `--agent`
/// for every kind but the default (whose installs predate the option).
fn hook_command(agent: AgentKind) -> Result<String> {
    let exe = std::env::current_exe().context("cannot find the turnstile executable")?;
    let exe = shell_quote(&exe.display().to_string());
    Ok(match agent == AgentKind::default() {
        true => format!("{exe} hook"),
        false => format!("{exe} hook --agent {}", agent.name()),
    })
}

fn shell_quote(s: &str) -> String {
    if s.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c)) {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The hooks of a group (`{"hooks": [...]}`; Copilot CLI's entries are flat).
fn nested(group: &Value) -> impl Iterator<Item = &Value> {
    group.get("hooks").and_then(Value::as_array).into_iter().flatten()
}

/// True for a hook command turnstile installed: its program is a file
/// named exactly `turnstile` (any folder, quoted or not) and its first
/// argument `hook`; what follows (`--agent codex`, a redirection the user
/// added) does not matter. `my-turnstile hook` or `turnstile-hook` are
/// the user's own.
fn is_ours(hook: &Value) -> bool {
    let command = ["command", "bash"]
        .iter()
        .find_map(|k| hook.get(*k).and_then(Value::as_str));
    let Some(command) = command else {
        return false;
    };
    let mut words = shell_words(command).into_iter();
    let program = words.next().unwrap_or_default();
    program.rsplit('/').next() == Some("turnstile") && words.next().as_deref() == Some("hook")
}

/// The first words of a shell command, with single and double quotes and
/// backslashes undone (enough to read a program path and its first argument).
fn shell_words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.chars();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => word.extend(chars.next()),
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '\\') => {
                word.extend(chars.next());
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
                if words.len() == 2 {
                    return words;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// Why a settings file's `hooks` cannot be edited.
fn odd_shape(what: &str, found: &Value) -> String {
    let kind = match found {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    };
    format!("{what} is {kind}, not what the agent reads")
}

/// Adds turnstile's hook to every event that lacks it. `Ok(true)` when
/// something was added; an error naming the odd part when `hooks` or an
/// event's entry has a shape the agent would not read (nothing is changed).
fn add_hooks(settings: &mut Value, entry: &dyn Fn(&str) -> Value, events: &[&str]) -> Result<bool, String> {
    let Some(root) = settings.as_object_mut() else {
        return Err(odd_shape("the settings", settings));
    };
    let hooks = root.entry("hooks").or_insert_with(|| json!({}));
    let Some(hooks) = hooks.as_object_mut() else {
        return Err(odd_shape("`hooks`", hooks));
    };
    if let Some((event, odd)) = events
        .iter()
        .find_map(|e| hooks.get(*e).filter(|v| !v.is_array()).map(|v| (e, v)))
    {
        return Err(odd_shape(&format!("`hooks.{event}`"), odd));
    }
    let mut changed = false;
    for event in events {
        let groups = hooks.entry(event.to_string()).or_insert_with(|| json!([]));
        let Some(groups) = groups.as_array_mut() else { continue };
        let present = groups.iter().any(|g| is_ours(g) || nested(g).any(is_ours));
        if !present {
            groups.push(entry(event));
            changed = true;
        }
    }
    Ok(changed)
}

/// Removes turnstile's own hook entries, and only the groups, events and
/// `hooks` key that removing them emptied: the user's entries, lookalikes
/// and empty structures stay.
fn remove_hooks(settings: &mut Value) -> Result<bool, String> {
    let Some(hooks) = settings.get_mut("hooks") else {
        return Ok(false);
    };
    let Some(hooks) = hooks.as_object_mut() else {
        return Err(odd_shape("`hooks`", hooks));
    };
    let mut changed = false;
    let mut emptied = Vec::new();
    for (event, groups) in hooks.iter_mut() {
        let Some(groups) = groups.as_array_mut() else { continue };
        let mut removed_here = false;
        groups.retain_mut(|group| {
            if is_ours(group) {
                removed_here = true;
                return false;
            }
            let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
                return true;
            };
            let had = list.len();
            list.retain(|h| !is_ours(h));
            let removed = list.len() != had;
            removed_here |= removed;
            !(removed && list.is_empty())
        });
        if removed_here && groups.is_empty() {
            emptied.push(event.clone());
        }
        changed |= removed_here;
    }
    for event in &emptied {
        hooks.shift_remove(event);
    }
    if !emptied.is_empty() && hooks.is_empty() {
        if let Some(o) = settings.as_object_mut() {
            o.remove("hooks");
        }
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnstile_core::agent::claude::hooks::EVENTS;

    fn claude_entry(command: &str) -> impl Fn(&str) -> Value + '_ {
        move |event| AgentKind::Claude.hooks().hook_entry(command, event)
    }

    #[test]
    fn adding_twice_changes_once_and_keeps_user_hooks() {
        let mut s =
            json!({"model": "x", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}});
        assert_eq!(
            add_hooks(&mut s, &claude_entry("/bin/turnstile hook"), EVENTS),
            Ok(true)
        );
        assert_eq!(
            add_hooks(&mut s, &claude_entry("/bin/turnstile hook"), EVENTS),
            Ok(false)
        );
        let stop = s["hooks"]["Stop"].as_array().unwrap();
        assert_eq!(stop.len(), 2);
        assert_eq!(stop[0]["hooks"][0]["command"], "notify-send done");
        assert_eq!(s["model"], "x");
        assert_eq!(remove_hooks(&mut s), Ok(true));
        assert_eq!(s["hooks"]["Stop"].as_array().unwrap().len(), 1);
        assert!(s["hooks"].get("UserPromptSubmit").is_none());
    }

    #[test]
    fn removing_the_last_hook_drops_the_hooks_key() {
        let mut s = json!({});
        add_hooks(&mut s, &claude_entry("'/my dir/turnstile' hook"), EVENTS).unwrap();
        assert_eq!(remove_hooks(&mut s), Ok(true));
        assert_eq!(s, json!({}));
    }

    #[test]
    fn only_turnstiles_own_entries_are_ours() {
        let ours = |c: &str| is_ours(&json!({"type": "command", "command": c}));
        assert!(ours("/usr/bin/turnstile hook"));
        assert!(ours("'/my dir/turnstile' hook --agent codex"));
        assert!(
            ours("/usr/bin/turnstile hook 2>>/tmp/log"),
            "edited by the user, still ours"
        );
        assert!(!ours("/opt/tools/my-turnstile hook"));
        assert!(!ours("turnstile-hook"));
        assert!(!ours("/usr/bin/turnstile status"));
        assert!(!ours("echo turnstile hook"));
    }

    #[test]
    fn uninstall_leaves_lookalikes_and_empty_structures_alone() {
        let mut s = json!({"hooks": {
            "PreToolUse": [],
            "Stop": [{"hooks": [{"type": "command", "command": "/opt/tools/my-turnstile hook"}]}],
        }});
        add_hooks(&mut s, &claude_entry("/bin/turnstile hook"), EVENTS).unwrap();
        assert_eq!(remove_hooks(&mut s), Ok(true));
        assert_eq!(
            s,
            json!({"hooks": {
                "PreToolUse": [],
                "Stop": [{"hooks": [{"type": "command", "command": "/opt/tools/my-turnstile hook"}]}],
            }})
        );
    }

    #[test]
    fn an_edited_entry_is_not_installed_twice() {
        let mut s =
            json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/bin/turnstile hook 2>>log"}]}]}});
        add_hooks(&mut s, &claude_entry("/bin/turnstile hook"), &["Stop"]).unwrap();
        assert_eq!(s["hooks"]["Stop"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn odd_shapes_are_named_never_taken_for_installed() {
        let mut s = json!({"hooks": []});
        let err = add_hooks(&mut s, &claude_entry("/bin/turnstile hook"), EVENTS).unwrap_err();
        assert!(err.contains("`hooks` is a list"), "{err}");
        let mut s = json!({"hooks": {"Stop": {"command": "x"}}});
        let err = add_hooks(&mut s, &claude_entry("/bin/turnstile hook"), EVENTS).unwrap_err();
        assert!(err.contains("`hooks.Stop` is an object"), "{err}");
        assert_eq!(s, json!({"hooks": {"Stop": {"command": "x"}}}), "nothing changed");
        assert!(remove_hooks(&mut json!({"hooks": 3})).is_err());
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("/usr/bin/turnstile"), "/usr/bin/turnstile");
        assert_eq!(shell_quote("/my dir/turnstile"), "'/my dir/turnstile'");
    }
}
