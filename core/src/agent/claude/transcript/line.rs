//! One transcript line, parsed leniently into the [`Event`] it means for the turn.
//!
//! Lines are classified by their top-level `type`; everything that is not a
//! `user`, `assistant`, `system` or `progress` line is metadata and ignored
//! without parsing its body. Side-chain (sub-agent) lines never touch the main
//! turn. Parsing never fails: broken JSON becomes [`Event::Invalid`].

use serde::Deserialize;
use serde_json::Value;
use std::borrow::Cow;

/// The text Claude Code writes when the user presses Escape.
const INTERRUPT_MARKER: &str = "[Request interrupted by user";
/// A background task reporting back to the main agent.
const TASK_NOTIFICATION: &str = "<task-notification>";
/// Tool names that launch sub-agents (old and new releases).
const AGENT_TOOLS: &[&str] = &["Task", "Agent"];
/// Wrappers of local commands and shell-mode input: no model turn follows.
const LOCAL_WRAPPERS: &[&str] = &[
    "<command-name>",
    "<command-message>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<system-reminder>",
];
/// Stop reasons that end a response without a tool call.
const FINAL_STOP_REASONS: &[&str] = &["end_turn", "stop_sequence", "max_tokens", "refusal"];

/// What a line means for the main turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// Metadata, unknown types, sub-agent lines, local commands: no effect.
    Ignored(&'static str),
    /// The line is not valid JSON (or not an object).
    Invalid(String),
    /// A real user prompt: a new turn starts.
    Prompt,
    /// Tool results came back.
    ToolResults {
        /// Ids of the tool calls they answer.
        ids: Vec<String>,
        /// The result says a sub-agent was launched asynchronously
        /// (`toolUseResult.status: "async_launched"`): it reports back later,
        /// even when the call did not ask for the background.
        launched_agent: bool,
    },
    /// The user interrupted the turn.
    Interrupt,
    /// A background task reported back: the turn goes on.
    TaskNotification,
    /// One line of an assistant response (one or more content blocks).
    Assistant(AssistantPart),
    /// A synthetic API-error message ended the turn.
    ApiError(String),
    /// A marker Claude Code writes after a turn ended (`turn_duration`,
    /// `stop_hook_summary`, the Stop hook's progress line).
    TurnEnded(&'static str),
}

/// One line of an assistant response.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AssistantPart {
    /// `message.id`, shared by every line of one API response.
    pub message_id: Option<String>,
    /// Text blocks on this line.
    pub texts: Vec<String>,
    /// Tool calls on this line.
    pub tool_uses: Vec<ToolUse>,
    /// What the stop reason says about the response.
    pub stop: Stop,
}

/// A tool call in an assistant response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolUse {
    /// The `tool_use` id its result will name.
    pub id: String,
    /// A sub-agent launched in the background: it reports back later.
    pub background_agent: bool,
    /// A call that asks the user and waits for the answer (a question, a
    /// plan to approve): what it asks, for people.
    pub asks: Option<String>,
}

/// The `stop_reason` of an assistant line, reduced to what matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Stop {
    /// `null` or absent: old releases write this on every line.
    #[default]
    Unknown,
    /// `tool_use` / `pause_turn`: the response goes on with a tool call.
    Continues,
    /// `end_turn` and friends: the response is final.
    Final,
}

#[derive(Deserialize)]
struct Head<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
}

/// What a line says besides its event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LineMeta {
    /// `sessionId`.
    pub session_id: Option<String>,
    /// `timestamp` (ISO 8601, as Claude Code writes it).
    pub timestamp: Option<String>,
    /// `uuid`: the line's own id.
    pub uuid: Option<String>,
    /// `parentUuid`: the line it follows in the conversation (not always
    /// the line before it in the file: old releases may write a session's
    /// first prompt after the lines that answer it).
    pub parent_uuid: Option<String>,
}

/// Parses one line (without its newline) into its event and metadata.
pub fn parse(bytes: &[u8]) -> (Event, LineMeta) {
    let none = LineMeta::default;
    let bytes = trim_line(bytes);
    if bytes.is_empty() {
        return (Event::Ignored("empty line"), none());
    }
    let kind = match head_kind(bytes) {
        Ok(kind) => kind,
        Err(reason) => return (Event::Invalid(reason), none()),
    };
    let kind = match kind.as_deref() {
        Some(k @ ("user" | "assistant" | "system" | "progress")) => k.to_owned(),
        Some(_) => {
            // Attachments and the like are links of the conversation too.
            let meta = LineMeta {
                uuid: quick_uuid(bytes),
                ..LineMeta::default()
            };
            return (Event::Ignored("metadata line"), meta);
        }
        None => return (Event::Ignored("line without a type"), none()),
    };
    let value = match full_value(bytes) {
        Ok(v) => v,
        Err(reason) => return (Event::Invalid(reason), none()),
    };
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    let meta = LineMeta {
        session_id: text("sessionId"),
        timestamp: text("timestamp"),
        uuid: text("uuid"),
        parent_uuid: text("parentUuid"),
    };
    (event_of(&kind, &value), meta)
}

