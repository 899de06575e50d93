//! The incremental transcript classifier: feed appended bytes, read the verdict.
//!
//! Complete lines are turned into [`Event`]s and folded into the state of the
//! current turn; a half-written last line is held until its newline. The work
//! is proportional to the new bytes. The same rules serve the cold path
//! ([`super::tail`]), which runs this classifier from the last turn's start.

use super::line::{self, AssistantPart, Event, LineMeta, Stop};
use crate::text::first_line;
use crate::transcript::lines::{LineBuffer, Piece, MAX_LINE_BYTES};
use crate::transcript::TranscriptVerdict;
use crate::verdict::State;
use std::collections::{HashSet, VecDeque};

/// How many recent `parentUuid`s are remembered to recognise a prompt that
/// was written after the lines that answer it (a late prompt is seen within
/// a few lines of its first answer).
pub const LATE_PROMPT_WINDOW: usize = 64;

/// Where the verdict-deciding line sits in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LinePos {
    /// 1-based line number, when known (the cold path may start mid-file).
    pub number: Option<u64>,
    /// Byte offset of the line's start.
    pub start: u64,
    /// Byte offset just after the line's newline.
    pub end: u64,
}

/// The state of the current turn, folded from events.
#[derive(Debug, Clone, Default)]
struct Turn {
    started: bool,
    ended: Option<State>,
    pending_tools: Vec<String>,
    /// The pending calls that wait for the user, with what they ask.
    questions: Vec<(String, String)>,
    background_agents: usize,
    /// Tool calls counted in `background_agents` (not counted twice when
    /// their result confirms the launch).
    background_calls: Vec<String>,
    response: Response,
    end_marker: Option<&'static str>,
    /// Ids of the lines of this turn seen so far.
    uuids: HashSet<String>,
    /// Lines of this turn that a seen answer or tool result follows but that
    /// are not written yet (old releases flush lines out of order: the
    /// final answer may land before the tool call that started an agent).
    missing: Vec<String>,
}

/// The latest assistant response (all lines sharing one `message.id`).
#[derive(Debug, Clone, Default)]
struct Response {
    message_id: Option<String>,
    texts: Vec<String>,
    has_tool_use: bool,
    stop: Stop,
}

impl Response {
    fn is_final_shaped(&self) -> bool {
        !self.has_tool_use && self.stop != Stop::Continues && self.message_id.is_some()
    }
}

/// Incremental classifier of one transcript file.
#[derive(Debug, Clone, Default)]
pub struct Classifier {
    lines: LineBuffer,
    offset: u64,
    line_number: Option<u64>,
    turn: Turn,
    decided_by: Option<(LinePos, String)>,
    decided_at: Option<String>,
    session_id: Option<String>,
    invalid_lines: u64,
    last_invalid: Option<(LinePos, String)>,
    recent_parents: VecDeque<String>,
}

impl Classifier {
    /// A classifier for a file read from its first byte.
    pub fn new() -> Self {
        Classifier {
            line_number: Some(0),
            ..Classifier::default()
        }
    }

    /// A classifier that starts at `offset` (a line start) of a file whose
    /// earlier lines it will not see; `lines_before` is how many there are,
    /// when known (line numbers are reported only then).
    pub fn starting_at(offset: u64, lines_before: Option<u64>) -> Self {
        Classifier {
            offset,
            line_number: if offset == 0 { Some(0) } else { lines_before },
            ..Classifier::default()
        }
    }

    /// Bytes consumed so far as complete lines (the next line's start).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Bytes of a half-written last line being held.
    pub fn pending_bytes(&self) -> usize {
        self.lines.pending_bytes()
    }

    /// Feeds bytes appended to the file. Only complete lines change the verdict.
    pub fn feed(&mut self, bytes: &[u8]) {
        let mut lines = std::mem::take(&mut self.lines);
        lines.feed(bytes, MAX_LINE_BYTES, |piece, _| self.finish_line(piece));
        self.lines = lines;
    }

    fn finish_line(&mut self, piece: Piece<'_>) {
        let pos = self.advance(piece.file_len());
        match piece {
            Piece::TooLong(_) => self.note_invalid(pos, format!("line longer than {MAX_LINE_BYTES} bytes skipped")),
            Piece::Line(line) => self.apply(pos, line),
        }
    }

