//! A family kind's hooks: a plugin file (`<config>/plugins/turnstile.js`,
//! or the project's `.<folder>/plugins/turnstile.js`) loaded into the
//! agent's process, so it runs with the pane's `ZELLIJ_PANE_ID`. It hands a
//! few bus events to `turnstile hook --agent <name> --event <type>` (a
//! detached process fed on stdin: the agent never waits for it):
//!
//! - `chat.message` (0.3–2.2 s after Enter): a turn runs (`session.status`
//!   busy is not handed over: it also fires 1 ms after a turn's last
//!   message, 5 ms before `session.idle`);
//! - `permission.asked`: an approval waits (the database never says so);
//!   `permission.replied`: the turn goes on;
//! - `session.error`: `MessageAbortedError` interrupted, any other failed;
//! - `session.idle`: the turn ended, on a done, an error and an Escape
//!   alike (an Escape while a retry waits fires no `session.error`): judged
//!   by the session's rows, read then.
//!
//! Each event carries its time (`event_at`): events a few ms apart run as
//! hook processes that may finish in either order, and the pane keeps the
//! newest event's report, not the last process's.
//!
//! A subagent (the `task` tool) runs in a session of its own, whose turns
//! are not the pane's: the plugin drops its events (its `session.created`
//! names its parent), and the hook drops any whose session has a parent.

use super::home::config_folder;
use super::{App, EventDbAgent};
use crate::agent::AgentHooks;
use crate::hook::HookEvent;
use crate::transcript::TranscriptVerdict;
use crate::{Millis, State, Verdict};
use std::path::{Path, PathBuf};

/// The events the plugin hands over.
pub const EVENTS: &[&str] = &[
    "chat.message",
    "permission.asked",
    "permission.replied",
    "session.error",
    "session.idle",
];

/// The first line of turnstile's plugin for `app`: what uninstall looks for.
pub fn plugin_mark(app: &App) -> String {
    format!("// turnstile: hands {}'s events to `turnstile hook`", app.title)
}

impl AgentHooks for EventDbAgent {
    fn hook_events(&self, _recent: bool) -> Vec<&'static str> {
        EVENTS.to_vec()
    }
    fn ends_a_turn(&self, event: &str) -> bool {
        event == "session.idle"
    }
    fn hook_verdict(&self, event: &HookEvent, now: Millis, log: Option<&TranscriptVerdict>) -> Option<Verdict> {
        let name = event.hook_event_name.as_str();
        let error = event.message.as_deref().unwrap_or("");
        let (state, reason) = match name {
            "chat.message" => (State::Working, "chat.message: a turn started".to_owned()),
            "permission.asked" => (State::Waiting, "permission.asked: an approval waits".to_owned()),
            "permission.replied" => (State::Working, "permission.replied: the turn goes on".to_owned()),
            "session.error" if error.starts_with("MessageAbortedError") => (
                State::Interrupted,
                "session.error: MessageAbortedError (Escape)".to_owned(),
            ),
            "session.error" => (State::Failed, format!("session.error: {error}").trim_end().to_owned()),
            "session.idle" => turn_end(log),
            _ => return None,
        };
        let mut verdict = event.verdict_of(state, reason, now);
        if name == "session.idle" && state == State::Working {
            verdict.candidate = Some(State::Done);
        }
        Some(verdict)
    }
    /// A plugin file, not entries in a settings file.
    fn plugin(&self, command: &str) -> Option<String> {
        Some(plugin_source(self.0, command))
    }
    /// `<config>/plugins/turnstile.js`, or the project's
    /// `.<folder>/plugins/turnstile.js`.
    fn hooks_file(&self, var: &dyn Fn(&str) -> Option<String>, project: Option<&Path>) -> Result<PathBuf, String> {
        if let Some(dir) = project {
            return Ok(dir.join(self.0.project_folder).join("plugins/turnstile.js"));
        }
        let config = config_folder(self.0, var).ok_or("neither XDG_CONFIG_HOME nor HOME is set")?;
        Ok(config.join("plugins").join("turnstile.js"))
    }
}

/// `session.idle` judged by the session's rows: their turn end, else (rows
/// not read in time, or not showing the end yet) a mark of the end that the
/// rows' answer confirms.
fn turn_end(log: Option<&TranscriptVerdict>) -> (State, String) {
    match log.map(|t| t.state) {
        Some(state @ (State::Done | State::Failed | State::Interrupted)) => {
            (state, format!("session.idle; the session's rows say {state}"))
        }
        _ => (
            State::Working,
            "session.idle; the session's rows do not show the end yet".to_owned(),
        ),
    }
}

