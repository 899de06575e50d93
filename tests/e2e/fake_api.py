"""A loopback fake of the Anthropic Messages API for running real Claude Code.

Streams SSE (`message_start`, `content_block_*`, `message_delta`,
`message_stop`), answers `count_tokens`, records every request (JSONL) so
tests can assert what the agent sent, and logs every answer it finished
(`answers`: time, the prompt of the turn, the text, the stop reason or HTTP
status) so tests know when a turn really ended. What it answers depends on
the prompt of the current turn (the last prompt a person typed; words after
the first one are free, e.g. a tag):

- `tool:N`      -> "Running it." + a Bash tool call `sleep N`; after the tool
                   result: "Done: slept Ns."
- `slow:N`      -> an answer streamed word by word over N seconds
- `perm:`       -> a Bash call that needs permission in ask mode (`touch
                   approved.txt`); after the result, streamed over ~3.5 s:
                   "Done: created the file, as you approved."
- `agent:N`     -> "Delegating to a sub-agent." + an Agent/Task tool call whose
                   sub-agent runs `sleep N` and answers; then "The sub-agent
                   finished: all done."
- `bg:N`        -> "Starting a background agent." + an Agent/Task tool call with
                   `run_in_background: true` whose sub-agent runs `sleep N`;
                   after the launch: "Started it; it will report back."; after
                   the `<task-notification>`: "The background agent reported back."
- `fail:400`    -> HTTP 400 (prompt too long)
- `fail:529`    -> HTTP 529 (overloaded), every time: retries run out
- `long:N`      -> an N-line markdown answer with banner-shaped prose in it,
                   streamed word by word
- `ask:Q`       -> "One question first." + an AskUserQuestion call asking Q
                   (Postgres or SQLite); after the answer: "Thanks: going
                   with your choice."
- `echo:TEXT`   -> TEXT
- `lines:A|B|C` -> the lines A, B and C (an answer with line breaks)
- anything else -> "Hello from the fake model."
Requests that are not the main conversation (titles, summaries, quota
checks) get a short plain answer.
"""
import json, os, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


NOTIFICATION = "<task-notification>"


def user_texts(msg, reminders=False):
    """The text blocks of a user message (system reminders only if asked)."""
    content = msg.get("content")
    items = [content] if isinstance(content, str) else [
        b.get("text", "") for b in content or [] if b.get("type") == "text"]
    return [t.strip() for t in items if t.strip() and (reminders or not t.strip().startswith("<system-reminder>"))]


def last_message_kind(body):
    """What the last user message brings: "tool_result", "notification" or "prompt"."""
    msgs = [m for m in body.get("messages") or [] if m.get("role") == "user"]
    if not msgs:
        return "prompt"
    last = msgs[-1]
    if any(NOTIFICATION in t for t in user_texts(last, reminders=True)):  # new releases wrap it in a reminder
        return "notification"
    content = last.get("content")
    if not isinstance(content, str) and any(b.get("type") == "tool_result" for b in content or []):
        return "tool_result"
    return "prompt"


def current_prompt(body):
    """The prompt of the turn: the last text a person typed (not a tool result,
    a reminder or a task notification)."""
    for msg in reversed(body.get("messages") or []):
        if msg.get("role") != "user":
            continue
        texts = [t for t in user_texts(msg) if NOTIFICATION not in t]
        if texts:
            return texts[-1]
    return ""


def long_answer(lines):
    """A long markdown answer with banner-shaped prose in it (no spinner glyph)."""
    out = ["# Report", ""]
    for i in range(lines):
        if i % 10 == 3:
            out.append(f"    Worked for {i}s on part {i}, then moved on · done {i}:00 AM")
        elif i % 10 == 7:
            out.append(f"- Cooked for {i}s: the step that baked the cache")
        else:
            out.append(f"Line {i}: the parser handles case {i} and its edge cases.")
    return "\n".join(out + ["", "That is the whole report."])


def agent_call(body, arg, background):
    """An Agent (new releases) or Task (old) tool call whose sub-agent runs `subtask:ARG`."""
    names = {t.get("name") for t in body.get("tools") or []}
    agent = {"description": "Background sleep" if background else "Sleep", "prompt": f"subtask:{arg}",
             "subagent_type": "general-purpose"}
    if background:
        agent["run_in_background"] = True
    return ("Agent" if "Agent" in names else "Task", agent)


def prompt_arg(prompt):
    """`tool:3 tag` -> "3"."""
    rest = prompt.split(":", 1)[1] if ":" in prompt else ""
    return (rest.split() or ["1"])[0]


