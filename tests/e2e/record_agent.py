#!/usr/bin/env python3
"""Records a real Codex CLI, Gemini CLI, Qwen Code, Copilot CLI, OpenCode, Kilo CLI or Aider session as a fixture of
`tests/fixtures/codex/` or `tests/fixtures/gemini/` (frames.json with screens
and terminal titles, transcript.jsonl = the rollout or chat log, hooks.jsonl,
truth.json), so a new release can be added in minutes:

    tests/e2e/record_agent.py codex SCENARIO [--out DIR]
    tests/e2e/record_agent.py gemini SCENARIO [--out DIR]
    tests/e2e/record_agent.py codex --list

The agent runs in a 120×40 tmux pane against its fake API (`fake_openai.py`,
`fake_gemini.py`), with every hook logged. The screen and the title are
sampled every 0.1 s, with the size of the transcript. truth.json is a
*draft* built from the transcript's own records (Codex: task_started /
task_complete / turn_aborted; Gemini: prompt, answer, cancel and error
records), what the fake answered and the keys sent (never from turnstile's
classifier): check it by eye before committing."""
import argparse, glob, json, os, re, subprocess, sys, tempfile, threading, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from agents import (codex_command, codex_ready, copilot_command, copilot_env, copilot_ready,  # noqa: E402
                    gemini_command, gemini_ready, kilo_command, kilo_env, opencode_command, opencode_env,
                    opencode_ready, prepare_copilot_home, prepare_kilo_home, prepare_opencode_home,
                    qwen_command, qwen_env, qwen_ready, qwen_settings)
from fake_chat import FakeChat  # noqa: E402
from test_real_aider import aider_command, aider_ready  # noqa: E402
from fake_gemini import FakeGemini  # noqa: E402
from fake_openai import FakeOpenAI  # noqa: E402
from harness import ROOT, remove_sandbox, wait_for  # noqa: E402
from record import ANSI, anonymize, frame_time_of_bytes  # noqa: E402

COLS, ROWS, SAMPLE = 120, 40, 0.1
SPINNER = set("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏⠁⠂⠄⡀⢀⠠⠐⠈")


def hook_logger(rec):
    """A hook command that appends each event (with its time) to hooks.jsonl."""
    logger = os.path.join(rec.dir, "hooklog.py")
    with open(logger, "w") as f:
        f.write("import json, sys, time\n"
                f"line = json.dumps({{'t': time.time(), 'hook': json.load(sys.stdin), 'argv': sys.argv[1:]}})\n"
                f"open({rec.hook_log!r}, 'a').write(line + '\\n')\n")
    return f"python3 {logger}"


def read_lines(data):
    """[(start, end, parsed or None)] of JSONL bytes."""
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


