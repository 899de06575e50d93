//! `turnstile replay DIR`: plays a recorded Claude Code session in a pane —
//! its screens at their recorded times, its transcript appended in step,
//! and its session status file — so tests and demos drive the real formats
//! without an account. The process stays alive afterwards (`--hold`) so the
//! host finds it in /proc like a real agent.

use anyhow::{Context, Result};
use serde_json::Value;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use turnstile_core::agent::claude::home::ClaudeHome;

/// Options of a replay.
pub struct ReplayOptions {
    /// The recording folder (frames.json, transcript.jsonl).
    pub dir: PathBuf,
    /// Claude home to write into (default `$CLAUDE_CONFIG_DIR` or `~/.claude`).
    pub home: Option<PathBuf>,
    /// Playback speed factor.
    pub speed: f64,
    /// Seconds to stay alive after the last frame (default: forever).
    pub hold: Option<f64>,
}

/// Plays the recording.
pub fn run(options: ReplayOptions) -> Result<()> {
    let frames: Value = serde_json::from_slice(
        &fs::read(options.dir.join("frames.json"))
            .with_context(|| format!("cannot read {}/frames.json", options.dir.display()))?,
    )
    .context("frames.json is not JSON")?;
    let transcript = fs::read(options.dir.join("transcript.jsonl")).context("cannot read transcript.jsonl")?;
    let home = match &options.home {
        Some(home) => ClaudeHome::at(home),
        None => ClaudeHome::of_user().context("neither CLAUDE_CONFIG_DIR nor HOME is set")?,
    };
    let session_id = frames
        .pointer("/meta/transcript_path")
        .and_then(Value::as_str)
        .and_then(|p| Path::new(p).file_stem()?.to_str().map(str::to_owned))
        .unwrap_or_else(|| format!("replay-{}", std::process::id()));
    let cwd = std::env::current_dir().context("no current directory")?;
    let target = home.project(&cwd).join(format!("{session_id}.jsonl"));
    fs::create_dir_all(target.parent().unwrap_or(home.root())).context("cannot create the transcript folder")?;
    fs::write(&target, b"").with_context(|| format!("cannot create {}", target.display()))?;
    let status_file = home.status_file(std::process::id());
    let _ = fs::create_dir_all(home.sessions());
    let statuses = frames["session_status"].as_array().cloned().unwrap_or_default();
    let start = Instant::now();
    let mut written = 0usize;
    let mut next_status = 0;
    let mut out = std::io::stdout().lock();
    for frame in frames["frames"].as_array().map(Vec::as_slice).unwrap_or_default() {
        let t = frame["t"].as_f64().unwrap_or(0.0) / options.speed.max(0.01);
        sleep_until(start, t);
        if let Some(screen) = frame["screen"].as_str() {
            let body = screen.trim_end_matches('\n').replace('\n', "\r\n");
            write!(out, "\x1b[H\x1b[2J{body}").and_then(|()| out.flush()).ok();
        }
        let want = (frame["transcript_bytes"].as_u64().unwrap_or(0) as usize).min(transcript.len());
        if want > written {
            let mut file = OpenOptions::new()
                .append(true)
                .open(&target)
                .context("cannot append to the transcript")?;
            file.write_all(&transcript[written..want])
                .context("cannot append to the transcript")?;
            written = want;
        }
        while next_status < statuses.len() && statuses[next_status]["t"].as_f64().unwrap_or(0.0) / options.speed <= t {
            write_status(&status_file, &statuses[next_status], &session_id);
            next_status += 1;
        }
    }
    match options.hold {
        Some(secs) => std::thread::sleep(Duration::from_secs_f64(secs.max(0.0))),
        None => loop {
            std::thread::sleep(Duration::from_secs(3600));
        },
    }
    let _ = fs::remove_file(status_file);
    Ok(())
}

/// Writes a recorded status with this process's pid and the session id.
fn write_status(path: &Path, entry: &Value, session_id: &str) {
    let Some(mut status) = entry["status"]
        .as_str()
        .and_then(|s| serde_json::from_str::<Value>(s).ok())
    else {
        return;
    };
    status["pid"] = Value::from(std::process::id());
    status["sessionId"] = Value::from(session_id);
    let _ = fs::write(path, status.to_string());
}

fn sleep_until(start: Instant, secs: f64) {
    let due = Duration::from_secs_f64(secs.max(0.0));
    if let Some(wait) = due.checked_sub(start.elapsed()) {
        std::thread::sleep(wait);
    }
}