    fn advance(&mut self, len: u64) -> LinePos {
        let start = self.offset;
        self.offset += len;
        self.line_number = self.line_number.map(|n| n + 1);
        LinePos {
            number: self.line_number,
            start,
            end: self.offset,
        }
    }

    fn note_invalid(&mut self, pos: LinePos, reason: String) {
        self.invalid_lines += 1;
        self.last_invalid = Some((pos, reason));
    }

    fn apply(&mut self, pos: LinePos, bytes: &[u8]) {
        let (event, mut meta) = line::parse(bytes);
        if meta.session_id.is_some() {
            self.session_id = meta.session_id.take();
        }
        let late_prompt = event == Event::Prompt && self.answered_already(&meta);
        if event == Event::Prompt && !late_prompt {
            self.turn = Turn::default();
        }
        self.link(&event, &meta);
        self.remember_parent(&mut meta);
        let decided = match event {
            Event::Ignored(_) => return,
            Event::Invalid(reason) => return self.note_invalid(pos, reason),
            Event::Prompt if late_prompt => self.on_late_prompt(),
            Event::Prompt => self.on_prompt(),
            Event::ToolResults { ids, launched_agent } => self.on_tool_results(&ids, launched_agent),
            Event::Interrupt => self.on_end(State::Interrupted, "the user interrupted the turn"),
            Event::ApiError(text) => self.on_end(State::Failed, &format!("API error: {}", first_line(&text))),
            Event::TaskNotification => self.on_task_notification(),
            Event::Assistant(part) => self.on_assistant(part),
            Event::TurnEnded(marker) => self.on_turn_end_marker(marker),
        };
        if let Some(why) = decided {
            self.decided_by = Some((pos, why));
            self.decided_at = meta.timestamp;
        }
    }

    /// Notes the line's place in the conversation: its own id ends the wait
    /// for it; an answer or tool result whose parent line is not seen yet
    /// makes the turn wait for that line.
    fn link(&mut self, event: &Event, meta: &LineMeta) {
        let turn = &mut self.turn;
        if let Some(id) = &meta.uuid {
            turn.missing.retain(|m| m != id);
            turn.uuids.insert(id.clone());
        }
        let links = matches!(event, Event::Assistant(_) | Event::ToolResults { .. });
        if let (true, Some(parent)) = (links, &meta.parent_uuid) {
            if !turn.uuids.contains(parent) && !turn.missing.contains(parent) {
                turn.missing.push(parent.clone());
            }
        }
    }

    /// True when a line already seen names this line as its parent: it was
    /// written late (old releases flush a session's first prompt after the
    /// lines that answer it).
    fn answered_already(&self, meta: &LineMeta) -> bool {
        meta.uuid.as_ref().is_some_and(|id| self.recent_parents.contains(id))
    }

    fn remember_parent(&mut self, meta: &mut LineMeta) {
        if let Some(parent) = meta.parent_uuid.take() {
            if self.recent_parents.len() == LATE_PROMPT_WINDOW {
                self.recent_parents.pop_front();
            }
            self.recent_parents.push_back(parent);
        }
    }

    /// The prompt of the turn under way, written after its first answers:
    /// the turn goes on (a reset would forget its tool calls and agents).
    fn on_late_prompt(&mut self) -> Option<String> {
        self.turn.started = true;
        None
    }

    fn on_prompt(&mut self) -> Option<String> {
        // The turn was reset before the prompt's own id was noted.
        self.turn.started = true;
        Some("user prompt: a turn started".into())
    }

    fn on_tool_results(&mut self, ids: &[String], launched_agent: bool) -> Option<String> {
        let turn = &mut self.turn;
        turn.started = true;
        turn.pending_tools.retain(|p| !ids.contains(p));
        turn.questions.retain(|(id, _)| !ids.contains(id));
        if launched_agent {
            // New releases may put an agent in the background on their own.
            for id in ids {
                if !turn.background_calls.contains(id) {
                    turn.background_calls.push(id.clone());
                    turn.background_agents += 1;
                }
            }
        }
        Some(format!("{} tool result(s) returned to the model", ids.len()))
    }

    fn on_end(&mut self, state: State, why: &str) -> Option<String> {
        self.turn.started = true;
        self.turn.ended = Some(state);
        self.turn.pending_tools.clear();
        self.turn.questions.clear();
        Some(why.to_owned())
    }