class Codex:
    """Codex CLI: its config, its rollout, its turn events."""
    name, fake, dialog = "codex", FakeOpenAI, "Press enter to confirm"
    hook_events = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PermissionRequest", "Stop")

    def prepare(self, rec):
        home = os.path.join(rec.home, ".codex")
        os.makedirs(home)
        with open(os.path.join(home, "config.toml"), "w") as f:
            f.write(f'model = "gpt-5.1-codex"\nmodel_provider = "fake"\n\n[model_providers.fake]\nname = "fake"\n'
                    f'base_url = "{rec.api.url}"\nwire_api = "responses"\nrequest_max_retries = 0\n'
                    f'stream_max_retries = 0\n\n[projects."{rec.work}"]\ntrust_level = "trusted"\n')
        hook = [{"hooks": [{"type": "command", "command": hook_logger(rec)}]}]
        with open(os.path.join(home, "hooks.json"), "w") as f:
            json.dump({"hooks": {e: hook for e in self.hook_events}}, f)

    def command(self, rec):
        return codex_command() + ["--dangerously-bypass-hook-trust"], {}

    def transcript(self, rec):
        return glob.glob(os.path.join(rec.home, ".codex", "sessions", "*", "*", "*", "rollout-*.jsonl"))

    def ready(self, screen):
        return codex_ready(screen)

    def busy(self, screen, title):
        return "Working (" in screen or title[:1] in SPINNER

    def turns(self, data):
        """[(start line, outcome line or None, outcome, answer)] from the rollout's turn events."""
        lines = [(a, b, (o or {}).get("payload") or {}) for a, b, o in read_lines(data)
                 if (o or {}).get("type") == "event_msg"]
        events = [(a, b, p) for a, b, p in lines if p.get("type") in ("task_started", "task_complete", "turn_aborted")]
        out = []
        for i, (a, b, p) in enumerate(events):
            if p["type"] != "task_started":
                continue
            end = next((e for e in events[i + 1:] if e[2]["type"] != "task_started"), None)
            if end is None:
                out.append(((a, b), None, "working", None))
            elif end[2]["type"] == "turn_aborted":
                out.append(((a, b), end[:2], "interrupted", None))
            elif end[2].get("error"):
                out.append(((a, b), end[:2], "failed", None))
            else:
                out.append(((a, b), end[:2], "done", end[2].get("last_agent_message")))
        return out

    def version(self):
        out = subprocess.run(codex_command() + ["--version"], capture_output=True, text=True,
                             env={**os.environ, "CODEX_HOME": tempfile.mkdtemp()}).stdout
        return out.split()[-1] if out.strip() else "unknown"

    def close(self, rec):
        subprocess.run(["pkill", "-f", os.path.join(rec.home, ".codex")], capture_output=True)


class Gemini:
    """Gemini CLI: its settings, its chat log, its records."""
    name, fake, dialog = "gemini", FakeGemini, "Allow execution of"
    hook_events = ("SessionStart", "BeforeAgent", "AfterAgent", "BeforeTool", "AfterTool", "Notification",
                   "SessionEnd")

    def prepare(self, rec):
        home = os.path.join(rec.home, ".gemini")
        os.makedirs(home)
        hook = [{"matcher": "*", "hooks": [{"type": "command", "command": hook_logger(rec)}]}]
        with open(os.path.join(home, "settings.json"), "w") as f:
            json.dump({"security": {"auth": {"selectedType": "gemini-api-key"}},
                       "model": {"name": "gemini-2.5-flash"},
                       "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
                       "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
                       "hooks": {e: hook for e in self.hook_events}}, f)
        with open(os.path.join(home, "trustedFolders.json"), "w") as f:
            json.dump({rec.work: "TRUST_FOLDER"}, f)
        os.makedirs(os.path.join(rec.dir, "tmp"))

    def command(self, rec):
        return gemini_command(), {"GEMINI_API_KEY": "fake-key", "GOOGLE_GEMINI_BASE_URL": rec.api.url,
                                  "TMPDIR": os.path.join(rec.dir, "tmp")}

    def transcript(self, rec):
        return glob.glob(os.path.join(rec.home, ".gemini", "tmp", "*", "chats", "session-*.jsonl"))

    def ready(self, screen):
        return gemini_ready(screen)

    def busy(self, screen, title):
        return "esc to cancel" in screen or title.lstrip()[:1] in ("✦", "✋")

    def turns(self, data):
        """[(start line, outcome line or None, outcome, answer)]: a prompt record starts a
        turn; a cancel or error record ends it; else its last answer record (a done that
        only the next prompt, the screen or a hook confirms: see `confirm` in the truth)."""
        records = [(a, b, o) for a, b, o in read_lines(data) if o and o.get("type") in ("user", "gemini", "info",
                                                                                          "error")]
        prompts = [i for i, (_, _, o) in enumerate(records) if o["type"] == "user" and isinstance(o.get("content"), list)
                   and any(isinstance(p.get("text"), str) and not p["text"].startswith("<session_context>")
                           for p in o["content"])]
        out = []
        for n, i in enumerate(prompts):
            nxt = prompts[n + 1] if n + 1 < len(prompts) else len(records)
            turn = records[i + 1:nxt]
            end = next((r for r in turn if r[2]["type"] == "error" or (
                r[2]["type"] == "info" and r[2].get("content") == "Request cancelled.")), None)
            start = records[i][:2]
            if end is not None:
                out.append((start, end[:2], "failed" if end[2]["type"] == "error" else "interrupted", None))
                continue
            answers = [r for r in turn if r[2]["type"] == "gemini" and r[2].get("content")]
            final = answers[-1] if answers else None
            out.append((start, final[:2] if final else None, "done" if final else "working",
                        final[2]["content"] if final else None))
        return out

    def version(self):
        out = subprocess.run(gemini_command() + ["--version"], capture_output=True, text=True).stdout
        return out.strip().split()[-1] if out.strip() else "unknown"

    def close(self, rec):
        pass


