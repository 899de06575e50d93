//! Replays every real recording in `tests/fixtures/{claude-code,codex,
//! gemini,qwen,copilot}`: every transcript (or rollout) prefix (line
//! boundaries and cuts inside lines) and every screen frame (with its
//! terminal title, for Codex). Nothing may say `done` before the turn had
//! finished, and the incremental and cold classifiers must agree on every
//! prefix.

use serde_json::Value;
use std::io::Cursor;
use std::path::PathBuf;
use turnstile_core::agent::claude::transcript::{classify_tail, TailOptions};
use turnstile_core::agent::AgentKind;
use turnstile_core::transcript::TranscriptVerdict;
use turnstile_core::{ansi, State};

/// Every recording of one agent kind.
fn recordings(folder: &str) -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(folder);
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("fixtures folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("truth.json").exists())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 5, "expected the recorded fixtures in {}", root.display());
    dirs
}

/// Every recording, with its agent kind.
fn corpus() -> Vec<(PathBuf, AgentKind)> {
    let claude = recordings("claude-code").into_iter().map(|d| (d, AgentKind::Claude));
    claude
        .chain(recordings("codex").into_iter().map(|d| (d, AgentKind::Codex)))
        .chain(recordings("gemini").into_iter().map(|d| (d, AgentKind::Gemini)))
        .chain(recordings("qwen").into_iter().map(|d| (d, AgentKind::Qwen)))
        .chain(recordings("copilot").into_iter().map(|d| (d, AgentKind::Copilot)))
        .chain(recordings("opencode").into_iter().map(|d| (d, AgentKind::OpenCode)))
        .chain(recordings("kilo").into_iter().map(|d| (d, AgentKind::Kilo)))
        .collect()
}

fn json(path: PathBuf) -> Value {
    serde_json::from_slice(&std::fs::read(&path).expect("fixture file")).expect("fixture JSON")
}

/// The turn that is current at a line boundary `offset`.
fn current_turn(turns: &[Value], offset: u64) -> Option<&Value> {
    turns
        .iter()
        .rev()
        .find(|t| t["prompt_end"].as_u64().is_some_and(|e| offset >= e))
}

/// Done is allowed once the turn's outcome line (a done) is complete.
fn done_allowed(turns: &[Value], offset: u64) -> bool {
    current_turn(turns, offset)
        .is_some_and(|t| t["outcome"] == "done" && t["outcome_offset"].as_u64().is_some_and(|o| offset >= o))
}

/// Line boundaries plus three cuts inside every line.
fn cut_points(data: &[u8]) -> Vec<(usize, usize)> {
    let mut cuts = vec![(0, 0)];
    let mut start = 0;
    while start < data.len() {
        let end = memchr_newline(data, start);
        for cut in [start + 1, (start + end) / 2, end.saturating_sub(1)] {
            if cut > start && cut < end {
                cuts.push((cut, start));
            }
        }
        cuts.push((end, end));
        start = end;
    }
    cuts
}