class QuietServer(ThreadingHTTPServer):
    """An agent that goes away mid-answer (Escape, the end of a test) is not an error."""
    daemon_threads = True

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class JsonHandler(BaseHTTPRequestHandler):
    """What every fake's request handler shares: quiet, HTTP/1.1, JSON in and out."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def read_body(self):
        """The request's JSON body ({} when there is none or it is not JSON)."""
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b"{}"
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            return {}

    def send_json(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class FakeServer:
    """What the loopback fakes of the agents' APIs share: the server thread,
    the request log, the answers finished and the prompts seen."""
    NOT_FINAL = "tool"

    def __init__(self, record_path):
        self.record_path = record_path
        self.counter = 0
        self.lock = threading.Lock()
        self.answers = []
        self.prompts = []  # (time, prompt) of every main-conversation request
        self.server = QuietServer(("127.0.0.1", 0), self._handler())
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def _handler(self):
        raise NotImplementedError

    def close(self):
        """Stops the server and removes its record (kept with TURNSTILE_KEEP)."""
        self.server.shutdown()
        self.server.server_close()
        if not os.environ.get("TURNSTILE_KEEP"):
            try:
                os.unlink(self.record_path)
            except OSError:
                pass

    def next_id(self):
        with self.lock:
            self.counter += 1
            return self.counter

    def requests(self):
        """The requests recorded so far: whole lines only (the server thread
        may be writing the last one as the test reads)."""
        try:
            with open(self.record_path) as f:
                return [json.loads(l) for l in f if l.endswith("\n") and l.strip()]
        except OSError:
            return []

    def record(self, path, body, prompt):
        """Logs a request; `prompt` when it belongs to the main conversation."""
        with self.lock:
            with open(self.record_path, "a") as f:
                f.write(json.dumps({"t": time.time(), "path": path, "body": body}) + "\n")
            if prompt is not None:
                self.prompts.append((time.time(), prompt))

    def log_answer(self, prompt, text, stop):
        with self.lock:
            self.answers.append({"t": time.time(), "prompt": prompt, "text": text, "stop": stop})

    def prompt_count(self, prompt):
        """How many main-conversation requests had `prompt` as their turn's prompt."""
        with self.lock:
            return sum(1 for _, p in self.prompts if p == prompt)

    def finished(self, prompt):
        """Answers that ended a turn of `prompt` (a final text or a failure)."""
        with self.lock:
            return [a for a in self.answers if a["prompt"] == prompt and a["stop"] != self.NOT_FINAL]


class FakeApi(FakeServer):
    NOT_FINAL = "tool_use"

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def seen_at(self, text):
        """When a main-conversation request whose prompt contains `text` first came (or None)."""
        with self.lock:
            return next((t for t, p in self.prompts if text in p), None)

    def finished_with(self, text):
        """Turn-ending answers to prompts that contain `text` (e.g. a tag)."""
        with self.lock:
            return [a for a in self.answers if text in (a["prompt"] or "") and a["stop"] != "tool_use"]

    def answer_after(self, prompt, subtask):
        """The first answer to `prompt` after the sub-agent answered `subtask`
        (new releases may put the sub-agent in the background and answer first)."""
        sub = self.finished(subtask)
        return sub and next((a for a in self.finished(prompt) if a["t"] > sub[0]["t"]), None)

    def _handler(self):
        api = self

        class Handler(JsonHandler):
            def do_GET(self):
                self.send_json(200, {})

            def do_HEAD(self):
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self):
                body = self.read_body()
                self.prompt = current_prompt(body) if body.get("tools") else None  # main conversation only
                api.record(self.path, body, self.prompt)
                if "count_tokens" in self.path:
                    return self.send_json(200, {"input_tokens": 10})
                if not self.path.startswith("/v1/messages"):
                    return self.send_json(200, {})
                self.answer(body)

            def answer(self, body):
                if self.prompt is None:
                    return self.stream(body, [("text", "Fake title")], "end_turn")
                prompt, kind = self.prompt, last_message_kind(body)
                verb, arg = prompt.split(":", 1)[0] if ":" in prompt else "", prompt_arg(prompt)
                if verb == "fail" and arg == "529":
                    return self.fail(prompt, 529, {"type": "overloaded_error", "message": "Overloaded"})
                if verb == "fail" and arg == "400":
                    return self.fail(prompt, 400, {"type": "invalid_request_error",
                                                   "message": "prompt is too long: 210000 tokens > 200000 maximum"})
                if kind == "notification":
                    return self.stream(body, [("text", "The background agent reported back.")], "end_turn")
                if verb == "bg" and kind == "tool_result":
                    return self.stream(body, [("text", "Started it; it will report back.")], "end_turn")
                if verb == "bg":
                    tool = agent_call(body, arg, background=True)
                    return self.stream(body, [("text", "Starting a background agent."), ("tool_use", tool)], "tool_use")
                if verb == "agent" and kind == "tool_result":
                    return self.stream(body, [("text", "The sub-agent finished: all done.")], "end_turn")
                if verb == "agent":
                    tool = agent_call(body, arg, background=False)
                    return self.stream(body, [("text", "Delegating to a sub-agent."), ("tool_use", tool)], "tool_use")
                if verb == "subtask" and kind == "tool_result":
                    return self.stream(body, [("text", f"Subtask finished after {arg}s.")], "end_turn")
                if verb in ("tool", "subtask") and kind == "tool_result":
                    return self.stream(body, [("text", f"Done: slept {arg}s.")], "end_turn")
                if verb in ("tool", "subtask"):
                    tool = ("Bash", {"command": f"sleep {arg}", "description": "Sleep"})
                    return self.stream(body, [("text", "Running it."), ("tool_use", tool)], "tool_use")
                if verb == "perm" and kind == "tool_result":  # slowly: the turn visibly goes on after approval
                    return self.stream(body, [("text", "Done: created the file, as you approved.")], "end_turn",
                                       pace=0.5)
                if verb == "perm":
                    tool = ("Bash", {"command": "touch approved.txt", "description": "Create a file"})
                    return self.stream(body, [("text", "Creating it."), ("tool_use", tool)], "tool_use")
                if verb == "ask" and kind == "tool_result":
                    return self.stream(body, [("text", "Thanks: going with your choice.")], "end_turn", pace=0.3)
                if verb == "ask":
                    asked = prompt.split(":", 1)[1].strip() if ":" in prompt else ""
                    question = {"question": asked or "Which database?", "header": "Choice", "multiSelect": False,
                                "options": [{"label": "Postgres", "description": "Battle-tested."},
                                            {"label": "SQLite", "description": "One file."}]}
                    tool = ("AskUserQuestion", {"questions": [question]})
                    return self.stream(body, [("text", "One question first."), ("tool_use", tool)], "tool_use")
                if verb == "slow":
                    words = [f"word{i}" for i in range(max(1, int(float(arg) * 4)))]
                    return self.stream(body, [("text", "Streaming slowly: " + " ".join(words) + ".")], "end_turn",
                                       pace=0.25)
                if verb == "long":
                    return self.stream(body, [("text", long_answer(int(arg) if arg.isdigit() else 40))], "end_turn",
                                       pace=0.02)
                if verb == "echo":
                    return self.stream(body, [("text", prompt[5:].strip())], "end_turn")
                if verb == "lines":
                    return self.stream(body, [("text", "\n".join(prompt[6:].strip().split("|")))], "end_turn")
                self.stream(body, [("text", "Hello from the fake model.")], "end_turn")

            def fail(self, prompt, status, error):
                api.log_answer(prompt, None, status)
                self.send_json(status, {"type": "error", "error": error})

            def event(self, name, data):
                chunk = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                self.wfile.flush()

            def stream(self, body, blocks, stop_reason, pace=0.0):
                """Streams `blocks` ([("text", str) | ("tool_use", (name, input))]);
                with `pace`, text goes out one word every `pace` seconds."""
                n = api.next_id()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                model = body.get("model") or "claude-sonnet-4-5-20250929"
                self.event("message_start", {"type": "message_start", "message": {
                    "id": f"msg_{n:06d}", "type": "message", "role": "assistant", "model": model, "content": [],
                    "stop_reason": None, "stop_sequence": None,
                    "usage": {"input_tokens": 10, "output_tokens": 1}}})
                for i, (kind, value) in enumerate(blocks):
                    if kind == "text":
                        self.text_block(i, value, pace)
                    else:
                        self.tool_block(i, n, *value)
                    self.event("content_block_stop", {"type": "content_block_stop", "index": i})
                if self.prompt is not None:  # logged before the agent can know the answer is complete
                    api.log_answer(self.prompt, blocks[-1][1] if blocks[-1][0] == "text" else None, stop_reason)
                self.event("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop_reason,
                                                                                 "stop_sequence": None},
                                             "usage": {"output_tokens": 20}})
                self.event("message_stop", {"type": "message_stop"})
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

            def text_block(self, index, text, pace):
                self.event("content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": {"type": "text", "text": ""}})
                pieces = [w + " " for w in text.split(" ")] if pace else [text]
                pieces[-1] = pieces[-1].rstrip(" ") if pace else pieces[-1]
                for piece in pieces:
                    self.event("content_block_delta", {"type": "content_block_delta", "index": index,
                                                       "delta": {"type": "text_delta", "text": piece}})
                    if pace:
                        time.sleep(pace)

            def tool_block(self, index, n, name, tool_input):
                self.event("content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": {"type": "tool_use", "id": f"toolu_{n:06d}",
                                                                     "name": name, "input": {}}})
                self.event("content_block_delta", {"type": "content_block_delta", "index": index,
                                                   "delta": {"type": "input_json_delta",
                                                             "partial_json": json.dumps(tool_input)}})

        return Handler
