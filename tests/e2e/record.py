#!/usr/bin/env python3
"""Records a real Claude Code session as a fixture in the format of
`tests/fixtures/claude-code/` (frames.json, transcript.jsonl, hooks.jsonl,
truth.json), so a new release can be added in minutes:

    tests/e2e/record.py SCENARIO [--release legacy|native] [--hooks] [--out DIR]
    tests/e2e/record.py --list

Claude Code runs in a 120×40 tmux pane (no zellij: the recording is what the
agent draws and writes) against the fake Messages API (`fake_api.py`). The
screen is sampled every 0.1 s (`tmux capture-pane -p -e`), with the size of
the transcript and every change of `~/.claude/sessions/<pid>.json`; with
`--hooks` every hook event is logged with its JSON payload.

truth.json is a *draft* built from what the fake API answered and the
transcript's structure (never from turnstile's classifier): check it by eye
(`turnstile replay DIR`, the frames, the transcript) before committing."""
import argparse, glob, json, os, re, subprocess, sys, tempfile, threading, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from agents import RELEASES, claude_command, claude_env, permission_args, prepare_home, ready  # noqa: E402
from fake_api import FakeApi  # noqa: E402
from harness import FIXTURES, remove_sandbox, wait_for  # noqa: E402

COLS, ROWS, SAMPLE = 120, 40, 0.1
HOOK_EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Notification", "PermissionRequest",
               "Stop", "SubagentStop", "SessionEnd")
SEMANTICS = {
    "prompt_end": "end (after the newline) of the user prompt line: from here the turn is working",
    "outcome_offset": "end of the line from which the outcome is knowable (final assistant line / synthetic API "
                      "error line / interrupt marker line); null if it never reaches the transcript",
    "early_offset": "end of a line from which the outcome may already be inferred (accept working or the outcome "
                    "in between)",
    "confirm_offset": "end of a later system line (turn_duration / stop_hook_summary) that confirms the end "
                      "(accept working or done in between)",
    "screen_over_t": "frame-clock time of the first frame that shows the turn as over",
    "transcript_outcome_t": "frame-clock time at which the transcript file first reached outcome_offset "
                            "(sampled every ~0.1 s)",
    "waiting": "permission dialog interval: t_start..t_end (screen), offset_start..offset_end (bytes, accept "
               "working or waiting)",
    "transcript_silent": "the outcome is never written to the transcript (accept working or the outcome after the "
                         "last byte)",
}


