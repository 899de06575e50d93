//! `turnstile hook` with real Claude Code hook payloads, and
//! `turnstile install-hooks` on real settings files.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_turnstile");
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/claude-code");

/// The recorded payloads of one fixture, in order.
fn payloads(fixture: &str) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(format!("{FIXTURES}/{fixture}/hooks.jsonl")).unwrap();
    text.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["hook"].clone())
        .collect()
}

/// A fake `zellij` that appends its arguments, then what it reads on
/// stdin (the report: never on the command line), to a file.
fn fake_zellij(dir: &Path) -> String {
    let script = dir.join("zellij");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" >> {0}/calls\ncat >> {0}/calls\n",
            dir.display()
        ),
    )
    .unwrap();
    Command::new("chmod").arg("+x").arg(&script).status().unwrap();
    script.display().to_string()
}

fn hook(dir: &Path, stdin: &[u8], pane: Option<&str>) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.arg("hook")
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("TURNSTILE_ZELLIJ", fake_zellij(dir))
        .env_remove("ZELLIJ_PANE_ID")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(p) = pane {
        cmd.env("ZELLIJ_PANE_ID", p).env("ZELLIJ_SESSION_NAME", "sess");
    }
    let mut child = cmd.spawn().unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

fn calls(dir: &Path) -> String {
    // The pipe is started, not awaited: give the fake a moment to write.
    for _ in 0..100 {
        if let Ok(text) = std::fs::read_to_string(dir.join("calls")) {
            if text.ends_with("\n") && text.contains('{') {
                return text;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    String::new()
}

#[test]
fn stop_hook_of_2_1_332_pushes_a_done_with_the_answer_and_records_the_binding() {
    let dir = tempfile::tempdir().unwrap();
    let stop = payloads("2.1.332-hooks")
        .into_iter()
        .find(|p| p["hook_event_name"] == "Stop")
        .unwrap();
    let out = hook(dir.path(), stop.to_string().as_bytes(), Some("5"));
    assert!(out.status.success());
    assert!(out.stdout.is_empty(), "a hook must print nothing");
    let calls = calls(dir.path());
    assert!(calls.contains("--session\nsess\npipe\n--name\nverdict\n{"), "{calls}");
    let payload: serde_json::Value = serde_json::from_str(calls.lines().last().unwrap()).unwrap();
    assert_eq!(payload["pane"], 5);
    assert_eq!(payload["verdicts"][0]["state"], "done");
    assert_eq!(payload["verdicts"][0]["source"], "hook");
    assert_eq!(payload["answer"], "Done: slept 3s.");
    let binding = dir.path().join("state/turnstile/bindings/sess/5.json");
    let record: serde_json::Value = serde_json::from_slice(&std::fs::read(binding).unwrap()).unwrap();
    assert_eq!(record["session_id"], stop["session_id"]);
}

#[test]
fn old_release_stop_without_answer_reads_it_from_the_transcript() {
    let dir = tempfile::tempdir().unwrap();
    let mut stop = payloads("2.1.39-hooks")
        .into_iter()
        .find(|p| p["hook_event_name"] == "Stop")
        .unwrap();
    stop["transcript_path"] = format!("{FIXTURES}/2.1.39-tool/transcript.jsonl").into();
    hook(dir.path(), stop.to_string().as_bytes(), Some("2"));
    let payload: serde_json::Value = serde_json::from_str(calls(dir.path()).lines().last().unwrap()).unwrap();
    assert_eq!(payload["answer"], "Done: slept 4s.");
}

#[test]
fn every_recorded_event_exits_0_silently() {
    for fixture in ["2.1.332-hooks", "2.1.39-hooks"] {
        for p in payloads(fixture) {
            let dir = tempfile::tempdir().unwrap();
            let out = hook(dir.path(), p.to_string().as_bytes(), Some("1"));
            assert!(
                out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(),
                "{p}"
            );
        }
    }
}

#[test]
fn garbage_no_zellij_and_a_dead_session_still_exit_0() {
    let dir = tempfile::tempdir().unwrap();
    for (stdin, pane) in [
        (&b"\xff not json"[..], Some("1")),
        (br#"{"hook_event_name":"Stop"}"#, None),
        (b"", Some("x")),
    ] {
        let out = hook(dir.path(), stdin, pane);
        assert!(out.status.success() && out.stdout.is_empty());
    }
    // A zellij that fails (dead session) changes nothing either.
    let out = Command::new(BIN)
        .arg("hook")
        .env("ZELLIJ_PANE_ID", "1")
        .env("ZELLIJ_SESSION_NAME", "gone")
        .env("XDG_STATE_HOME", dir.path())
        .env("TURNSTILE_ZELLIJ", "/bin/false")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            c.stdin
                .take()
                .unwrap()
                .write_all(br#"{"hook_event_name":"UserPromptSubmit","prompt":"x"}"#)?;
            c.wait_with_output()
        })
        .unwrap();
    assert!(out.status.success() && out.stdout.is_empty());
}

fn install(home: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("HOME", home)
        .env_remove("CLAUDE_CONFIG_DIR")
        .output()
        .unwrap()
}

#[test]
fn install_hooks_merges_keeps_a_backup_and_is_idempotent() {
    let home = tempfile::tempdir().unwrap();
    let settings = home.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let mine = r#"{"model":"opus","hooks":{"Stop":[{"hooks":[{"type":"command","command":"notify-send done"}]}]}}"#;
    std::fs::write(&settings, mine).unwrap();
    assert!(install(home.path(), &["install-hooks"]).status.success());
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&settings).unwrap()).unwrap();
    assert_eq!(v["model"], "opus");
    assert_eq!(v["hooks"]["Stop"].as_array().unwrap().len(), 2);
    for event in [
        "UserPromptSubmit",
        "Stop",
        "SessionStart",
        "SessionEnd",
        "Notification",
        "PermissionRequest",
    ] {
        assert!(v["hooks"][event].to_string().contains("turnstile hook"), "{event}");
    }
    assert!(
        v["hooks"].get("StopFailure").is_none(),
        "2.1.39 rejects a settings file that names StopFailure"
    );
    assert_eq!(
        std::fs::read_to_string(backups(&settings).pop().unwrap()).unwrap(),
        mine
    );
    let again = install(home.path(), &["install-hooks"]);
    assert!(String::from_utf8_lossy(&again.stderr).contains("already"));
    assert!(install(home.path(), &["uninstall-hooks"]).status.success());
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&settings).unwrap()).unwrap();
    assert_eq!(v, serde_json::from_str::<serde_json::Value>(mine).unwrap());
}

