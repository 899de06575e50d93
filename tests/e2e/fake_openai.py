"""A loopback fake of the OpenAI Responses API for running real Codex CLI.

Answers `POST /v1/responses` with SSE (`response.created`,
`response.output_item.added` / `.done`, `response.output_text.delta`,
`response.completed`, `response.failed`), records every request (JSONL) and
logs every answer it finished (`answers`: time, the prompt of the turn, the
text, the stop: "final", "tool", an HTTP status or "failed") so tests know
when a turn really ended. What it answers depends on the prompt of the
current turn (the last text a person typed; words after the first are free):

- `tool:N`     -> "Running it." + a shell call `sleep N` (the shell tool the
                  request names); after its output: "Done: slept Ns."
- `perm:`      -> a shell call `touch approved.txt` that asks for escalated
                  permissions (Codex shows its approval dialog); after its
                  output: "Done: created the file, as you approved."
- `slow:N`     -> an answer streamed word by word over N seconds
- `fail:500`   -> HTTP 500, every time (retries run out)
- `fail:stream`-> `response.failed` after the stream started
- `echo:TEXT`  -> TEXT
- anything else -> "Hello from the fake model."
Requests without tools (the thread title) get `{"title": "Fake title"}`.
"""
import json, os, sys, threading, time
from fake_api import FakeServer, JsonHandler

SHELL_TOOLS = ("exec_command", "shell_command", "shell")


def input_texts(item):
    content = item.get("content")
    if isinstance(content, str):
        return [content]
    return [c.get("text", "") for c in content or [] if c.get("type") in ("input_text", "text")]


def is_context(text):
    """Codex's own wrappers around the user's words."""
    t = text.strip()
    return not t or t.startswith("<") and (t.startswith("<environment_context") or t.startswith("<user_instructions")
                                           or t.startswith("<permissions") or t.startswith("<turn_aborted"))


def current_prompt(body):
    """The last text the person typed in this conversation."""
    for item in reversed(body.get("input") or []):
        if item.get("type", "message") == "message" and item.get("role") == "user":
            texts = [t.strip() for t in input_texts(item) if not is_context(t)]
            if texts:
                return texts[-1]
    return ""


def last_kind(body):
    """"tool_result" when the last input item is a call's output, else "prompt"."""
    items = body.get("input") or []
    return "tool_result" if items and items[-1].get("type") == "function_call_output" else "prompt"


def shell_call(body, command, escalate=False):
    """(name, arguments) of a call to the shell tool this request offers."""
    names = [t.get("name") for t in body.get("tools") or []]
    name = next((n for n in SHELL_TOOLS if n in names), "shell")
    if name == "exec_command":
        args = {"cmd": command}
    elif name == "shell_command":
        args = {"command": command}
    else:
        args = {"command": ["bash", "-lc", command]}
    if escalate:
        args.update({"sandbox_permissions": "require_escalated", "justification": "The test needs this file."})
    return name, args


class FakeOpenAI(FakeServer):
    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/v1"

    def _handler(self):
        api = self

        class Handler(JsonHandler):
            def do_GET(self):
                self.send_json(200, {"data": [], "models": []})

            def do_POST(self):
                body = self.read_body()
                api.record(self.path, body, current_prompt(body) if body.get("tools") else None)
                if not self.path.rstrip("/").endswith("/responses"):
                    return self.send_json(200, {})
                self.answer(body)

            def answer(self, body):
                if not body.get("tools"):
                    return self.stream([self.message(json.dumps({"title": "Fake title"}))])
                prompt, kind = current_prompt(body), last_kind(body)
                verb, _, arg = prompt.partition(":")
                arg = (arg.split() or ["1"])[0]
                if verb == "fail" and arg == "500":
                    api.log_answer(prompt, None, 500)
                    return self.send_json(500, {"error": {"message": "We're currently experiencing high demand", "type": "server_error"}})
                if verb == "fail" and arg == "stream":
                    return self.stream([], failed=True, prompt=prompt)
                if verb in ("tool", "perm") and kind == "prompt":
                    command = f"sleep {arg}" if verb == "tool" else "touch approved.txt"
                    name, args = shell_call(body, command, escalate=verb == "perm")
                    call = {"type": "function_call", "id": f"fc_{api.next_id()}", "call_id": f"call_{api.next_id()}",
                            "name": name, "arguments": json.dumps(args)}
                    api.log_answer(prompt, "Running it.", "tool")
                    return self.stream([self.message("Running it."), call])
                if verb == "tool":
                    text = f"Done: slept {arg}s."
                elif verb == "perm":
                    text = "Done: created the file, as you approved."
                elif verb == "echo":
                    text = prompt.partition(":")[2].strip() or "(empty)"
                elif verb == "slow":
                    text = " ".join(f"word{i}" for i in range(int(float(arg) * 4)))
                    return self.stream([self.message(text)], pace=float(arg), prompt=prompt)
                else:
                    text = "Hello from the fake model."
                self.stream([self.message(text)])
                api.log_answer(prompt, text, "final")

            def message(self, text):
                return {"type": "message", "role": "assistant", "id": f"msg_{api.next_id()}",
                        "content": [{"type": "output_text", "text": text, "annotations": []}]}

            def event(self, name, data):
                data["type"] = name
                self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()

            def stream(self, items, pace=0.0, failed=False, prompt=None):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                rid = f"resp_{api.next_id()}"
                try:
                    self.event("response.created", {"response": {"id": rid}})
                    if failed:
                        time.sleep(0.3)
                        self.event("response.failed", {"response": {"id": rid, "error": {
                            "code": "server_error", "message": "The stream broke (fake)."}}})
                        api.log_answer(prompt, None, "failed")
                        return
                    for index, item in enumerate(items):
                        if pace and item["type"] == "message":
                            self.stream_text(index, item, pace)
                        self.event("response.output_item.done", {"output_index": index, "item": item})
                    self.event("response.completed", {"response": {"id": rid, "usage": {
                        "input_tokens": 10, "input_tokens_details": None, "output_tokens": 5,
                        "output_tokens_details": None, "total_tokens": 15}}})
                    if pace:
                        api.log_answer(prompt, items[0]["content"][0]["text"], "final")
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True

            def stream_text(self, index, item, pace):
                empty = dict(item, content=[])
                self.event("response.output_item.added", {"output_index": index, "item": empty})
                words = item["content"][0]["text"].split(" ")
                for i, word in enumerate(words):
                    self.event("response.output_text.delta", {"item_id": item["id"], "output_index": index,
                                                             "content_index": 0, "delta": (" " if i else "") + word})
                    time.sleep(pace / max(len(words), 1))

        return Handler


if __name__ == "__main__":
    api = FakeOpenAI(sys.argv[1] if len(sys.argv) > 1 else os.devnull)
    print(api.url, flush=True)
    threading.Event().wait()