/// The plugin's source for `app`, running `command` (`turnstile hook
/// --agent <name>`, shell-quoted) for each event. It imports only node's
/// own modules (a package import would make the agent run npm).
pub fn plugin_source(app: &App, command: &str) -> String {
    let events = serde_json::to_string(EVENTS).unwrap_or_default();
    let command = serde_json::to_string(command).unwrap_or_default();
    let (mark, name) = (plugin_mark(app), app.name);
    format!(
        r#"{mark} (installed by `turnstile install-hooks --agent {name}`).
import {{ spawn }} from "node:child_process";

const COMMAND = {command};
const EVENTS = new Set({events});
// Subagents' sessions (the task tool's): their turns are not the pane's.
const CHILDREN = new Set();

function hand(name, payload) {{
  try {{
    const child = spawn("/bin/sh", ["-c", COMMAND + " --event " + name], {{
      stdio: ["pipe", "ignore", "ignore"],
      detached: true,
    }});
    child.on("error", () => {{}});
    child.stdin.on("error", () => {{}});
    child.stdin.end(JSON.stringify({{ hook_event_name: name, event_at: Date.now(), ...payload }}));
    child.unref();
  }} catch {{}}
}}

export const Turnstile = async ({{ directory }}) => ({{
  event: async ({{ event }}) => {{
    const p = event.properties || {{}};
    if (p.info && p.info.parentID && (event.type === "session.created" || event.type === "session.updated")) {{
      CHILDREN.add(p.info.id);
    }}
    if (!EVENTS.has(event.type) || CHILDREN.has(p.sessionID)) return;
    const error = p.error ? [p.error.name, p.error.data && p.error.data.message].filter(Boolean).join(": ") : undefined;
    hand(event.type, {{ session_id: p.sessionID, cwd: directory, message: error }});
  }},
  "chat.message": async (input) => {{
    if (input && CHILDREN.has(input.sessionID)) return;
    hand("chat.message", {{ session_id: input && input.sessionID, cwd: directory }});
  }},
}});
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::eventdb::tests::TEST_APP;

    const AGENT: EventDbAgent = EventDbAgent(&TEST_APP);

    fn event(name: &str, message: Option<&str>) -> HookEvent {
        let payload = serde_json::json!({"session_id": "ses_1", "message": message});
        HookEvent::parse_named(payload.to_string().as_bytes(), Some(name)).unwrap()
    }

    #[test]
    fn each_event_and_the_turn_end_judged_by_the_rows() {
        let state =
            |name: &str, message: Option<&str>| AGENT.hook_verdict(&event(name, message), 1, None).map(|v| v.state);
        assert_eq!(state("chat.message", None), Some(State::Working));
        assert_eq!(state("permission.asked", None), Some(State::Waiting));
        assert_eq!(
            state("session.error", Some("MessageAbortedError")),
            Some(State::Interrupted)
        );
        assert_eq!(
            state("session.error", Some("APIError: fake HTTP 400")),
            Some(State::Failed)
        );
        let idle = AGENT.hook_verdict(&event("session.idle", None), 1, None).unwrap();
        assert_eq!((idle.state, idle.candidate), (State::Working, Some(State::Done)));
        let mut rows = crate::agent::eventdb::events::EventsClassifier::default();
        rows.feed(br#"{"aggregate_id":"ses_1","seq":0,"type":"message.updated.1","data":{"info":{"id":"m1","role":"user"}}}
{"aggregate_id":"ses_1","seq":1,"type":"message.updated.1","data":{"info":{"id":"m2","role":"assistant","parentID":"m1","time":{"completed":5}}}}
"#);
        let idle = AGENT
            .hook_verdict(&event("session.idle", None), 1, Some(&rows.verdict()))
            .unwrap();
        assert_eq!(idle.state, State::Interrupted, "an Escape while a retry waited");
    }

    #[test]
    fn the_plugin_names_its_command_and_imports_no_package() {
        let source = plugin_source(&TEST_APP, "'/opt/my tools/turnstile' hook --agent evdb");
        assert!(source.starts_with("// turnstile: hands EvDb's events to `turnstile hook` (installed by `turnstile install-hooks --agent evdb`)."));
        assert!(source.contains("event_at: Date.now()"), "each event carries its time");
        assert!(
            !source.contains("\"session.status\""),
            "busy fires 5 ms before idle: not handed over"
        );
        assert!(source.contains(r#"const COMMAND = "'/opt/my tools/turnstile' hook --agent evdb";"#));
        let imports: Vec<&str> = source.lines().filter(|l| l.starts_with("import")).collect();
        assert_eq!(imports, [r#"import { spawn } from "node:child_process";"#]);
    }
}
