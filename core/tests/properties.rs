//! Property tests: no input makes a parser panic, and how bytes are split
//! into appends never changes the transcript verdict.

use proptest::prelude::*;
use std::io::Cursor;
use turnstile_core::agent::claude::screen;
use turnstile_core::agent::claude::transcript::{classify_tail, Classifier, TailOptions};
use turnstile_core::agent::codex::rollout::{classify_rollout_tail, RolloutClassifier};
use turnstile_core::agent::copilot::events::{classify_events_tail, EventsClassifier};
use turnstile_core::agent::gemini::chat::{classify_chat, ChatClassifier};
use turnstile_core::agent::qwen::chat::{classify_chat_tail, QwenChatClassifier};
use turnstile_core::agent::AgentKind;
use turnstile_core::ansi;

const FIXTURE: &[u8] = include_bytes!("../../tests/fixtures/claude-code/2.1.39-hooks/transcript.jsonl");

/// Lines that look like transcript lines, mixed with junk, so the parser's
/// deeper branches are reached, not only its JSON error path.
fn transcript_line() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(br#"{"type":"user","message":{"content":"go"}}"#.to_vec()),
        Just(br#"{"type":"assistant","message":{"id":"m","content":[{"type":"tool_use","id":"t","name":"Agent","input":{"run_in_background":true}}]}}"#.to_vec()),
        Just(br#"{"type":"assistant","message":{"id":"n","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn"}}"#.to_vec()),
        Just(br#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t"}]}}"#.to_vec()),
        Just(br#"{"type":"user","message":{"content":"<task-notification>x</task-notification>"}}"#.to_vec()),
        Just(br#"{"type":"system","subtype":"turn_duration"}"#.to_vec()),
        Just(br#"{"type":"assistant","message":{"content":5,"stop_reason":[]},"isSidechain":"yes"}"#.to_vec()),
        proptest::collection::vec(any::<u8>(), 0..200),
    ]
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic_the_transcript_classifiers(bytes in proptest::collection::vec(any::<u8>(), 0..4000)) {
        let mut c = Classifier::new();
        c.feed(&bytes);
        let _ = c.verdict();
        let _ = classify_tail(&mut Cursor::new(&bytes), TailOptions { chunk_bytes: 64, ..TailOptions::default() });
    }

    #[test]
    fn arbitrary_text_never_panics_the_screen_matcher(text in any::<String>()) {
        let plain = ansi::strip(&text);
        let rows: Vec<&str> = plain.lines().collect();
        let _ = screen::classify(&rows);
        let raw: Vec<&str> = text.split('\n').collect();
        let _ = screen::classify(&raw);
    }

    #[test]
    fn structured_lines_agree_incremental_and_cold(lines in proptest::collection::vec(transcript_line(), 0..30)) {
        let mut data = Vec::new();
        for l in &lines {
            data.extend_from_slice(l);
            data.push(b'\n');
        }
        let mut c = Classifier::new();
        c.feed(&data);
        let inc = c.verdict();
        let cold = classify_tail(&mut Cursor::new(&data), TailOptions { chunk_bytes: 97, ..TailOptions::default() }).unwrap().verdict;
        prop_assert_eq!((inc.state, inc.candidate, inc.answer), (cold.state, cold.candidate, cold.answer));
    }

    #[test]
    fn splitting_appends_anywhere_gives_the_same_verdict(cuts in proptest::collection::vec(0usize..FIXTURE.len(), 0..20)) {
        let mut cuts = cuts;
        cuts.sort_unstable();
        let mut c = Classifier::new();
        let mut from = 0;
        for cut in cuts.into_iter().chain([FIXTURE.len()]) {
            c.feed(&FIXTURE[from..cut]);
            from = cut;
        }
        let mut whole = Classifier::new();
        whole.feed(FIXTURE);
        prop_assert_eq!(c.verdict(), whole.verdict());
    }
}

proptest! {
    /// Issue 21: routed text is inert. No output starts with a command
    /// prefix (after whitespace) or holds a control or format character,
    /// and sanitizing twice changes nothing.
    #[test]
    fn sanitized_text_is_inert(text in r"(\PC|[\x00-\x1f\x7f\u{80}-\u{9f}\u{200b}-\u{200f}\u{202a}-\u{202e}\u{2066}-\u{2069}\u{feff}\u{e0000}-\u{e007f}/!@#\\ \n\t])*") {
        let out = turnstile_core::flow::sanitize(&text);
        let start = out.trim_start();
        prop_assert!(!start.starts_with(['/', '\\', '!', '@', '#']), "{:?} -> {:?}", text, out);
        prop_assert!(out.chars().all(|c| c == '\n' || c == '\t' || !(c.is_control() || turnstile_core::flow::is_format(c))), "{:?}", out);
        prop_assert_eq!(turnstile_core::flow::sanitize(&out), out.clone());
    }
}

/// Lines that look like Codex rollout, Gemini CLI and Qwen Code chat log lines, mixed
/// with junk, so each parser's deeper branches are reached.
fn agent_log_line() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(br#"{"type":"session_meta","payload":{"id":"s","cwd":"/w"}}"#.to_vec()),
        Just(br#"{"type":"event_msg","payload":{"type":"task_started","turn_id":"t"}}"#.to_vec()),
        Just(br#"{"type":"event_msg","payload":{"type":"task_complete","last_agent_message":"ok"}}"#.to_vec()),
        Just(br#"{"type":"event_msg","payload":{"type":"turn_aborted","reason":"interrupted"}}"#.to_vec()),
        Just(br#"{"type":"event_msg","payload":{"type":"error","message":"boom"}}"#.to_vec()),
        Just(br#"{"sessionId":"s","projectHash":"h","startTime":"t","kind":"main"}"#.to_vec()),
        Just(br#"{"id":"u1","type":"user","content":[{"text":"go"}]}"#.to_vec()),
        Just(br#"{"id":"g1","type":"gemini","content":"done","toolCalls":[]}"#.to_vec()),
        Just(br#"{"$set":{"messages":[]}}"#.to_vec()),
        Just(br#"{"id":"e1","type":"error","content":"HTTP 400"}"#.to_vec()),
        Just(br#"{"id":"i1","type":"info","content":"Request cancelled."}"#.to_vec()),
        Just(br#"{"type":5,"payload":[],"id":{}}"#.to_vec()),
        Just(br#"{"sessionId":"q","type":"user","message":{"role":"user","parts":[{"text":"go"}]}}"#.to_vec()),
        Just(br#"{"type":"assistant","message":{"parts":[{"text":"a"},{"functionCall":{"name":"x"}}]}}"#.to_vec()),
        Just(br#"{"type":"assistant","message":{"parts":[{"text":"done","thought":true},{"text":"ok"}]}}"#.to_vec()),
        Just(br#"{"type":"tool_result","toolCallResult":{"status":"cancelled"}}"#.to_vec()),
        Just(br#"{"type":"system","subtype":"ui_telemetry","systemPayload":{"uiEvent":{"event.name":"qwen-code.api_error","status_code":400}}}"#.to_vec()),
        Just(br#"{"type":"system","subtype":"ui_telemetry","systemPayload":{"uiEvent":{"event.name":"qwen-code.api_error","status_code":"x"}}}"#.to_vec()),
        Just(br#"{"type":"assistant","message":{"parts":7}}"#.to_vec()),
        Just(br#"{"type":"session.start","data":{"sessionId":"c"}}"#.to_vec()),
        Just(br#"{"type":"user.message","data":{"content":"go"}}"#.to_vec()),
        Just(br#"{"type":"assistant.message","data":{"content":"a","toolRequests":[{"name":"bash"}]}}"#.to_vec()),
        Just(br#"{"type":"assistant.message","data":{"content":"ok","toolRequests":[]}}"#.to_vec()),
        Just(br#"{"type":"assistant.turn_end","data":{}}"#.to_vec()),
        Just(br#"{"type":"permission.requested","data":{}}"#.to_vec()),
        Just(br#"{"type":"abort","data":{"reason":"user_abort"}}"#.to_vec()),
        Just(br#"{"type":"session.error","data":{"statusCode":"400"}}"#.to_vec()),
        Just(br#"{"type":"session.usage_checkpoint","data":{"x":["rewind"]}}"#.to_vec()),
        proptest::collection::vec(any::<u8>(), 0..200),
    ]
}

proptest! {
    /// Issue 22: the never-panics properties cover every kind's parsers,
    /// screen rules and input box reading, not only Claude Code's.
    #[test]
    fn arbitrary_logs_never_panic_the_codex_gemini_qwen_and_copilot_classifiers(
        lines in proptest::collection::vec(agent_log_line(), 0..30),
        cuts in proptest::collection::vec(any::<usize>(), 0..8),
    ) {
        let mut data = Vec::new();
        for l in &lines {
            data.extend_from_slice(l);
            data.push(b'\n');
        }
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (data.len() + 1)).collect();
        cuts.sort_unstable();
        let mut rollout = RolloutClassifier::default();
        let mut chat = ChatClassifier::default();
        let mut qwen = QwenChatClassifier::default();
        let mut copilot = EventsClassifier::default();
        let mut from = 0;
        for cut in cuts.into_iter().chain([data.len()]) {
            rollout.feed(&data[from..cut]);
            chat.feed(&data[from..cut]);
            qwen.feed(&data[from..cut]);
            copilot.feed(&data[from..cut]);
            from = cut;
        }
        let mut whole_qwen = QwenChatClassifier::default();
        whole_qwen.feed(&data);
        prop_assert_eq!(qwen.verdict(), whole_qwen.verdict(), "split appends agree (qwen)");
        let cold_qwen = classify_chat_tail(&mut Cursor::new(&data)).map(|c| c.verdict()).unwrap();
        prop_assert_eq!(cold_qwen, whole_qwen.verdict(), "cold and incremental agree (qwen)");
        let mut whole_copilot = EventsClassifier::default();
        whole_copilot.feed(&data);
        prop_assert_eq!(copilot.verdict(), whole_copilot.verdict(), "split appends agree (copilot)");
        let cold_copilot = classify_events_tail(&mut Cursor::new(&data)).map(|c| c.verdict()).unwrap();
        prop_assert_eq!(cold_copilot, whole_copilot.verdict(), "cold and incremental agree (copilot)");
        let mut whole = RolloutClassifier::default();
        whole.feed(&data);
        prop_assert_eq!(rollout.verdict(), whole.verdict(), "split appends agree");
        let _ = chat.verdict();
        let _ = classify_rollout_tail(&mut Cursor::new(&data)).map(|c| c.verdict());
        let _ = classify_chat(&mut Cursor::new(&data)).map(|c| c.verdict());
    }

    #[test]
    fn arbitrary_screens_and_titles_never_panic_any_kind(text in any::<String>(), title in any::<String>()) {
        let plain = ansi::strip(&text);
        let rows: Vec<String> = plain.lines().map(str::to_owned).collect();
        for kind in AgentKind::ALL {
            let _ = kind.classify_screen(&rows, &title);
            let _ = kind.input_box(&rows);
        }
    }
}