class Qwen:
    """Qwen Code: its settings, its chat log (Claude-shaped records), its hooks."""
    name, fake, dialog = "qwen", FakeChat, "Allow execution of"
    hook_events = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure",
                   "PermissionRequest", "Notification", "Stop", "StopFailure", "SessionEnd")

    def prepare(self, rec):
        home = os.path.join(rec.home, ".qwen")
        os.makedirs(home)
        hook = [{"matcher": "*", "hooks": [{"type": "command", "command": hook_logger(rec)}]}]
        with open(os.path.join(home, "settings.json"), "w") as f:
            json.dump(qwen_settings({e: hook for e in self.hook_events}), f)

    def command(self, rec):
        return qwen_command(), qwen_env(rec.api)

    def transcript(self, rec):
        return [p for p in glob.glob(os.path.join(rec.home, ".qwen", "projects", "*", "chats", "*.jsonl"))]

    def ready(self, screen):
        return qwen_ready(screen)

    def busy(self, screen, title):
        return "esc to cancel" in screen or title.lstrip()[:1] in ("◐", "✳")

    def turns(self, data):
        """[(start line, outcome line or None, outcome, answer)]: a user record with text starts
        a turn; a cancelled tool result ends it interrupted, an `api_error` telemetry line
        failed; else its last assistant record without a function call is the answer (no
        turn-end record follows it)."""
        records = [(a, b, o) for a, b, o in read_lines(data) if o]
        def parts(o):
            return ((o.get("message") or {}).get("parts")) or []
        prompts = [i for i, (_, _, o) in enumerate(records) if o.get("type") == "user"
                   and any(isinstance(p.get("text"), str) for p in parts(o))]
        out = []
        for n, i in enumerate(prompts):
            nxt = prompts[n + 1] if n + 1 < len(prompts) else len(records)
            turn = records[i + 1:nxt]
            start = records[i][:2]
            def event(o):
                return ((o.get("systemPayload") or {}).get("uiEvent") or {}).get("event.name", "")
            cancelled = next((r for r in turn if r[2].get("type") == "tool_result" and
                              ((r[2].get("toolCallResult") or {}).get("status") == "cancelled")), None)
            error = next((r for r in turn if r[2].get("type") == "system" and "api_error" in event(r[2])), None)
            answers = [r for r in turn if r[2].get("type") == "assistant" and parts(r[2])
                       and not any("functionCall" in p for p in parts(r[2]))]
            if cancelled is not None:
                out.append((start, cancelled[:2], "interrupted", None))
            elif answers:
                text = "".join(p.get("text", "") for p in parts(answers[-1][2]) if not p.get("thought"))
                out.append((start, answers[-1][:2], "done", text))
            elif error is not None:
                out.append((start, error[:2], "failed", None))
            else:
                out.append((start, None, "working", None))
        return out

    def version(self):
        out = subprocess.run(qwen_command() + ["--version"], capture_output=True, text=True).stdout
        return out.strip().split()[-1] if out.strip() else "unknown"

    def close(self, rec):
        pass


