"""Agents typed into a shell after the bar is up, as most people start them
(issue 22): real Claude Code, Codex CLI, Gemini CLI, Qwen Code, Copilot CLI, OpenCode and Kilo CLI, each against its
loopback fake API and without hooks, are found by the watcher, get a
transcript-confirmed done, and route their answer to another pane."""
import os, shlex, subprocess, sys, time, unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agents import claude_argv, codex_argv, codex_ready, gemini_argv, gemini_ready
from agents import prepare_codex_home, prepare_gemini_home, prepare_home, prepare_qwen_home, qwen_argv, qwen_ready
from agents import copilot_argv, copilot_ready, prepare_copilot_home
from agents import kilo_argv, kilo_ready, opencode_argv, opencode_ready, prepare_kilo_home, prepare_opencode_home
from agent_case import AgentCase, claude_ready, segment
from fake_api import FakeApi
from fake_chat import FakeChat
from fake_gemini import FakeGemini
from fake_openai import FakeOpenAI
from harness import Zellij, wait_for
from test_bar import demo, user_prompts
from test_real_claude import is_confirmed_done, type_prompt

SHELL = ["/bin/bash", "--norc", "--noprofile", "-i"]


class ShellStarted(AgentCase, unittest.TestCase):
    def setUp(self):
        tmp = os.environ.get("TMPDIR", "/tmp")
        stamp = f"{os.getpid()}-{time.time()}"
        self.claude_api = FakeApi(os.path.join(tmp, f"fake-api-{stamp}.jsonl"))
        self.openai = FakeOpenAI(os.path.join(tmp, f"fake-openai-{stamp}.jsonl"))
        self.gemini = FakeGemini(os.path.join(tmp, f"fake-gemini-{stamp}.jsonl"))
        self.chat = FakeChat(os.path.join(tmp, f"fake-chat-{stamp}.jsonl"))

    def tearDown(self):
        self.chat.close()
        self.gemini.close()
        self.openai.close()
        self.claude_api.close()

    def zellij(self, panes, **kw):
        def prepare(z):
            prepare_home(z.home, z.work, False)
            prepare_codex_home(z.home, z.work, self.openai, False)
            prepare_gemini_home(z.home, z.work, False)
            prepare_qwen_home(z.home, z.work, False)
            prepare_copilot_home(z.home, z.work)
            prepare_opencode_home(z.home, self.chat, config=z.env["XDG_CONFIG_HOME"])
            prepare_kilo_home(z.home, self.chat, config=z.env["XDG_CONFIG_HOME"])
            self.addCleanup(subprocess.run, ["pkill", "-f", os.path.join(z.home, ".codex")], check=False)
        return Zellij(panes, before_start=prepare, **kw)

    def started_in_a_shell(self, title, argv, ready, api):
        """A shell pane and a listening simulated agent; once the bar shows,
        `argv` is typed into the shell; a prompt then gets a confirmed done
        and its answer reaches the other pane."""
        panes = [(title, SHELL), ("dst", demo("dst", "", turns=0, listen=True))]
        with self.zellij(panes, plugin_config={"flows": f"{title} -> dst"}) as z:
            wait_for("the bar up", lambda: segment(z, "dst"), timeout=30)
            self.assertEqual(segment(z, title), "", "a plain shell is no agent pane")
            time.sleep(1)
            type_prompt(z, title, " ".join(shlex.quote(a) for a in argv))
            wait_for(f"{title} ready", lambda: ready(z.screen()), timeout=60)
            wait_for(f"{title} in the bar", lambda: segment(z, title), timeout=30)
            self.agent_api = api
            self.submit(z, title, "echo:hello from a shell", attempts=5)
            wait_for("a confirmed done", lambda: is_confirmed_done(segment(z, title)), timeout=40)
            wait_for("the answer routed to dst",
                     lambda: any("hello from a shell" in t for _, t in user_prompts(z)), timeout=30)

    def test_claude_code_typed_into_a_shell(self):
        self.started_in_a_shell("cc", claude_argv(self.claude_api), claude_ready, self.claude_api)

    def test_codex_typed_into_a_shell(self):
        self.started_in_a_shell("cx", codex_argv(hooks=False), codex_ready, self.openai)

    def test_gemini_cli_typed_into_a_shell(self):
        self.started_in_a_shell("gm", gemini_argv(self.gemini), gemini_ready, self.gemini)

    def test_qwen_code_typed_into_a_shell(self):
        self.started_in_a_shell("qw", qwen_argv(self.chat), qwen_ready, self.chat)

    def test_copilot_cli_typed_into_a_shell(self):
        self.started_in_a_shell("gh", copilot_argv(self.chat), copilot_ready, self.chat)

    def test_opencode_typed_into_a_shell(self):
        self.started_in_a_shell("oc", opencode_argv(), opencode_ready, self.chat)

    def test_kilo_cli_typed_into_a_shell(self):
        self.started_in_a_shell("kl", kilo_argv(), kilo_ready, self.chat)


if __name__ == "__main__":
    unittest.main()
