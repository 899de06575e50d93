#!/usr/bin/env python3
"""Records a real Codex CLI session as a fixture of `tests/fixtures/codex/`
(frames.json with screens and terminal titles, transcript.jsonl = the
rollout, hooks.jsonl, truth.json), so a new release can be added in minutes:

    tests/e2e/record_codex.py SCENARIO [--out DIR]
    tests/e2e/record_codex.py --list

Codex runs in a 120×40 tmux pane against the fake Responses API
(`fake_openai.py`), with every hook logged. The screen and the title are
sampled every 0.1 s, with the size of the rollout. truth.json is a *draft*
built from the rollout's own events (task_started / task_complete /
turn_aborted), what the fake answered and the keys sent (never from
turnstile's classifier): check it by eye before committing."""
import argparse, glob, json, os, subprocess, sys, tempfile, threading, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from agents import codex_command, codex_ready  # noqa: E402
from fake_openai import FakeOpenAI  # noqa: E402
from harness import ROOT, remove_sandbox, wait_for  # noqa: E402
from record import ANSI, anonymize, frame_time_of_bytes  # noqa: E402

COLS, ROWS, SAMPLE = 120, 40, 0.1
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "codex")
HOOK_EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PermissionRequest", "Stop")
SPINNER = set("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏⠁⠂⠄⡀⢀⠠⠐⠈")


class Recorder:
    """One Codex session in a tmux pane, sampled while steps drive it."""

    def __init__(self):
        # Not under the temp dir: Codex refuses its helper binaries there.
        base = os.path.join(os.path.expanduser("~"), ".cache", "turnstile", "recordings")
        os.makedirs(base, exist_ok=True)
        self.dir = tempfile.mkdtemp(prefix="tsrec-", dir=base)
        self.home, self.work = os.path.join(self.dir, "home"), os.path.join(self.dir, "proj")
        self.codex_home = os.path.join(self.home, ".codex")
        os.makedirs(self.work)
        os.makedirs(self.codex_home)
        self.api = FakeOpenAI(os.path.join(self.dir, "requests.jsonl"))
        self.hook_log = os.path.join(self.dir, "hooks.jsonl")
        self._write_config()
        self.tmux = "tsrec" + os.path.basename(self.dir)[-8:]
        self.events, self.frames, self.growth = [], [], []
        self.t0 = time.time()
        self.stop = threading.Event()
        env = {"HOME": self.home, "PATH": os.environ["PATH"], "TERM": "xterm-256color", "LANG": "C.UTF-8"}
        self.command = codex_command() + ["--dangerously-bypass-hook-trust"]
        subprocess.run(["tmux", "new-session", "-d", "-s", self.tmux, "-x", str(COLS), "-y", str(ROWS), "-c",
                        self.work, "env", "-i", *[f"{k}={v}" for k, v in env.items()], *self.command], check=True)
        self.sampler = threading.Thread(target=self._sample, daemon=True)
        self.sampler.start()

    def _write_config(self):
        with open(os.path.join(self.codex_home, "config.toml"), "w") as f:
            f.write(f'model = "gpt-5.1-codex"\nmodel_provider = "fake"\n\n[model_providers.fake]\nname = "fake"\n'
                    f'base_url = "{self.api.url}"\nwire_api = "responses"\nrequest_max_retries = 0\n'
                    f'stream_max_retries = 0\n\n[projects."{self.work}"]\ntrust_level = "trusted"\n')
        logger = os.path.join(self.dir, "hooklog.py")
        with open(logger, "w") as f:
            f.write("import json, sys, time\n"
                    f"line = json.dumps({{'t': time.time(), 'hook': json.load(sys.stdin)}})\n"
                    f"open({self.hook_log!r}, 'a').write(line + '\\n')\n")
        hook = [{"hooks": [{"type": "command", "command": f"python3 {logger}"}]}]
        with open(os.path.join(self.codex_home, "hooks.json"), "w") as f:
            json.dump({"hooks": {e: hook for e in HOOK_EVENTS}}, f)

    def now(self):
        return round(time.time() - self.t0, 3)

    def rollout(self):
        files = glob.glob(os.path.join(self.codex_home, "sessions", "*", "*", "*", "rollout-*.jsonl"))
        return max(files, key=os.path.getmtime) if files else None

    def rollout_size(self):
        path = self.rollout()
        return os.path.getsize(path) if path else 0

    def screen(self, escapes=True):
        return subprocess.run(["tmux", "capture-pane", "-p", *(["-e"] if escapes else []), "-t", self.tmux],
                              capture_output=True, text=True).stdout

    def title(self):
        return subprocess.run(["tmux", "display", "-p", "-t", self.tmux, "#{pane_title}"], capture_output=True,
                              text=True).stdout.rstrip("\n")

    def _sample(self):
        last_screen, last_size = None, 0
        while not self.stop.is_set():
            t, before = self.now(), last_size
            screen, title, size = self.screen(), self.title(), self.rollout_size()
            frame = {"t": t, "transcript_bytes_before": before, "transcript_bytes": size, "title": title}
            if screen == last_screen:
                frame["same"] = True
            else:
                frame["screen"] = last_screen = screen
            self.frames.append(frame)
            if size != last_size:
                self.growth.append({"t": t, "bytes": size})
                last_size = size
            time.sleep(SAMPLE)

    def ready(self):
        wait_for("Codex ready", lambda: codex_ready(self.screen(escapes=False)), timeout=60)
        time.sleep(1.0)

    def prompt(self, text):
        subprocess.run(["tmux", "send-keys", "-t", self.tmux, "-l", text], check=True)
        time.sleep(0.3)
        self.events.append({"prompt": text, "t": self.now()})
        subprocess.run(["tmux", "send-keys", "-t", self.tmux, "Enter"], check=True)

    def key(self, name):
        self.events.append({"key": name, "t": self.now()})
        subprocess.run(["tmux", "send-keys", "-t", self.tmux, name], check=True)

    def until_answered(self, prompt, timeout=60):
        wait_for(f"the answer to {prompt}", lambda: self.api.finished(prompt), timeout=timeout)
        time.sleep(1.5)

    def until_screen(self, text, timeout=60):
        wait_for(f"{text!r} on screen", lambda: text in self.screen(escapes=False), timeout=timeout)

    def close(self):
        self.stop.set()
        self.sampler.join()
        subprocess.run(["tmux", "kill-session", "-t", self.tmux], capture_output=True)
        subprocess.run(["pkill", "-f", self.codex_home], capture_output=True)  # its app-server daemon
        self.api.close()