#[test]
fn stop_failure_is_installed_on_request() {
    let home = tempfile::tempdir().unwrap();
    assert!(install(home.path(), &["install-hooks", "--stop-failure"])
        .status
        .success());
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(home.path().join(".claude/settings.json")).unwrap()).unwrap();
    assert!(v["hooks"]["StopFailure"].to_string().contains("turnstile hook"));
}

#[test]
fn install_hooks_refuses_a_file_it_cannot_parse_and_dry_run_writes_nothing() {
    let home = tempfile::tempdir().unwrap();
    let settings = home.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, "{ not json").unwrap();
    let out = install(home.path(), &["install-hooks"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not valid JSON"));
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), "{ not json");
    std::fs::remove_file(&settings).unwrap();
    let out = install(home.path(), &["install-hooks", "--dry-run"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("turnstile hook"));
    assert!(!settings.exists());
}

fn codex_hook(dir: &Path, name: &str) -> Output {
    let payload = std::fs::read(format!("{FIXTURES}/../codex/hooks/{name}.json")).unwrap();
    let mut cmd = Command::new(BIN);
    cmd.args(["hook", "--agent", "codex"])
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("TURNSTILE_ZELLIJ", fake_zellij(dir))
        .env("ZELLIJ_PANE_ID", "3")
        .env("ZELLIJ_SESSION_NAME", "sess")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child.stdin.take().unwrap().write_all(&payload).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn codex_stop_hook_pushes_a_codex_done_with_its_answer_and_binds_the_rollout() {
    let dir = tempfile::tempdir().unwrap();
    let out = codex_hook(dir.path(), "Stop");
    assert!(out.status.success() && out.stdout.is_empty());
    let calls = calls(dir.path());
    let payload: serde_json::Value = serde_json::from_str(calls.lines().last().unwrap()).unwrap();
    assert_eq!(payload["verdicts"][0]["state"], "done");
    assert_eq!(payload["agent"]["kind"], "codex");
    assert_eq!(payload["answer"], "hi");
    let record = std::fs::read_to_string(dir.path().join("state/turnstile/bindings/sess/3.json")).unwrap();
    assert!(record.contains("rollout-2026-12-03T17-52-30"), "{record}");
}

#[test]
fn codex_prompt_hook_says_working() {
    let dir = tempfile::tempdir().unwrap();
    assert!(codex_hook(dir.path(), "UserPromptSubmit").status.success());
    let calls = calls(dir.path());
    let payload: serde_json::Value = serde_json::from_str(calls.lines().last().unwrap()).unwrap();
    assert_eq!(payload["verdicts"][0]["state"], "working");
}

#[test]
fn install_hooks_for_codex_merges_into_its_hooks_json() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join(".codex/hooks.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let mine = r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"notify-send done"}]}]}}"#;
    std::fs::write(&file, mine).unwrap();
    let run = |args: &[&str]| {
        Command::new(BIN)
            .args(args)
            .env("HOME", home.path())
            .env_remove("CODEX_HOME")
            .output()
            .unwrap()
    };
    assert!(run(&["install-hooks", "--agent", "codex"]).status.success());
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(v["hooks"]["Stop"].as_array().unwrap().len(), 2, "the user's hook stays");
    for event in ["SessionStart", "UserPromptSubmit", "Stop", "PermissionRequest"] {
        assert!(v["hooks"][event].to_string().contains("hook --agent codex"), "{event}");
    }
    assert_eq!(std::fs::read_to_string(backups(&file).pop().unwrap()).unwrap(), mine);
    let again = run(&["install-hooks", "--agent", "codex"]);
    assert!(String::from_utf8_lossy(&again.stderr).contains("already"));
    assert!(run(&["uninstall-hooks", "--agent", "codex"]).status.success());
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(v, serde_json::from_str::<serde_json::Value>(mine).unwrap());
    std::fs::write(&file, "{ not json").unwrap();
    let refused = run(&["install-hooks", "--agent", "codex"]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("not valid JSON"));
    assert!(!run(&["install-hooks", "--agent", "codex", "--project"])
        .status
        .success());
}

/// A recorded Gemini CLI hook payload (the first of `event`), its
/// transcript path pointed at a copy of the recording's chat log.
fn gemini_payload(dir: &Path, event: &str) -> serde_json::Value {
    let fixture = format!("{FIXTURES}/../gemini/0.61.0-tool");
    let chats = dir.join("chats");
    std::fs::create_dir_all(&chats).unwrap();
    let log = chats.join("session-test.jsonl");
    std::fs::copy(format!("{fixture}/transcript.jsonl"), &log).unwrap();
    let text = std::fs::read_to_string(format!("{fixture}/hooks.jsonl")).unwrap();
    let mut hook = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["hook"].clone())
        .find(|h| h["hook_event_name"] == event)
        .unwrap();
    hook["transcript_path"] = serde_json::json!(log.display().to_string());
    hook
}

