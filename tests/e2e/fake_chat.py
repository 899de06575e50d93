"""A loopback fake of the OpenAI Chat Completions API, for the agents that
speak it offline (Qwen Code; OpenCode and Copilot CLI can use it too).

Answers `POST …/chat/completions` (streamed with SSE `chat.completion.chunk`s
and a usage chunk, or whole), records every request (JSONL) and logs every
answer it finished (`answers`: time, the prompt of the turn, the text, the
stop: "final", "tool" or an HTTP status) so tests know when a turn really
ended. What it answers depends on the prompt of the current turn (the last
text a person typed; words after the first are free):

- `tool:N`     -> "Running it." + a call of the shell tool the request offers
                  running `sleep N` (plus `FAKE_TOOL_SUFFIX`: Qwen Code
                  refuses a bare `sleep N`); after its output:
                  "Done: slept Ns."
- `perm:`      -> "Running it." + a shell call `touch approved.txt` (which
                  the agents ask to approve); after it: "Done: created the
                  file, as you approved."
- `slow:N`     -> an answer streamed word by word over N seconds
- `task:N`     -> "Delegating." + a call of the `task` tool (OpenCode's
                  subagents) whose prompt is `slow:N`; after its result:
                  "Done: the subagent answered."
- `fail:500`   -> HTTP 500, every time
- `fail:400`   -> HTTP 400, every time
- `echo:TEXT`  -> TEXT
- anything else -> "Hello from the fake model."

Requests that are not the conversation (an agent's own side requests: a
prompt suggestion, a memory digest, a title) get a short answer and are not
counted as turns.
"""
import json, os, sys, threading, time
from fake_api import FakeServer, JsonHandler

VERBS = ("tool", "perm", "slow", "task", "fail", "echo")
SHELL_TOOLS = ("run_shell_command", "bash", "shell", "Bash")

# The side requests the agents send besides the conversation.
SIDE_MARKERS = ("[SUGGESTION MODE", "Managed memory has TWO directories", "Generate a title",
                "generate a short title", "You are a title generator")

# Parts of a user message that are the agent's context, not the person's words.
CONTEXT_PARTS = ("<system-reminder>", "<environment_details>")

SLEEP_SUFFIX = os.environ.get("FAKE_TOOL_SUFFIX", " # intentional-sleep: the test waits here")


def text_of(content):
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


def is_side_request(body, toolless_turns=False):
    """True for a request that is not a turn of the conversation (one that
    offers no tools is one, unless the agent under test offers none at all:
    `toolless_turns`, Aider)."""
    texts = [text_of(m.get("content")) for m in body.get("messages") or []]
    no_tools = not body.get("tools") and not toolless_turns
    return no_tools or any(marker in t for t in texts[-2:] for marker in SIDE_MARKERS)


def texts_of(content):
    if isinstance(content, str):
        return [content]
    return [part.get("text", "") for part in content or [] if isinstance(part, dict)]


def current_prompt(body):
    """The last text the person typed in this conversation."""
    for message in reversed(body.get("messages") or []):
        if message.get("role") != "user":
            continue
        # Agents put context beside the words: whole `<system-reminder>`
        # parts (Qwen Code), `<environment_details>` parts (Kilo CLI),
        # tagged lines before them (Copilot CLI's `<current_datetime>`).
        for text in reversed(texts_of(message.get("content"))):
            if text.lstrip().startswith(CONTEXT_PARTS):
                continue
            lines = [l.strip() for l in text.splitlines() if l.strip() and not l.lstrip().startswith("<")]
            # Aider puts its format reminder after the words: a line that
            # names a verb is the prompt wherever it stands.
            asked = [l for l in lines if l.partition(":")[0] in VERBS and ":" in l]
            if asked or lines:
                return (asked or lines)[-1]
    return ""


def after_tool(body):
    """True when the last message is a tool's result."""
    messages = body.get("messages") or []
    return bool(messages) and messages[-1].get("role") == "tool"


def offers(body, tool):
    """True when the request offers `tool`."""
    return any((t.get("function") or {}).get("name") == tool for t in body.get("tools") or [])


def shell_call(body, command):
    """(name, arguments) of a call to the shell tool this request offers."""
    names = [(t.get("function") or {}).get("name") for t in body.get("tools") or []]
    name = next((n for n in SHELL_TOOLS if n in names), "run_shell_command")
    args = {"command": command, "description": "The test runs this."}
    if name == "run_shell_command":
        args["is_background"] = False
    return name, args