# ------------------------------------------------------------------ scenarios
def tool(r):
    r.prompt("tool:4")
    r.until_answered("tool:4")


def perm(r):
    r.prompt("perm:")
    r.until_screen("Press enter to confirm")
    time.sleep(3)
    r.key("Enter")
    r.until_answered("perm:")


def interrupt(r):
    r.prompt("tool:20")
    time.sleep(3)
    r.key("Escape")
    r.until_screen("Conversation interrupted")
    time.sleep(1.5)
    r.prompt("echo:after the interrupt")
    r.until_answered("echo:after the interrupt")


def fail500(r):
    r.prompt("fail:500")
    wait_for("the failure", lambda: r.api.finished("fail:500"), timeout=30)
    time.sleep(3)
    r.prompt("echo:after the failure")
    r.until_answered("echo:after the failure")


def slow(r):
    r.prompt("slow:6")
    r.until_answered("slow:6", timeout=30)


SCENARIOS = {
    "tool": (tool, "`tool:4`: a preamble, a shell call, the final answer"),
    "perm": (perm, "a shell call asking for escalated permissions, approved after 3 s"),
    "interrupt": (interrupt, "Escape during a 20 s shell call, then a plain turn"),
    "fail500": (fail500, "HTTP 500 fails the turn, then a plain turn"),
    "slow": (slow, "an answer streamed word by word over 6 s (no working line while it streams)"),
}


# ------------------------------------------------------------------ truth draft
def rollout_events(data):
    """[(kind, line start, line end, payload)] of the turn events of a rollout."""
    out, start = [], 0
    while start < len(data):
        nl = data.find(b"\n", start)
        end = len(data) if nl < 0 else nl + 1
        try:
            obj = json.loads(data[start:end])
        except ValueError:
            obj = None
        payload = (obj or {}).get("payload") or {}
        if (obj or {}).get("type") == "event_msg" and payload.get("type") in ("task_started", "task_complete",
                                                                             "turn_aborted"):
            out.append((payload["type"], start, end, payload))
        start = end
    return out


