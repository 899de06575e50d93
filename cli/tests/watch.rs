//! `turnstile watch` with real processes: simulated agents carrying
//! `ZELLIJ_PANE_ID` in their environment, transcripts appended the way Claude
//! Code appends them, and what the watcher posts to its mailbox, read with
//! `turnstile pull` as the bar's leader reads it.

use serde_json::{json, Value};
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_turnstile");

struct Rig {
    dir: tempfile::TempDir,
    session: String,
    children: Vec<Child>,
}

impl Drop for Rig {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Rig {
    fn new(name: &str) -> Rig {
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("zellij");
        std::fs::write(&fake, format!("#!/bin/sh\ncat >> {}/calls\n", dir.path().display())).unwrap();
        Command::new("chmod").arg("+x").arg(&fake).status().unwrap();
        std::fs::create_dir_all(dir.path().join("work")).unwrap();
        Rig {
            dir,
            session: format!("{name}-{}", std::process::id()),
            children: Vec::new(),
        }
    }

    /// An idle simulated agent in `pane`, in the shared work folder.
    fn agent(&mut self, pane: u32) {
        let child = Command::new(BIN)
            .args(["demo-agent", "--name", "a", "--turns", "0"])
            .env("ZELLIJ_PANE_ID", pane.to_string())
            .env("ZELLIJ_SESSION_NAME", &self.session)
            .env("TMPDIR", self.dir.path())
            .current_dir(self.dir.path().join("work"))
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        self.children.push(child);
    }

    /// Idle agents in `panes`, then the watcher, until each pane is bound.
    fn watching(&mut self, panes: &[u32]) {
        for pane in panes {
            self.agent(*pane);
        }
        std::thread::sleep(Duration::from_millis(300));
        self.watch();
        self.until("every pane bound", |r| panes.iter().all(|p| r.state(*p).is_some()));
    }

    fn watch(&mut self) {
        self.watch_with(&[]);
    }

    /// The session's watcher, with these variables besides the rig's.
    fn watch_with(&mut self, vars: &[(&str, &Path)]) {
        let child = Command::new(BIN)
            .args(["watch", "--session", &self.session])
            .env("TURNSTILE_ZELLIJ", self.dir.path().join("zellij"))
            .env("XDG_STATE_HOME", self.dir.path().join("state"))
            .env("TMPDIR", self.dir.path())
            .envs(vars.iter().copied())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        self.children.push(child);
    }

    /// Each pane's newest reports in the mailbox (the watcher's and a
    /// hook's), oldest change first.
    fn pushed(&self) -> Vec<Value> {
        mailbox(self, &self.session)
    }

    /// The latest transcript state pushed for `pane`.
    fn state(&self, pane: u32) -> Option<String> {
        self.pushed()
            .iter()
            .rev()
            .find(|r| r["pane"] == pane)
            .and_then(|r| {
                r["verdicts"]
                    .as_array()?
                    .iter()
                    .find(|v| v["source"] == "transcript")
                    .cloned()
            })
            .and_then(|v| v["state"].as_str().map(str::to_owned))
    }

    fn transcript_of(&self, pane: u32) -> PathBuf {
        // A binding is pushed whole when it changes, then in brief.
        let report = self
            .pushed()
            .into_iter()
            .rev()
            .find(|r| r["pane"] == pane && !r["agent"]["transcript"].is_null())
            .expect("a report for the pane");
        PathBuf::from(report["agent"]["transcript"].as_str().expect("a bound transcript"))
    }

    /// Rewrites the status file of the `nth` agent with a new session id,
    /// as Claude Code does on `/clear` and `/resume`.
    fn new_session(&self, nth: usize, id: &str) {
        let pid = self.children[nth].id();
        let path = self
            .dir
            .path()
            .join(format!("turnstile-demo/.claude/sessions/{pid}.json"));
        let mut status: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        status["sessionId"] = json!(id);
        std::fs::write(&path, status.to_string()).unwrap();
    }

