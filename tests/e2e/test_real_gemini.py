"""Real Gemini CLI 0.61.0 in a real zellij, against the loopback fake of the
Gemini API (`fake_gemini.py`), next to real Claude Code and Codex where a
scenario needs them."""
import os, subprocess, sys, time, unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agents import claude_argv, codex_argv, codex_ready, gemini_argv, gemini_ready
from agents import prepare_codex_home, prepare_gemini_home, prepare_home
from fake_api import FakeApi
from fake_gemini import FakeGemini
from fake_openai import FakeOpenAI
from agent_case import AgentCase, claude_ready, segment
from harness import Zellij, wait_for
from test_real_claude import is_confirmed_done


class RealGemini(AgentCase, unittest.TestCase):
    def setUp(self):
        tmp = os.environ.get("TMPDIR", "/tmp")
        stamp = f"{os.getpid()}-{time.time()}"
        self.gemini = self.agent_api = FakeGemini(os.path.join(tmp, f"fake-gemini-{stamp}.jsonl"))
        self.claude_api = FakeApi(os.path.join(tmp, f"fake-api-{stamp}.jsonl"))
        self.openai = FakeOpenAI(os.path.join(tmp, f"fake-openai-{stamp}.jsonl"))

    def tearDown(self):
        self.gemini.close()
        self.openai.close()
        self.claude_api.close()

    def zellij(self, panes, hooks=True, allow_sleep=False, **kw):
        def prepare(z):
            prepare_gemini_home(z.home, z.work, hooks, allow_sleep)
            prepare_home(z.home, z.work, hooks)
            prepare_codex_home(z.home, z.work, self.openai, hooks)
            self.addCleanup(subprocess.run, ["pkill", "-f", os.path.join(z.home, ".codex")], check=False)
        return Zellij(panes, before_start=prepare, **kw)

    def ready(self, z, title):
        wait_for(f"{title} ready", lambda: gemini_ready(z.screen()), timeout=60)
        wait_for(f"{title} in the bar", lambda: segment(z, title), timeout=30)

    def test_a_gemini_source_that_quits_right_after_its_done_sends_once(self):
        from test_bar import demo
        panes = [("gm", gemini_argv(self.gemini)), ("dst", demo("dst", "", turns=0, listen=True))]
        with self.zellij(panes, plugin_config={"flows": "gm -> dst"}) as z:
            self.ready(z, "gm")
            self.assert_quit_after_done_sends_once(z, "gm", "QUIT-GM the plan", "/quit")

    def test_a_tool_turn_that_needs_approval_is_waiting_then_done(self):
        with self.zellij([("gm", gemini_argv(self.gemini))]) as z:
            self.ready(z, "gm")
            self.submit(z, "gm", "tool:3")
            wait_for("waiting", lambda: "waiting" in segment(z, "gm"), timeout=30)
            wait_for("the dialog", lambda: "Allow execution" in z.screen(), timeout=20)
            for _ in range(5):
                self.press(z, "gm", "13")
                try:
                    wait_for("the dialog gone", lambda: "Allow execution" not in z.screen(), timeout=3)
                    break
                except AssertionError:
                    continue
            self.assert_never_done_until(z, "gm", "the final answer",
                                         lambda: next(iter(self.gemini.finished("tool:3")), None))
            wait_for("confirmed done", lambda: is_confirmed_done(segment(z, "gm")), timeout=20)

    def test_a_tool_turn_without_approval_is_never_done_at_its_preamble(self):
        with self.zellij([("gm", gemini_argv(self.gemini))], allow_sleep=True) as z:
            self.ready(z, "gm")
            self.submit(z, "gm", "tool:4")
            samples = self.assert_never_done_until(z, "gm", "the final answer",
                                                   lambda: next(iter(self.gemini.finished("tool:4")), None))
            self.assertTrue([s for _, s in samples if "working" in s], "working shown meanwhile")
            wait_for("confirmed done", lambda: is_confirmed_done(segment(z, "gm")), timeout=20)

    def test_escape_during_a_tool_call_is_interrupted(self):
        with self.zellij([("gm", gemini_argv(self.gemini))], allow_sleep=True) as z:
            self.ready(z, "gm")
            self.submit(z, "gm", "tool:10")
            wait_for("working", lambda: "working" in segment(z, "gm"), timeout=20)
            time.sleep(1.5)
            self.press(z, "gm", "27")
            wait_for("interrupted", lambda: "interrupted" in segment(z, "gm"), timeout=20)

    def test_http_400_is_failed(self):
        with self.zellij([("gm", gemini_argv(self.gemini))]) as z:
            self.ready(z, "gm")
            self.submit(z, "gm", "fail:400")
            wait_for("failed", lambda: "failed" in segment(z, "gm"), timeout=30)

    def test_a_flow_gemini_to_claude(self):
        panes = [("gm", gemini_argv(self.gemini)), ("cc", claude_argv(self.claude_api))]
        with self.zellij(panes, plugin_config={"flows": "gm -> cc"}) as z:
            self.ready(z, "gm")
            wait_for("claude ready", lambda: claude_ready(z.screen()), timeout=60)
            self.submit(z, "gm", "echo:ping from gemini")
            wait_for("claude got gemini's answer", lambda: any(
                "ping from gemini" in p for _, p in self.claude_api.prompts), timeout=40)

    def test_a_flow_claude_to_gemini(self):
        panes = [("cc", claude_argv(self.claude_api)), ("gm", gemini_argv(self.gemini))]
        with self.zellij(panes, plugin_config={"flows": "cc -> gm"}) as z:
            self.ready(z, "gm")
            wait_for("claude ready", lambda: claude_ready(z.screen()), timeout=60)
            self.submit(z, "cc", "echo:ping from claude", api=self.claude_api)
            wait_for("gemini got claude's answer", lambda: any(
                "ping from claude" in p for _, p in self.gemini.prompts), timeout=40)

    def test_three_kinds_in_one_folder_one_tab_keep_their_own_state(self):
        panes = [("gm", gemini_argv(self.gemini)), ("cc", claude_argv(self.claude_api)), ("cx", codex_argv())]
        with self.zellij(panes, allow_sleep=True) as z:
            self.ready(z, "gm")
            wait_for("claude ready", lambda: claude_ready(z.screen()), timeout=60)
            wait_for("codex ready", lambda: codex_ready(z.screen()), timeout=60)
            self.submit(z, "cc", "tool:8", api=self.claude_api)
            self.submit(z, "cx", "tool:8", api=self.openai)
            wait_for("claude and codex working",
                     lambda: "working" in segment(z, "cc") and "working" in segment(z, "cx"), timeout=30)
            self.submit(z, "gm", "echo:quick")
            wait_for("gemini confirmed done", lambda: is_confirmed_done(segment(z, "gm")), timeout=30)
            self.assertIn("working", segment(z, "cc"))
            self.assertIn("working", segment(z, "cx"))
            bar = z.bar()
            for tag in (" gm ", " cc ", " cx "):
                self.assertIn(tag, bar, "three kinds: the bar names each")


if __name__ == "__main__":
    unittest.main()