class Recorder:
    """One Claude Code session in a tmux pane, sampled while steps drive it."""

    def __init__(self, release, hooks, ask, retries):
        self.release, self.hooks, self.ask = release, hooks, ask
        self.dir = tempfile.mkdtemp(prefix="tsrec-", dir="/tmp")
        self.home, self.work = os.path.join(self.dir, "home"), os.path.join(self.dir, "proj")
        os.makedirs(self.work)
        self.api = FakeApi(os.path.join(self.dir, "requests.jsonl"))
        self.hook_log = os.path.join(self.dir, "hooks.jsonl")
        prepare_home(self.home, self.work, hooks=False)
        if hooks:
            self._install_hook_logger()
        self.tmux = "tsrec" + os.path.basename(self.dir)[-8:]
        self.events, self.frames, self.growth, self.status = [], [], [], []
        self.t0 = time.time()
        self.stop = threading.Event()
        env = {"HOME": self.home, "PATH": os.environ["PATH"], "TERM": "xterm-256color", "LANG": "C.UTF-8",
               **claude_env(self.api, retries)}
        self.command = claude_command(release) + permission_args(release, ask)
        subprocess.run(["tmux", "new-session", "-d", "-s", self.tmux, "-x", str(COLS), "-y", str(ROWS), "-c",
                        self.work, "env", "-i", *[f"{k}={v}" for k, v in env.items()], *self.command], check=True)
        self.sampler = threading.Thread(target=self._sample, daemon=True)
        self.sampler.start()

    def _install_hook_logger(self):
        logger = os.path.join(self.dir, "hooklog.py")
        with open(logger, "w") as f:
            f.write("import json, sys, time\n"
                    f"line = json.dumps({{'t': time.time(), 'hook': json.load(sys.stdin)}})\n"
                    f"open({self.hook_log!r}, 'a').write(line + '\\n')\n")
        events = HOOK_EVENTS + (("StopFailure",) if self.release == "native" else ())
        hook = [{"hooks": [{"type": "command", "command": f"python3 {logger}"}]}]
        settings = os.path.join(self.home, ".claude", "settings.json")
        with open(settings) as f:
            data = json.load(f)
        data["hooks"] = {e: [dict(h, matcher="*") if "Tool" in e or e == "PermissionRequest" else h for h in hook]
                         for e in events}
        with open(settings, "w") as f:
            json.dump(data, f, indent=1)

    # ------------------------------------------------------------ sampling
    def now(self):
        return round(time.time() - self.t0, 3)

    def transcript_path(self):
        files = [p for p in glob.glob(os.path.join(self.home, ".claude", "projects", "*", "*.jsonl"))]
        return max(files, key=os.path.getmtime) if files else None

    def transcript_size(self):
        path = self.transcript_path()
        return os.path.getsize(path) if path else 0

    def screen(self, escapes=True):
        """The pane as `tmux capture-pane` shows it (with ANSI escapes, or plain)."""
        return subprocess.run(["tmux", "capture-pane", "-p", *(["-e"] if escapes else []), "-t", self.tmux],
                              capture_output=True, text=True).stdout

    def _sample(self):
        last_screen, last_size, last_status = None, 0, {}
        while not self.stop.is_set():
            t, before = self.now(), last_size
            screen, size = self.screen(), self.transcript_size()
            frame = {"t": t, "transcript_bytes_before": before, "transcript_bytes": size}
            if screen == last_screen:
                frame["same"] = True
            else:
                frame["screen"] = last_screen = screen
            self.frames.append(frame)
            if size != last_size:
                self.growth.append({"t": t, "bytes": size})
                last_size = size
            for path in glob.glob(os.path.join(self.home, ".claude", "sessions", "*.json")):
                try:
                    text = open(path).read()
                except OSError:
                    continue
                if last_status.get(path) != text:
                    last_status[path] = text
                    self.status.append({"t": t, "status": text})
            time.sleep(SAMPLE)

    # ------------------------------------------------------------ steps
    def ready(self):
        wait_for("Claude Code ready", lambda: ready(self.screen(escapes=False)), timeout=60)
        time.sleep(1.0)

    def prompt(self, text):
        subprocess.run(["tmux", "send-keys", "-t", self.tmux, "-l", text], check=True)
        time.sleep(0.3)  # a TUI swallows an Enter that arrives with the text
        self.events.append({"prompt": text, "t": self.now()})
        subprocess.run(["tmux", "send-keys", "-t", self.tmux, "Enter"], check=True)

    def key(self, name):
        self.events.append({"key": name, "t": self.now()})
        subprocess.run(["tmux", "send-keys", "-t", self.tmux, name], check=True)

    def clear_input(self):
        """Empties the input box (an interrupted prompt comes back into it)."""
        subprocess.run(["tmux", "send-keys", "-t", self.tmux, *["BSpace"] * 40], check=True)
        time.sleep(0.5)

    def until_answered(self, prompt, count=1, timeout=90):
        wait_for(f"{count} answer(s) to {prompt}", lambda: len(self.api.finished(prompt)) >= count, timeout=timeout)

    def until_screen(self, text, timeout=60):
        wait_for(f"{text!r} on screen", lambda: text in self.screen(escapes=False), timeout=timeout)

    def close(self):
        self.stop.set()
        self.sampler.join()
        subprocess.run(["tmux", "kill-session", "-t", self.tmux], capture_output=True)
        self.api.close()


# ------------------------------------------------------------------ scenarios
def tool(r):
    r.prompt("tool:4")
    r.until_answered("tool:4")


def hooks(r):
    r.prompt("tool:3")
    r.until_answered("tool:3")
    time.sleep(4)
    r.prompt("hello")
    r.until_answered("hello")


def interrupt(r):
    r.prompt("tool:20")
    r.until_screen("sleep 20")
    time.sleep(3)
    r.key("Escape")
    time.sleep(5)
    r.clear_input()
    r.prompt("hello")
    r.until_answered("hello")


def fail400(r):
    r.prompt("fail:400")
    r.until_answered("fail:400")
    time.sleep(4)
    r.prompt("hello")
    r.until_answered("hello")


def fail529(r):
    r.prompt("fail:529")
    r.until_answered("fail:529", count=2)  # CLAUDE_CODE_MAX_RETRIES=1: the first try and one retry


def retry_escape(r):
    r.prompt("fail:529")
    r.until_answered("fail:529", count=2)
    time.sleep(2)
    r.key("Escape")
    time.sleep(5)
    r.clear_input()
    r.prompt("hello")
    r.until_answered("hello")


def perm(r):
    r.prompt("perm:")
    r.until_screen("Do you want to proceed?")
    time.sleep(3)
    r.key("Enter")
    r.until_answered("perm:")


