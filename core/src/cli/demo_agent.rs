//! `turnstile demo-agent`: a simulated Claude Code for the demo and the tests.
//!
//! It draws what Claude Code draws (prompt echo, a spinner with rotating
//! invented verbs, tool calls, the finished banner with a verb of its own
//! invention and the ` · done <time>` suffix, API errors, interrupts, a
//! permission dialog) and writes a transcript in the real JSONL format plus
//! a session status file into its own Claude home — no account, no network.

use anyhow::{Context, Result};
use serde_json::{json, Value};
use std::cell::{Cell, RefCell};
use std::fs::{self, OpenOptions};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};
use turnstile_core::agent::AgentKind;
use turnstile_core::host::clock::now_ms;
use turnstile_core::host::home::{ClaudeHome, CodexHome, GeminiHome};

/// What one turn ends with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A normal answer.
    Done,
    /// An API error after retries.
    Fail,
    /// The user pressed Escape.
    Interrupt,
    /// A permission dialog first, approved after a while, then an answer.
    Wait,
}

impl Outcome {
    fn parse(word: &str) -> Option<Outcome> {
        match word.trim() {
            "done" => Some(Outcome::Done),
            "fail" | "failed" => Some(Outcome::Fail),
            "interrupt" | "interrupted" => Some(Outcome::Interrupt),
            "wait" | "waiting" => Some(Outcome::Wait),
            _ => None,
        }
    }
}

/// Options of the simulated agent.
pub struct DemoOptions {
    /// Shown in prompts and answers.
    pub name: String,
    /// Claude home to write into.
    pub home: PathBuf,
    /// Outcomes of the turns, in order (`done,fail,wait,interrupt`); empty: random.
    pub script: String,
    /// Seed of the random outcomes and verbs.
    pub seed: u64,
    /// Time scale: 1.0 is the default pace, 0.5 twice as fast.
    pub pace: f64,
    /// Stop after this many turns (then stay at the prompt).
    pub turns: Option<u32>,
    /// Take prompts typed or pasted into the terminal (routed answers).
    pub listen: bool,
    /// Enters to swallow first (the prompt stays as a draft until the next).
    pub drop_enters: u32,
    /// Input dropped for this long after start (ms).
    pub deaf_ms: u64,
    /// Which agent it plays: Claude Code or Codex CLI (its screen, title
    /// and rollout).
    pub kind: AgentKind,
}

/// Parses `done,fail,…`; a clear error for an unknown word.
pub fn parse_script(script: &str) -> Result<Vec<Outcome>> {
    script
        .split(',')
        .filter(|w| !w.trim().is_empty())
        .map(|w| Outcome::parse(w).with_context(|| format!("unknown outcome `{w}` (use done, fail, interrupt, wait)")))
        .collect()
}

/// Runs the agent until killed (or `turns` are done, then idles).
pub fn run(options: DemoOptions) -> Result<()> {
    let script = parse_script(&options.script)?;
    let mut agent = Agent::new(&options)?;
    let prompts = options
        .listen
        .then(|| listen_to_stdin(options.drop_enters, Duration::from_millis(options.deaf_ms)));
    let mut turn = 0u32;
    loop {
        let scripted_done =
            options.turns.is_some_and(|n| turn >= n) || (!script.is_empty() && turn as usize >= script.len());
        let outcome = if scripted_done {
            None
        } else {
            Some(
                script
                    .get(turn as usize)
                    .copied()
                    .unwrap_or_else(|| agent.random_outcome()),
            )
        };
        if let Some(outcome) = outcome {
            turn += 1;
            agent.turn(turn, outcome, None)?;
        }
        let rest = if outcome.is_some() {
            4.0 + agent.rand(4) as f64
        } else {
            3600.0
        };
        if let Some(prompt) = agent.idle(prompts.as_ref(), rest) {
            turn += 1;
            agent.turn(turn, Outcome::Done, Some(prompt))?;
        }
    }
}