class Copilot:
    """GitHub Copilot CLI: its trusted folder, its events.jsonl, its hooks."""
    name, fake, dialog = "copilot", FakeChat, "Do you want to run this command?"
    hook_events = ("sessionStart", "userPromptSubmitted", "preToolUse", "permissionRequest", "notification",
                   "postToolUse", "agentStop", "errorOccurred", "sessionEnd")

    def prepare(self, rec):
        hooks = {"version": 1, "hooks": {e: [{"type": "command", "bash": f"{hook_logger(rec)} {e}",
                                              "timeoutSec": 10}] for e in self.hook_events}}
        prepare_copilot_home(rec.home, rec.work, hooks)

    def command(self, rec):
        return copilot_command() + ["--allow-tool", "shell(sleep)"], copilot_env(rec.api)

    def transcript(self, rec):
        return glob.glob(os.path.join(rec.home, ".copilot", "session-state", "*", "events.jsonl"))

    def ready(self, screen):
        return copilot_ready(screen)

    def busy(self, screen, title):
        return "esc esc" in screen or "Working" in screen.split("\n")[-3:].__str__()

    def turns(self, data):
        """[(start line, outcome line or None, outcome, answer)]: `user.message` starts a turn;
        `abort` ends it interrupted, a 4xx `session.error` failed, an `assistant.message`
        without tool requests then `assistant.turn_end` done."""
        lines = [(a, b, o) for a, b, o in read_lines(data) if o]
        starts = [i for i, (_, _, o) in enumerate(lines) if o.get("type") == "user.message"]
        out = []
        for n, i in enumerate(starts):
            nxt = starts[n + 1] if n + 1 < len(starts) else len(lines)
            turn = lines[i + 1:nxt]
            start = lines[i][:2]
            answer, end, outcome = None, None, "working"
            for j, (a, b, o) in enumerate(turn):
                kind, d = o.get("type"), o.get("data") or {}
                if kind == "abort":
                    end, outcome, answer = (a, b), "interrupted", None
                    break
                if kind == "session.error" and 400 <= (d.get("statusCode") or 0) < 500:
                    end, outcome, answer = (a, b), "failed", None
                    break
                if kind == "assistant.message" and not d.get("toolRequests"):
                    answer = d.get("content")
                if kind == "assistant.turn_end" and answer is not None:
                    end, outcome = (a, b), "done"
            out.append((start, end, outcome, answer if outcome == "done" else None))
        return out

    def version(self):
        out = subprocess.run(copilot_command() + ["--version"], capture_output=True, text=True,
                             env={**os.environ, **copilot_env(type("A", (), {"url": "http://127.0.0.1:9"}))}).stdout
        found = re.search(r"\d+\.\d+\.\d+", out)
        return found.group(0) if found else "unknown"

    def close(self, rec):
        pass


