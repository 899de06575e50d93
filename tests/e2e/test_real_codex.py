"""Real Codex CLI 0.171.0 in a real zellij, against the loopback fake of the
Responses API (`fake_openai.py`), next to real Claude Code where a scenario
needs both."""
import os, subprocess, sys, time, unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agents import claude_argv, codex_argv, codex_ready, prepare_codex_home, prepare_home
from fake_api import FakeApi
from fake_openai import FakeOpenAI
from agent_case import AgentCase, claude_ready, segment
from harness import Zellij, wait_for
from test_real_claude import is_confirmed_done


class RealCodex(AgentCase, unittest.TestCase):
    def setUp(self):
        tmp = os.environ.get("TMPDIR", "/tmp")
        self.openai = self.agent_api = FakeOpenAI(os.path.join(tmp, f"fake-openai-{os.getpid()}-{time.time()}.jsonl"))
        self.claude_api = FakeApi(os.path.join(tmp, f"fake-api-{os.getpid()}-{time.time()}.jsonl"))

    def tearDown(self):
        self.openai.close()
        self.claude_api.close()

    def zellij(self, panes, hooks=True, **kw):
        def prepare(z):
            prepare_codex_home(z.home, z.work, self.openai, hooks)
            prepare_home(z.home, z.work, hooks)
            # Codex's app-server daemon outlives its TUI: it goes with the test.
            self.addCleanup(subprocess.run, ["pkill", "-f", os.path.join(z.home, ".codex")], check=False)
        return Zellij(panes, before_start=prepare, **kw)

    def ready(self, z, title):
        wait_for(f"{title} ready", lambda: codex_ready(z.screen()), timeout=60)
        wait_for(f"{title} in the bar", lambda: segment(z, title), timeout=30)

    def test_a_tool_turn_is_working_then_confirmed_done_never_done_between(self):
        with self.zellij([("cx", codex_argv())]) as z:
            self.ready(z, "cx")
            self.submit(z, "cx", "tool:3")
            samples = self.assert_never_done_until(z, "cx", "the final answer",
                                                   lambda: next(iter(self.openai.finished("tool:3")), None))
            self.assertTrue([s for _, s in samples if "working" in s], "working shown meanwhile")
            wait_for("confirmed done", lambda: is_confirmed_done(segment(z, "cx")), timeout=20)

    def test_escape_during_a_tool_call_is_interrupted(self):
        with self.zellij([("cx", codex_argv())]) as z:
            self.ready(z, "cx")
            self.submit(z, "cx", "tool:8")
            wait_for("working", lambda: "working" in segment(z, "cx"), timeout=20)
            time.sleep(1)
            self.press(z, "cx", "27")
            wait_for("interrupted", lambda: "interrupted" in segment(z, "cx"), timeout=20)

    def test_a_failed_turn_is_failed(self):
        with self.zellij([("cx", codex_argv())]) as z:
            self.ready(z, "cx")
            self.submit(z, "cx", "fail:500")
            wait_for("failed", lambda: "failed" in segment(z, "cx"), timeout=30)

    def test_an_approval_is_waiting_then_working_then_done(self):
        with self.zellij([("cx", codex_argv())]) as z:
            self.ready(z, "cx")
            self.submit(z, "cx", "perm:")
            wait_for("waiting", lambda: "waiting" in segment(z, "cx"), timeout=30)
            # The hook says waiting ~0.7 s before the dialog is drawn, and the
            # dialog takes keys only once drawn: press Enter until it goes.
            wait_for("the dialog", lambda: "Press enter to confirm" in z.screen(), timeout=20)
            for _ in range(5):
                self.press(z, "cx", "13")
                try:
                    wait_for("the dialog gone", lambda: "Press enter to confirm" not in z.screen(), timeout=3)
                    break
                except AssertionError:
                    continue
            wait_for("the approved call ran", lambda: self.openai.finished("perm:"), timeout=30)
            wait_for("confirmed done", lambda: is_confirmed_done(segment(z, "cx")), timeout=20)

    def test_flows_codex_to_claude_and_claude_to_codex(self):
        panes = [("cx", codex_argv()), ("cc", claude_argv(self.claude_api))]
        config = {"flows": "cx -> cc, cc -> cx", "max_hops": "2"}
        with self.zellij(panes, plugin_config=config) as z:
            self.ready(z, "cx")
            wait_for("claude ready", lambda: claude_ready(z.screen()), timeout=60)
            self.submit(z, "cx", "echo:ping from codex")
            # Codex's answer becomes Claude's next prompt, whose answer comes back to Codex.
            wait_for("claude got codex's answer", lambda: self.claude_api.prompt_count("echo:") or any(
                "ping from codex" in p for _, p in self.claude_api.prompts), timeout=40)
            wait_for("codex got claude's answer back", lambda: len(self.openai.prompts) >= 2 and any(
                "Hello from the fake model" in p for _, p in self.openai.prompts), timeout=60)

    def test_a_codex_source_that_quits_right_after_its_done_sends_once(self):
        from test_bar import demo
        panes = [("cx", codex_argv()), ("dst", demo("dst", "", turns=0, listen=True))]
        with self.zellij(panes, plugin_config={"flows": "cx -> dst"}) as z:
            self.ready(z, "cx")
            self.assert_quit_after_done_sends_once(z, "cx", "QUIT-CX the plan", "/quit")

    def test_without_hooks_a_lone_codex_is_bound_to_its_rollout(self):
        with self.zellij([("cx", codex_argv(hooks=False))], hooks=False) as z:
            self.ready(z, "cx")
            self.submit(z, "cx", "tool:2")
            wait_for("confirmed done", lambda: is_confirmed_done(segment(z, "cx")), timeout=30)

    def test_two_codex_panes_in_one_folder_without_hooks_never_show_each_others_state(self):
        """Nothing tells their rollouts apart (one daemon holds both): each
        pane shows its screen only, never the neighbour's rollout."""
        with self.zellij([("a", codex_argv(hooks=False)), ("b", codex_argv(hooks=False))], hooks=False) as z:
            self.ready(z, "a")
            wait_for("b in the bar", lambda: segment(z, "b"), timeout=30)
            self.submit(z, "a", "tool:6")
            wait_for("a working", lambda: "working" in segment(z, "a"), timeout=20)
            self.submit(z, "b", "echo:b is quick")
            wait_for("b done", lambda: "done" in segment(z, "b"), timeout=30)
            self.assertIn("working", segment(z, "a"), "a never shows b's rollout")
            wait_for("a done", lambda: "done" in segment(z, "a"), timeout=30)
            self.assertFalse(is_confirmed_done(segment(z, "a")), "an ambiguous pane is never confirmed")

    def test_a_codex_and_a_claude_pane_in_one_folder_keep_their_own_state(self):
        panes = [("cx", codex_argv()), ("cc", claude_argv(self.claude_api))]
        with self.zellij(panes) as z:
            self.ready(z, "cx")
            wait_for("claude ready", lambda: claude_ready(z.screen()), timeout=60)
            self.submit(z, "cc", "tool:6", api=self.claude_api)
            wait_for("claude working", lambda: "working" in segment(z, "cc"), timeout=30)
            self.submit(z, "cx", "echo:quick")
            wait_for("codex confirmed done", lambda: is_confirmed_done(segment(z, "cx")), timeout=30)
            self.assertIn("working", segment(z, "cc"), "claude's state is its own")
            self.assertIn("cx", segment(z, "cx"), "the bar names the kind when kinds mix")


if __name__ == "__main__":
    unittest.main()