/// What the terminal typed into a listening demo agent.
enum Typed {
    /// Text standing in the input box, not submitted (a swallowed Enter).
    Draft(String),
    /// A submitted prompt.
    Prompt(String),
}

/// Reads the terminal: a bracketed paste (or a typed line) ended by Enter
/// is one prompt. Markers written by turnstile's router arrive as
/// `ESC[200~ … ESC[201~`, then `\r` in a separate write. The first
/// `drop_enters` submissions are swallowed: their text stays as a draft
/// (drawn in the box), which the next Enter (even a bare one) submits.
/// Whatever arrives within `deaf` of the start is dropped.
fn listen_to_stdin(mut drop_enters: u32, deaf: Duration) -> Receiver<Typed> {
    let (tx, rx) = std::sync::mpsc::channel();
    let hearing_from = Instant::now() + deaf;
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut buf = [0u8; 4096];
        let mut pending = Vec::new();
        let mut draft = String::new();
        while let Ok(n) = stdin.read(&mut buf) {
            if n == 0 {
                return;
            }
            if Instant::now() < hearing_from {
                continue;
            }
            pending.extend_from_slice(&buf[..n]);
            while let Some(prompt) = take_prompt(&mut pending) {
                draft.push_str(&prompt);
                let typed = if drop_enters > 0 && !draft.is_empty() {
                    drop_enters -= 1;
                    Typed::Draft(draft.clone())
                } else {
                    Typed::Prompt(std::mem::take(&mut draft))
                };
                if matches!(&typed, Typed::Prompt(p) if p.is_empty()) {
                    continue;
                }
                if tx.send(typed).is_err() {
                    return;
                }
            }
        }
    });
    rx
}

/// Takes one complete prompt off the front of `pending`, if there is one.
fn take_prompt(pending: &mut Vec<u8>) -> Option<String> {
    const START: &[u8] = b"\x1b[200~";
    const END: &[u8] = b"\x1b[201~";
    let text = String::from_utf8_lossy(pending).into_owned();
    let (body, consumed) = if let Some(start) = text.find("\x1b[200~") {
        let end = text[start..].find("\x1b[201~")? + start;
        let after = &text[end + END.len()..];
        let enter = after.find(['\r', '\n'])?;
        (text[start + START.len()..end].to_owned(), end + END.len() + enter + 1)
    } else {
        let enter = text.find(['\r', '\n'])?;
        (text[..enter].to_owned(), enter + 1)
    };
    pending.drain(..consumed.min(pending.len()));
    Some(body.replace("\r\n", "\n").replace('\r', "\n").trim().to_owned())
}

struct Agent {
    kind: AgentKind,
    name: String,
    pace: f64,
    rng: Cell<u64>,
    transcript: PathBuf,
    status_file: PathBuf,
    session_id: String,
    cwd: String,
    history: Vec<String>,
    parent: RefCell<Option<String>>,
    title_frame: Cell<usize>,
    /// A title shown instead of the usual one (Codex's approval).
    title_override: RefCell<Option<String>>,
}