class FakeChat(FakeServer):
    #: Requests without tools are turns too (Aider offers none).
    toolless_turns = False

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/v1"

    def _handler(self):
        api = self

        class Handler(JsonHandler):
            def do_GET(self):
                self.send_json(200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]})

            def do_POST(self):
                body = self.read_body()
                side = is_side_request(body, api.toolless_turns)
                api.record(self.path, body, None if side else current_prompt(body))
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    return self.send_json(200, {})
                if side:
                    return self.reply(body, "Fake side answer.", None)
                self.answer(body)

            def answer(self, body):
                prompt = current_prompt(body)
                verb, _, arg = prompt.partition(":")
                arg = (arg.split() or ["1"])[0]
                if verb == "fail" and arg in ("500", "400"):
                    api.log_answer(prompt, None, int(arg))
                    kind = "server_error" if arg == "500" else "invalid_request_error"
                    return self.send_json(int(arg), {"error": {"message": f"fake HTTP {arg}", "type": kind}})
                if verb == "task" and not after_tool(body) and offers(body, "task"):
                    api.log_answer(prompt, "Delegating.", "tool")
                    args = {"description": "the sub task", "prompt": f"slow:{arg}", "subagent_type": "general"}
                    return self.reply(body, "Delegating.", ("task", args))
                if verb in ("tool", "perm") and not after_tool(body):
                    command = f"sleep {arg}{SLEEP_SUFFIX}" if verb == "tool" else "touch approved.txt"
                    api.log_answer(prompt, "Running it.", "tool")
                    return self.reply(body, "Running it.", shell_call(body, command))
                pace = 0.0
                if verb == "tool":
                    text = f"Done: slept {arg}s."
                elif verb == "perm":
                    text = "Done: created the file, as you approved."
                elif verb == "echo":
                    text = prompt.partition(":")[2].strip() or "(empty)"
                elif verb == "task":
                    text = "Done: the subagent answered."
                elif verb == "slow":
                    pace = float(arg)
                    text = " ".join(f"word{i}" for i in range(int(pace * 4)))
                else:
                    text = "Hello from the fake model."
                # Logged before the agent can know the answer is complete: a
                # bar that shows done before this time showed it early.
                self.reply(body, text, None, pace, before_end=lambda: api.log_answer(prompt, text, "final"))

            def reply(self, body, text, call, pace=0.0, before_end=None):
                """Answers `text` (and `call`); `before_end()` runs before the
                bytes that end the answer go out."""
                if body.get("stream"):
                    return self.stream(text, call, pace, before_end)
                message = {"role": "assistant", "content": text}
                if call:
                    message["tool_calls"] = [self.tool_call(call)]
                if before_end:
                    before_end()
                self.send_json(200, {"id": f"chatcmpl-{api.next_id()}", "object": "chat.completion",
                                     "created": int(time.time()), "model": body.get("model", "fake-model"),
                                     "choices": [{"index": 0, "message": message,
                                                  "finish_reason": "tool_calls" if call else "stop"}],
                                     "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})

            def tool_call(self, call):
                name, args = call
                return {"id": f"call_{api.next_id()}", "type": "function",
                        "function": {"name": name, "arguments": json.dumps(args)}}

            def chunk(self, cid, delta, finish=None, usage=None):
                data = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()),
                        "model": "fake-model", "choices": [] if usage else
                        [{"index": 0, "delta": delta, "finish_reason": finish}]}
                if usage:
                    data["usage"] = usage
                self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()

            def stream(self, text, call, pace, before_end=None):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                cid = f"chatcmpl-{api.next_id()}"
                try:
                    self.chunk(cid, {"role": "assistant", "content": ""})
                    words = text.split(" ")
                    for i, word in enumerate(words):
                        self.chunk(cid, {"content": (" " if i else "") + word})
                        if pace:
                            time.sleep(pace / max(len(words), 1))
                    if call:
                        tool_call = dict(self.tool_call(call), index=0)
                        self.chunk(cid, {"tool_calls": [tool_call]})
                    if before_end:
                        before_end()
                    self.chunk(cid, {}, finish="tool_calls" if call else "stop")
                    self.chunk(cid, None, usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True

        return Handler


if __name__ == "__main__":
    api = FakeChat(sys.argv[1] if len(sys.argv) > 1 else os.devnull)
    api.toolless_turns = "--toolless" in sys.argv
    print(api.url, flush=True)
    threading.Event().wait()