/// The line's own `"uuid"`, found without parsing the line (metadata lines
/// can be large; their first `"uuid":"…"` key is their own).
fn quick_uuid(bytes: &[u8]) -> Option<String> {
    const KEY: &[u8] = b"\"uuid\":\"";
    let start = memchr::memmem::find(bytes, KEY)? + KEY.len();
    let len = memchr::memchr(b'"', &bytes[start..])?;
    std::str::from_utf8(&bytes[start..start + len]).ok().map(str::to_owned)
}

/// Cheap pre-filter: can this line be a prompt? (Every user line holds `"user"`.)
pub fn may_be_prompt(bytes: &[u8]) -> bool {
    memchr::memmem::find(bytes, b"\"user\"").is_some()
}

fn trim_line(bytes: &[u8]) -> &[u8] {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    &bytes[start..]
}

fn head_kind(bytes: &[u8]) -> Result<Option<String>, String> {
    match serde_json::from_slice::<Head<'_>>(bytes) {
        Ok(head) => Ok(head.kind.map(Cow::into_owned)),
        Err(e) if e.is_data() || e.is_syntax() => {
            // Non-UTF-8 bytes inside strings are a syntax error for serde_json:
            // retry on a lossy copy before calling the line broken.
            let lossy = String::from_utf8_lossy(bytes);
            match serde_json::from_str::<Head<'_>>(&lossy) {
                Ok(head) => Ok(head.kind.map(Cow::into_owned)),
                Err(e) => Err(format!("invalid JSON: {e}")),
            }
        }
        Err(e) => Err(format!("invalid JSON: {e}")),
    }
}

fn full_value(bytes: &[u8]) -> Result<Value, String> {
    serde_json::from_slice::<Value>(bytes)
        .or_else(|_| serde_json::from_str::<Value>(&String::from_utf8_lossy(bytes)))
        .map_err(|e| format!("invalid JSON: {e}"))
}