    fn until(&self, what: &str, cond: impl Fn(&Rig) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if cond(self) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("timed out waiting for {what}; pushed: {:?}", self.pushed());
    }
}

fn append(path: &Path, bytes: &[u8]) {
    let mut f = OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(bytes).unwrap();
}

fn line(v: Value) -> Vec<u8> {
    format!("{v}\n").into_bytes()
}

fn prompt() -> Vec<u8> {
    line(json!({"type": "user", "message": {"role": "user", "content": "go"}}))
}

fn answer(id: &str) -> Vec<u8> {
    line(
        json!({"type": "assistant", "message": {"id": id, "role": "assistant", "stop_reason": "end_turn",
        "content": [{"type": "text", "text": format!("answer {id}")}]}}),
    )
}

#[test]
fn two_agents_in_one_folder_stay_apart_and_appends_are_followed() {
    let mut rig = Rig::new("watch-two");
    rig.watching(&[1, 2]);
    let (t1, t2) = (rig.transcript_of(1), rig.transcript_of(2));
    assert_ne!(t1, t2, "each pane is bound to its own agent's transcript");

    // A burst: metadata, the prompt, then the answer written in two pieces.
    let mut burst = line(json!({"type": "file-history-snapshot"}));
    burst.extend(prompt());
    append(&t1, &burst);
    rig.until("pane 1 working", |r| r.state(1).as_deref() == Some("working"));
    let done = answer("m1");
    append(&t1, &done[..30]);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(rig.state(1).as_deref(), Some("working"), "a half-written line is held");
    append(&t1, &done[30..]);
    rig.until("pane 1 done", |r| r.state(1).as_deref() == Some("done"));
    assert_ne!(rig.state(2).as_deref(), Some("done"), "pane 2 never moved");
    let last = rig.pushed().into_iter().rev().find(|r| r["pane"] == 1).unwrap();
    assert_eq!(last["answer"], "answer m1");
}

#[test]
fn truncation_and_a_new_session_file_are_followed() {
    let mut rig = Rig::new("watch-rotate");
    rig.watching(&[3]);
    let t = rig.transcript_of(3);
    let mut turn = prompt();
    turn.extend(answer("a1"));
    append(&t, &turn);
    rig.until("done", |r| r.state(3).as_deref() == Some("done"));
    // Truncated and rewritten: read afresh.
    std::fs::write(&t, prompt()).unwrap();
    rig.until("working after truncation", |r| r.state(3).as_deref() == Some("working"));
    // `/clear`: a new session id in the agent's status file, then its
    // transcript appears (the old one is deleted here, too).
    std::fs::remove_file(&t).unwrap();
    rig.new_session(0, "fresh-session");
    let fresh = t.with_file_name("fresh-session.jsonl");
    let mut turn = prompt();
    turn.extend(answer("b1"));
    std::fs::write(&fresh, &turn).unwrap();
    rig.until("bound to the new session file", |r| {
        r.state(3).as_deref() == Some("done") && r.transcript_of(3) == fresh
    });
}

#[test]
fn an_agent_started_after_the_watcher_is_found_and_followed() {
    let mut rig = Rig::new("watch-late");
    rig.watch();
    std::thread::sleep(Duration::from_millis(300));
    rig.agent(5);
    rig.until("the late agent bound", |r| r.state(5).is_some());
    let t = rig.transcript_of(5);
    append(&t, &prompt());
    rig.until("late agent working", |r| r.state(5).as_deref() == Some("working"));
}

#[test]
fn an_agent_never_prompted_never_borrows_its_neighbours_transcript() {
    let mut rig = Rig::new("watch-borrow");
    rig.agent(1);
    rig.agent(2);
    std::thread::sleep(Duration::from_millis(300));
    // Pane 2's agent has a session but no transcript yet (never prompted).
    let own = rig
        .dir
        .path()
        .join("turnstile-demo/.claude/projects")
        .read_dir()
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    rig.new_session(1, "never-prompted");
    rig.watch();
    rig.until("pane 1 bound", |r| r.state(1).is_some());
    let t1 = rig.transcript_of(1);
    append(&t1, &prompt());
    rig.until("pane 1 working", |r| r.state(1).as_deref() == Some("working"));
    append(&t1, &answer("p1"));
    rig.until("pane 1 done", |r| r.state(1).as_deref() == Some("done"));
    assert_eq!(rig.state(2), None, "pane 2 shows no transcript state of pane 1's");
    assert_eq!(rig.transcript_of(2), own.join("never-prompted.jsonl"));
    // Its first prompt creates its own file: followed from then on.
    std::fs::write(own.join("never-prompted.jsonl"), prompt()).unwrap();
    rig.until("pane 2 working on its own transcript", |r| {
        r.state(2).as_deref() == Some("working")
    });
    assert_eq!(rig.state(1).as_deref(), Some("done"));
}

#[test]
fn a_hook_hands_its_report_to_the_running_watcher_instead_of_starting_zellij() {
    let mut rig = Rig::new("watch-spool");
    rig.watching(&[7]);
    let payload = json!({"hook_event_name": "UserPromptSubmit", "session_id": "s", "cwd": "/w",
        "transcript_path": rig.transcript_of(7), "prompt": "go"});
    assert!(run_hook(&rig, &rig.session, 7, &payload).success());
    rig.until("the hook's verdict through the watcher's channel", |r| {
        r.pushed()
            .iter()
            .any(|p| p["pane"] == 7 && p["verdicts"][0]["source"] == "hook")
    });
    assert!(
        !rig.dir.path().join("hook-started").exists(),
        "no zellij started for the hook"
    );
}

#[test]
fn a_gemini_turn_end_whose_hook_report_is_lost_is_marked_by_the_hooks_record() {
    // A loaded machine lost the `AfterAgent` report of a finished Gemini turn
    // (the hook had written its record): the bar said working for ever.
    let mut rig = Rig::new("watch-mark");
    let agent = Command::new(BIN)
        .args([
            "demo-agent",
            "--kind",
            "gemini",
            "--turns",
            "1",
            "--script",
            "done",
            "--pace",
            "0.2",
        ])
        .env("ZELLIJ_PANE_ID", "5")
        .env("ZELLIJ_SESSION_NAME", &rig.session)
        .env("TMPDIR", rig.dir.path())
        .current_dir(rig.dir.path().join("work"))
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    rig.children.push(agent);
    rig.watch();
    let hook_verdict = |r: &Rig| {
        let pushed = r.pushed();
        let latest = pushed.iter().rev().find(|p| p["pane"] == 5)?;
        latest["verdicts"]
            .as_array()?
            .iter()
            .find(|v| v["source"] == "hook")
            .cloned()
    };
    rig.until("the answer, a done candidate, without a hook", |r| {
        let pushed = r.pushed();
        let latest = pushed.iter().rev().find(|p| p["pane"] == 5);
        latest.is_some_and(|p| p["verdicts"][0]["candidate"] == "done") && hook_verdict(r).is_none()
    });
    let folder = rig.dir.path().join(format!("state/turnstile/bindings/{}", rig.session));
    let record = json!({"transcript_path": rig.transcript_of(5), "event": "AfterAgent", "at": 1_000});
    std::fs::write(folder.join("5.json"), record.to_string()).unwrap();
    rig.until("the record's mark of the turn's end", |r| {
        hook_verdict(r)
            .is_some_and(|v| v["state"] == "working" && v["candidate"] == "done" && v["key"] == "AfterAgent@1000")
    });
}

/// `turnstile watch --session <session>` with the rig's fake zellij and state.
fn watcher(rig: &Rig, session: &str) -> Child {
    Command::new(BIN)
        .args(["watch", "--session", session])
        .env("TURNSTILE_ZELLIJ", rig.dir.path().join("zellij"))
        .env("XDG_STATE_HOME", rig.dir.path().join("state"))
        .env("TMPDIR", rig.dir.path())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// What `turnstile pull` answers for `session` now: its mailbox's reports.
fn mailbox(rig: &Rig, session: &str) -> Vec<Value> {
    let out = Command::new(BIN)
        .args(["pull", "--after", "0", "--wait-ms", "0", "--session", session])
        .env("XDG_STATE_HOME", rig.dir.path().join("state"))
        .env("TMPDIR", rig.dir.path())
        .output()
        .unwrap();
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    answer["panes"].as_array().cloned().unwrap_or_default()
}

/// Runs `turnstile hook` for `pane` of `session` with `payload`, its own
/// `zellij` recording that it was started.
fn run_hook(rig: &Rig, session: &str, pane: u32, payload: &Value) -> std::process::ExitStatus {
    let spawned = rig.dir.path().join("hook-zellij");
    std::fs::write(
        &spawned,
        format!("#!/bin/sh\ncat >> {}/hook-started\n", rig.dir.path().display()),
    )
    .unwrap();
    Command::new("chmod").arg("+x").arg(&spawned).status().unwrap();
    let mut hook = Command::new(BIN)
        .arg("hook")
        .env("ZELLIJ_PANE_ID", pane.to_string())
        .env("ZELLIJ_SESSION_NAME", session)
        .env("TURNSTILE_ZELLIJ", &spawned)
        .env("XDG_STATE_HOME", rig.dir.path().join("state"))
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    hook.stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes())
        .unwrap();
    hook.wait().unwrap()
}

#[test]
fn eight_watchers_started_at_once_leave_exactly_one() {
    // Issue 21: 3 to 8 of them kept running, each pushing the same changes.
    let rig = Rig::new("watch-eight");
    for round in 0..3 {
        let session = format!("{}-{round}", rig.session);
        let mut all: Vec<Child> = (0..8).map(|_| watcher(&rig, &session)).collect();
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut exited: Vec<i32> = Vec::new();
        while exited.len() < 7 && Instant::now() < deadline {
            exited = all
                .iter_mut()
                .filter_map(|c| c.try_wait().unwrap())
                .map(|s| s.code().unwrap_or(-1))
                .collect();
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(300));
        let running = all
            .iter_mut()
            .filter_map(|c| c.try_wait().unwrap().is_none().then_some(()))
            .count();
        for c in &mut all {
            let _ = c.kill();
            let _ = c.wait();
        }
        assert_eq!(running, 1, "round {round}: exits {exited:?}");
        assert!(exited.iter().all(|code| *code == 3), "round {round}: {exited:?}");
    }
}

#[test]
fn a_stale_lock_file_or_pid_file_never_blocks_a_watcher() {
    let rig = Rig::new("watch-stale");
    let folder = rig.dir.path().join("state/turnstile/bindings").join(&rig.session);
    std::fs::create_dir_all(&folder).unwrap();
    for name in ["watcher.lock", "watcher.pid"] {
        std::fs::write(folder.join(name), "1").unwrap(); // pid 1 is alive, and not a watcher
    }
    let mut first = watcher(&rig, &rig.session);
    std::thread::sleep(Duration::from_millis(800));
    let status = first.try_wait().unwrap();
    let _ = first.kill();
    let _ = first.wait();
    assert!(status.is_none(), "the watcher exited: {status:?}");
}

#[test]
fn a_pane_bound_to_a_fifo_never_holds_up_another() {
    let mut rig = Rig::new("watch-fifo");
    rig.watching(&[1, 2]);
    let fifo = rig.dir.path().join("fifo.jsonl");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let stop = json!({"hook_event_name": "Stop", "session_id": "s", "cwd": "/w", "transcript_path": fifo});
    assert!(run_hook(&rig, &rig.session, 1, &stop).success());
    let t2 = rig.transcript_of(2);
    let mut turn = prompt();
    turn.extend(answer("z2"));
    append(&t2, &turn);
    rig.until("pane 2 done while pane 1 points at a FIFO", |r| {
        r.state(2).as_deref() == Some("done")
    });
}

#[test]
fn sessions_x_dot_y_and_x_underscore_y_never_share_a_folder() {
    // Issue 21: both mapped to `x_y`: one session's Stop reached the other's bar.
    let mut rig = Rig::new("watch-names");
    let dotted = format!("{}.y", rig.session);
    let underscored = format!("{}_y", rig.session);
    let dot_watcher = watcher(&rig, &dotted);
    std::thread::sleep(Duration::from_millis(500));
    let stop = json!({"hook_event_name": "Stop", "session_id": "s", "cwd": "/w",
        "last_assistant_message": "secret of x_y"});
    assert!(run_hook(&rig, &underscored, 4, &stop).success());
    let mut other = watcher(&rig, &underscored);
    std::thread::sleep(Duration::from_millis(800));
    let still_running = other.try_wait().unwrap().is_none();
    for mut c in [dot_watcher, other] {
        let _ = c.kill();
        let _ = c.wait();
    }
    rig.children.clear();
    assert!(still_running, "`watch --session x_y` must not see x.y's watcher");
    let leaked = serde_json::to_string(&mailbox(&rig, &dotted)).unwrap();
    assert!(!leaked.contains("secret of x_y"), "x.y's mailbox holds x_y's answer");
    let piped = std::fs::read_to_string(rig.dir.path().join("hook-started")).unwrap_or_default();
    assert!(piped.contains("secret of x_y"), "the hook piped it to its own session");
}

#[test]
fn a_state_folder_of_another_user_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    // Root can hand a folder to another user; anyone else cannot make one.
    if unsafe { libc_geteuid() } != 0 {
        eprintln!("skipped: needs root to make a folder another user owns");
        return;
    }
    let rig = Rig::new("watch-foreign");
    let folder = rig.dir.path().join("state/turnstile/bindings").join(&rig.session);
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o777)).unwrap();
    assert!(Command::new("chown")
        .arg("65534")
        .arg(&folder)
        .status()
        .unwrap()
        .success());
    let out = watcher(&rig, &rig.session).wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("belongs to user 65534"), "{err}");
    let stop = json!({"hook_event_name": "Stop", "session_id": "s", "cwd": "/w", "transcript_path": "/w/t.jsonl"});
    assert!(run_hook(&rig, &rig.session, 3, &stop).success(), "a hook still exits 0");
    assert!(!folder.join("3.json").exists(), "nothing written into it");
}