    fn on_task_notification(&mut self) -> Option<String> {
        self.turn.started = true;
        self.turn.ended = None;
        self.turn.background_agents = self.turn.background_agents.saturating_sub(1);
        self.turn.response = Response::default();
        self.turn.end_marker = None;
        Some("a background task reported back: the turn goes on".into())
    }

    fn on_assistant(&mut self, part: AssistantPart) -> Option<String> {
        let turn = &mut self.turn;
        turn.started = true;
        turn.ended = None;
        if part.message_id.is_none() || part.message_id != turn.response.message_id {
            // A new API response: the model has seen every earlier tool result.
            turn.pending_tools.clear();
            turn.questions.clear();
            turn.end_marker = None;
            turn.response = Response {
                message_id: part.message_id.or_else(|| Some(String::new())),
                ..Response::default()
            };
        }
        let response = &mut turn.response;
        response.texts.extend(part.texts);
        if part.stop != Stop::Unknown {
            response.stop = part.stop;
        }
        for tool in part.tool_uses {
            response.has_tool_use = true;
            if tool.background_agent {
                turn.background_agents += 1;
                turn.background_calls.push(tool.id.clone());
            }
            if let Some(asks) = tool.asks {
                turn.questions.push((tool.id.clone(), asks));
            }
            turn.pending_tools.push(tool.id);
        }
        Some(if response.has_tool_use {
            "assistant called a tool".into()
        } else {
            match response.stop {
                Stop::Final => "final assistant answer (stop_reason ends the turn)".into(),
                Stop::Continues => "assistant text; a tool call follows (stop_reason tool_use)".into(),
                Stop::Unknown => "assistant text without a stop reason".into(),
            }
        })
    }

    fn on_turn_end_marker(&mut self, marker: &'static str) -> Option<String> {
        let turn = &mut self.turn;
        let already_final = turn.response.stop == Stop::Final;
        if already_final || turn.ended.is_some() || !turn.response.is_final_shaped() || !turn.pending_tools.is_empty() {
            return None;
        }
        turn.end_marker = Some(marker);
        Some(format!("{marker} confirms the turn ended"))
    }

    /// The verdict after everything fed so far.
    pub fn verdict(&self) -> TranscriptVerdict {
        let (state, candidate, answer, explanation) = self.judge();
        let (pos, why) = match &self.decided_by {
            Some((pos, why)) => (Some(*pos), why.as_str()),
            None => (None, ""),
        };
        let mut reason = match pos {
            Some(_) if !why.is_empty() => format!("{explanation} ({why})"),
            _ => explanation,
        };
        if let Some((p, why)) = &self.last_invalid {
            reason.push_str(&format!(
                "; {} unreadable line(s), the last {}: {why}",
                self.invalid_lines,
                describe_pos(*p)
            ));
        }
        TranscriptVerdict {
            state,
            reason,
            session_id: self.session_id.clone(),
            since: self.decided_at.clone(),
            answer,
            candidate,
            line: pos.and_then(|p| p.number),
            offset: pos.map(|p| p.end),
            pending_tools: self.turn.pending_tools.len(),
            background_agents: self.turn.background_agents,
            invalid_lines: self.invalid_lines,
        }
    }

    /// (state, candidate, answer, explanation) from the current turn.
    fn judge(&self) -> (State, Option<State>, Option<String>, String) {
        let turn = &self.turn;
        if !turn.started {
            let why = if self.offset == 0 {
                "empty transcript"
            } else {
                "no prompt yet"
            };
            return (State::Unknown, None, None, why.into());
        }
        if let Some(end) = turn.ended {
            return (end, None, None, format!("turn {end}"));
        }
        let response = &turn.response;
        let asking = turn.questions.iter().find(|(id, _)| turn.pending_tools.contains(id));
        if let Some((_, asks)) = asking {
            // The call waits for the user's answer: the turn goes on after it.
            return (State::Waiting, None, None, asks.clone());
        }
        if !response.is_final_shaped() || !turn.pending_tools.is_empty() {
            let why = match turn.pending_tools.len() {
                0 => "turn in progress".to_owned(),
                n => format!("{n} tool call(s) without a result"),
            };
            return (State::Working, None, None, why);
        }
        if let Some(missing) = turn.missing.first() {
            let why = format!("the answer follows line {missing}, not written yet (out-of-order write)");
            return (State::Working, None, None, why);
        }
        let answer = response.texts.join("\n\n");
        if turn.background_agents > 0 {
            let why = format!("{} background agent(s) have not reported back", turn.background_agents);
            return (State::Working, None, None, why);
        }
        match (response.stop, turn.end_marker) {
            (Stop::Final, _) => (State::Done, None, Some(answer), "turn done".into()),
            (_, Some(marker)) => (
                State::Done,
                None,
                Some(answer),
                format!("turn done, confirmed by {marker}"),
            ),
            _ => (
                State::Working,
                Some(State::Done),
                Some(answer),
                "answer without a stop reason: maybe final, maybe a preamble (old release); needs confirmation".into(),
            ),
        }
    }
}