fn memchr_newline(data: &[u8], from: usize) -> usize {
    data[from..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(data.len(), |i| from + i + 1)
}

fn incremental(prefix: &[u8], kind: AgentKind) -> TranscriptVerdict {
    let mut c = kind.transcript_classifier();
    // Feed in uneven pieces, as appends arrive.
    for piece in prefix.chunks(777) {
        c.feed(piece);
    }
    c.verdict()
}

fn cold(prefix: &[u8], kind: AgentKind) -> TranscriptVerdict {
    let mut bytes = Cursor::new(prefix);
    if kind != AgentKind::Claude {
        // Every other kind's cold path, through the agent model.
        return kind
            .log()
            .classify_log(&mut bytes, false)
            .expect("in-memory read")
            .verdict();
    }
    let options = TailOptions {
        chunk_bytes: 4096,
        ..TailOptions::default()
    };
    classify_tail(&mut Cursor::new(prefix), options)
        .expect("in-memory read")
        .verdict
}

#[test]
fn no_transcript_prefix_says_done_before_the_turn_finished() {
    for (dir, kind) in corpus() {
        let truth = json(dir.join("truth.json"));
        let turns = truth["turns"].as_array().expect("turns");
        let data = std::fs::read(dir.join("transcript.jsonl")).expect("transcript");
        for (cut, line_start) in cut_points(&data) {
            let v = incremental(&data[..cut], kind);
            if v.state == State::Done {
                assert!(
                    done_allowed(turns, line_start as u64),
                    "{}: false done at byte {cut}: {}",
                    dir.display(),
                    v.reason
                );
            }
        }
    }
}

#[test]
fn incremental_and_cold_agree_on_every_prefix() {
    for (dir, kind) in corpus() {
        let data = std::fs::read(dir.join("transcript.jsonl")).expect("transcript");
        for (cut, _) in cut_points(&data) {
            let (a, b) = (incremental(&data[..cut], kind), cold(&data[..cut], kind));
            assert_eq!(
                (a.state, a.candidate, &a.answer, a.offset),
                (b.state, b.candidate, &b.answer, b.offset),
                "{} at byte {cut}",
                dir.display()
            );
        }
    }
}

#[test]
fn every_finished_turn_yields_its_recorded_answer() {
    for (dir, kind) in corpus() {
        let truth = json(dir.join("truth.json"));
        let data = std::fs::read(dir.join("transcript.jsonl")).expect("transcript");
        for turn in truth["turns"].as_array().expect("turns") {
            // Codex's task_complete is the end itself; Claude's answer may
            // need its confirming line.
            let end = match kind {
                AgentKind::Claude => turn["confirm_offset"].as_u64(),
                _ => turn["outcome_offset"].as_u64(),
            };
            let (Some(answer), Some(end)) = (turn["answer"].as_str(), end) else {
                continue;
            };
            let v = cold(&data[..end as usize], kind);
            // Gemini's and Qwen's logs alone hold a candidate: the hook or
            // the screen confirms it.
            let said = match kind {
                AgentKind::Gemini | AgentKind::Qwen => v.candidate.unwrap_or(v.state),
                _ => v.state,
            };
            assert_eq!(said, State::Done, "{}: {}", dir.display(), v.reason);
            assert_eq!(v.answer.as_deref(), Some(answer), "{}", dir.display());
        }
    }
}

/// Screen truth: done may only show from a done turn's first finished frame
/// on (minus half a second, the scorer's edge tolerance) until half a second
/// after the next prompt.
fn screen_done_allowed(turns: &[Value], t: f64) -> bool {
    let done_at = |at: f64| {
        let current = turns
            .iter()
            .rev()
            .find(|turn| turn["prompt_t"].as_f64().is_some_and(|p| at >= p));
        current.is_some_and(|turn| {
            turn["outcome"] == "done" && turn["screen_over_t"].as_f64().is_some_and(|over| t >= over - 0.5)
        })
    };
    done_at(t) || done_at(t - 0.5)
}

#[test]
fn no_screen_frame_says_done_before_the_turn_finished() {
    let mut banners_seen = 0;
    for (dir, kind) in corpus() {
        let truth = json(dir.join("truth.json"));
        let turns = truth["turns"].as_array().expect("turns");
        let frames = json(dir.join("frames.json"));
        let mut screen_text = String::new();
        for frame in frames["frames"].as_array().expect("frames") {
            if let Some(s) = frame["screen"].as_str() {
                screen_text = ansi::strip(s);
            }
            let rows: Vec<String> = screen_text.lines().map(str::to_owned).collect();
            let v = kind.classify_screen(&rows, frame["title"].as_str().unwrap_or_default());
            let t = frame["t"].as_f64().expect("t");
            if v.state == State::Done {
                banners_seen += 1;
                assert!(
                    screen_done_allowed(turns, t),
                    "{}: false screen done at t={t}: {:?}",
                    dir.display(),
                    v.line
                );
            }
        }
    }
    assert!(
        banners_seen > 50,
        "the 2.1.332 recordings show banners; saw {banners_seen}"
    );
}

/// When the agent took a turn's prompt: the later of its typing and the
/// first frame whose log holds the whole prompt. A busy agent (Kilo CLI
/// under load) keeps its home screen up for a second after Enter; no screen
/// can show work the agent has not begun.
fn prompt_taken_t(turn: &Value, frames: &Value) -> f64 {
    let typed = turn["prompt_t"].as_f64().unwrap_or(0.0);
    let Some(end) = turn["prompt_end"].as_u64() else {
        return typed;
    };
    frames["frames"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|f| f["t"].as_f64().unwrap_or(0.0) >= typed && f["transcript_bytes"].as_u64().is_some_and(|b| b >= end))
        .and_then(|f| f["t"].as_f64())
        .map_or(typed, |seen| seen.max(typed))
}

#[test]
fn screen_shows_working_or_waiting_while_every_turn_runs() {
    for (dir, kind) in corpus() {
        let truth = json(dir.join("truth.json"));
        let frames = json(dir.join("frames.json"));
        let turns = truth["turns"].as_array().expect("turns");
        let mut screen_text = String::new();
        for frame in frames["frames"].as_array().expect("frames") {
            if let Some(s) = frame["screen"].as_str() {
                screen_text = ansi::strip(s);
            }
            let t = frame["t"].as_f64().expect("t");
            let running = turns.iter().any(|turn| {
                let (p, over) = (
                    prompt_taken_t(turn, &frames),
                    turn["screen_over_t"].as_f64().unwrap_or(0.0),
                );
                t > p + 0.5 && t < over - 0.5
            });
            if running {
                let rows: Vec<String> = screen_text.lines().map(str::to_owned).collect();
                let v = kind.classify_screen(&rows, frame["title"].as_str().unwrap_or_default());
                // A turn that waits for permission is still running.
                assert!(
                    matches!(v.state, State::Working | State::Waiting),
                    "{} t={t}: {:?} {:?} {:?}",
                    dir.display(),
                    v.state,
                    v.rule,
                    v.line
                );
            }
        }
    }
}

/// A real 2.1.39 transcript (from an e2e run with hooks) whose first prompt
/// was flushed *after* the lines answering it: a background agent launch,
/// the interim answer and the Stop hook's summary come first. The late
/// prompt must not reset the turn (it would forget the background agent and
/// say done while the agent still runs), cold or incremental.
#[test]
fn a_prompt_written_after_its_answers_does_not_reset_the_turn() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/transcripts/2.1.39-background-late-prompt.jsonl");
    let data = std::fs::read(path).expect("transcript");
    let final_answer = "The background agent reported back.";
    let final_line_end = {
        let at = memchr::memmem::find(&data, final_answer.as_bytes()).expect("final answer");
        memchr_newline(&data, at)
    };
    for (cut, line_start) in cut_points(&data) {
        for v in [
            incremental(&data[..cut], AgentKind::Claude),
            cold(&data[..cut], AgentKind::Claude),
        ] {
            if line_start < final_line_end {
                assert_ne!(v.state, State::Done, "false done at byte {cut}: {}", v.reason);
            }
        }
    }
    let v = cold(&data, AgentKind::Claude);
    assert_eq!(
        (v.state, v.answer.as_deref()),
        (State::Done, Some(final_answer)),
        "{}",
        v.reason
    );
    let summary_end = memchr_newline(&data, memchr::memmem::find(&data, b"stop_hook_summary").unwrap());
    let at_summary = cold(&data[..summary_end], AgentKind::Claude);
    assert_eq!(at_summary.background_agents, 1, "{}", at_summary.reason);
}