impl Agent {
    fn new(options: &DemoOptions) -> Result<Agent> {
        let cwd = std::env::current_dir().context("no current directory")?;
        let pid = std::process::id();
        let session_id = format!(
            "demo{pid:08x}-{:04x}-4000-8000-{:012x}",
            options.seed & 0xffff,
            now_ms()
        );
        let (transcript, status_file) = match options.kind {
            AgentKind::Claude => {
                let home = ClaudeHome::at(&options.home);
                fs::create_dir_all(home.sessions()).context("cannot create the sessions folder")?;
                (
                    home.project(&cwd).join(format!("{session_id}.jsonl")),
                    home.status_file(pid),
                )
            }
            AgentKind::Codex => {
                let day = CodexHome::at(&options.home).day_folders(now_ms())[1].clone();
                (day.join(format!("rollout-demo-{session_id}.jsonl")), PathBuf::new())
            }
            AgentKind::Gemini => {
                let chats = GeminiHome::at(&options.home).chats(&cwd);
                (chats.join(format!("session-demo-{session_id}.jsonl")), PathBuf::new())
            }
        };
        let folder = transcript.parent().unwrap_or(&cwd).to_path_buf();
        fs::create_dir_all(&folder).with_context(|| format!("cannot create {}", folder.display()))?;
        let agent = Agent {
            kind: options.kind,
            name: options.name.clone(),
            pace: options.pace.max(0.05),
            rng: Cell::new(options.seed.wrapping_mul(6364136223846793005).wrapping_add(pid as u64) | 1),
            transcript,
            status_file,
            session_id,
            cwd: cwd.display().to_string(),
            history: vec![
                format!(" ✻ turnstile demo agent · {}", options.name),
                format!("   {}", cwd.display()),
                String::new(),
            ],
            parent: RefCell::new(None),
            title_frame: Cell::new(0),
            title_override: RefCell::new(None),
        };
        fs::write(&agent.transcript, b"").context("cannot create the transcript")?;
        match agent.kind {
            AgentKind::Codex => agent.append(json!({"timestamp": now_ms().to_string(), "type": "session_meta",
                "payload": {"id": agent.session_id, "cwd": agent.cwd, "cli_version": "demo", "source": "cli"}}))?,
            AgentKind::Gemini => agent.append(json!({"sessionId": agent.session_id, "projectHash": "demo",
                "startTime": now_ms().to_string(), "kind": "main"}))?,
            AgentKind::Claude => {}
        }
        agent.status("idle", None);
        agent.draw(None, false, None);
        Ok(agent)
    }

    fn rand(&self, n: u64) -> u64 {
        let mut x = self.rng.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng.set(x);
        x % n.max(1)
    }

    fn random_outcome(&self) -> Outcome {
        match self.rand(10) {
            0 => Outcome::Fail,
            1 => Outcome::Interrupt,
            2 => Outcome::Wait,
            _ => Outcome::Done,
        }
    }

    /// A verb of its own invention: `Zorbling…` while working, `Zorbled` when done.
    fn verb_stem(&self) -> String {
        const HEADS: &[&str] = &[
            "Flib", "Zor", "Quan", "Mer", "Bli", "Tro", "Spla", "Gron", "Wib", "Skee",
        ];
        const TAILS: &[&str] = &["bert", "dl", "ticul", "vor", "zinn", "mp", "gl", "rk"];
        let head = HEADS[self.rand(HEADS.len() as u64) as usize];
        let tail = TAILS[self.rand(TAILS.len() as u64) as usize];
        format!("{head}{tail}")
    }

    /// Waits up to `secs` (scaled); returns a prompt that arrived meanwhile.
    /// Waits `secs` (paced) for a prompt; a draft typed meanwhile is
    /// drawn in the box.
    fn idle(&self, prompts: Option<&Receiver<Typed>>, secs: f64) -> Option<String> {
        let until = Instant::now() + Duration::from_secs_f64(secs * self.pace);
        let Some(rx) = prompts else {
            std::thread::sleep(until.saturating_duration_since(Instant::now()));
            return None;
        };
        loop {
            match rx.recv_timeout(until.saturating_duration_since(Instant::now())).ok()? {
                Typed::Prompt(prompt) => return Some(prompt),
                Typed::Draft(draft) => self.draw(None, false, Some(draft.lines().next().unwrap_or(""))),
            }
        }
    }