class OpenCode:
    """OpenCode: its config, its SQLite database (the session's rows of the
    append-only `event` table, one JSON line each, as turnstile reads them),
    its bus events (through a logging plugin)."""
    name, fake, dialog = "opencode", FakeChat, "Permission required"
    hook_events = ("session.status", "session.idle", "session.error", "permission.asked", "permission.replied",
                   "message.updated")

    def prepare(self, rec):
        prepare_opencode_home(rec.home, rec.api)
        self.log_hooks(rec, os.path.join(rec.home, ".config", "opencode", "plugins"))

    def log_hooks(self, rec, plugins):
        """A plugin in `plugins` that logs the bus events wanted."""
        os.makedirs(plugins, exist_ok=True)
        wanted = json.dumps(list(self.hook_events))
        with open(os.path.join(plugins, "hooklog.js"), "w") as f:
            f.write('import { appendFileSync } from "node:fs";\n'
                    f"const wanted = new Set({wanted});\n"
                    "export const HookLog = async (ctx) => ({\n"
                    "  event: async ({ event }) => {\n"
                    "    if (!wanted.has(event.type)) return;\n"
                    f"    appendFileSync({json.dumps(rec.hook_log)}, JSON.stringify({{t: Date.now() / 1000, "
                    "hook: event, argv: [event.type], pid: process.pid, pane: process.env.ZELLIJ_PANE_ID}) + \"\\n\");\n"
                    "  },\n"
                    "  \"chat.message\": async (input) => {\n"
                    f"    appendFileSync({json.dumps(rec.hook_log)}, JSON.stringify({{t: Date.now() / 1000, "
                    "hook: {type: \"chat.message\", properties: input}, argv: [\"chat.message\"]}) + \"\\n\");\n"
                    "  },\n"
                    "});\n")

    def command(self, rec):
        return opencode_command(), opencode_env(rec.home)

    def database(self, rec):
        return os.path.join(rec.home, ".local", "share", "opencode", "opencode.db")

    def executable(self):
        return opencode_command()

    def transcript(self, rec):
        path = self.database(rec)
        return [path] if os.path.exists(path) else []

    def export(self, rec):
        """The newest session's event rows as JSONL (what turnstile renders)."""
        path = self.database(rec)
        if not os.path.exists(path):
            return b""
        import sqlite3
        try:
            db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)
            row = db.execute("SELECT id FROM session ORDER BY time_created DESC LIMIT 1").fetchone()
            if not row:
                return b""
            rows = db.execute("SELECT aggregate_id, seq, type, data FROM event WHERE aggregate_id = ? ORDER BY seq",
                              (row[0],)).fetchall()
            db.close()
        except sqlite3.Error:
            return b""
        return b"".join(
            f'{{"aggregate_id":{json.dumps(a)},"seq":{q},"type":{json.dumps(t)},"data":{d}}}\n'.encode()
            for a, q, t, d in rows)

    def ready(self, screen):
        return opencode_ready(screen)

    def busy(self, screen, title):
        return "esc interrupt" in screen or "esc again to interrupt" in screen or "retrying" in screen

    def turns(self, data):
        """[(start line, outcome line or None, outcome, answer)]: a new user message starts a
        turn; its assistant message ends it: finish `stop` done, `MessageAbortedError` (or
        completed with neither finish nor error) interrupted, another error failed."""
        lines = [(a, b, o) for a, b, o in read_lines(data) if o]
        out, users, texts = [], set(), {}
        for a, b, o in lines:
            kind, d = o.get("type"), o.get("data") or {}
            if kind == "message.part.updated.1":
                part = d.get("part") or {}
                if part.get("type") == "text":
                    texts[(part.get("messageID"), part.get("id"))] = part.get("text") or ""
                continue
            if kind != "message.updated.1":
                continue
            info = d.get("info") or {}
            if info.get("role") == "user":
                if info.get("id") not in users:
                    users.add(info.get("id"))
                    out.append([(a, b), None, "working", None])
                continue
            if not out or out[-1][1] is not None or not (info.get("time") or {}).get("completed"):
                continue
            error, finish = info.get("error"), info.get("finish")
            if error:
                outcome = "interrupted" if error.get("name") == "MessageAbortedError" else "failed"
            elif finish == "tool-calls":
                continue
            elif finish:
                outcome = "done"
            else:
                outcome = "interrupted"
            answer = None
            if outcome == "done":
                answer = "".join(t for (m, _), t in texts.items() if m == info.get("id")) or None
            out[-1][1:] = [(a, b), outcome, answer]
        return [tuple(t) for t in out]

    def version(self):
        out = subprocess.run(self.executable() + ["--version"], capture_output=True, text=True).stdout
        found = re.search(r"\d+\.\d+\.\d+", out)
        return found.group(0) if found else "unknown"

    def close(self, rec):
        pass


class Kilo(OpenCode):
    """Kilo CLI, an OpenCode fork: the same rows in its own `kilo.db`, the same
    bus events through the same logging plugin, in its own folders."""
    name, family = "kilo", "opencode"

    def prepare(self, rec):
        prepare_kilo_home(rec.home, rec.api)
        self.log_hooks(rec, os.path.join(rec.home, ".config", "kilo", "plugins"))

    def command(self, rec):
        return kilo_command(), kilo_env(rec.home)

    def database(self, rec):
        return os.path.join(rec.home, ".local", "share", "kilo", "kilo.db")

    def executable(self):
        return kilo_command()


