"""A loopback fake of the Gemini API for running real Gemini CLI.

Answers `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` with SSE
`data:` chunks, records every request (JSONL) and logs every answer it
finished (`answers`: time, the prompt of the turn, the text, the stop:
"final", "tool" or an HTTP status) so tests know when a turn really ended.
What it answers depends on the prompt of the current turn:

- `tool:N`   -> "Running it." + a `run_shell_command` call `sleep N`; after
                its `functionResponse`: "Done: slept Ns."
- `slow:N`   -> an answer streamed in chunks over N seconds
- `fail:400` -> HTTP 400
- `echo:TEXT`-> TEXT
- anything else -> "Hello from the fake model."
Other calls (`generateContent`: the next-speaker check and the like,
`countTokens`) get short valid answers.
"""
import json, os, sys, threading, time
from fake_api import FakeServer, JsonHandler


def current_prompt(body):
    """The last text a person typed: the last text part of the last user
    content that is not a function response."""
    for content in reversed(body.get("contents") or []):
        if content.get("role") != "user":
            continue
        parts = content.get("parts") or []
        if any("functionResponse" in p for p in parts):
            continue
        texts = [p["text"].strip() for p in parts if isinstance(p.get("text"), str) and p["text"].strip()]
        if texts:
            return texts[-1]
    return ""


def last_kind(body):
    contents = body.get("contents") or []
    parts = (contents[-1].get("parts") or []) if contents else []
    return "tool_result" if any("functionResponse" in p for p in parts) else "prompt"


class FakeGemini(FakeServer):
    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def _handler(self):
        api = self

        class Handler(JsonHandler):
            def do_GET(self):
                self.send_json(200, {"models": []})

            def do_POST(self):
                body = self.read_body()
                streaming = ":streamGenerateContent" in self.path
                api.record(self.path, body, current_prompt(body) if streaming else None)
                if ":countTokens" in self.path:
                    return self.send_json(200, {"totalTokens": 10})
                if not streaming:
                    text = json.dumps({"reasoning": "fake", "next_speaker": "user"})
                    return self.send_json(200, {"candidates": [self.candidate([{"text": text}])]})
                self.answer(body)

            @staticmethod
            def candidate(parts, finish="STOP"):
                return {"content": {"role": "model", "parts": parts}, "finishReason": finish, "index": 0}

            def answer(self, body):
                prompt, kind = current_prompt(body), last_kind(body)
                verb, _, arg = prompt.partition(":")
                arg = (arg.split() or ["1"])[0]
                if verb == "fail" and arg == "400":
                    api.log_answer(prompt, None, 400)
                    return self.send_json(400, {"error": {"code": 400, "message": "Request contains an invalid argument (fake).",
                                                          "status": "INVALID_ARGUMENT"}})
                if verb == "tool" and kind == "prompt":
                    call = {"functionCall": {"name": "run_shell_command", "args": {"command": f"sleep {arg}"}}}
                    api.log_answer(prompt, "Running it.", "tool")
                    return self.stream([[{"text": "Running it."}], [call]])
                if verb == "tool":
                    text = f"Done: slept {arg}s."
                elif verb == "echo":
                    text = prompt.partition(":")[2].strip() or "(empty)"
                elif verb == "slow":
                    words = [f"word{i}" for i in range(int(float(arg) * 4))]
                    chunks = [[{"text": " ".join(words[i:i + 4]) + " "}] for i in range(0, len(words), 4)]
                    self.stream(chunks, pace=float(arg))
                    return api.log_answer(prompt, " ".join(words) + " ", "final")
                else:
                    text = "Hello from the fake model."
                self.stream([[{"text": text}]])
                api.log_answer(prompt, text, "final")

            def stream(self, chunks, pace=0.0):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                usage = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
                try:
                    for i, parts in enumerate(chunks):
                        last = i == len(chunks) - 1
                        data = {"candidates": [self.candidate(parts, "STOP" if last else None)],
                                "usageMetadata": usage, "modelVersion": "gemini-2.5-flash"}
                        if not last:
                            del data["candidates"][0]["finishReason"]
                        self.wfile.write(f"data: {json.dumps(data)}\r\n\r\n".encode())
                        self.wfile.flush()
                        if pace:
                            time.sleep(pace / max(len(chunks), 1))
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True

        return Handler


if __name__ == "__main__":
    api = FakeGemini(sys.argv[1] if len(sys.argv) > 1 else os.devnull)
    print(api.url, flush=True)
    threading.Event().wait()