fn gemini_hook(dir: &Path, payload: &serde_json::Value) -> serde_json::Value {
    let child = start_hook(dir, &["--agent", "gemini"], "4", payload);
    assert!(child.wait_with_output().unwrap().status.success());
    serde_json::from_str(calls(dir).lines().last().unwrap()).unwrap()
}

#[test]
fn gemini_after_agent_confirms_the_answer_the_chat_log_holds() {
    let dir = tempfile::tempdir().unwrap();
    let report = gemini_hook(dir.path(), &gemini_payload(dir.path(), "AfterAgent"));
    assert_eq!(report["verdicts"][0]["state"], "done");
    assert_eq!(report["agent"]["kind"], "gemini");
    assert_eq!(
        report["answer"], "Done: slept 4s.",
        "the log's last answer, not the preamble too"
    );
}

/// A log that cannot be read (here: a FIFO nobody writes) leaves the
/// hook a mark of the turn's end, never a plain working that nothing
/// would confirm later.
#[test]
fn gemini_after_agent_without_a_readable_log_marks_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let mut payload = gemini_payload(dir.path(), "AfterAgent");
    let fifo = dir.path().join("fifo.jsonl");
    let c = std::ffi::CString::new(fifo.display().to_string()).unwrap();
    // SAFETY: a valid C string; mkfifo only creates the node.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    payload["transcript_path"] = serde_json::json!(fifo.display().to_string());
    let report = gemini_hook(dir.path(), &payload);
    assert_eq!(report["verdicts"][0]["state"], "working");
    assert_eq!(report["verdicts"][0]["candidate"], "done");
}