fn flag(value: &Value, key: &str) -> bool {
    value.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn event_of(kind: &str, line: &Value) -> Event {
    if flag(line, "isSidechain") {
        return Event::Ignored("sub-agent (side-chain) line");
    }
    match kind {
        "user" => user_event(line),
        "assistant" => assistant_event(line),
        "system" => system_event(line),
        _ => progress_event(line),
    }
}

/// What the blocks of one user message hold.
#[derive(Default)]
struct UserParts {
    tool_results: Vec<String>,
    launched_agent: bool,
    prompt_text: bool,
    interrupt: bool,
    notification: bool,
}

impl UserParts {
    fn note_text(&mut self, text: &str) {
        let text = text.trim_start();
        if text.starts_with(INTERRUPT_MARKER) {
            self.interrupt = true;
            // Only a prompt merged in *after* the marker starts a new turn.
            self.prompt_text = false;
        } else if text.contains(TASK_NOTIFICATION) {
            self.notification = true;
        } else if !text.is_empty() && !LOCAL_WRAPPERS.iter().any(|w| text.starts_with(w)) {
            self.prompt_text = true;
        }
    }

    fn note_block(&mut self, block: &Value) {
        match block.get("type").and_then(Value::as_str) {
            Some("tool_result") => {
                if let Some(id) = block.get("tool_use_id").and_then(Value::as_str) {
                    self.tool_results.push(id.to_owned());
                }
            }
            Some("text") => self.note_text(block.get("text").and_then(Value::as_str).unwrap_or("")),
            Some("image") | Some("document") => self.prompt_text = true,
            _ => {}
        }
    }

    fn into_event(self) -> Event {
        if self.prompt_text {
            Event::Prompt
        } else if self.interrupt {
            Event::Interrupt
        } else if self.notification {
            Event::TaskNotification
        } else if !self.tool_results.is_empty() {
            Event::ToolResults {
                ids: self.tool_results,
                launched_agent: self.launched_agent,
            }
        } else {
            Event::Ignored("local command or empty user line")
        }
    }
}

fn user_event(line: &Value) -> Event {
    if flag(line, "isMeta") || flag(line, "isCompactSummary") {
        return Event::Ignored("meta user line");
    }
    let mut parts = UserParts {
        launched_agent: is_async_launch(line),
        ..UserParts::default()
    };
    match line.pointer("/message/content") {
        Some(Value::String(text)) => parts.note_text(text),
        Some(Value::Array(blocks)) => blocks.iter().for_each(|b| parts.note_block(b)),
        _ => return Event::Ignored("user line without content"),
    }
    parts.into_event()
}

/// `toolUseResult` of an Agent/Task call that went to the background.
fn is_async_launch(line: &Value) -> bool {
    let Some(result) = line.get("toolUseResult") else {
        return false;
    };
    flag(result, "isAsync") || result.get("status").and_then(Value::as_str) == Some("async_launched")
}

fn assistant_event(line: &Value) -> Event {
    let message = line.get("message").unwrap_or(&Value::Null);
    let model = message.get("model").and_then(Value::as_str).unwrap_or("");
    let texts = block_texts(message);
    if flag(line, "isApiErrorMessage") {
        return Event::ApiError(texts.first().cloned().unwrap_or_else(|| "API error".into()));
    }
    if model == "<synthetic>" {
        return match texts.first() {
            Some(t) if looks_like_error(t) => Event::ApiError(t.clone()),
            _ => Event::Ignored("synthetic assistant note"),
        };
    }
    let tool_uses = tool_uses(message);
    let stop = match message.get("stop_reason").and_then(Value::as_str) {
        None => Stop::Unknown,
        Some(r) if FINAL_STOP_REASONS.contains(&r) => Stop::Final,
        Some(_) => Stop::Continues,
    };
    Event::Assistant(AssistantPart {
        message_id: message.get("id").and_then(Value::as_str).map(str::to_owned),
        texts,
        tool_uses,
        stop,
    })
}

fn looks_like_error(text: &str) -> bool {
    [
        "API Error",
        "Prompt is too long",
        "Context limit",
        "Invalid API key",
        "Credit balance",
    ]
    .iter()
    .any(|p| text.contains(p))
}

fn blocks(message: &Value) -> &[Value] {
    message
        .get("content")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn block_texts(message: &Value) -> Vec<String> {
    if let Some(text) = message.get("content").and_then(Value::as_str) {
        return vec![text.to_owned()];
    }
    blocks(message)
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .map(str::to_owned)
        .collect()
}

fn tool_uses(message: &Value) -> Vec<ToolUse> {
    blocks(message)
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
        .map(|b| {
            let name = b.get("name").and_then(Value::as_str).unwrap_or("");
            let background = b.pointer("/input/run_in_background").and_then(Value::as_bool) == Some(true);
            ToolUse {
                id: b.get("id").and_then(Value::as_str).unwrap_or("").to_owned(),
                background_agent: background && AGENT_TOOLS.contains(&name),
                asks: crate::question::asks(name, b.get("input")),
            }
        })
        .collect()
}

fn system_event(line: &Value) -> Event {
    match line.get("subtype").and_then(Value::as_str) {
        Some("turn_duration") => Event::TurnEnded("turn_duration"),
        Some("stop_hook_summary") => Event::TurnEnded("stop_hook_summary"),
        _ => Event::Ignored("system note"),
    }
}

fn progress_event(line: &Value) -> Event {
    let data = line.get("data").unwrap_or(&Value::Null);
    let is_stop_hook = data.get("type").and_then(Value::as_str) == Some("hook_progress")
        && data.get("hookEvent").and_then(Value::as_str) == Some("Stop");
    if is_stop_hook {
        Event::TurnEnded("Stop hook progress")
    } else {
        Event::Ignored("progress line")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(line: &str) -> Event {
        parse(line.as_bytes()).0
    }

    #[test]
    fn metadata_lines_are_ignored_without_looking_inside() {
        for t in [
            "mode",
            "permission-mode",
            "attachment",
            "last-prompt",
            "api-request-blob",
            "file-history-snapshot",
        ] {
            let line = format!(r#"{{"type":"{t}","message":{{"role":"user","content":"hi"}}}}"#);
            assert!(matches!(event(&line), Event::Ignored(_)), "{t}");
        }
    }

    #[test]
    fn string_prompt_starts_a_turn() {
        assert_eq!(
            event(r#"{"type":"user","message":{"role":"user","content":"tool:4"},"sessionId":"s1"}"#),
            Event::Prompt
        );
        let (_, meta) = parse(br#"{"type":"user","message":{"content":"x"},"sessionId":"s1","timestamp":"T"}"#);
        assert_eq!(
            (meta.session_id.as_deref(), meta.timestamp.as_deref()),
            (Some("s1"), Some("T"))
        );
    }

    #[test]
    fn tool_result_line_is_not_a_prompt() {
        let l = r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}}"#;
        assert_eq!(
            event(l),
            Event::ToolResults {
                ids: vec!["t1".into()],
                launched_agent: false
            }
        );
    }

    #[test]
    fn interrupt_marker_is_interrupt() {
        let l = r#"{"type":"user","message":{"content":[{"type":"text","text":"[Request interrupted by user for tool use]"}]}}"#;
        assert_eq!(event(l), Event::Interrupt);
    }

    #[test]
    fn merged_tool_result_interrupt_and_next_prompt_is_a_prompt() {
        let l = r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"x"},{"type":"text","text":"[Request interrupted by user]"},{"type":"text","text":"do this instead"}]}}"#;
        assert_eq!(event(l), Event::Prompt);
    }

    #[test]
    fn task_notification_continues_the_turn() {
        let l = r#"{"type":"user","message":{"content":"<task-notification><task-id>a1</task-id><status>completed</status></task-notification>"}}"#;
        assert_eq!(event(l), Event::TaskNotification);
    }

    #[test]
    fn local_commands_and_meta_lines_are_ignored() {
        assert!(matches!(
            event(r#"{"type":"user","message":{"content":"<command-name>/model</command-name>"}}"#),
            Event::Ignored(_)
        ));
        assert!(matches!(
            event(r#"{"type":"user","isMeta":true,"message":{"content":"Caveat"}}"#),
            Event::Ignored(_)
        ));
    }

    #[test]
    fn sidechain_lines_never_touch_the_main_turn() {
        let l = r#"{"type":"assistant","isSidechain":true,"message":{"id":"m","content":[{"type":"text","text":"sub"}],"stop_reason":"end_turn"}}"#;
        assert!(matches!(event(l), Event::Ignored(_)));
    }

    #[test]
    fn api_error_message_is_failed_not_done() {
        let l = r#"{"type":"assistant","isApiErrorMessage":true,"message":{"model":"<synthetic>","content":[{"type":"text","text":"API Error: 529 Overloaded"}],"stop_reason":"stop_sequence"}}"#;
        assert_eq!(event(l), Event::ApiError("API Error: 529 Overloaded".into()));
        let synthetic = r#"{"type":"assistant","message":{"model":"<synthetic>","content":[{"type":"text","text":"Prompt is too long"}]}}"#;
        assert!(matches!(event(synthetic), Event::ApiError(_)));
        let note = r#"{"type":"assistant","message":{"model":"<synthetic>","content":[{"type":"text","text":"No response requested."}]}}"#;
        assert!(matches!(event(note), Event::Ignored(_)));
    }

    #[test]
    fn stop_reasons_reduce_to_three_kinds() {
        let with = |r: &str| format!(r#"{{"type":"assistant","message":{{"id":"m","content":[],"stop_reason":{r}}}}}"#);
        let stop = |r: &str| match event(&with(r)) {
            Event::Assistant(p) => p.stop,
            e => panic!("{e:?}"),
        };
        assert_eq!(stop("null"), Stop::Unknown);
        assert_eq!(stop("\"tool_use\""), Stop::Continues);
        assert_eq!(stop("\"end_turn\""), Stop::Final);
        assert_eq!(stop("\"max_tokens\""), Stop::Final);
    }

    #[test]
    fn background_agent_launch_is_recognised() {
        let l = r#"{"type":"assistant","message":{"id":"m","content":[{"type":"tool_use","id":"t9","name":"Agent","input":{"prompt":"x","run_in_background":true}}]}}"#;
        match event(l) {
            Event::Assistant(p) => assert!(p.tool_uses[0].background_agent),
            e => panic!("{e:?}"),
        }
    }

    #[test]
    fn turn_end_markers() {
        assert_eq!(
            event(r#"{"type":"system","subtype":"turn_duration"}"#),
            Event::TurnEnded("turn_duration")
        );
        assert_eq!(
            event(r#"{"type":"system","subtype":"stop_hook_summary"}"#),
            Event::TurnEnded("stop_hook_summary")
        );
        let hook = r#"{"type":"progress","data":{"type":"hook_progress","hookEvent":"Stop"}}"#;
        assert!(matches!(event(hook), Event::TurnEnded(_)));
        let nested = r#"{"type":"progress","data":{"type":"agent_progress","message":{"type":"assistant","message":{"stop_reason":"end_turn"}}}}"#;
        assert!(matches!(event(nested), Event::Ignored(_)));
    }

    #[test]
    fn broken_lines_are_invalid_not_panics() {
        assert!(matches!(event(r#"{"type":"user","mess"#), Event::Invalid(_)));
        assert!(matches!(event("[1,2]"), Event::Invalid(_)));
        assert!(matches!(event(r#"{"type":5}"#), Event::Invalid(_)));
        assert!(matches!(event(""), Event::Ignored(_)));
    }

    #[test]
    fn non_utf8_and_crlf_lines_still_parse() {
        let mut l = br#"{"type":"user","message":{"content":"caf"#.to_vec();
        l.extend_from_slice(&[0xff, 0xfe]);
        l.extend_from_slice(b"\"}}\r");
        assert_eq!(parse(&l).0, Event::Prompt);
    }
}
