//! Benchmarks of the hot paths: the screen matcher on a full viewport, one
//! appended transcript line, and a cold read of a 1 GB transcript's tail.
//!
//! `cargo bench -p turnstile-core` (set `TURNSTILE_BENCH_GB=0` to skip the
//! 1 GB file, which is generated once under `target/`).

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use turnstile_core::agent::claude::screen;
use turnstile_core::agent::claude::transcript::{classify_tail, Classifier, TailOptions};
use turnstile_core::ansi;

const TOOL_TURN: &[u8] = include_bytes!("../../tests/fixtures/claude-code/2.1.332-tool/transcript.jsonl");

/// A 40×120 viewport: a long answer above the finished banner and the input box.
fn viewport(busy: bool) -> Vec<String> {
    let mut rows: Vec<String> = (0..33)
        .map(|i| {
            format!(
                "  line {i} of a long answer that fills the pane with prose about the change {}",
                "x".repeat(30)
            )
        })
        .collect();
    rows.push("● Done: slept 4s.".into());
    rows.push("✻ Cooked for 4s · done 5:28 AM".into());
    rows.push("─".repeat(120));
    rows.push("❯ ".into());
    rows.push("─".repeat(120));
    let footer = if busy {
        "  ⏵⏵ bypass permissions on (shift+tab to cycle) · esc to interrupt"
    } else {
        "  ⏵⏵ bypass permissions on (shift+tab to cycle)"
    };
    rows.push(footer.into());
    rows.push(String::new());
    rows
}

fn bench_screen(c: &mut Criterion) {
    let done = viewport(false);
    let busy = viewport(true);
    let answer_only: Vec<String> = (0..40)
        .map(|i| format!("  plain answer row {i} {}", "y".repeat(90)))
        .collect();
    c.bench_function("screen/40x120 banner", |b| {
        b.iter(|| screen::classify(black_box(&done)).state)
    });
    c.bench_function("screen/40x120 busy footer", |b| {
        b.iter(|| screen::classify(black_box(&busy)).state)
    });
    c.bench_function("screen/40x120 no status (full scan)", |b| {
        b.iter(|| screen::classify(black_box(&answer_only)).state)
    });
    let dump = busy.join("\n");
    c.bench_function("screen/strip ansi 40x120", |b| {
        b.iter(|| ansi::strip(black_box(&dump)).len())
    });
}

fn bench_incremental(c: &mut Criterion) {
    let lines: Vec<&[u8]> = TOOL_TURN.split_inclusive(|&b| b == b'\n').collect();
    let assistant = lines
        .iter()
        .rev()
        .find(|l| l.starts_with(b"{") && memchr::memmem::find(l, b"\"type\":\"assistant\"").is_some())
        .copied()
        .expect("the fixture has assistant lines");
    let prompt: &[u8] = b"{\"type\":\"user\",\"message\":{\"content\":\"go\"}}\n";
    c.bench_function("transcript/append final assistant line + verdict", |b| {
        b.iter_batched(
            || {
                let mut c = Classifier::new();
                c.feed(prompt);
                c
            },
            |mut c| {
                c.feed(black_box(assistant));
                c.verdict().state
            },
            criterion::BatchSize::SmallInput,
        )
    });
    let mut classifier = Classifier::new();
    let mut next = lines.iter().cycle();
    c.bench_function("transcript/append next fixture line (mean of all line kinds)", |b| {
        b.iter(|| {
            classifier.feed(black_box(next.next().copied().unwrap_or_default()));
            classifier.offset()
        })
    });
    c.bench_function("transcript/incremental whole 163 KB fixture", |b| {
        b.iter(|| {
            let mut c = Classifier::new();
            c.feed(black_box(TOOL_TURN));
            c.verdict().state
        })
    });
}

fn generated(bytes: u64) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../target/bench-transcript-{bytes}.jsonl"));
    if std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0) >= bytes {
        return path;
    }
    let mut out = BufWriter::new(File::create(&path).expect("create bench transcript"));
    let mut written = 0;
    while written < bytes {
        out.write_all(TOOL_TURN).expect("write bench transcript");
        written += TOOL_TURN.len() as u64;
    }
    out.flush().expect("flush bench transcript");
    path
}

fn bench_cold(c: &mut Criterion) {
    let gigabytes: u64 = std::env::var("TURNSTILE_BENCH_GB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let mut sizes = vec![10 << 20];
    if gigabytes > 0 {
        sizes.push(gigabytes << 30);
    }
    for size in sizes {
        let path = generated(size);
        c.bench_function(&format!("transcript/cold tail of {} MB", size >> 20), |b| {
            b.iter(|| {
                let mut f = File::open(&path).expect("open");
                classify_tail(&mut f, TailOptions::default())
                    .expect("read")
                    .verdict
                    .state
            })
        });
    }
}

criterion_group!(benches, bench_screen, bench_incremental, bench_cold);
criterion_main!(benches);