#[test]
fn gemini_after_agent_on_a_cancelled_turn_is_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let mut payload = gemini_payload(dir.path(), "AfterAgent");
    let log = std::path::PathBuf::from(payload["transcript_path"].as_str().unwrap());
    std::fs::copy(format!("{FIXTURES}/../gemini/0.61.0-interrupt/transcript.jsonl"), &log).unwrap();
    let text = std::fs::read(&log).unwrap();
    // The log as it was when the cancel was written (before the next prompt).
    let cut = memchr::memmem::find(&text, b"Request cancelled.").unwrap();
    let end = cut + text[cut..].iter().position(|b| *b == b'\n').unwrap() + 1;
    std::fs::write(&log, &text[..end]).unwrap();
    payload["prompt_response"] = serde_json::json!("");
    let report = gemini_hook(dir.path(), &payload);
    assert_eq!(report["verdicts"][0]["state"], "interrupted");
}

#[test]
fn gemini_before_agent_and_tool_permission_say_working_and_waiting() {
    for (event, state) in [("BeforeAgent", "working"), ("Notification", "waiting")] {
        let dir = tempfile::tempdir().unwrap();
        let report = gemini_hook(dir.path(), &gemini_payload(dir.path(), event));
        assert_eq!(report["verdicts"][0]["state"], state, "{event}");
    }
}

#[test]
fn install_hooks_for_gemini_merges_into_its_settings_with_matchers() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join(".gemini/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let mine = r#"{"model":{"name":"gemini-2.5-flash"},"security":{"auth":{"selectedType":"gemini-api-key"}}}"#;
    std::fs::write(&file, mine).unwrap();
    let run = |args: &[&str]| Command::new(BIN).args(args).env("HOME", home.path()).output().unwrap();
    assert!(run(&["install-hooks", "--agent", "gemini"]).status.success());
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(v["model"]["name"], "gemini-2.5-flash");
    for event in [
        "SessionStart",
        "BeforeAgent",
        "AfterAgent",
        "Notification",
        "SessionEnd",
    ] {
        let group = &v["hooks"][event][0];
        assert_eq!(group["matcher"], "*", "{event}");
        assert_eq!(group["hooks"][0]["timeout"], 5000, "Gemini counts milliseconds");
        assert!(group.to_string().contains("hook --agent gemini"), "{event}");
    }
    assert!(String::from_utf8_lossy(&run(&["install-hooks", "--agent", "gemini"]).stderr).contains("already"));
    assert!(run(&["uninstall-hooks", "--agent", "gemini"]).status.success());
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(v, serde_json::from_str::<serde_json::Value>(mine).unwrap());
}

/// The backups kept beside a settings file, oldest first.
fn backups(settings: &Path) -> Vec<std::path::PathBuf> {
    let name = settings.file_name().unwrap().to_str().unwrap().to_owned();
    let mut found: Vec<_> = std::fs::read_dir(settings.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&format!("{name}.turnstile-backup-")))
        })
        .collect();
    found.sort();
    found
}

