//! Questions an agent asks its user in the middle of a turn: a tool call
//! that waits for the user's choice (a question dialog, a plan to approve).
//! While such a call has no result the turn is `waiting`, and the bar says
//! what it asks; its result is the user's choice, never the turn's answer.
//! One table for every kind: Claude Code's `AskUserQuestion` and
//! `ExitPlanMode`, Codex's `request_user_input`, Gemini CLI's `ask_user`
//! and `exit_plan_mode`. Their inputs share one shape:
//! `{"questions": [{"question": "Which database?", …}, …]}`.

use serde_json::Value;

/// The tools that ask a question, by the name each agent gives them.
const QUESTION_TOOLS: [&str; 3] = ["AskUserQuestion", "request_user_input", "ask_user"];
/// The tools that end plan mode: the plan waits for approval.
const PLAN_TOOLS: [&str; 2] = ["ExitPlanMode", "exit_plan_mode"];

/// Longest question kept for the bar (characters).
const QUESTION_CHARS: usize = 80;

/// What a call of `tool` with `input` asks the user, for people (`asks:
/// Which database?`, `plan ready: approve?`); `None` for a call that does
/// not wait for the user.
pub fn asks(tool: &str, input: Option<&Value>) -> Option<String> {
    if PLAN_TOOLS.contains(&tool) {
        return Some("plan ready: approve?".to_owned());
    }
    if !QUESTION_TOOLS.contains(&tool) {
        return None;
    }
    let question = input
        .and_then(|i| i.pointer("/questions/0/question").or_else(|| i.get("question")))
        .and_then(Value::as_str)
        .map(|q| q.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|q| !q.is_empty());
    Some(match question {
        Some(q) if q.chars().count() > QUESTION_CHARS => {
            format!("asks: {}…", q.chars().take(QUESTION_CHARS - 1).collect::<String>())
        }
        Some(q) => format!("asks: {q}"),
        None => "asks a question".to_owned(),
    })
}

/// True for a reason [`asks`] wrote: the bar shows it as the pane's note.
pub fn is_question(reason: &str) -> bool {
    reason.starts_with("asks") || reason.starts_with("plan ready")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_kinds_question_and_plan_tools_ask_and_others_do_not() {
        let input = json!({"questions": [{"question": "Which\n database?", "header": "DB"}]});
        for tool in ["AskUserQuestion", "request_user_input", "ask_user"] {
            assert_eq!(
                asks(tool, Some(&input)).as_deref(),
                Some("asks: Which database?"),
                "{tool}"
            );
        }
        for tool in ["ExitPlanMode", "exit_plan_mode"] {
            assert_eq!(asks(tool, None).as_deref(), Some("plan ready: approve?"));
        }
        assert_eq!(asks("Bash", Some(&input)), None);
        assert_eq!(asks("ask_user", Some(&json!({}))).as_deref(), Some("asks a question"));
        let long = json!({"questions": [{"question": "x".repeat(200)}]});
        assert_eq!(
            asks("ask_user", Some(&long)).unwrap().chars().count(),
            "asks: ".len() + 80
        );
        assert!(is_question("asks: Which database?") && is_question("plan ready: approve?"));
        assert!(!is_question("turn done"));
    }
}