extern "C" {
    #[link_name = "geteuid"]
    fn libc_geteuid() -> u32;
}

/// A stand-in process whose argv reads as `argv` (the program is a copy of
/// `sleep` named like the agent), in `pane` of `session`.
fn stand_in(rig: &Rig, session: &str, pane: u32, argv: &[&str]) -> Child {
    let bin = rig.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let program = bin.join(argv[0]);
    if !program.exists() {
        std::fs::copy("/bin/sleep", &program).unwrap();
    }
    // `sleep` takes the last argument as its duration and ignores none: run
    // it through `sh -c 'exec -a …'` so argv[1..] are what an agent shows.
    let script = format!("exec -a {} {} 30", argv.join(" "), program.display());
    Command::new("bash")
        .args(["-c", &script])
        .env("ZELLIJ_PANE_ID", pane.to_string())
        .env("ZELLIJ_SESSION_NAME", session)
        .current_dir(rig.dir.path().join("work"))
        .spawn()
        .unwrap()
}

#[test]
fn codex_and_gemini_typed_into_a_shell_after_the_watcher_started_are_found() {
    // Issue 22: the watcher's /proc scan knew only Claude Code; a Codex or
    // Gemini CLI started later in a shell was never bound.
    let mut rig = Rig::new("watch-late-kinds");
    rig.watch();
    std::thread::sleep(Duration::from_millis(1500));
    let session = rig.session.clone();
    let codex = stand_in(&rig, &session, 11, &["codex"]);
    let gemini = stand_in(&rig, &session, 12, &["gemini"]);
    rig.children.extend([codex, gemini]);
    rig.until("both kinds found by the watcher", |r| {
        let pushed = r.pushed();
        let kind_of = |pane: u32| {
            pushed
                .iter()
                .rev()
                .find(|p| p["pane"] == pane)
                .and_then(|p| p["agent"]["kind"].as_str().map(str::to_owned))
        };
        kind_of(11).as_deref() == Some("codex") && kind_of(12).as_deref() == Some("gemini")
    });
}

