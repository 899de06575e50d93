"""Real Qwen Code 0.24.4 in a real zellij, against the loopback fake of the
Chat Completions API (`fake_chat.py`), next to real Claude Code where a
scenario needs it. Qwen Code asks before each shell command (approval mode
`default`) except `sleep`, which its settings allow."""
import os, sys, time, unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agents import claude_argv, prepare_home, prepare_qwen_home, qwen_argv, qwen_ready
from fake_api import FakeApi
from fake_chat import FakeChat
from agent_case import AgentCase, claude_ready, segment
from harness import Zellij, wait_for
from test_real_claude import is_confirmed_done

ESCAPE = "27"


class RealQwen(AgentCase, unittest.TestCase):
    def setUp(self):
        tmp = os.environ.get("TMPDIR", "/tmp")
        stamp = f"{os.getpid()}-{time.time()}"
        self.qwen = self.agent_api = FakeChat(os.path.join(tmp, f"fake-chat-{stamp}.jsonl"))
        self.claude_api = FakeApi(os.path.join(tmp, f"fake-api-{stamp}.jsonl"))

    def tearDown(self):
        self.qwen.close()
        self.claude_api.close()

    def zellij(self, panes, hooks=True, **kw):
        def prepare(z):
            prepare_qwen_home(z.home, z.work, hooks)
            prepare_home(z.home, z.work, hooks)
        return Zellij(panes, before_start=prepare, **kw)

    def ready(self, z, title):
        wait_for(f"{title} ready", lambda: qwen_ready(z.screen()), timeout=60)
        wait_for(f"{title} in the bar", lambda: segment(z, title), timeout=30)

    def finished(self, prompt):
        return lambda: next(iter(self.qwen.finished(prompt)), None)

    def test_a_tool_turn_is_never_done_at_its_preamble(self):
        with self.zellij([("qw", qwen_argv(self.qwen))]) as z:
            self.ready(z, "qw")
            self.submit(z, "qw", "tool:4")
            samples = self.assert_never_done_until(z, "qw", "the final answer", self.finished("tool:4"))
            self.assertTrue([s for _, s in samples if "working" in s], "working shown meanwhile")
            wait_for("confirmed done", lambda: is_confirmed_done(segment(z, "qw")), timeout=20)

    def test_an_approval_is_waiting_then_done(self):
        with self.zellij([("qw", qwen_argv(self.qwen))]) as z:
            self.ready(z, "qw")
            self.submit(z, "qw", "perm:")
            wait_for("waiting", lambda: "waiting" in segment(z, "qw"), timeout=30)
            wait_for("the dialog", lambda: "Allow execution" in z.screen(), timeout=20)
            for _ in range(5):
                self.press(z, "qw", "13")
                try:
                    wait_for("the dialog gone", lambda: "Allow execution" not in z.screen(), timeout=3)
                    break
                except AssertionError:
                    continue
            self.assert_never_done_until(z, "qw", "the final answer", self.finished("perm:"))
            wait_for("confirmed done", lambda: is_confirmed_done(segment(z, "qw")), timeout=20)

    def test_a_slow_answer_is_working_until_it_ends(self):
        with self.zellij([("qw", qwen_argv(self.qwen))]) as z:
            self.ready(z, "qw")
            self.submit(z, "qw", "slow:6")
            samples = self.assert_never_done_until(z, "qw", "the whole answer", self.finished("slow:6"))
            self.assertTrue([s for _, s in samples if "working" in s], "working while it streams")
            wait_for("confirmed done", lambda: is_confirmed_done(segment(z, "qw")), timeout=20)

    def test_escape_during_a_tool_call_is_interrupted(self):
        with self.zellij([("qw", qwen_argv(self.qwen))]) as z:
            self.ready(z, "qw")
            self.submit(z, "qw", "tool:15")
            wait_for("working", lambda: "working" in segment(z, "qw"), timeout=20)
            time.sleep(1.5)
            self.press(z, "qw", ESCAPE)
            wait_for("interrupted", lambda: "interrupted" in segment(z, "qw"), timeout=20)

    def test_http_400_is_failed(self):
        with self.zellij([("qw", qwen_argv(self.qwen))]) as z:
            self.ready(z, "qw")
            self.submit(z, "qw", "fail:400")
            wait_for("failed", lambda: "failed" in segment(z, "qw"), timeout=30)

    def test_http_500_is_working_while_retried_then_escape_is_interrupted(self):
        """Qwen Code retries a 500 (no end seen); Escape then drops the turn
        from the screen and writes nothing to the log: only the hooks'
        `idle_prompt` tells."""
        with self.zellij([("qw", qwen_argv(self.qwen))]) as z:
            self.ready(z, "qw")
            self.submit(z, "qw", "fail:500")
            wait_for("retried", lambda: self.qwen.prompt_count("fail:500") >= 2, timeout=30)
            for _ in range(10):
                self.assertIn("working", segment(z, "qw"), "working while retried")
                time.sleep(0.3)
            self.press(z, "qw", ESCAPE)
            wait_for("interrupted", lambda: "interrupted" in segment(z, "qw"), timeout=20)

    def test_two_qwen_panes_in_one_folder_keep_their_own_state(self):
        panes = [("q1", qwen_argv(self.qwen)), ("q2", qwen_argv(self.qwen))]
        with self.zellij(panes) as z:
            wait_for("both ready", lambda: z.screen().count("Type your message") >= 2 or (
                segment(z, "q1") and segment(z, "q2")), timeout=60)
            self.ready(z, "q1")
            wait_for("q2 in the bar", lambda: segment(z, "q2"), timeout=30)
            self.submit(z, "q1", "tool:12")
            wait_for("q1 working", lambda: "working" in segment(z, "q1"), timeout=30)
            self.submit(z, "q2", "echo:quick")
            wait_for("q2 confirmed done", lambda: is_confirmed_done(segment(z, "q2")), timeout=30)
            self.assertIn("working", segment(z, "q1"), "q1 never takes q2's done")
            wait_for("q1 confirmed done", lambda: is_confirmed_done(segment(z, "q1")), timeout=40)

    def test_a_flow_qwen_to_claude(self):
        panes = [("qw", qwen_argv(self.qwen)), ("cc", claude_argv(self.claude_api))]
        with self.zellij(panes, plugin_config={"flows": "qw -> cc"}) as z:
            self.ready(z, "qw")
            wait_for("claude ready", lambda: claude_ready(z.screen()), timeout=60)
            self.submit(z, "qw", "echo:ping from qwen")
            wait_for("claude got qwen's answer", lambda: any(
                "ping from qwen" in p for _, p in self.claude_api.prompts), timeout=40)

    def test_a_flow_claude_to_qwen(self):
        panes = [("cc", claude_argv(self.claude_api)), ("qw", qwen_argv(self.qwen))]
        with self.zellij(panes, plugin_config={"flows": "cc -> qw"}) as z:
            self.ready(z, "qw")
            wait_for("claude ready", lambda: claude_ready(z.screen()), timeout=60)
            self.submit(z, "cc", "echo:ping from claude", api=self.claude_api)
            wait_for("qwen got claude's answer", lambda: any(
                "ping from claude" in p for _, p in self.qwen.prompts), timeout=40)


if __name__ == "__main__":
    unittest.main()
