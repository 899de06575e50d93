#!/usr/bin/env python3
"""A small scripted agent turnstile does not know (issue 25's e2e tests):
it draws its own spinner, its answer and a done line, and reads prompts
typed or pasted into its terminal. A rules file teaches turnstile its
screen; with `--hooks` it also calls `turnstile hook --agent toy --event
<start|end>` at each turn's start and end (its answer in the payload), as
an agent with a hook system of its own would; with `--log FOLDER` it
appends each turn's prompt, tool calls and answer to a JSONL log of its
own in that folder (`toy-<pid>.jsonl`, opened and closed for each line).

    toy_agent.py [--turns N] [--think S] [--hooks TURNSTILE [--bare-hooks]] [--log FOLDER] [--listen]

With `--bare-hooks` its hooks name no answer: the screen's answer region
(a rules file's `answer=N`) is then the answer.
"""
import argparse, json, os, select, subprocess, sys, time

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


BARE_HOOKS = False


def hook(turnstile, event, answer=None):
    if not turnstile:
        return
    payload = json.dumps({"last_assistant_message": answer} if answer and not BARE_HOOKS else {})
    subprocess.run([turnstile, "hook", "--agent", "toy", "--event", event], input=payload.encode(),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


LOG = None


def log(**record):
    if LOG:
        with open(LOG, "a") as f:
            f.write(json.dumps(record) + "\n")


def prompt():
    sys.stdout.write("\n> ")
    sys.stdout.flush()


def turn(n, text, think, turnstile):
    hook(turnstile, "start")
    log(type="prompt", text=text)
    started = time.time()
    i = 0
    while time.time() - started < think:
        if i % 10 == 5:
            log(type="tool", name="read_file", call=i)
        sys.stdout.write(f"\r{SPINNER[i % len(SPINNER)]} thinking about task {n} ({time.time() - started:.0f}s)")
        sys.stdout.flush()
        i += 1
        time.sleep(0.1)
    answer = f"Answer {n}: {text} is done."
    sys.stdout.write("\r\033[K" + answer + "\n")
    sys.stdout.write(f"Done in {time.time() - started:.1f}s\n")
    sys.stdout.flush()
    log(type="answer", message={"content": [{"type": "text", "text": answer}]})
    hook(turnstile, "end", answer)
    prompt()


def read_prompt(timeout):
    """A line typed or pasted into the terminal (None: none in time)."""
    ready, _, _ = select.select([sys.stdin], [], [], timeout)
    if not ready:
        return None
    line = sys.stdin.readline()
    return line.strip() or None


def main():
    args = argparse.ArgumentParser()
    args.add_argument("--turns", type=int, default=1)
    args.add_argument("--think", type=float, default=3.0)
    args.add_argument("--hooks", default="")
    args.add_argument("--listen", action="store_true")
    args.add_argument("--log", default="")
    args.add_argument("--bare-hooks", action="store_true", help="hooks that name no answer")
    opts = args.parse_args()
    global LOG, BARE_HOOKS
    BARE_HOOKS = opts.bare_hooks
    if opts.log:
        folder = os.path.expanduser(opts.log)
        os.makedirs(folder, exist_ok=True)
        LOG = os.path.join(folder, f"toy-{os.getpid()}.jsonl")
    print("toy agent 0.1: type a task")
    prompt()
    time.sleep(1.5)
    n = 0
    for n in range(1, opts.turns + 1):
        turn(n, f"task {n}", opts.think, opts.hooks)
        time.sleep(1.0)
    while opts.listen:
        text = read_prompt(1.0)
        if text:
            n += 1
            sys.stdout.write(text + "\n")
            turn(n, text, opts.think, opts.hooks)
    while True:
        time.sleep(60)


if __name__ == "__main__":
    n = 0
    main()