fn describe_pos(p: LinePos) -> String {
    match p.number {
        Some(n) => format!("line {n}"),
        None => format!("at byte {}", p.start),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROMPT: &str = r#"{"type":"user","sessionId":"s","message":{"role":"user","content":"go"}}"#;
    const PREAMBLE: &str = r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"Let me check."}],"stop_reason":"tool_use"}}"#;
    const TOOL: &str = r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}],"stop_reason":"tool_use"}}"#;
    const RESULT: &str =
        r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}}"#;
    const FINAL: &str = r#"{"type":"assistant","message":{"id":"m2","content":[{"type":"text","text":"All done."}],"stop_reason":"end_turn"}}"#;
    const OLD_FINAL: &str = r#"{"type":"assistant","message":{"id":"m2","content":[{"type":"text","text":"All done."}],"stop_reason":null}}"#;
    const TURN_DURATION: &str = r#"{"type":"system","subtype":"turn_duration","durationMs":5}"#;

    fn run(lines: &[&str]) -> TranscriptVerdict {
        let mut c = Classifier::new();
        for l in lines {
            c.feed(l.as_bytes());
            c.feed(b"\n");
        }
        c.verdict()
    }

    #[test]
    fn empty_transcript_is_unknown() {
        assert_eq!(run(&[]).state, State::Unknown);
    }

    #[test]
    fn prompt_then_tool_then_final_answer() {
        assert_eq!(run(&[PROMPT]).state, State::Working);
        assert_eq!(run(&[PROMPT, PREAMBLE]).state, State::Working);
        assert_eq!(run(&[PROMPT, PREAMBLE, TOOL]).state, State::Working);
        assert_eq!(run(&[PROMPT, PREAMBLE, TOOL, RESULT]).state, State::Working);
        let v = run(&[PROMPT, PREAMBLE, TOOL, RESULT, FINAL]);
        assert_eq!(v.state, State::Done);
        assert_eq!(v.answer.as_deref(), Some("All done."));
        assert_eq!(v.line, Some(5));
    }

    /// Issue 45: a pending question or plan call waits for the user; its
    /// answer (the tool result) lets the turn go on, and only the turn's
    /// real end is done.
    #[test]
    fn a_pending_question_or_plan_is_waiting_with_what_it_asks() {
        let ask = r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"q1","name":"AskUserQuestion","input":{"questions":[{"question":"Which database?","header":"DB","options":[{"label":"Postgres"},{"label":"SQLite"}],"multiSelect":false}]}}],"stop_reason":"tool_use"}}"#;
        let answered = r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"q1","content":"User answered: Postgres"}]}}"#;
        let final_answer = r#"{"type":"assistant","message":{"id":"m2","content":[{"type":"text","text":"Using Postgres."}],"stop_reason":"end_turn"}}"#;
        let v = run(&[PROMPT, ask]);
        assert_eq!(v.state, State::Waiting, "{}", v.reason);
        assert!(v.reason.starts_with("asks: Which database?"), "{}", v.reason);
        assert_eq!(v.answer, None, "a question is no answer to route");
        let v = run(&[PROMPT, ask, answered]);
        assert_eq!(v.state, State::Working, "{}", v.reason);
        let v = run(&[PROMPT, ask, answered, final_answer]);
        assert_eq!((v.state, v.answer.as_deref()), (State::Done, Some("Using Postgres.")));

        let plan = r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"Here is the plan."},{"type":"tool_use","id":"p1","name":"ExitPlanMode","input":{"plan":"1. a\n2. b"}}],"stop_reason":"tool_use"}}"#;
        let v = run(&[PROMPT, plan]);
        assert_eq!(v.state, State::Waiting, "{}", v.reason);
        assert!(v.reason.starts_with("plan ready: approve?"), "{}", v.reason);
    }

    #[test]
    fn pending_tool_use_keeps_working_even_with_final_stop_reason_on_text() {
        let text_then_tool = r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"x"},{"type":"tool_use","id":"t1","name":"Bash","input":{}}],"stop_reason":"end_turn"}}"#;
        assert_eq!(run(&[PROMPT, text_then_tool]).state, State::Working);
    }

    #[test]
    fn metadata_after_the_answer_does_not_change_the_verdict() {
        let v = run(&[
            PROMPT,
            FINAL,
            r#"{"type":"last-prompt"}"#,
            r#"{"type":"mode","mode":"x"}"#,
            "not json at all",
        ]);
        assert_eq!(v.state, State::Done);
        assert_eq!(v.invalid_lines, 1);
        assert!(v.reason.contains("unreadable"));
    }

    #[test]
    fn old_release_final_line_is_only_a_candidate() {
        let v = run(&[PROMPT, OLD_FINAL]);
        assert_eq!(v.state, State::Working);
        assert_eq!(v.candidate, Some(State::Done));
        assert_eq!(v.answer.as_deref(), Some("All done."));
    }

    #[test]
    fn old_release_candidate_confirmed_by_stop_hook_summary() {
        let summary = r#"{"type":"system","subtype":"stop_hook_summary"}"#;
        assert_eq!(run(&[PROMPT, OLD_FINAL, summary]).state, State::Done);
    }

    #[test]
    fn old_release_preamble_is_never_done() {
        let pre = r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"Running it."}],"stop_reason":null}}"#;
        let tool = r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}],"stop_reason":null}}"#;
        assert_ne!(run(&[PROMPT, pre]).state, State::Done);
        let v = run(&[PROMPT, pre, tool, TURN_DURATION]);
        assert_eq!(
            v.state,
            State::Working,
            "a marker never confirms a response that called a tool"
        );
    }

    #[test]
    fn interrupt_and_api_error() {
        let interrupt =
            r#"{"type":"user","message":{"content":[{"type":"text","text":"[Request interrupted by user]"}]}}"#;
        assert_eq!(run(&[PROMPT, TOOL, interrupt]).state, State::Interrupted);
        let err = r#"{"type":"assistant","isApiErrorMessage":true,"message":{"model":"<synthetic>","content":[{"type":"text","text":"API Error: 400"}]}}"#;
        let v = run(&[PROMPT, err]);
        assert_eq!(v.state, State::Failed);
        assert!(v.answer.is_none());
    }

    #[test]
    fn an_answer_written_before_the_lines_it_follows_is_not_done() {
        // 2.1.39, seen in a real run: the final answer (no stop reason) was
        // flushed before the text and the background agent call it follows,
        // and the Stop hook ran in between.
        let prompt = r#"{"type":"user","uuid":"p","parentUuid":null,"message":{"content":"bg:6"}}"#;
        let answer = r#"{"type":"assistant","uuid":"a4","parentUuid":"r3","message":{"id":"m4","content":[{"type":"text","text":"Started it."}]}}"#;
        let early = run(&[prompt, answer]);
        assert_eq!(
            (early.state, early.candidate),
            (State::Working, None),
            "{}",
            early.reason
        );
        assert!(early.reason.contains("not written yet"), "{}", early.reason);
        let text = r#"{"type":"assistant","uuid":"a2","parentUuid":"p","message":{"id":"m2","content":[{"type":"text","text":"Starting."}]}}"#;
        let launch = r#"{"type":"assistant","uuid":"t2","parentUuid":"a2","message":{"id":"m2","content":[{"type":"tool_use","id":"k1","name":"Task","input":{"run_in_background":true}}]}}"#;
        let result = r#"{"type":"user","uuid":"r3","parentUuid":"t2","message":{"content":[{"type":"tool_result","tool_use_id":"k1","content":"Async agent launched successfully."}]}}"#;
        let complete = run(&[prompt, answer, text, launch, result]);
        assert_eq!(complete.state, State::Working, "{}", complete.reason);
        assert_eq!(complete.background_agents, 1, "{}", complete.reason);
        let in_order = run(&[prompt, text, launch, result, answer]);
        assert_eq!(in_order.background_agents, 1);
    }

    #[test]
    fn background_agent_keeps_the_turn_working_until_it_reports_back() {
        let launch = r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"a1","name":"Agent","input":{"run_in_background":true}}],"stop_reason":"tool_use"}}"#;
        let launched = r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"a1","content":"Async agent launched"}]}}"#;
        let interim = r#"{"type":"assistant","message":{"id":"m2","content":[{"type":"text","text":"Started an agent."}],"stop_reason":"end_turn"}}"#;
        let note = r#"{"type":"user","message":{"content":"<task-notification>done</task-notification>"}}"#;
        let after = r#"{"type":"assistant","message":{"id":"m3","content":[{"type":"text","text":"The agent found it."}],"stop_reason":"end_turn"}}"#;
        let v = run(&[PROMPT, launch, launched, interim, TURN_DURATION]);
        assert_eq!(v.state, State::Working);
        assert_eq!(v.background_agents, 1);
        assert_eq!(
            run(&[PROMPT, launch, launched, interim, TURN_DURATION, note]).state,
            State::Working
        );
        let v = run(&[PROMPT, launch, launched, interim, TURN_DURATION, note, after]);
        assert_eq!(
            (v.state, v.answer.as_deref()),
            (State::Done, Some("The agent found it."))
        );
    }

    #[test]
    fn an_agent_the_release_put_in_the_background_counts_once() {
        let call = r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"a1","name":"Agent","input":{"prompt":"x"}}],"stop_reason":"tool_use"}}"#;
        let launched = r#"{"type":"user","toolUseResult":{"isAsync":true,"status":"async_launched"},"message":{"content":[{"type":"tool_result","tool_use_id":"a1","content":"Async agent launched successfully."}]}}"#;
        let answer = r#"{"type":"assistant","message":{"id":"m2","content":[{"type":"text","text":"Started."}],"stop_reason":"end_turn"}}"#;
        let v = run(&[PROMPT, call, launched, answer]);
        assert_eq!((v.state, v.background_agents), (State::Working, 1));
        let asked = call.replace(
            r#""input":{"prompt":"x"}"#,
            r#""input":{"prompt":"x","run_in_background":true}"#,
        );
        let v = run(&[PROMPT, &asked, launched, answer]);
        assert_eq!(v.background_agents, 1, "asked for and confirmed: one agent");
        let note = r#"{"type":"user","message":{"content":"<task-notification>done</task-notification>"}}"#;
        let done = r#"{"type":"assistant","message":{"id":"m3","content":[{"type":"text","text":"Reported."}],"stop_reason":"end_turn"}}"#;
        assert_eq!(run(&[PROMPT, call, launched, answer, note, done]).state, State::Done);
    }

    #[test]
    fn sidechain_answer_never_ends_the_main_turn() {
        let side = r#"{"type":"assistant","isSidechain":true,"message":{"id":"s1","content":[{"type":"text","text":"sub done"}],"stop_reason":"end_turn"}}"#;
        assert_eq!(run(&[PROMPT, TOOL, side]).state, State::Working);
    }

    #[test]
    fn answer_joins_every_text_block_of_the_final_response_only() {
        let a = r#"{"type":"assistant","message":{"id":"m2","content":[{"type":"text","text":"Part one."}],"stop_reason":"end_turn"}}"#;
        let b = r#"{"type":"assistant","message":{"id":"m2","content":[{"type":"text","text":"Part two."}],"stop_reason":"end_turn"}}"#;
        let v = run(&[PROMPT, PREAMBLE, TOOL, RESULT, a, b]);
        assert_eq!(v.answer.as_deref(), Some("Part one.\n\nPart two."));
    }

    #[test]
    fn half_written_line_is_held_until_its_newline() {
        let mut c = Classifier::new();
        c.feed(PROMPT.as_bytes());
        c.feed(b"\n");
        c.feed(&FINAL.as_bytes()[..20]);
        assert_eq!(c.verdict().state, State::Working);
        assert_eq!(c.pending_bytes(), 20);
        c.feed(&FINAL.as_bytes()[20..]);
        assert_eq!(c.verdict().state, State::Working);
        c.feed(b"\r\n");
        assert_eq!(c.verdict().state, State::Done);
        assert_eq!(c.offset() as usize, PROMPT.len() + FINAL.len() + 3);
    }

    #[test]
    fn new_prompt_after_done_is_working_and_drops_the_old_answer() {
        let v = run(&[PROMPT, FINAL, PROMPT]);
        assert_eq!((v.state, v.answer), (State::Working, None));
    }

    #[test]
    fn session_id_comes_from_the_lines() {
        assert_eq!(run(&[PROMPT]).session_id.as_deref(), Some("s"));
    }
}
