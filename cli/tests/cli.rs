//! The `turnstile` binary as scripts use it: JSON out, clear errors, exit codes.

use std::io::Write;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_turnstile");
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/claude-code");

fn run(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn turnstile");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin)
        .expect("write stdin");
    child.wait_with_output().expect("wait")
}

fn json(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("one JSON object on stdout")
}

#[test]
fn transcript_gives_state_source_reason_session_and_answer() {
    let path = format!("{FIXTURES}/2.1.332-tool/transcript.jsonl");
    let v = json(&run(&["transcript", &path], b""));
    assert_eq!(v["state"], "done");
    assert_eq!(v["source"], "transcript");
    assert_eq!(v["answer"], "Done: slept 4s.");
    assert_eq!(v["session_id"], "d1c39797-6abc-49d2-8f76-b6868d39f10f");
    assert_eq!(v["offset"], 162401, "the final answer line decides");
}

#[test]
fn screen_reads_stdin_with_ansi_escapes() {
    let screen = "\x1b[38;5;246m\u{273b}\x1b[39m Sautéed for 1m 2s · done 7:23 PM\n";
    let v = json(&run(&["screen", "-"], screen.as_bytes()));
    assert_eq!(v["state"], "done");
    assert_eq!(v["rule"], "banner");
    assert_eq!(v["line"], "\u{273b} Sautéed for 1m 2s · done 7:23 PM");
}