class Aider:
    """Aider (pip aider-chat): no log turnstile reads and no hook that tells
    a finished turn from a question, so its fixture's `transcript.jsonl` is
    the fake API's own record of the answers it finished (a line each:
    time, prompt, text, stop), the truth's clock; scored on screens only,
    through the example rules file (`score.py --corpus tests/fixtures/aider
    --no-transcript`)."""
    name, dialog = "aider", "(Y)es/(N)o"

    @staticmethod
    def fake(log):
        api = FakeChat(log)
        api.toolless_turns = True
        return api

    def prepare(self, rec):
        os.makedirs(rec.home, exist_ok=True)

    def command(self, rec):
        return [aider_command(), "--model", "openai/fake-model", "--no-git", "--no-check-update",
                "--no-show-model-warnings", "--analytics-disable", "--no-auto-commits",
                "--no-show-release-notes"], {"OPENAI_API_BASE": rec.api.url, "OPENAI_API_KEY": "sk-fake-key"}

    def transcript(self, rec):
        return []

    def export(self, rec):
        with rec.api.lock:
            answers = list(rec.api.answers)
        return b"".join((json.dumps({"t": round(a["t"] - rec.t0, 3), "prompt": a["prompt"], "text": a["text"],
                                     "stop": a["stop"]}) + "\n").encode() for a in answers)

    def ready(self, screen):
        return aider_ready(screen)

    def busy(self, screen, title):
        rows = [r for r in screen.splitlines() if r.strip()]
        return "Waiting for" in screen or not rows or rows[-1].strip() != ">"

    def turns(self, data):
        out = []
        for a, b, o in read_lines(data):
            if not o or o.get("stop") == "tool":
                continue
            outcome = "done" if o.get("stop") == "final" else "failed"
            out.append(((a, a), (a, b), outcome, o.get("text") if outcome == "done" else None))
        return out

    def version(self):
        out = subprocess.run([aider_command(), "--version"], capture_output=True, text=True).stdout
        return out.split()[-1] if out.strip() else "unknown"

    def close(self, rec):
        pass


AGENTS = {"codex": Codex(), "gemini": Gemini(), "qwen": Qwen(), "copilot": Copilot(), "opencode": OpenCode(),
          "kilo": Kilo(), "aider": Aider()}


class Recorder:
    """One agent session in a tmux pane, sampled while steps drive it."""

    def __init__(self, agent):
        self.agent = agent
        # Not under the temp dir: Codex refuses its helper binaries there.
        base = os.path.join(os.path.expanduser("~"), ".cache", "turnstile", "recordings")
        os.makedirs(base, exist_ok=True)
        self.dir = tempfile.mkdtemp(prefix="tsrec-", dir=base)
        self.home, self.work = os.path.join(self.dir, "home"), os.path.join(self.dir, "proj")
        os.makedirs(self.work)
        self.api = agent.fake(os.path.join(self.dir, "requests.jsonl"))
        self.hook_log = os.path.join(self.dir, "hooks.jsonl")
        agent.prepare(self)
        self.tmux = "tsrec" + os.path.basename(self.dir)[-8:]
        self.events, self.frames, self.growth = [], [], []
        self.t0 = time.time()
        self.stop = threading.Event()
        self.command, extra_env = agent.command(self)
        env = {"HOME": self.home, "PATH": os.environ["PATH"], "TERM": "xterm-256color", "LANG": "C.UTF-8", **extra_env}
        subprocess.run(["tmux", "new-session", "-d", "-s", self.tmux, "-x", str(COLS), "-y", str(ROWS), "-c",
                        self.work, "env", "-i", *[f"{k}={v}" for k, v in env.items()], *self.command], check=True)
        self.sampler = threading.Thread(target=self._sample, daemon=True)
        self.sampler.start()

    def now(self):
        return round(time.time() - self.t0, 3)

    def transcript(self):
        files = self.agent.transcript(self)
        return max(files, key=os.path.getmtime) if files else None

    def transcript_bytes(self):
        """The transcript as the fixture keeps it (OpenCode's: its database's rows, exported)."""
        if hasattr(self.agent, "export"):
            return self.agent.export(self)
        path = self.transcript()
        return open(path, "rb").read() if path else b""

    def transcript_size(self):
        if hasattr(self.agent, "export"):
            return len(self.agent.export(self))
        path = self.transcript()
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
            screen, title, size = self.screen(), self.title(), self.transcript_size()
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
        wait_for(f"{self.agent.name} ready", lambda: self.agent.ready(self.screen(escapes=False)), timeout=60)
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
        self.agent.close(self)
        self.api.close()


