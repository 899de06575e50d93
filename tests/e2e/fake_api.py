"""A loopback fake of the Anthropic Messages API for running real Claude Code.

Streams SSE (`message_start`, `content_block_*`, `message_delta`,
`message_stop`), answers `count_tokens`, and records every request (JSONL) so
tests can assert what the agent sent. What it answers depends on the last
user message of the main conversation:

- `tool:N`        -> "Running it." + a Bash tool call `sleep N`; after the tool
                     result: "Done: slept Ns."
- `perm:`         -> a Bash call that needs permission in ask mode (`touch
                     approved.txt`); after the result: "Done: created the file."
- `fail:400`      -> HTTP 400 (prompt too long)
- `fail:529`      -> HTTP 529 (overloaded), every time: retries run out
- anything else   -> "Hello from the fake model." (or `echo:` the prompt back when
                     it starts with `echo:`)
Requests that are not the main conversation (titles, summaries, quota
checks) get a short plain answer.
"""
import json, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def last_user_text(body):
    for msg in reversed(body.get("messages") or []):
        if msg.get("role") != "user":
            continue
        content = msg.get("content")
        if isinstance(content, str):
            return content, False
        texts, tool_result = [], False
        for block in content or []:
            if block.get("type") == "tool_result":
                tool_result = True
            elif block.get("type") == "text" and not block.get("text", "").startswith("<system-reminder>"):
                texts.append(block.get("text", ""))
        return ("\n".join(texts).strip(), tool_result)
    return "", False


def first_prompt_with(body, prefix):
    for msg in body.get("messages") or []:
        content = msg.get("content")
        items = [content] if isinstance(content, str) else [b.get("text", "") for b in content or [] if b.get("type") == "text"]
        for text in items:
            text = text.strip()
            if text.startswith(prefix):
                return text
    return None


class FakeApi:
    def __init__(self, record_path):
        self.record_path = record_path
        self.counter = 0
        self.lock = threading.Lock()
        handler = self._handler()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def requests(self):
        try:
            with open(self.record_path) as f:
                return [json.loads(l) for l in f if l.strip()]
        except OSError:
            return []

    def next_id(self):
        with self.lock:
            self.counter += 1
            return self.counter

    def _handler(self):
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                self.send_json(200, {})

            def do_HEAD(self):
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b"{}"
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                with api.lock:
                    with open(api.record_path, "a") as f:
                        f.write(json.dumps({"t": time.time(), "path": self.path, "body": body}) + "\n")
                if "count_tokens" in self.path:
                    return self.send_json(200, {"input_tokens": 10})
                if not self.path.startswith("/v1/messages"):
                    return self.send_json(200, {})
                self.answer(body)

            def send_json(self, code, obj):
                data = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def answer(self, body):
                text, after_tool = last_user_text(body)
                main = bool(body.get("tools"))
                tool_prompt = first_prompt_with(body, "tool:")
                perm_prompt = first_prompt_with(body, "perm:")
                if main and after_tool and perm_prompt:
                    return self.stream(body, [("text", "Done: created the file.")], "end_turn")
                if main and text.startswith("perm:"):
                    tool = {"command": "touch approved.txt", "description": "Create a file"}
                    return self.stream(body, [("text", "Creating it."), ("tool_use", tool)], "tool_use")
                if main and text.startswith("fail:529"):
                    return self.send_json(529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
                if main and text.startswith("fail:400"):
                    return self.send_json(400, {"type": "error", "error": {
                        "type": "invalid_request_error", "message": "prompt is too long: 210000 tokens > 200000 maximum"}})
                if main and after_tool and tool_prompt:
                    secs = tool_prompt.split(":", 1)[1].strip()
                    return self.stream(body, [("text", f"Done: slept {secs}s.")], "end_turn")
                if main and text.startswith("tool:"):
                    secs = text.split(":", 1)[1].strip() or "1"
                    tool = {"command": f"sleep {secs}", "description": "Sleep"}
                    return self.stream(body, [("text", "Running it."), ("tool_use", tool)], "tool_use")
                if main and text.startswith("echo:"):
                    return self.stream(body, [("text", text[5:].strip())], "end_turn")
                reply = "Hello from the fake model." if main else "Fake title"
                self.stream(body, [("text", reply)], "end_turn")

            def event(self, name, data):
                chunk = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                self.wfile.flush()

            def stream(self, body, blocks, stop_reason):
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
                        self.event("content_block_start", {"type": "content_block_start", "index": i,
                                                           "content_block": {"type": "text", "text": ""}})
                        self.event("content_block_delta", {"type": "content_block_delta", "index": i,
                                                           "delta": {"type": "text_delta", "text": value}})
                    else:
                        self.event("content_block_start", {"type": "content_block_start", "index": i,
                                                           "content_block": {"type": "tool_use", "id": f"toolu_{n:06d}",
                                                                             "name": "Bash", "input": {}}})
                        self.event("content_block_delta", {"type": "content_block_delta", "index": i,
                                                           "delta": {"type": "input_json_delta",
                                                                     "partial_json": json.dumps(value)}})
                    self.event("content_block_stop", {"type": "content_block_stop", "index": i})
                self.event("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop_reason,
                                                                                 "stop_sequence": None},
                                             "usage": {"output_tokens": 20}})
                self.event("message_stop", {"type": "message_stop"})
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

        return Handler