#[test]
fn ten_concurrent_installs_lose_nothing_fifty_times() {
    // Issue 21: every run wrote the same temporary name and nothing
    // serialized the read-modify-write; 21 of 300 rounds lost user data.
    let home = tempfile::tempdir().unwrap();
    let settings = home.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let mine =
        r#"{"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}}"#;
    for round in 0..50 {
        std::fs::write(&settings, mine).unwrap();
        let runs: Vec<_> = (0..10)
            .map(|i| {
                let verb = if i % 3 == 2 { "uninstall-hooks" } else { "install-hooks" };
                Command::new(BIN)
                    .arg(verb)
                    .env("HOME", home.path())
                    .env_remove("CLAUDE_CONFIG_DIR")
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for run in runs {
            let out = run.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "round {round}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&settings).unwrap()).unwrap();
        assert_eq!(v["model"], "opus", "round {round}");
        assert!(
            v["hooks"]["Stop"].to_string().contains("notify-send done"),
            "round {round}"
        );
        let stop_ours = v["hooks"]["Stop"].to_string().matches("turnstile").count();
        assert!(stop_ours <= 1, "round {round}: installed twice: {v}");
    }
}

#[test]
fn a_symlinked_0600_settings_file_keeps_its_link_mode_numbers_and_order() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let dotfiles = home.path().join("dotfiles/claude-settings.json");
    std::fs::create_dir_all(dotfiles.parent().unwrap()).unwrap();
    let mine = r#"{"zeta": 12345678901234567890123, "alpha": 1.50, "model": "opus"}"#;
    std::fs::write(&dotfiles, mine).unwrap();
    std::fs::set_permissions(&dotfiles, std::fs::Permissions::from_mode(0o600)).unwrap();
    let settings = home.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&dotfiles, &settings).unwrap();

    let out = install(home.path(), &["install-hooks"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(std::fs::symlink_metadata(&settings).unwrap().file_type().is_symlink());
    let text = std::fs::read_to_string(&dotfiles).unwrap();
    assert!(
        text.contains("12345678901234567890123") && text.contains("1.50"),
        "{text}"
    );
    let keys: Vec<usize> = ["zeta", "alpha", "model", "hooks"]
        .iter()
        .map(|k| text.find(&format!("\"{k}\"")).unwrap())
        .collect();
    assert!(keys.windows(2).all(|w| w[0] < w[1]), "key order kept: {text}");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dotfiles), 0o600);

    assert!(install(home.path(), &["uninstall-hooks"]).status.success());
    let kept = backups(&dotfiles);
    assert_eq!(kept.len(), 2, "one backup per change: {kept:?}");
    assert_eq!(
        std::fs::read_to_string(&kept[0]).unwrap(),
        mine,
        "the original survives"
    );
    assert!(kept.iter().all(|b| mode(b) == 0o600));
}

#[test]
fn a_hooks_list_is_an_error_not_already_installed() {
    let home = tempfile::tempdir().unwrap();
    let settings = home.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, r#"{"hooks": []}"#).unwrap();
    let out = install(home.path(), &["install-hooks"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("`hooks` is a list") && !err.contains("already"), "{err}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), r#"{"hooks": []}"#);
}

/// Starts `turnstile hook ARGS` in pane `pane` of session `sess`, its own
/// state and fake `zellij` under `dir`, `payload` written to its stdin.
fn start_hook(dir: &Path, args: &[&str], pane: &str, payload: &serde_json::Value) -> std::process::Child {
    let mut child = Command::new(BIN)
        .arg("hook")
        .args(args)
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("TURNSTILE_ZELLIJ", fake_zellij(dir))
        .env("ZELLIJ_PANE_ID", pane)
        .env("ZELLIJ_SESSION_NAME", "sess")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes())
        .unwrap();
    child
}

/// Runs `turnstile hook` with `payload` under a deadline; its exit status
/// and how long it took.
fn hook_within(dir: &Path, args: &[&str], payload: &serde_json::Value) -> (bool, std::time::Duration) {
    let started = std::time::Instant::now();
    let mut child = start_hook(dir, args, "3", payload);
    for _ in 0..200 {
        if let Some(status) = child.try_wait().unwrap() {
            return (status.success(), started.elapsed());
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let _ = child.kill();
    (false, started.elapsed())
}

fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

#[test]
fn a_turn_end_hook_on_a_fifo_device_or_sparse_file_returns_with_exit_0() {
    // Issue 21: each of these hung the hook (and so the agent) for good.
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("t.jsonl");
    mkfifo(&fifo);
    let sparse = dir.path().join("sparse.jsonl");
    std::fs::File::create(&sparse).unwrap().set_len(10 << 30).unwrap();
    let cases: [(&[&str], &str, &Path); 5] = [
        (&[], "Stop", &fifo),
        (&[], "Stop", &sparse),
        (&["--agent", "gemini"], "AfterAgent", Path::new("/dev/zero")),
        (&["--agent", "gemini"], "AfterAgent", Path::new("/dev/urandom")),
        (&["--agent", "gemini"], "AfterAgent", &fifo),
    ];
    for (args, event, path) in cases {
        let payload = serde_json::json!({
            "hook_event_name": event, "session_id": "s", "cwd": "/tmp",
            "transcript_path": path,
        });
        let (ok, took) = hook_within(dir.path(), args, &payload);
        assert!(ok, "{event} on {}: not exit 0 within 10 s", path.display());
        // The hook's own budget is 3 s; agents give it 5.
        assert!(
            took < std::time::Duration::from_secs(5),
            "{event} on {}: {took:?}",
            path.display()
        );
    }
}

#[test]
fn a_large_answer_reaches_zellij_on_stdin_whole_never_in_argv() {
    // Issue 21: an answer of ~128 KiB failed with E2BIG on the command line
    // and was dropped; every local user could read smaller ones there.
    let dir = tempfile::tempdir().unwrap();
    let answer = "word ".repeat(60_000); // 300 KB
    let stop = serde_json::json!({"hook_event_name": "Stop", "session_id": "s", "cwd": "/w",
        "last_assistant_message": answer, "background_tasks": []});
    let out = hook(dir.path(), stop.to_string().as_bytes(), Some("6"));
    assert!(out.status.success());
    let calls = calls(dir.path());
    let (args, stdin) = calls.split_once('{').expect("the report on stdin");
    assert!(!args.contains("word"), "no answer text in argv");
    let payload: serde_json::Value = serde_json::from_str(&format!("{{{stdin}")).unwrap();
    assert_eq!(payload["answer"].as_str().map(str::len), Some(answer.len()));
}

#[test]
fn copilot_hooks_name_their_event_and_the_hook_finds_the_sessions_log() {
    // Copilot CLI's payloads are camelCase and name neither their event nor
    // (but at agentStop) the session's log.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(format!("{FIXTURES}/../copilot/1.0.102-tool/hooks.jsonl")).unwrap();
    let payload = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|r| r["argv"][0] == "userPromptSubmitted")
        .unwrap()["hook"]
        .clone();
    let session = payload["sessionId"].as_str().unwrap().to_owned();
    let child = start_hook(
        dir.path(),
        &["--agent", "copilot", "--event", "userPromptSubmitted"],
        "6",
        &payload,
    );
    assert!(child.wait_with_output().unwrap().status.success());
    let report: serde_json::Value = serde_json::from_str(calls(dir.path()).lines().last().unwrap()).unwrap();
    assert_eq!(report["verdicts"][0]["state"], "working");
    assert_eq!(report["agent"]["kind"], "copilot");
    let log = format!(".copilot/session-state/{session}/events.jsonl");
    assert!(
        report["agent"]["transcript"].as_str().unwrap().ends_with(&log),
        "{report}"
    );
    let record = std::fs::read_to_string(dir.path().join("state/turnstile/bindings/sess/6.json")).unwrap();
    assert!(
        record.contains(&log),
        "the pane is bound from the first prompt: {record}"
    );
}

#[test]
fn install_hooks_for_copilot_and_qwen_write_the_shapes_they_read() {
    let home = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| Command::new(BIN).args(args).env("HOME", home.path()).output().unwrap();
    assert!(run(&["install-hooks", "--agent", "copilot"]).status.success());
    let file = home.path().join(".copilot/hooks/hooks.json");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(v["version"], 1);
    for event in ["userPromptSubmitted", "notification", "agentStop", "sessionEnd"] {
        let entry = &v["hooks"][event][0];
        assert_eq!(entry["type"], "command", "{event}: a flat entry");
        let bash = entry["bash"].as_str().unwrap();
        assert!(
            bash.ends_with(&format!("hook --agent copilot --event {event}")),
            "{bash}"
        );
    }
    assert!(String::from_utf8_lossy(&run(&["install-hooks", "--agent", "copilot"]).stderr).contains("already"));
    assert!(run(&["uninstall-hooks", "--agent", "copilot"]).status.success());
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(v, serde_json::json!({"version": 1}));

    assert!(run(&["install-hooks", "--agent", "qwen"]).status.success());
    let file = home.path().join(".qwen/settings.json");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let group = &v["hooks"]["Stop"][0];
    assert_eq!(group["matcher"], "*");
    assert_eq!(group["hooks"][0]["timeout"], 5, "Qwen Code counts seconds");
    assert!(run(&["uninstall-hooks", "--agent", "qwen"]).status.success());
}

#[test]
fn an_opencode_turn_end_over_a_fifo_where_its_database_should_be_is_reported_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(data.join("opencode")).unwrap();
    mkfifo(&data.join("opencode/opencode.db"));
    let started = std::time::Instant::now();
    let mut child = Command::new(BIN)
        .args(["hook", "--agent", "opencode", "--event", "session.idle"])
        .env("XDG_STATE_HOME", dir.path().join("state"))
        .env("XDG_DATA_HOME", &data)
        .env("TURNSTILE_ZELLIJ", fake_zellij(dir.path()))
        .env("ZELLIJ_PANE_ID", "7")
        .env("ZELLIJ_SESSION_NAME", "sess")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let payload = br#"{"session_id":"ses_abc123","cwd":"/p"}"#;
    child.stdin.take().unwrap().write_all(payload).unwrap();
    assert!(child.wait().unwrap().success());
    assert!(
        started.elapsed() < std::time::Duration::from_millis(1_500),
        "the FIFO is refused, not waited on: {:?}",
        started.elapsed()
    );
    let report: serde_json::Value = serde_json::from_str(calls(dir.path()).lines().last().unwrap()).unwrap();
    assert_eq!(report["agent"]["kind"], "opencode");
    let log = report["agent"]["transcript"].as_str().unwrap();
    assert!(log.ends_with("opencode/opencode.db/ses_abc123"), "{log}");
    assert_eq!(
        report["verdicts"][0]["state"], "working",
        "the rows unread: a mark, never a done"
    );
    assert_eq!(report["verdicts"][0]["candidate"], "done");
}

#[test]
fn install_hooks_for_opencode_writes_its_plugin_and_leaves_anyone_elses_file() {
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("cfg");
    let run = |args: &[&str]| {
        Command::new(BIN)
            .args(args)
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", &config)
            .output()
            .unwrap()
    };
    assert!(run(&["install-hooks", "--agent", "opencode"]).status.success());
    let plugin = config.join("opencode/plugins/turnstile.js");
    let source = std::fs::read_to_string(&plugin).unwrap();
    assert!(source.starts_with("// turnstile:"), "{source}");
    assert!(source.contains("hook --agent opencode"), "{source}");
    assert!(String::from_utf8_lossy(&run(&["install-hooks", "--agent", "opencode"]).stderr).contains("already"));
    assert!(run(&["uninstall-hooks", "--agent", "opencode"]).status.success());
    assert!(!plugin.exists());
    std::fs::write(&plugin, "export const Mine = async () => ({});\n").unwrap();
    let refused = run(&["install-hooks", "--agent", "opencode"]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("not turnstile's plugin"));
    assert!(!run(&["uninstall-hooks", "--agent", "opencode"]).status.success());
    assert_eq!(
        std::fs::read_to_string(&plugin).unwrap(),
        "export const Mine = async () => ({});\n"
    );
}

#[test]
fn an_opencode_subagents_session_is_never_taken_for_the_panes_turn() {
    // OpenCode's `task` tool runs a subagent in a session of its own (with a
    // parent): its `session.idle` must not end the pane's turn, nor bind it.
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(data.join("opencode")).unwrap();
    let db = rusqlite::Connection::open(data.join("opencode/opencode.db")).unwrap();
    db.execute_batch(
        "CREATE TABLE session (id TEXT PRIMARY KEY, parent_id TEXT, directory TEXT, time_created INTEGER, time_updated INTEGER);
         CREATE TABLE event (id TEXT PRIMARY KEY, aggregate_id TEXT, seq INTEGER, type TEXT, data TEXT);
         INSERT INTO session VALUES ('ses_root', NULL, '/p', 1, 1), ('ses_child', 'ses_root', '/p', 2, 2);",
    )
    .unwrap();
    drop(db);
    let idle = |session: &str| {
        let mut child = Command::new(BIN)
            .args(["hook", "--agent", "opencode", "--event", "session.idle"])
            .env("XDG_STATE_HOME", dir.path().join("state"))
            .env("XDG_DATA_HOME", &data)
            .env("TURNSTILE_ZELLIJ", fake_zellij(dir.path()))
            .env("ZELLIJ_PANE_ID", "4")
            .env("ZELLIJ_SESSION_NAME", "sess")
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        let payload = format!(r#"{{"session_id":"{session}","cwd":"/p"}}"#);
        child.stdin.take().unwrap().write_all(payload.as_bytes()).unwrap();
        assert!(child.wait().unwrap().success());
    };
    idle("ses_child");
    assert_eq!(calls(dir.path()), "", "a subagent's turn end is dropped");
    assert!(!dir.path().join("state/turnstile/bindings/sess/4.json").exists());
    idle("ses_root");
    let report: serde_json::Value = serde_json::from_str(calls(dir.path()).lines().last().unwrap()).unwrap();
    assert!(report["agent"]["transcript"]
        .as_str()
        .unwrap()
        .ends_with("opencode.db/ses_root"));
}