    fn turn(&mut self, n: u32, outcome: Outcome, given: Option<String>) -> Result<()> {
        match self.kind {
            AgentKind::Codex => return self.codex_turn(n, outcome, given),
            AgentKind::Gemini => return self.gemini_turn(n, outcome, given),
            AgentKind::Claude => {}
        }
        let started = Instant::now();
        let received = given.as_ref().map(|p| p.chars().count());
        let prompt = given.unwrap_or_else(|| format!("task {n} for {}", self.name));
        self.history.push(format!("❯ {}", prompt.lines().next().unwrap_or("")));
        self.status("busy", None);
        self.append(self.user_line(json!(prompt)))?;
        let stem = self.verb_stem();
        self.spin(&stem, 1.5, started);
        let tool_id = format!("toolu_demo_{n}");
        let message_id = format!("msg_demo_{n}a");
        self.history.push("● Let me look at that first.".into());
        self.append(self.assistant_line(
            &message_id,
            json!([{"type": "text", "text": "Let me look at that first."}]),
            "tool_use",
        ))?;
        let tool = json!([{"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": "sleep 2", "description": "Think"}}]);
        self.append(self.assistant_line(&message_id, tool, "tool_use"))?;
        self.history.push("● Bash(sleep 2)".into());
        if outcome == Outcome::Wait {
            self.ask_permission(&stem, started);
        }
        self.spin(&stem, 2.0, started);
        if outcome == Outcome::Interrupt {
            return self.interrupted(&tool_id);
        }
        let result = json!([{"type": "tool_result", "tool_use_id": tool_id, "content": "ok"}]);
        self.append(self.user_line(result))?;
        self.history.push("  ⎿  (No output)".into());
        self.spin(&stem, 1.5, started);
        match outcome {
            Outcome::Fail => self.failed(),
            _ => self.done(n, &stem, started, received),
        }
    }

    /// One turn as Codex CLI plays it: its rollout events, its working
    /// line, its approval dialog and title, its `Worked for` line.
    fn codex_turn(&mut self, n: u32, outcome: Outcome, given: Option<String>) -> Result<()> {
        let started = Instant::now();
        let received = given.as_ref().map(|p| p.chars().count());
        let prompt = given.unwrap_or_else(|| format!("task {n} for {}", self.name));
        self.history.push(format!("› {}", prompt.lines().next().unwrap_or("")));
        self.event("task_started", json!({}))?;
        self.item(json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}))?;
        self.spin("", 1.5, started);
        let call = format!("call_demo_{n}");
        self.history.push("• Let me look at that first.".into());
        self.item(json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Let me look at that first."}]}))?;
        self.item(json!({"type": "function_call", "name": "exec_command", "call_id": call, "arguments": "{\"cmd\":\"sleep 2\"}"}))?;
        if outcome == Outcome::Wait {
            self.history.push("• Running sleep 2".into());
            let dialog = [
                "  Would you like to run the following command?",
                "  $ sleep 2",
                "› 1. Yes, proceed (y)",
                "  2. No, and tell Codex what to do differently (esc)",
                "  Press enter to confirm or esc to cancel",
            ];
            self.title_override
                .replace(Some(format!("[ ! ] Action Required | {}", self.name)));
            self.draw_lines(&dialog);
            self.pause(4.0);
            self.title_override.replace(None);
        }
        self.spin("", 2.0, started);
        if outcome == Outcome::Interrupt {
            self.item(json!({"type": "function_call_output", "call_id": call, "output": "aborted by user"}))?;
            self.event("turn_aborted", json!({"reason": "interrupted"}))?;
            self.history
                .push("■ Conversation interrupted - use /feedback if something went wrong".into());
            self.draw(None, false, None);
            return Ok(());
        }
        self.item(json!({"type": "function_call_output", "call_id": call, "output": "ok"}))?;
        self.history.push("• Ran sleep 2".into());
        self.spin("", 1.5, started);
        if outcome == Outcome::Fail {
            let error = "We're currently experiencing high demand, which may cause temporary errors.";
            self.event(
                "task_complete",
                json!({"last_agent_message": null, "error": {"message": error}}),
            )?;
            self.history.push(format!("■ {error}"));
            self.draw(None, false, None);
            return Ok(());
        }
        let answer = self.answer(n, received);
        self.item(
            json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": answer}]}),
        )?;
        self.event("task_complete", json!({"last_agent_message": answer}))?;
        self.history.push(format!("• {answer}"));
        let secs = started.elapsed().as_secs();
        let (h, m) = ((now_ms() / 3_600_000) % 24, (now_ms() / 60_000) % 60);
        self.history.push(format!("  Worked for {secs}s • {h:02}:{m:02}"));
        self.draw(None, false, None);
        Ok(())
    }

    /// One turn as Gemini CLI plays it: its chat records (the tool round's
    /// preamble first written without its tool call, then again with it),
    /// its thinking line, tool box, approval box and title.
    fn gemini_turn(&mut self, n: u32, outcome: Outcome, given: Option<String>) -> Result<()> {
        let started = Instant::now();
        let received = given.as_ref().map(|p| p.chars().count());
        let prompt = given.unwrap_or_else(|| format!("task {n} for {}", self.name));
        self.history.push(format!(" > {}", prompt.lines().next().unwrap_or("")));
        self.record(&format!("u{n}"), "user", json!([{"text": prompt}]), None)?;
        self.spin("", 1.5, started);
        let preamble = "Let me look at that first.";
        self.record(&format!("g{n}a"), "gemini", json!(preamble), None)?;
        self.history.push(format!("✦ {preamble}"));
        let call =
            json!([{"id": format!("call_demo_{n}"), "name": "run_shell_command", "args": {"command": "sleep 2"}}]);
        if outcome == Outcome::Wait {
            let dialog = [
                "╭────────────────────────────╮",
                "│ ? Shell  sleep 2          │",
                "│ Allow execution of [Shell]? │",
                "│ ● 1. Allow once            │",
                "│   3. No, suggest changes (esc) │",
                "╰────────────────────────────╯",
            ];
            self.title_override
                .replace(Some(format!("✋  Action Required ({})", self.name)));
            self.draw_lines(&dialog);
            self.pause(4.0);
            self.title_override.replace(None);
        }
        self.history.push("│ ⊶  Shell sleep 2".into());
        self.spin("", 2.0, started);
        self.history.pop();
        if outcome == Outcome::Interrupt {
            self.record(&format!("i{n}"), "info", json!("Request cancelled."), None)?;
            self.history.push("ℹ Request cancelled.".into());
            self.draw(None, false, None);
            return Ok(());
        }
        self.record(&format!("g{n}a"), "gemini", json!(preamble), Some(call))?;
        self.record(
            &format!("r{n}"),
            "user",
            json!([{"functionResponse": {"name": "run_shell_command"}}]),
            None,
        )?;
        self.history.push("│ ✓  Shell sleep 2".into());
        self.spin("", 1.5, started);
        if outcome == Outcome::Fail {
            let error = "[API Error: You exceeded your current quota (demo).]";
            self.record(&format!("e{n}"), "error", json!(error), None)?;
            self.history.push(format!("✕ {error}"));
            self.draw(None, false, None);
            return Ok(());
        }
        let answer = self.answer(n, received);
        self.record(&format!("g{n}b"), "gemini", json!(answer), None)?;
        self.history.push(format!("✦ {answer}"));
        self.draw(None, false, None);
        Ok(())
    }

    /// A record of a Gemini CLI chat log.
    fn record(&self, id: &str, kind: &str, content: Value, tool_calls: Option<Value>) -> Result<()> {
        let mut line = json!({"id": format!("{}-{id}", self.session_id), "timestamp": now_ms().to_string(),
            "type": kind, "content": content});
        if let Some(calls) = tool_calls {
            line["toolCalls"] = calls;
        }
        self.append(line)
    }

    /// An `event_msg` line of a Codex rollout.
    fn event(&self, kind: &str, mut payload: Value) -> Result<()> {
        payload["type"] = json!(kind);
        self.append(json!({"timestamp": now_ms().to_string(), "type": "event_msg", "payload": payload}))
    }

    /// A `response_item` line of a Codex rollout.
    fn item(&self, payload: Value) -> Result<()> {
        self.append(json!({"timestamp": now_ms().to_string(), "type": "response_item", "payload": payload}))
    }

    fn answer(&self, n: u32, received: Option<usize>) -> String {
        match received {
            Some(chars) => format!("Answer {n} from {}: read your {chars} characters.", self.name),
            None => format!("Answer {n} from {}: all {} checks pass.", self.name, 3 + n),
        }
    }

    fn done(&mut self, n: u32, stem: &str, started: Instant, received: Option<usize>) -> Result<()> {
        let answer = self.answer(n, received);
        let content = json!([{"type": "text", "text": answer}]);
        self.append(self.assistant_line(&format!("msg_demo_{n}b"), content, "end_turn"))?;
        self.append(json!({"type": "system", "subtype": "turn_duration", "durationMs": started.elapsed().as_millis() as u64, "isSidechain": false, "sessionId": self.session_id}))?;
        self.history.push(format!("● {answer}"));
        let secs = started.elapsed().as_secs();
        self.history.push(format!("✻ {stem}ed for {secs}s · done {}", clock()));
        self.status("idle", None);
        self.draw(None, false, None);
        Ok(())
    }

    fn failed(&mut self) -> Result<()> {
        let text =
            "API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}";
        let mut line = self.assistant_line(
            "msg_demo_error",
            json!([{"type": "text", "text": text}]),
            "stop_sequence",
        );
        line["isApiErrorMessage"] = json!(true);
        line["message"]["model"] = json!("<synthetic>");
        self.append(line)?;
        self.history
            .push("  ⎿  API Error: 529 Overloaded · retries exhausted".into());
        self.status("idle", None);
        self.draw(None, false, Some("Resend your message to try again"));
        Ok(())
    }

    fn interrupted(&mut self, tool_id: &str) -> Result<()> {
        let rejected = json!([{"type": "tool_result", "tool_use_id": tool_id, "content": "The user doesn't want to proceed with this tool use.", "is_error": true}]);
        self.append(self.user_line(rejected))?;
        self.append(self.user_line(json!([{"type": "text", "text": "[Request interrupted by user for tool use]"}])))?;
        self.history
            .push("  ⎿  Interrupted · What should Claude do instead?".into());
        self.status("idle", None);
        self.draw(None, false, None);
        Ok(())
    }

    fn ask_permission(&mut self, stem: &str, started: Instant) {
        self.status("waiting", Some("permission prompt"));
        let dialog = [
            "────────────────────────────────────────",
            " Bash command",
            "",
            "   sleep 2",
            "",
            " Do you want to proceed?",
            " ❯ 1. Yes",
            "   2. Yes, and don't ask again for sleep commands",
            "   3. No, and tell Claude what to do differently (esc)",
        ];
        self.draw_lines(&dialog);
        self.pause(4.0);
        self.status("busy", None);
        self.spin(stem, 0.2, started);
    }

    /// Shows the spinner for `secs` (scaled), redrawing every 100 ms.
    fn spin(&mut self, stem: &str, secs: f64, started: Instant) {
        const GLYPHS: &[char] = &['·', '✢', '*', '✶', '✻', '✽'];
        let end = Instant::now() + Duration::from_secs_f64(secs * self.pace);
        let mut i = 0;
        while Instant::now() < end {
            let glyph = GLYPHS[i % GLYPHS.len()];
            let line = match self.kind {
                AgentKind::Claude => format!(
                    "{glyph} {stem}ing… ({}s · ↓ {} tokens)",
                    started.elapsed().as_secs(),
                    20 + i
                ),
                AgentKind::Gemini => format!(
                    " {} Thinking... (esc to cancel, {}s)",
                    ['⠋', '⠙', '⠹', '⠸'][i % 4],
                    started.elapsed().as_secs()
                ),
                AgentKind::Codex => format!(
                    "{} Working ({}s • esc to interrupt)",
                    if i % 2 == 0 { '•' } else { '◦' },
                    started.elapsed().as_secs()
                ),
            };
            self.draw(Some(&line), true, None);
            std::thread::sleep(Duration::from_millis(100));
            i += 1;
        }
    }

    fn pause(&self, secs: f64) {
        std::thread::sleep(Duration::from_secs_f64(secs * self.pace));
    }

    /// Redraws: history tail, optional spinner, input box (showing
    /// `input`, a draft or Claude's grey hint, else its placeholder), footer.
    fn draw(&self, spinner: Option<&str>, busy: bool, input: Option<&str>) {
        let mut lines: Vec<String> = self.history.iter().rev().take(14).rev().cloned().collect();
        if let Some(s) = spinner {
            lines.push(s.to_owned());
        }
        if self.kind == AgentKind::Gemini {
            let keep = terminal_rows()
                .saturating_sub(4 + usize::from(spinner.is_some()))
                .max(1);
            let skip = lines.len().saturating_sub(keep);
            lines.drain(..skip);
            let input_row = match input {
                Some(draft) => format!(" > {draft}"),
                None => " >   Type your message or @path/to/file".into(),
            };
            lines.extend(["─".repeat(40), input_row, "  demo mode".into()]);
            self.set_title(busy);
            return self.paint(&lines);
        }
        if self.kind == AgentKind::Codex {
            // Codex keeps its composer at the bottom of however many rows
            // the pane has: the history above gives way.
            let keep = terminal_rows()
                .saturating_sub(5 + usize::from(spinner.is_some()))
                .max(1);
            let skip = lines.len().saturating_sub(keep);
            lines.drain(..skip);
            let composer = format!("› {}", input.unwrap_or("Ask Codex to do anything"));
            lines.extend([String::new(), composer, String::new()]);
            lines.push("  demo mode · ? for shortcuts".into());
            self.set_title(busy);
            return self.paint(&lines);
        }
        let rule = "─".repeat(60);
        lines.push(rule.clone());
        lines.push(format!("❯ {}", input.unwrap_or("")));
        lines.push(rule);
        let footer = if busy {
            "  ⏵⏵ demo mode · esc to interrupt"
        } else {
            "  ⏵⏵ demo mode"
        };
        lines.push(footer.to_owned());
        self.set_title(busy);
        self.paint(&lines);
    }

    /// Sets the terminal title as Claude Code does: a turning spinner glyph
    /// while busy, `✳` at the prompt.
    fn set_title(&self, busy: bool) {
        const TURNING: &[char] = &['⠂', '⠐'];
        const BRAILLE: &[char] = &['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
        let frame = self.title_frame.get().wrapping_add(1);
        self.title_frame.set(frame);
        let title = match (self.kind, self.title_override.borrow().clone(), busy) {
            (_, Some(title), _) => title,
            (AgentKind::Gemini, None, true) => format!("✦  Working… ({})", self.name),
            (AgentKind::Gemini, None, false) => format!("◇  Ready ({})", self.name),
            (AgentKind::Claude, None, true) => {
                format!("{} {}", TURNING[frame % TURNING.len()], self.name)
            }
            (AgentKind::Claude, None, false) => format!("✳ {}", self.name),
            (AgentKind::Codex, None, true) => format!("{} {}", BRAILLE[frame % BRAILLE.len()], self.name),
            (AgentKind::Codex, None, false) => self.name.clone(),
        };
        let _ = write!(std::io::stdout().lock(), "\x1b]0;{title}\x07");
    }

    fn draw_lines(&self, dialog: &[&str]) {
        let room = match self.kind {
            AgentKind::Claude => 10,
            AgentKind::Codex | AgentKind::Gemini => terminal_rows().saturating_sub(dialog.len() + 1).max(1),
        };
        let mut lines: Vec<String> = self.history.iter().rev().take(room).rev().cloned().collect();
        lines.extend(dialog.iter().map(|l| l.to_string()));
        self.set_title(false);
        self.paint(&lines);
    }

    fn paint(&self, lines: &[String]) {
        let mut out = std::io::stdout().lock();
        // Overwrite in place (no full clear): a clear would push every frame
        // into the pane's scrollback.
        let body = lines.join("\x1b[K\r\n");
        let _ = write!(out, "\x1b[H{body}\x1b[K\x1b[J");
        let _ = out.flush();
    }

    fn status(&self, status: &str, waiting_for: Option<&str>) {
        if self.kind == AgentKind::Codex {
            return; // Codex writes no status file
        }
        let mut value = json!({
            "pid": std::process::id(), "sessionId": self.session_id, "cwd": self.cwd,
            "status": status, "statusUpdatedAt": now_ms(), "kind": "interactive",
        });
        if let Some(w) = waiting_for {
            value["waitingFor"] = json!(w);
        }
        let _ = fs::write(&self.status_file, value.to_string());
    }

    fn base(&self, kind: &str) -> Value {
        let uuid = format!("{:08x}-demo-4000-8000-{:012x}", self.rand(u32::MAX as u64), now_ms());
        let line = json!({
            "parentUuid": *self.parent.borrow(), "isSidechain": false, "userType": "external", "cwd": self.cwd,
            "sessionId": self.session_id, "version": "demo", "type": kind, "uuid": uuid,
            "timestamp": format!("{}", now_ms()),
        });
        self.parent.replace(Some(uuid));
        line
    }

    fn user_line(&self, content: Value) -> Value {
        let mut line = self.base("user");
        line["message"] = json!({"role": "user", "content": content});
        line
    }

    fn assistant_line(&self, id: &str, content: Value, stop: &str) -> Value {
        let mut line = self.base("assistant");
        line["message"] = json!({
            "id": id, "type": "message", "role": "assistant", "model": "demo-model",
            "content": content, "stop_reason": stop, "stop_sequence": null,
            "usage": {"input_tokens": 10, "output_tokens": 20},
        });
        line
    }

    fn append(&self, line: Value) -> Result<()> {
        let mut file = OpenOptions::new()
            .append(true)
            .open(&self.transcript)
            .with_context(|| format!("cannot append to {}", self.transcript.display()))?;
        // One write per line, newline included, as Claude Code appends.
        file.write_all(format!("{line}\n").as_bytes())
            .context("cannot append to the transcript")?;
        Ok(())
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        if self.kind == AgentKind::Claude {
            let _ = fs::remove_file(&self.status_file);
        }
    }
}