# ------------------------------------------------------------------ scenarios
def family(r):
    """The agent whose scenario steps this one takes (a fork takes its origin's)."""
    return getattr(r.agent, "family", r.agent.name)


def approve(r):
    """Waits for the agent's approval dialog, then approves (Enter) after 2 s."""
    r.until_screen(r.agent.dialog)
    time.sleep(2)
    r.key("Enter")


def tool(r):
    r.prompt("tool:4")
    if family(r) == "gemini":  # `sleep` is not on its safe list
        approve(r)
    r.until_answered("tool:4")


def perm(r):
    r.prompt("perm:" if family(r) in ("codex", "qwen", "copilot", "opencode") else "tool:3")
    approve(r)
    r.until_answered("perm:" if family(r) in ("codex", "qwen", "copilot", "opencode") else "tool:3")


def escape(r):
    """Escape (Copilot CLI wants it twice: the first only says `esc again to interrupt`)."""
    r.key("Escape")
    if family(r) in ("copilot", "opencode"):
        time.sleep(0.3)
        r.key("Escape")


def interrupt(r):
    r.prompt("tool:20")
    if family(r) == "gemini":
        approve(r)
    time.sleep(3)
    escape(r)
    shown = {"codex": "Conversation interrupted", "copilot": "cancelled by user", "opencode": "· interrupted"}
    r.until_screen(shown.get(family(r), "Request cancelled"))
    time.sleep(1.5)
    r.prompt("echo:after the interrupt")
    r.until_answered("echo:after the interrupt")


def fail(r):
    failure = "fail:500" if family(r) == "codex" else "fail:400"
    if family(r) == "aider":  # its rules have no retry: a 400 only
        r.prompt(failure)
        wait_for("the failure", lambda: r.api.finished(failure), timeout=30)
        time.sleep(3)
        r.prompt("echo:after the failure")
        r.until_answered("echo:after the failure")
        return
    if family(r) in ("qwen", "copilot", "opencode"):
        r.prompt(failure)
        wait_for("the failure", lambda: r.api.finished(failure), timeout=30)
        time.sleep(3)
        r.prompt("fail:500")  # retried for ever: Escape ends it
        time.sleep(6)
        escape(r)
        time.sleep(3)
        if family(r) != "opencode":
            r.key("C-u")  # Escape puts the prompt back into the input box
        r.prompt("echo:after the failure")
        r.until_answered("echo:after the failure")
        return
    r.prompt(failure)
    wait_for("the failure", lambda: r.api.finished(failure), timeout=30)
    time.sleep(3)
    r.prompt("echo:after the failure")
    r.until_answered("echo:after the failure")


def slow(r):
    r.prompt("slow:6")
    r.until_answered("slow:6", timeout=30)


SCENARIOS = {
    "tool": (tool, "`tool:4`: a preamble, a shell call, the final answer"),
    "perm": (perm, "a shell call that needs approval, approved after 2 s"),
    "interrupt": (interrupt, "Escape during a 20 s shell call, then a plain turn"),
    "fail": (fail, "an HTTP error fails the turn (Codex 500, Gemini 400), then a plain turn"),
    "slow": (slow, "an answer streamed over 6 s"),
}