def question(r):
    r.prompt("ask:Which database?")
    r.until_screen("Enter to select")
    time.sleep(3)
    r.key("Enter")
    r.until_answered("ask:Which database?")


def background(r):
    r.prompt("bg:8")
    wait_for("the background agent reported back", lambda: any(
        a["text"] == "The background agent reported back." for a in r.api.finished("bg:8")), timeout=90)


def subagent(r):
    r.prompt("agent:4")
    wait_for("the main answer after the sub-agent's", lambda: r.api.answer_after("agent:4", "subtask:4"), timeout=90)


def long(r):
    r.prompt("long:60")
    r.until_answered("long:60", timeout=90)


def slow(r):
    r.prompt("slow:6")
    r.until_answered("slow:6", timeout=60)


# name -> (steps, what happens, options)
SCENARIOS = {
    "tool": (tool, "`tool:4`: preamble, a Bash tool call, the final answer", {}),
    "hooks": (hooks, "a tool turn and a plain turn with every hook logged", {"hooks": True}),
    "interrupt": (interrupt, "a 20 s tool call interrupted with Escape, then a normal turn", {}),
    "fail400": (fail400, "HTTP 400 (prompt too long) fails the turn, then a normal turn", {}),
    "fail529": (fail529, "HTTP 529 until retries run out (CLAUDE_CODE_MAX_RETRIES=1): failed", {}),
    "retry-escape": (retry_escape, "Escape while a 529 retry waits (10 retries), then a normal turn",
                     {"retries": 10}),
    "perm": (perm, "ask mode: a Bash call waits for permission, approved after 3 s", {"ask": True, "hooks": True}),
    "question": (question, "an AskUserQuestion dialog (Postgres or SQLite) answered with Enter after 3 s, then "
                 "the turn's answer", {"hooks": True}),
    "background": (background, "a background agent (sleep 8) launched; the turn ends when it reports back",
                   {"hooks": True}),
    "subagent": (subagent, "a sub-agent (Agent/Task tool) runs `sleep 4`, then the main answer", {"hooks": True}),
    "slow": (slow, "an answer streamed word by word over 6 s", {}),
    "long": (long, "a 60-line answer with banner-shaped prose (`Worked for 3s … · done`), streamed", {}),
}


# ------------------------------------------------------------------ truth draft
def transcript_lines(data):
    """[(start, end, parsed or None)] for each line of the transcript bytes."""
    out, start = [], 0
    while start < len(data):
        nl = data.find(b"\n", start)
        end = len(data) if nl < 0 else nl + 1
        try:
            obj = json.loads(data[start:end])
        except ValueError:
            obj = None
        out.append((start, end, obj))
        start = end
    return out


