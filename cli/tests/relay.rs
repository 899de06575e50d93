//! `turnstile relay` with real processes, as `ssh host turnstile relay`
//! runs it on another machine: a simulated agent whose environment names
//! the session and its pane (as `SendEnv` carries them), the relay's
//! stdout read line by line as the local watcher reads it, and the relay's
//! end once nobody reads it.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};
use turnstile_core::relay::{RelayMessage, RelayReader, RELAY_VERSION};

const BIN: &str = env!("CARGO_BIN_EXE_turnstile");

/// Children killed at the end, whatever the test did.
struct Children(Vec<Child>);

impl Drop for Children {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn agent(dir: &std::path::Path, session: &str, pane: u32) -> Child {
    std::fs::create_dir_all(dir.join("work")).unwrap();
    Command::new(BIN)
        .args([
            "demo-agent",
            "--name",
            "far",
            "--script",
            "done",
            "--turns",
            "1",
            "--pace",
            "0.3",
        ])
        .env("ZELLIJ_PANE_ID", pane.to_string())
        .env("ZELLIJ_SESSION_NAME", session)
        .env("TMPDIR", dir)
        .current_dir(dir.join("work"))
        .stdout(Stdio::null())
        .spawn()
        .unwrap()
}

fn relay(dir: &std::path::Path, session: &str) -> Child {
    Command::new(BIN)
        .args(["relay", "--session", session])
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("TMPDIR", dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// The relay's messages as they come, read on a thread.
fn messages(child: &mut Child) -> Receiver<RelayMessage> {
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let mut reader = RelayReader::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            for message in reader.feed(format!("{line}\n").as_bytes()) {
                let _ = tx.send(message.expect("every line the relay writes is a message"));
            }
        }
    });
    rx
}

fn until(rx: &Receiver<RelayMessage>, what: &str, want: impl Fn(&RelayMessage) -> bool) -> RelayMessage {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen = Vec::new();
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(m) if want(&m) => return m,
            Ok(m) => seen.push(m),
            Err(_) => break,
        }
    }
    panic!("no {what} from the relay; it said {seen:?}");
}

fn done_of(pane: u32) -> impl Fn(&RelayMessage) -> bool {
    move |m| match m {
        RelayMessage::Report { report, hook: false } => {
            report.pane == pane && report.verdicts.iter().any(|v| v.state == turnstile_core::State::Done)
        }
        _ => false,
    }
}

#[test]
fn a_remote_agents_turn_comes_out_as_lines_after_the_hello() {
    let dir = tempfile::tempdir().unwrap();
    let session = format!("relay-{}", std::process::id());
    let mut children = Children(vec![agent(dir.path(), &session, 7)]);
    children.0.push(relay(dir.path(), &session));
    let rx = messages(&mut children.0[1]);
    let hello = until(&rx, "hello", |m| matches!(m, RelayMessage::Hello { .. }));
    assert!(
        matches!(
            hello,
            RelayMessage::Hello {
                version: RELAY_VERSION,
                ..
            }
        ),
        "{hello:?}"
    );
    let RelayMessage::Report { report, .. } = until(&rx, "the turn's done", done_of(7)) else {
        unreachable!()
    };
    assert_eq!(report.agent.map(|a| a.kind.name()), Some("claude"));
    assert!(report.answer.is_some_and(|a| a.contains("far")), "the answer comes too");
    until(&rx, "a beat while nothing changes", |m| *m == RelayMessage::Beat);
}

#[test]
fn a_relay_nobody_reads_any_more_exits_by_itself() {
    let dir = tempfile::tempdir().unwrap();
    let session = format!("relay-gone-{}", std::process::id());
    let mut children = Children(vec![relay(dir.path(), &session)]);
    let stdout = children.0[0].stdout.take().unwrap();
    let mut first = String::new();
    BufReader::new(stdout).read_line(&mut first).unwrap();
    assert!(first.contains("\"hello\""), "{first}");
    // The reader is dropped here: the ssh that read it is gone.
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Some(status) = children.0[0].try_wait().unwrap() {
            assert!(status.success(), "a closed stdout is a normal end: {status}");
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the relay still runs 10 s after its reader went away");
}