/// The terminal's height (24 when unknown).
fn terminal_rows() -> usize {
    // SAFETY: TIOCGWINSZ fills a winsize we own; a failure leaves it zeroed.
    let mut size: libc::winsize = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut size) } == 0;
    if ok && size.ws_row > 0 {
        size.ws_row as usize
    } else {
        24
    }
}

/// `7:23 PM` (UTC; the demo does not read time zones).
fn clock() -> String {
    let secs = now_ms() / 1000;
    let (h, m) = ((secs / 3600) % 24, (secs / 60) % 60);
    let (h12, half) = match h {
        0 => (12, "AM"),
        1..=11 => (h, "AM"),
        12 => (12, "PM"),
        _ => (h - 12, "PM"),
    };
    format!("{h12}:{m:02} {half}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_parse_and_reject_unknown_words() {
        assert_eq!(parse_script("done, fail,wait,interrupt").unwrap().len(), 4);
        assert!(parse_script("done,explode")
            .unwrap_err()
            .to_string()
            .contains("explode"));
        assert!(parse_script("").unwrap().is_empty());
    }

    #[test]
    fn prompts_from_pastes_and_typed_lines() {
        let mut p = b"\x1b[200~line one\nline two\x1b[201~".to_vec();
        assert_eq!(take_prompt(&mut p), None, "no Enter yet");
        p.extend_from_slice(b"\rtyped\n");
        assert_eq!(take_prompt(&mut p).as_deref(), Some("line one\nline two"));
        assert_eq!(take_prompt(&mut p).as_deref(), Some("typed"));
        assert!(p.is_empty());
    }

    #[test]
    fn clock_is_twelve_hour() {
        let c = clock();
        assert!(c.ends_with("AM") || c.ends_with("PM"), "{c}");
    }
}