def quiet(frame_screen, title):
    """Nothing on screen or in the title says Codex works."""
    return "Working (" not in frame_screen and not (title[:1] in SPINNER)


def draft_truth(rec, name, scenario, data):
    events = rollout_events(data)
    starts = [e for e in events if e[0] == "task_started"]
    prompts = [e for e in rec.events if "prompt" in e]
    turns = []
    for i, (ev, start) in enumerate(zip(prompts, starts)):
        ends = [e for e in events if e[0] != "task_started" and e[1] > start[1]]
        end = ends[0] if ends else None
        if end is None:
            outcome, answer = "working", None
        elif end[0] == "turn_aborted":
            outcome, answer = "interrupted", None
        elif end[3].get("error"):
            outcome, answer = "failed", None
        else:
            outcome, answer = "done", end[3].get("last_agent_message")
        turn = {"prompt": ev["prompt"], "prompt_t": ev["t"], "prompt_offset": start[1], "prompt_end": start[2],
                "outcome": outcome, "outcome_offset": end[2] if end else None, "answer": answer}
        outcome_t = frame_time_of_bytes(rec.growth, end[2]) if end else None
        turn["transcript_outcome_t"] = outcome_t
        screen, over, opened, waiting = None, None, None, []
        nxt = prompts[i + 1]["t"] if i + 1 < len(prompts) else float("inf")
        for f in rec.frames:
            screen = ANSI.sub("", f.get("screen", screen) or "")
            if not ev["t"] <= f["t"] < nxt:
                continue
            dialog = "Press enter to confirm" in screen
            if dialog and opened is None:
                opened = f
            elif not dialog and opened is not None:
                waiting.append({"t_start": opened["t"], "t_end": f["t"], "offset_start": opened["transcript_bytes"],
                                "offset_end": f["transcript_bytes"]})
                opened = None
            if over is None and outcome_t is not None and f["t"] >= outcome_t and quiet(screen, f["title"]):
                over = f["t"]
        if waiting:
            turn["waiting"] = waiting
        turn["screen_over_t"] = over if over is not None else nxt
        turns.append(turn)
    return {"name": name, "agent": "codex", "version": codex_version(), "scenario": scenario, "hooks": True,
            "transcript_bytes": len(data), "frames": len(rec.frames), "events": rec.events, "turns": turns,
            "checked_by_eye": False}


def codex_version():
    out = subprocess.run(codex_command() + ["--version"], capture_output=True, text=True,
                         env={**os.environ, "CODEX_HOME": tempfile.mkdtemp()}).stdout
    return out.split()[-1] if out.strip() else "unknown"


def write_fixture(rec, out, name, scenario, notes):
    os.makedirs(out, exist_ok=True)
    path = rec.rollout()
    data = open(path, "rb").read() if path else b""
    data = anonymize(data.decode("utf-8", "surrogateescape"), rec).encode("utf-8", "surrogateescape")
    with open(os.path.join(out, "transcript.jsonl"), "wb") as f:
        f.write(data)
    meta = {"codex": " ".join(rec.command), "pane": f"{COLS}x{ROWS}", "t0_epoch": rec.t0,
            "transcript_path": anonymize(path or "", rec), "what": notes}
    frames = {"meta": meta, "events": rec.events, "frames": rec.frames, "transcript_growth": rec.growth}
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
    ap.add_argument("--out", help="fixture folder (default tests/fixtures/codex/<version>-<scenario>)")
    ap.add_argument("--list", action="store_true", help="list the scenarios")
    args = ap.parse_args()
    if args.list or not args.scenario:
        for name, (_, what) in SCENARIOS.items():
            print(f"{name:10} {what}")
        return
    steps, what = SCENARIOS[args.scenario]
    rec = Recorder()
    try:
        rec.ready()
        steps(rec)
        time.sleep(2)
    finally:
        rec.close()
    name = f"{codex_version()}-{args.scenario}"
    out = args.out or os.path.join(FIXTURES, name)
    truth = write_fixture(rec, out, name, args.scenario, what)
    if not os.environ.get("TURNSTILE_KEEP"):
        remove_sandbox(rec.dir, rec.home)
    print(json.dumps({"fixture": out, "turns": truth["turns"]}, indent=1, ensure_ascii=False))
    print(f"recorded {out}: check truth.json by eye, then set checked_by_eye", file=sys.stderr)


if __name__ == "__main__":
    main()