#[test]
fn missing_file_is_a_one_line_error_and_exit_2() {
    let out = run(&["transcript", "/nonexistent/x.jsonl"], b"");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("turnstile: cannot open /nonexistent/x.jsonl"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn a_directory_is_unreadable_input() {
    let out = run(&["transcript", FIXTURES], b"");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn help_explains_states_and_sources() {
    let out = run(&["--help"], b"");
    let help = String::from_utf8_lossy(&out.stdout);
    for word in [
        "working",
        "done",
        "failed",
        "interrupted",
        "waiting",
        "transcript",
        "hook",
        "screen",
        "EXIT CODES",
    ] {
        assert!(help.contains(word), "--help lacks {word}");
    }
}

#[test]
fn explain_names_the_deciding_line_for_people() {
    let path = format!("{FIXTURES}/2.1.39-tool/transcript.jsonl");
    let out = run(&["explain", &path], b"");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    insta::assert_snapshot!("explain_old_release_candidate", text);
}

#[test]
fn explain_a_screen_dump() {
    let out = run(
        &["explain", "--as", "screen", "-"],
        "● Hi\n✻ Brewed for 4s\n".as_bytes(),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    insta::assert_snapshot!("explain_screen_banner", text);
}

#[test]
fn session_status_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("123.json");
    std::fs::write(
        &path,
        r#"{"pid":123,"sessionId":"s","status":"waiting","waitingFor":"permission prompt"}"#,
    )
    .unwrap();
    let v = json(&run(&["session", path.to_str().unwrap()], b""));
    assert_eq!(
        (v["state"].as_str(), v["waiting_for"].as_str()),
        (Some("waiting"), Some("permission prompt"))
    );
}

/// A simulated agent running as if in pane `pane` of zellij session `session`.
fn agent(tmp: &std::path::Path, session: &str, pane: u32, script: &str, turns: &str) -> std::process::Child {
    Command::new(BIN)
        .args([
            "demo-agent",
            "--name",
            "w",
            "--script",
            script,
            "--pace",
            "0.3",
            "--turns",
            turns,
        ])
        .env("ZELLIJ_PANE_ID", pane.to_string())
        .env("ZELLIJ_SESSION_NAME", session)
        .env("TMPDIR", tmp)
        .current_dir(tmp)
        .stdout(Stdio::null())
        .spawn()
        .expect("spawn demo agent")
}

fn wait(session: &str, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(["wait", "--session", session])
        .args(args)
        .output()
        .expect("run wait")
}

#[test]
fn wait_returns_when_the_pane_is_done_times_out_and_notices_a_missing_pane() {
    let tmp = tempfile::tempdir().unwrap();
    let session = format!("cli-wait-{}", std::process::id());
    let mut busy = agent(tmp.path(), &session, 7, "done", "1");
    let mut idle = agent(tmp.path(), &session, 8, "", "0");
    let done = wait(&session, &["--pane", "7", "--until", "done", "--timeout", "20"]);
    let timed_out = wait(&session, &["--pane", "8", "--until", "done", "--timeout", "1"]);
    let gone = wait(&session, &["--pane", "99", "--timeout", "5"]);
    let _ = (busy.kill(), idle.kill(), busy.wait(), idle.wait());
    assert_eq!(done.status.code(), Some(0), "{}", String::from_utf8_lossy(&done.stdout));
    assert!(String::from_utf8_lossy(&done.stdout).contains("\"done\""));
    assert_eq!(timed_out.status.code(), Some(3));
    assert_eq!(gone.status.code(), Some(4));
}

/// Runs the binary with a deadline; `None` when it was still running then.
fn run_within(args: &[&str], secs: u64) -> Option<Output> {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn turnstile");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while std::time::Instant::now() < deadline {
        if child.try_wait().expect("try_wait").is_some() {
            return Some(child.wait_with_output().expect("wait"));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

fn one_line_error(out: &Output, wanted: &str) {
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(wanted), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

#[test]
fn fifos_devices_and_folders_are_refused_at_once_with_their_kind() {
    // Issue 21: these hung `transcript`, `explain` and `screen` for good.
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("t.jsonl");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let fifo = fifo.to_str().unwrap();
    let folder = dir.path().to_str().unwrap();
    for (args, kind) in [
        (vec!["transcript", fifo], "a FIFO"),
        (vec!["explain", fifo], "a FIFO"),
        (vec!["screen", fifo], "a FIFO"),
        (vec!["transcript", "/dev/zero"], "a character device"),
        (vec!["explain", "/dev/urandom"], "a character device"),
        (vec!["screen", "/dev/zero"], "a character device"),
        (vec!["session", folder], "a folder"),
    ] {
        let out = run_within(&args, 10).unwrap_or_else(|| panic!("{args:?} still ran after 10 s"));
        one_line_error(&out, &format!("it is {kind}, not a regular file"));
    }
}

#[test]
fn huge_inputs_are_bounded_not_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    // A screen dump far larger than any screen: refused, not loaded.
    let big = dir.path().join("screen.txt");
    std::fs::File::create(&big).unwrap().set_len(64 << 20).unwrap();
    let out = run_within(&["screen", big.to_str().unwrap()], 10).expect("screen returned");
    one_line_error(&out, "larger than");
    // A 10 GB sparse transcript: classified from its last 64 MB.
    let sparse = dir.path().join("sparse.jsonl");
    std::fs::File::create(&sparse).unwrap().set_len(10 << 30).unwrap();
    let out = run_within(&["transcript", sparse.to_str().unwrap()], 20).expect("transcript returned");
    assert!(out.status.success(), "{out:?}");
    // A rollout without a single newline: linear, and bounded.
    let rollout = dir.path().join("rollout-2026-01-01T00-00-00-x.jsonl");
    std::fs::write(&rollout, vec![b'x'; 64 << 20]).unwrap();
    let out = run_within(&["transcript", rollout.to_str().unwrap()], 20).expect("rollout returned");
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn wait_wants_a_finite_timeout() {
    for bad in ["inf", "NaN", "-1"] {
        let bad = &format!("--timeout={bad}");
        let out = run_within(&["wait", "--pane", "1", "--session", "none", bad], 10).unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}: {out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("--timeout must be a finite"),
            "{bad}"
        );
    }
}

#[test]
fn no_home_is_an_error_not_the_current_folder() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .args(["watch", "--session", "s"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .current_dir(dir.path())
        .output()
        .unwrap();
    one_line_error(&out, "HOME is not set");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing made here");
}

#[test]
fn explain_reads_a_screen_with_the_agent_kind_given() {
    // Issue 22: `explain` ran only Claude Code's matcher.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/codex/frames");
    let frame = format!("{dir}/slow-done.txt");
    let title = std::fs::read_to_string(format!("{dir}/slow-done.title")).unwrap();
    let title = title.trim_end();
    let screen = json(&run(&["screen", &frame, "--agent", "codex", "--title", title], b""));
    let out = run(
        &[
            "explain", &frame, "--as", "screen", "--agent", "codex", "--title", title,
        ],
        b"",
    );
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("agent: codex\n"), "{text}");
    assert!(
        text.contains(&format!("state: {}\n", screen["state"].as_str().unwrap())),
        "{text}"
    );
    assert!(
        text.contains(&format!("rule: {}\n", screen["rule"].as_str().unwrap())),
        "{text}"
    );
}

/// Issue 42: `transcript` read a rules file's agent's log as Claude Code's
/// (`unknown`, "no prompt yet") where `explain` said `failed`; and
/// `explain --agent` hid a broken rules file behind "unknown agent".
#[test]
fn transcript_and_explain_read_a_user_agents_log_alike() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("mylogs");
    std::fs::create_dir_all(&logs).unwrap();
    let rules = dir.path().join("agents.kdl");
    let kdl = format!(
        "agent \"mine\" {{\n  process \"^mine$\"\n  log \"{}/*.jsonl\" {{\n    start \"type\" \"^prompt$\"\n    answer \"type\" \"^answer$\" text=\"text\"\n    error \"type\" \"^error$\"\n  }}\n}}\n",
        logs.display()
    );
    std::fs::write(&rules, kdl).unwrap();
    let log = logs.join("s1.jsonl");
    std::fs::write(
        &log,
        "{\"type\":\"prompt\",\"text\":\"go\"}\n{\"type\":\"error\",\"text\":\"boom\"}\n",
    )
    .unwrap();
    let (rules, log) = (rules.to_str().unwrap(), log.to_str().unwrap());
    let verdict = json(&run(&["transcript", log, "--rules", rules], b""));
    assert_eq!(verdict["state"], "failed", "{verdict}");
    let explained = run(&["explain", log, "--rules", rules], b"");
    let text = String::from_utf8_lossy(&explained.stdout);
    assert!(text.starts_with("state: failed\n"), "{text}");

    let broken = dir.path().join("broken.kdl");
    std::fs::write(&broken, "agent \"mine\" {\n  process \"(mine\"\n}\n").unwrap();
    let out = run(
        &["explain", log, "--rules", broken.to_str().unwrap(), "--agent", "mine"],
        b"",
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("broken.kdl line 2"), "{err}");
}

/// Issue 45: `demo-agent` wrote through a `$TMPDIR/turnstile-demo` that
/// another user planted as a symlink to a folder of theirs.
#[test]
fn the_demo_refuses_a_planted_folder_and_writes_nothing_there() {
    let tmp = tempfile::tempdir().unwrap();
    let theirs = tmp.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::os::unix::fs::symlink(&theirs, tmp.path().join("turnstile-demo")).unwrap();
    let out = Command::new(BIN)
        .args(["demo-agent", "--name", "x", "--turns", "1", "--pace", "0.01"])
        .env("TMPDIR", tmp.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success(), "{out:?}");
    one_line_error(&out, "symlink");
    assert_eq!(std::fs::read_dir(&theirs).unwrap().count(), 0, "nothing written there");
}

/// Issue 45: `transcript` and `explain` read OpenCode's database as a
/// Claude Code transcript (206 unreadable lines). The database itself names
/// its newest session, told by SQLite's header; `--agent` names the kind.
#[test]
fn transcript_and_explain_read_opencodes_database_by_its_header() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("oc");
    let mut agent = Command::new(BIN)
        .args([
            "demo-agent",
            "--kind",
            "opencode",
            "--name",
            "o",
            "--script",
            "done",
            "--turns",
            "1",
        ])
        .args(["--pace", "0.05", "--home", home.to_str().unwrap()])
        .env("TMPDIR", tmp.path())
        .current_dir(tmp.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let db = home.join("opencode.db");
    let db = db.to_str().unwrap();
    let started = std::time::Instant::now();
    let mut last = serde_json::Value::Null;
    while started.elapsed() < std::time::Duration::from_secs(30) && last["state"] != "done" {
        std::thread::sleep(std::time::Duration::from_millis(200));
        let out = run(&["transcript", db], b"");
        if out.status.success() {
            last = json(&out);
        }
    }
    let explained = run(&["explain", db], b"");
    let forced = run(&["transcript", db, "--agent", "opencode"], b"");
    let _ = (agent.kill(), agent.wait());
    assert_eq!(last["state"], "done", "{last}");
    assert!(!last["reason"].as_str().unwrap_or("").contains("unreadable"), "{last}");
    assert_eq!(json(&forced)["state"], "done");
    let text = String::from_utf8_lossy(&explained.stdout);
    assert!(text.starts_with("state: done"), "{text}");
    let help = String::from_utf8_lossy(&run(&["transcript", "--help"], b"").stdout).to_string();
    let help = help.split_whitespace().collect::<Vec<_>>().join(" "); // clap wraps to the terminal's width
    for kind in [
        "Claude Code",
        "Codex",
        "Gemini",
        "Qwen",
        "Copilot",
        "OpenCode",
        "rules file",
    ] {
        assert!(help.contains(kind), "{kind} in {help}");
    }
}

/// Every built-in agent kind is named wherever kinds are listed: in each
/// `--agent`/`--kind` help, with its folder under `core/src/agent/`, by its
/// tag in the README and with a section in docs/agents.md. A kind added to
/// `AgentKind::ALL` and left out of any of them fails here.
#[test]
fn every_agent_kind_has_a_folder_help_a_readme_tag_and_a_docs_section() {
    use turnstile_core::agent::AgentKind;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let docs = std::fs::read_to_string(root.join("docs/agents.md")).unwrap();
    let helps: Vec<String> = ["screen", "transcript", "demo-agent", "hook", "install-hooks", "explain"]
        .iter()
        .map(|command| String::from_utf8_lossy(&run(&[command, "--help"], b"").stdout).into_owned())
        .collect();
    for kind in AgentKind::ALL {
        let name = kind.name();
        assert!(
            root.join("core/src/agent").join(name).join("mod.rs").is_file(),
            "{name} has no folder"
        );
        if !kind.agent().takes_prompts() {
            continue; // `program`: not a coding agent
        }
        for (command, help) in ["screen", "transcript", "demo-agent", "hook", "install-hooks", "explain"]
            .iter()
            .zip(&helps)
        {
            assert!(help.contains(name), "`turnstile {command} --help` does not name {name}");
        }
        let tag = format!("`{}`", kind.agent().tag());
        assert!(readme.contains(&tag), "README.md does not list {name}'s tag {tag}");
        let sections = docs.lines().filter(|l| l.starts_with("## ")).map(str::to_lowercase);
        let section = sections.into_iter().any(|l| l.contains(name));
        assert!(section, "docs/agents.md has no section for {name}");
    }
}
