//! `turnstile explain`: the verdict, the deciding line and the rule, for people.

use anyhow::Result;
use std::fmt::Write as _;
use std::path::Path;
use turnstile_core::agent::AgentKind;
use turnstile_core::{ansi, screen};

/// Explains a screen dump of an agent of `kind` (with its pane's title); a
/// user kind's rule is named by its line in `rules` (the rules file).
pub fn screen(text: &str, kind: AgentKind, title: &str, rules: Option<&str>) -> String {
    let plain = ansi::strip(text);
    let rows: Vec<String> = plain.lines().map(str::to_owned).collect();
    let v = kind.classify_screen(&rows, title);
    let mut out = format!(
        "agent: {}\nstate: {}\nsource: screen\nrule: {}\n",
        kind.name(),
        v.state,
        v.rule.id()
    );
    match (v.row, v.line) {
        (Some(row), Some(line)) => {
            let _ = writeln!(out, "decided by row {} of {}: {line}", row + 1, rows.len());
        }
        _ => out.push_str("no status line on screen\n"),
    }
    if let (screen::Rule::User(line), AgentKind::User(id)) = (v.rule, kind) {
        let file = rules.unwrap_or("the rules file");
        let rule = turnstile_core::agent::user::get(id)
            .rules()
            .screen
            .iter()
            .find(|r| r.pattern.line() == line as usize);
        if let Some(rule) = rule {
            let _ = writeln!(
                out,
                "matched: {file} line {line}: {} {:?} over {}",
                rule.state,
                rule.pattern.as_str(),
                match rule.region {
                    turnstile_core::agent::user::rules::Region::Title => "the title".to_owned(),
                    turnstile_core::agent::user::rules::Region::Last(n) => format!("the last {n} rows"),
                    turnstile_core::agent::user::rules::Region::Above(n) => {
                        format!("the {n} rows above the input box")
                    }
                }
            );
        }
    }
    if let Some(answer) = &v.answer {
        let _ = writeln!(out, "answer (its rule's region):\n{answer}");
    }
    let _ = writeln!(
        out,
        "activity on screen: {}",
        if v.active { "yes (a turn is running)" } else { "no" }
    );
    out.push_str(rule_help(v.rule));
    out.push('\n');
    out
}

fn rule_help(rule: screen::Rule) -> &'static str {
    use screen::Rule::*;
    match rule {
        PermissionDialog => "why: a question stands over numbered options with a selection marker — a dialog waits for the user.",
        PermissionWait => "why: the agent says it waits for permission.",
        QuestionDialog => "why: a question or plan dialog is open (its footer: `Enter to select · ↑/↓ to navigate`) — the agent waits for the user's choice.",
        FooterActivity => "why: the footer shows `esc to interrupt`, which Claude Code only shows while a turn runs; it outranks any banner above.",
        Spinner => "why: the bottom-most status line is a spinner (glyph, verb, `…`).",
        Retrying => "why: the agent is retrying an API call.",
        BackgroundAgents => "why: the agent waits for background agents to finish.",
        PromptEcho => "why: a prompt was submitted below the last status line, so a new turn runs.",
        Banner => "why: the bottom-most status line has the finished-banner shape (glyph, verb, `for`, duration). A screen done is a guess until the transcript or a hook confirms it.",
        Interrupted => "why: the turn was interrupted (Escape).",
        ApiError => "why: an API error ended the turn.",
        User(_) => "why: the first screen rule of the agent's rules file that matches its region said so. A screen done is a guess until a hook or a report confirms it.",
        NoStatus => "why: no status line and no activity on screen.",
    }
}

/// Explains a transcript file.
pub fn transcript(path: &Path, agent: Option<AgentKind>) -> Result<String> {
    super::rules();
    let kind = agent.unwrap_or_else(|| turnstile_host::report::kind_of_transcript(path));
    let log = turnstile_host::report::log_named(path, kind)?;
    let v = turnstile_host::report::classify_file(&log, kind, true)?;
    let mut out = format!("state: {}\nsource: transcript\n", v.state);
    if let Some(c) = v.candidate {
        let _ = writeln!(
            out,
            "candidate: {c} (needs a Stop hook, a quiet screen or an idle session to confirm)"
        );
    }
    match (v.line, v.offset) {
        (_, Some(next)) if kind.log().positions_are_rows() => {
            let _ = writeln!(out, "decided by the session's row {} (its seq)", next.saturating_sub(1));
        }
        (Some(line), Some(end)) => {
            let _ = writeln!(out, "decided by line {line} (ends at byte {end})");
        }
        (None, Some(end)) => {
            let _ = writeln!(out, "decided by the line ending at byte {end}");
        }
        _ => out.push_str("no deciding line\n"),
    }
    let _ = writeln!(out, "why: {}", v.reason);
    let _ = writeln!(
        out,
        "pending tool calls: {}, background agents: {}",
        v.pending_tools, v.background_agents
    );
    if let Some(sid) = &v.session_id {
        let _ = writeln!(out, "session: {sid}");
    }
    if let Some(answer) = &v.answer {
        let _ = writeln!(out, "answer ({} chars):\n{answer}", answer.chars().count());
    }
    Ok(out)
}