# ------------------------------------------------------------------ truth draft
def draft_truth(rec, name, scenario, data):
    """The turns as the transcript's own records tell them, timed by the
    frames: when the screen showed the turn over, when a dialog waited."""
    found = rec.agent.turns(data)
    prompts = [e for e in rec.events if "prompt" in e]
    turns = []
    for i, (ev, (start, end, outcome, answer)) in enumerate(zip(prompts, found)):
        turn = {"prompt": ev["prompt"], "prompt_t": ev["t"], "prompt_offset": start[0], "prompt_end": start[1],
                "outcome": outcome, "outcome_offset": end[1] if end else None, "answer": answer}
        if rec.agent.name in ("gemini", "qwen") and outcome == "done":
            # A Gemini (or Qwen) answer record may still be followed by more
            # of the turn: working or done until the next prompt (or the end).
            nxt = found[i + 1][0][0] if i + 1 < len(found) else len(data) + 1
            turn["confirm_offset"] = nxt
        outcome_t = frame_time_of_bytes(rec.growth, end[1]) if end else None
        turn["transcript_outcome_t"] = outcome_t
        screen, over, opened, waiting = None, None, None, []
        nxt_t = prompts[i + 1]["t"] if i + 1 < len(prompts) else float("inf")
        for f in rec.frames:
            screen = ANSI.sub("", f.get("screen", screen) or "")
            if not ev["t"] <= f["t"] < nxt_t:
                continue
            dialog = rec.agent.dialog in screen
            if dialog and opened is None:
                opened = f
            elif not dialog and opened is not None:
                waiting.append({"t_start": opened["t"], "t_end": f["t"], "offset_start": opened["transcript_bytes"],
                                "offset_end": f["transcript_bytes"]})
                opened = None
            quiet = not dialog and not rec.agent.busy(screen, f["title"])
            if over is None and outcome_t is not None and f["t"] >= outcome_t and quiet:
                over = f["t"]
        if waiting:
            turn["waiting"] = waiting
        turn["screen_over_t"] = over if over is not None else nxt_t
        turns.append(turn)
    return {"name": name, "agent": rec.agent.name, "version": rec.agent.version(), "scenario": scenario,
            "hooks": True, "transcript_bytes": len(data), "frames": len(rec.frames), "events": rec.events,
            "turns": turns, "checked_by_eye": False}


def write_fixture(rec, out, name, scenario, notes):
    os.makedirs(out, exist_ok=True)
    path = rec.transcript()
    data = rec.transcript_bytes()
    data = anonymize(data.decode("utf-8", "surrogateescape"), rec).encode("utf-8", "surrogateescape")
    with open(os.path.join(out, "transcript.jsonl"), "wb") as f:
        f.write(data)
    meta = {"agent": rec.agent.name, "command": " ".join(rec.command), "pane": f"{COLS}x{ROWS}", "t0_epoch": rec.t0,
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
    ap.add_argument("agent", choices=sorted(AGENTS))
    ap.add_argument("scenario", nargs="?", choices=sorted(SCENARIOS))
    ap.add_argument("--out", help="fixture folder (default tests/fixtures/<agent>/<version>-<scenario>)")
    ap.add_argument("--list", action="store_true", help="list the scenarios")
    args = ap.parse_args()
    if args.list or not args.scenario:
        for name, (_, what) in SCENARIOS.items():
            print(f"{name:10} {what}")
        return
    agent = AGENTS[args.agent]
    steps, what = SCENARIOS[args.scenario]
    rec = Recorder(agent)
    try:
        rec.ready()
        steps(rec)
        time.sleep(2)
    finally:
        rec.close()
    name = f"{agent.version()}-{args.scenario}"
    out = args.out or os.path.join(ROOT, "tests", "fixtures", agent.name, name)
    truth = write_fixture(rec, out, name, args.scenario, what)
    if not os.environ.get("TURNSTILE_KEEP"):
        remove_sandbox(rec.dir, rec.home)
    print(json.dumps({"fixture": out, "turns": truth["turns"]}, indent=1, ensure_ascii=False))
    print(f"recorded {out}: check truth.json by eye, then set checked_by_eye", file=sys.stderr)


if __name__ == "__main__":
    main()