def texts_of(obj):
    content = ((obj or {}).get("message") or {}).get("content")
    if isinstance(content, str):
        return [content]
    return [b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"]


def find_line(lines, start, pred):
    return next((i for i in range(start, len(lines)) if is_line(lines, i, pred)), None)


def frame_time_of_bytes(growth, offset):
    return next((g["t"] for g in growth if g["bytes"] >= offset), None)


ACTIVITY = re.compile(r"esc to interrupt|^\s*[·✢*✶✻✽]\s+\S+…", re.M)
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


def frame_screens(frames):
    """(frame, its plain screen) for every frame from the first screen on
    (a frame equal to the one before carries no screen of its own)."""
    screen = None
    for f in frames:
        screen = f.get("screen", screen)
        if screen is not None:
            yield f, ANSI.sub("", screen)


def first_quiet_frame(frames, after):
    """The first frame at or after `after` with no spinner and no `esc to interrupt`."""
    return next((f["t"] for f, screen in frame_screens(frames) if f["t"] >= after and not ACTIVITY.search(screen)),
                None)


def is_line(lines, i, pred):
    return lines[i][2] is not None and pred(lines[i][2])


def prompt_line(lines, start_line, prompt):
    """The user line holding `prompt`, from `start_line` on."""
    return find_line(lines, start_line, lambda o: o.get("type") == "user" and any(
        x.strip() == prompt for x in texts_of(o)))


def draft_outcome(rec, lines, window, prompt, t, next_prompt_t):
    """(outcome, outcome line or None, when it was over for the fake/the keys, answer) of one turn,
    from what the fake answered and the keys sent — never from turnstile."""
    if any(e.get("key") == "Escape" and t < e["t"] < next_prompt_t for e in rec.events):
        marker = next((i for i in window if is_line(lines, i, lambda o: o.get("type") == "user" and any(
            x.startswith("[Request interrupted by user") for x in texts_of(o)))), None)
        pressed = next(e["t"] for e in rec.events if e.get("key") == "Escape" and e["t"] > t)
        return "interrupted", marker, pressed, None
    answers = [a for a in rec.api.answers if a["prompt"] == prompt and a["t"] - rec.t0 >= t - 1]
    final = next((a for a in reversed(answers) if a["stop"] == "end_turn"), None)
    if final is None:
        error = next((i for i in window if is_line(lines, i, lambda o: o.get("isApiErrorMessage"))), None)
        return "failed", error, (answers[-1]["t"] - rec.t0) if answers else t, None
    line = next((i for i in reversed(window) if is_line(lines, i, lambda o: o.get("type") == "assistant" and
                                                        final["text"] in texts_of(o))), None)
    return "done", line, final["t"] - rec.t0, final["text"]


def confirm_line(lines, outcome_line, end):
    """A later `turn_duration` / `stop_hook_summary` line of the same turn."""
    return next((i for i in range(outcome_line + 1, end) if is_line(lines, i, lambda o: o.get("type") == "system"
                 and o.get("subtype") in ("turn_duration", "stop_hook_summary"))), None)


def draft_turn(rec, lines, prompt_event, next_prompt_t, start_line):
    """The truth of one turn (the shared fixtures' fields) and the line where the next turn's search starts."""
    prompt, t = prompt_event["prompt"], prompt_event["t"]
    p = prompt_line(lines, start_line, prompt)
    later = [e["prompt"] for e in rec.events if "prompt" in e and e["t"] > t]
    end = find_line(lines, (p or 0) + 1, lambda o: o.get("type") == "user" and any(
        x.strip() in later for x in texts_of(o)))
    end = len(lines) if end is None else end
    outcome, o, over_after, answer = draft_outcome(rec, lines, range((p or 0) + 1, end), prompt, t, next_prompt_t)
    turn = {"prompt": prompt, "prompt_t": t, "prompt_line": p, "prompt_offset": lines[p][0] if p is not None else None,
            "prompt_end": lines[p][1] if p is not None else None, "outcome": outcome, "outcome_line": o,
            "outcome_offset": lines[o][1] if o is not None else None}
    if o is None:
        turn["transcript_silent"] = True
    else:
        turn["transcript_outcome_t"] = frame_time_of_bytes(rec.growth, lines[o][1])
        c = confirm_line(lines, o, end) if outcome == "done" else None
        if c is not None:
            turn.update(confirm_line=c, confirm_offset=lines[c][1],
                        transcript_confirm_t=frame_time_of_bytes(rec.growth, lines[c][1]))
    waiting = waiting_intervals(rec.frames, t, next_prompt_t)
    waiting = with_question_offsets(waiting, lines, range((p or 0) + 1, end))
    if waiting:
        turn["waiting"] = waiting
    turn["screen_over_t"] = first_quiet_frame(rec.frames, max(over_after, waiting[-1]["t_end"] if waiting else 0))
    turn["answer"] = answer
    return turn, end


# What a dialog that waits for the user shows: the permission prompt, the
# question dialog's footer.
DIALOGS = ("Do you want to proceed?", "Enter to select")


# The tools whose call waits for the user's choice (a question, a plan).
QUESTION_TOOLS = ("AskUserQuestion", "ExitPlanMode")


def with_question_offsets(waiting, lines, window):
    """The dialog intervals, their transcript offsets those of the question call
    they show: from its tool_use line to its tool_result line (the transcript
    does not grow while a dialog waits, so the frames' bytes give an empty span)."""
    def blocks(o, kind):
        content = ((o or {}).get("message") or {}).get("content")
        return [b for b in content or [] if isinstance(b, dict) and b.get("type") == kind]
    asked = [(i, b["id"]) for i in window for b in blocks(lines[i][2], "tool_use") if b.get("name") in QUESTION_TOOLS]
    for w, (i, call) in zip(waiting, asked):
        answered = next((j for j in window if j > i and any(
            b.get("tool_use_id") == call for b in blocks(lines[j][2], "tool_result"))), None)
        if answered is not None:
            w["offset_start"], w["offset_end"] = lines[i][0], lines[answered][1]
    return waiting


def waiting_intervals(frames, start, stop):
    """The stretches of [start, stop) in which a dialog that waits for the user shows."""
    out, opened = [], None
    for f, screen in frame_screens(frames):
        if not start <= f["t"] < stop:
            continue
        shown = any(dialog in screen for dialog in DIALOGS)
        if shown and opened is None:
            opened = f
        elif not shown and opened is not None:
            out.append({"t_start": opened["t"], "t_end": f["t"], "offset_start": opened["transcript_bytes"],
                        "offset_end": f["transcript_bytes"]})
            opened = None
    return out


def draft_truth(rec, name, scenario, data):
    lines = transcript_lines(data)
    prompts = [e for e in rec.events if "prompt" in e]
    turns, start = [], 0
    for i, ev in enumerate(prompts):
        nxt = prompts[i + 1]["t"] if i + 1 < len(prompts) else float("inf")
        turn, start = draft_turn(rec, lines, ev, nxt, start)
        turns.append(turn)
    return {"name": name, "version": release_version(rec), "scenario": scenario, "claude": " ".join(rec.command[:2]),
            "perm": "ask" if rec.ask else "bypass", "hooks": rec.hooks, "transcript_bytes": len(data),
            "transcript_lines": len(lines), "frames": len(rec.frames), "events": rec.events, "turns": turns,
            "checked_by_eye": False, "semantics": SEMANTICS}


def release_version(rec):
    """`2.1.332` from `claude --version`."""
    version = subprocess.run(claude_command(rec.release) + ["--version"], capture_output=True, text=True).stdout
    return version.split()[0] if version.strip() else "unknown"


# ------------------------------------------------------------------ writing
def anonymize(text, rec):
    """Replaces the recording folder, also in Claude Code's dashed project-folder
    form, by a same-length stand-in (byte offsets stay true)."""
    stand_in = ("/home/u/" + "r" * len(rec.dir))[:len(rec.dir)]
    dashed = lambda path: re.sub(r"[^A-Za-z0-9]", "-", path)  # noqa: E731
    return text.replace(rec.dir, stand_in).replace(dashed(rec.dir), dashed(stand_in))


def write_fixture(rec, out, name, scenario, notes):
    os.makedirs(out, exist_ok=True)
    path = rec.transcript_path()
    data = open(path, "rb").read() if path else b""
    data = anonymize(data.decode("utf-8", "surrogateescape"), rec).encode("utf-8", "surrogateescape")
    with open(os.path.join(out, "transcript.jsonl"), "wb") as f:
        f.write(data)
    session_dir = os.path.splitext(path)[0] if path else ""
    meta = {"claude": " ".join(rec.command), "release": rec.release, "hooks": rec.hooks, "pane": f"{COLS}x{ROWS}",
            "t0_epoch": rec.t0, "transcript_path": anonymize(path or "", rec), "append_only": True,
            "session_dir_files": sorted(os.listdir(session_dir)) if os.path.isdir(session_dir) else [],
            "what": notes}
    frames = {"meta": meta, "events": rec.events, "frames": rec.frames, "transcript_growth": rec.growth,
              "session_status": [{"t": s["t"], "status": anonymize(s["status"], rec)} for s in rec.status]}
    with open(os.path.join(out, "frames.json"), "w") as f:
        f.write(anonymize(json.dumps(frames, ensure_ascii=False), rec))
    if os.path.exists(rec.hook_log):
        with open(rec.hook_log) as src, open(os.path.join(out, "hooks.jsonl"), "w") as dst:
            dst.write(anonymize(src.read(), rec))
    truth = draft_truth(rec, name, scenario, data)
    with open(os.path.join(out, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1, ensure_ascii=False)
    return truth


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenario", nargs="?", choices=sorted(SCENARIOS))
    ap.add_argument("--release", choices=RELEASES, default="native")
    ap.add_argument("--hooks", action="store_true", help="log every hook event (some scenarios always do)")
    ap.add_argument("--out", help="fixture folder (default tests/fixtures/claude-code/<version>-<scenario>)")
    ap.add_argument("--list", action="store_true", help="list the scenarios")
    args = ap.parse_args()
    if args.list or not args.scenario:
        for name, (_, what, _) in SCENARIOS.items():
            print(f"{name:14} {what}")
        return
    steps, what, opts = SCENARIOS[args.scenario]
    rec = Recorder(args.release, args.hooks or opts.get("hooks", False), opts.get("ask", False),
                   opts.get("retries", 1))
    try:
        rec.ready()
        steps(rec)
        time.sleep(3)
    finally:
        rec.close()
    name = f"{release_version(rec)}-{args.scenario}"
    out = args.out or os.path.join(FIXTURES, name)
    truth = write_fixture(rec, out, name, args.scenario, what)
    if not os.environ.get("TURNSTILE_KEEP"):
        remove_sandbox(rec.dir, rec.home)
    print(json.dumps({"fixture": out, "turns": truth["turns"]}, indent=1, ensure_ascii=False))
    print(f"recorded {out}: check truth.json by eye, then set checked_by_eye", file=sys.stderr)


if __name__ == "__main__":
    main()
