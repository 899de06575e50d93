#!/usr/bin/env python3
"""Replays recorded Claude Code sessions through the `turnstile` CLI and prints
a timeline: whenever the screen verdict or the transcript verdict changes.

usage: replay_demo.py TURNSTILE CORPUS_DIR"""
import json, os, subprocess, sys, tempfile


def run(cli, kind, payload):
    with tempfile.NamedTemporaryFile(delete=False) as f:
        f.write(payload)
    try:
        out = subprocess.run([cli, kind, f.name], capture_output=True, check=False)
        return json.loads(out.stdout or b"{}")
    finally:
        os.unlink(f.name)


def replay(cli, folder):
    frames = json.load(open(os.path.join(folder, "frames.json")))
    transcript = open(os.path.join(folder, "transcript.jsonl"), "rb").read()
    print(f"\n=== {os.path.basename(folder)}  (prompts: {', '.join(e.get('prompt', e.get('key', '?')) for e in frames['events'])})")
    last_screen = last_t = None
    screen = None
    for frame in frames["frames"]:
        screen = frame.get("screen", screen)
        if screen is None:
            continue
        s = run(cli, "screen", screen.encode())
        t = run(cli, "transcript", transcript[: frame["transcript_bytes"]])
        s_key = (s.get("state"), s.get("rule"))
        t_key = (t.get("state"), t.get("candidate"), t.get("answer"))
        if s_key != last_screen:
            line = s.get("line") or ""
            print(f"  t={frame['t']:7.3f}s  screen     {s['state']:<11} {s.get('rule', ''):<17} {line[:60]}")
            last_screen = s_key
        if t_key != last_t:
            extra = f"answer={t['answer']!r}" if t.get("answer") else ""
            if t.get("candidate"):
                extra = f"candidate={t['candidate']} " + extra
            print(f"  t={frame['t']:7.3f}s  transcript {t['state']:<11} {extra[:70]}")
            last_t = t_key


def main():
    cli, corpus = sys.argv[1], sys.argv[2]
    for name in sorted(os.listdir(corpus)):
        folder = os.path.join(corpus, name)
        if os.path.exists(os.path.join(folder, "frames.json")):
            replay(cli, folder)


if __name__ == "__main__":
    main()
