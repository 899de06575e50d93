#!/usr/bin/env python3
"""A line-based agent as a user would write one (issue 42's e2e tests), not
the project's toy agent: it reads its terminal line by line in the
terminal's cooked mode (`sys.stdin.readline`, no raw mode, no bracketed
paste: each line break it gets submits a line), draws a spinner while it
thinks, prints its answer and a done line, may ask `Proceed? (y/n)` before
it works, and appends every line it read and every answer to a JSONL log
of its own (`line-<pid>.jsonl` in `--log FOLDER`).

    line_agent.py --log FOLDER [--ask] [--think S] [--quit-after N]

A line that is empty where a prompt or a reply was awaited is logged too
(`{"type": "empty"}`): a stray Enter shows in the log. With `--quit-after
N` it exits right after the N-th turn's answer, as a person pressing
Ctrl-D at its prompt would.
"""
import argparse, json, os, sys, time

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
LOG = None


def log(**record):
    with open(LOG, "a") as f:
        f.write(json.dumps(record) + "\n")


def read_line(shown):
    """One line typed at `shown`; None at end of input."""
    sys.stdout.write(shown)
    sys.stdout.flush()
    line = sys.stdin.readline()
    if not line:
        return None
    return line.rstrip("\n")


def think(seconds):
    started = time.time()
    i = 0
    while time.time() - started < seconds:
        sys.stdout.write(f"\r{SPINNER[i % len(SPINNER)]} working ({time.time() - started:.0f}s)")
        sys.stdout.flush()
        i += 1
        time.sleep(0.1)
    sys.stdout.write("\r\033[K")


def main():
    global LOG
    p = argparse.ArgumentParser()
    p.add_argument("--log", required=True)
    p.add_argument("--ask", action="store_true")
    p.add_argument("--think", type=float, default=2.0)
    p.add_argument("--quit-after", type=int, default=0)
    a = p.parse_args()
    folder = os.path.expanduser(a.log)
    os.makedirs(folder, exist_ok=True)
    LOG = os.path.join(folder, f"line-{os.getpid()}.jsonl")
    sys.stdout.write("line agent ready\n")
    turns = 0
    while True:
        text = read_line("\nmine> ")
        if text is None:
            return
        if not text.strip():
            log(type="empty")
            continue
        log(type="prompt", text=text)
        if a.ask:
            reply = read_line("Proceed? (y/n) ")
            if reply is None:
                return
            log(type="reply" if reply.strip() else "empty", text=reply)
            if reply.strip().lower() != "y":
                sys.stdout.write("Skipped.\n")
                continue
        think(a.think)
        turns += 1
        answer = f"LINE-{turns} answered: {text}"
        log(type="answer", text=answer)
        sys.stdout.write(answer + "\n")
        sys.stdout.write(f"finished turn {turns}\n")
        sys.stdout.flush()
        if a.quit_after and turns >= a.quit_after:
            return


if __name__ == "__main__":
    main()