#[test]
fn status_with_a_pane_bound_to_a_fifo_answers_for_every_pane_at_once() {
    // Issue 21: one pane bound to a FIFO blocked `status` for every pane.
    let mut rig = Rig::new("status-fifo");
    rig.watching(&[1, 2]);
    let t1 = rig.transcript_of(1);
    std::fs::remove_file(&t1).unwrap();
    assert!(Command::new("mkfifo").arg(&t1).status().unwrap().success());
    let started = Instant::now();
    let out = Command::new(BIN)
        .args(["status", "--json", "--session", &rig.session])
        .env("TMPDIR", rig.dir.path())
        .env("XDG_STATE_HOME", rig.dir.path().join("state"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let panes: Vec<u64> = report["panes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| !p["agent"].is_null())
        .filter_map(|p| p["pane"].as_u64())
        .collect();
    assert_eq!(panes, [1, 2], "{report}");
}

/// A simulated OpenCode in `pane`: its rows go into a real SQLite database.
fn opencode(rig: &Rig, pane: u32, script: &str) -> Child {
    Command::new(BIN)
        .args([
            "demo-agent",
            "--kind",
            "opencode",
            "--turns",
            "1",
            "--script",
            script,
            "--pace",
            "0.2",
        ])
        .env("ZELLIJ_PANE_ID", pane.to_string())
        .env("ZELLIJ_SESSION_NAME", &rig.session)
        .env("TMPDIR", rig.dir.path())
        .current_dir(rig.dir.path().join("work"))
        .stdout(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn an_opencode_sessions_rows_in_its_database_are_followed_to_the_answer() {
    let mut rig = Rig::new("watch-opencode");
    rig.watch();
    let agent = opencode(&rig, 8, "done");
    rig.children.push(agent);
    rig.until("the pane bound to its session inside the database", |r| {
        r.pushed().iter().any(|p| {
            p["pane"] == 8
                && p["agent"]["transcript"]
                    .as_str()
                    .is_some_and(|t| t.contains("opencode.db/ses_"))
        })
    });
    rig.until("the answer's row: done", |r| r.state(8).as_deref() == Some("done"));
    let pushed = rig.pushed();
    let latest = pushed.iter().rev().find(|p| p["pane"] == 8).unwrap();
    assert!(
        latest["answer"].as_str().is_some_and(|a| a.starts_with("Answer 1")),
        "{latest}"
    );
}

#[test]
fn two_opencode_panes_of_one_folder_without_the_plugin_never_borrow_a_session() {
    let mut rig = Rig::new("watch-opencode-two");
    rig.watch();
    let first = opencode(&rig, 8, "done");
    let second = opencode(&rig, 9, "fail");
    rig.children.extend([first, second]);
    rig.until("both panes known", |r| {
        let pushed = r.pushed();
        [8, 9].iter().all(|pane| {
            pushed
                .iter()
                .any(|p| p["pane"] == *pane && p["agent"]["kind"] == "opencode")
        })
    });
    std::thread::sleep(Duration::from_secs(4));
    assert_eq!(
        (rig.state(8), rig.state(9)),
        (None, None),
        "nothing tells the sessions apart: the screen alone"
    );
}

/// A rules file's agent with log rules (issue 25): a plain `sleep` is the
/// agent, its logs are `~/.nap/session-??.log` (a folder that does not
/// exist yet, files that are not `.jsonl`), and the watcher binds the one
/// written since it started and classifies it by the file's line rules.
#[test]
fn a_user_agents_log_is_found_by_its_glob_and_read_by_its_line_rules() {
    let mut rig = Rig::new("watch-user-log");
    let home = rig.dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let rules = rig.dir.path().join("agents.kdl");
    let kdl = r#"agent "napper" {
    process "^sleep$"
    log "~/.nap/session-??.log" {
        start "kind" "^ask$"
        answer "kind" "^reply$" text="body"
        error "kind" "^oops$"
    }
}
"#;
    std::fs::write(&rules, kdl).unwrap();
    let agent = Command::new("sleep")
        .arg("600")
        .env("ZELLIJ_PANE_ID", "7")
        .env("ZELLIJ_SESSION_NAME", &rig.session)
        .env("HOME", &home)
        .spawn()
        .unwrap();
    rig.children.push(agent);
    rig.watch_with(&[("TURNSTILE_RULES", &rules)]);
    std::thread::sleep(Duration::from_millis(1500));
    let folder = home.join(".nap");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("notes.log"), b"{\"kind\":\"reply\"}\n").unwrap();
    let log = folder.join("session-01.log");
    std::fs::write(&log, line(json!({"kind": "ask", "body": "go"}))).unwrap();
    // Newer, and named by the glob, but a FIFO: never bound, never blocks.
    let fifo = folder.join("session-02.log");
    std::thread::sleep(Duration::from_millis(50));
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    rig.until("the log bound and working", |r| {
        r.state(7).as_deref() == Some("working")
    });
    assert_eq!(rig.transcript_of(7), log, "the file its glob names, not notes.log");
    append(&log, &line(json!({"kind": "progress"})));
    append(&log, &line(json!({"kind": "reply", "body": "the answer"})));
    rig.until("done", |r| r.state(7).as_deref() == Some("done"));
    let report = rig.pushed().into_iter().rev().find(|r| r["pane"] == 7).unwrap();
    assert_eq!(report["answer"], "the answer", "{report}");
    append(&log, &line(json!({"kind": "ask"})));
    append(&log, &line(json!({"kind": "oops"})));
    rig.until("failed", |r| r.state(7).as_deref() == Some("failed"));
}
