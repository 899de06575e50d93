"""Real OpenCode 1.18.34 in a real zellij, offline against the loopback
fake of the Chat Completions API (`fake_chat.py`), next to real Claude Code
where a scenario needs it. It asks before `touch` (its `permission`
config); turnstile's plugin hands its events to `turnstile hook`."""
import os, shlex, sys, time, unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agents import claude_argv, opencode_argv, opencode_ready, prepare_home, prepare_opencode_home
from fake_api import FakeApi
from fake_chat import FakeChat
from agent_case import AgentCase, claude_ready, segment
from harness import Zellij, wait_for
from test_real_claude import is_confirmed_done, type_prompt

SHELL = ["/bin/bash", "--norc", "--noprofile", "-i"]

ESCAPE = "27"


class RealOpenCode(AgentCase, unittest.TestCase):
    def setUp(self):
        tmp = os.environ.get("TMPDIR", "/tmp")
        stamp = f"{os.getpid()}-{time.time()}"
        self.opencode = self.agent_api = FakeChat(os.path.join(tmp, f"fake-chat-{stamp}.jsonl"))
        self.claude_api = FakeApi(os.path.join(tmp, f"fake-api-{stamp}.jsonl"))

    def tearDown(self):
        self.opencode.close()
        self.claude_api.close()

    #: The agent under test: its pane command, its config, its readiness.
    argv = staticmethod(opencode_argv)
    prepare_agent_home = staticmethod(prepare_opencode_home)
    agent_ready = staticmethod(opencode_ready)

    def zellij(self, panes, hooks=True, **kw):
        def prepare(z):
            self.prepare_agent_home(z.home, self.opencode, hooks, config=z.env["XDG_CONFIG_HOME"])
            prepare_home(z.home, z.work, hooks)
        return Zellij(panes, before_start=prepare, **kw)

    def ready(self, z, title):
        wait_for(f"{title} ready", lambda: self.agent_ready(z.screen()), timeout=90)
        wait_for(f"{title} in the bar", lambda: segment(z, title), timeout=30)

    def finished(self, prompt):
        return lambda: next(iter(self.opencode.finished(prompt)), None)

    def escape(self, z, title):
        """Escape twice: the first only says `esc again to interrupt`."""
        self.press(z, title, ESCAPE)
        time.sleep(0.3)
        self.press(z, title, ESCAPE)

    def interrupt(self, z, title, attempts=3):
        """Escape twice until the agent itself marks its turn `interrupted`
        in its rows (a busy TUI drops keys): then the bar has something to
        show, and a bar that does not show it is turnstile's defect."""
        for _ in range(attempts):
            self.escape(z, title)
            try:
                return wait_for("the agent's own interrupted mark", lambda: self.agent_marked_interrupted(z), timeout=4)
            except AssertionError:
                continue
        self.fail(f"{title} never marked its turn interrupted: every Escape was lost")

    @staticmethod
    def agent_marked_interrupted(z):
        rows = z.screen().splitlines()
        del rows[z.bar_row]
        return any("· interrupted" in row for row in rows)

    def test_a_tool_turn_is_never_done_at_its_preamble(self):
        with self.zellij([("oc", self.argv())]) as z:
            self.ready(z, "oc")
            self.submit(z, "oc", "tool:4")
            samples = self.assert_never_done_until(z, "oc", "the final answer", self.finished("tool:4"))
            self.assertTrue([s for _, s in samples if "working" in s], "working shown meanwhile")
            wait_for("confirmed done", lambda: is_confirmed_done(segment(z, "oc")), timeout=20)

    def test_a_subagents_turn_end_is_never_the_panes_done(self):
        """The `task` tool runs a subagent in a session of its own: its end
        (its own `session.idle`, its final answer) comes before the turn's."""
        with self.zellij([("oc", self.argv())]) as z:
            self.ready(z, "oc")
            self.submit(z, "oc", "task:4")
            samples = self.assert_never_done_until(z, "oc", "the turn's final answer", self.finished("task:4"),
                                                   timeout=60)
            self.assertTrue(self.opencode.finished("slow:4"), "the subagent ran")
            self.assertTrue([s for _, s in samples if "working" in s], "working while the subagent runs")
            wait_for("confirmed done", lambda: is_confirmed_done(segment(z, "oc")), timeout=20)

    def test_an_approval_is_waiting_then_done(self):
        with self.zellij([("oc", self.argv())]) as z:
            self.ready(z, "oc")
            self.submit(z, "oc", "perm:")
            wait_for("waiting", lambda: "waiting" in segment(z, "oc"), timeout=30)
            # Its events (or hook) say waiting before the dialog is drawn; an
            # Enter pressed before then found no dialog, which the loop below
            # took for one answered (the CI flake: the final answer never came).
            wait_for("the dialog", lambda: "Permission required" in z.screen(), timeout=20)
            for _ in range(5):
                self.press(z, "oc", "13")
                try:
                    wait_for("the dialog gone", lambda: "Permission required" not in z.screen(), timeout=3)
                    break
                except AssertionError:
                    continue
            self.assert_never_done_until(z, "oc", "the final answer", self.finished("perm:"))
            wait_for("confirmed done", lambda: is_confirmed_done(segment(z, "oc")), timeout=20)

    def test_a_slow_answer_is_working_until_it_ends(self):
        """OpenCode writes streamed text only at its end."""
        with self.zellij([("oc", self.argv())]) as z:
            self.ready(z, "oc")
            self.submit(z, "oc", "slow:6")
            samples = self.assert_never_done_until(z, "oc", "the whole answer", self.finished("slow:6"))
            self.assertTrue([s for _, s in samples if "working" in s], "working while it streams")
            wait_for("confirmed done", lambda: is_confirmed_done(segment(z, "oc")), timeout=20)

    def test_escape_during_a_tool_call_is_interrupted(self):
        with self.zellij([("oc", self.argv())]) as z:
            self.ready(z, "oc")
            self.submit(z, "oc", "tool:15")
            wait_for("working", lambda: "working" in segment(z, "oc"), timeout=20)
            time.sleep(1.5)
            self.interrupt(z, "oc")
            samples = []
            try:
                wait_for("interrupted in the bar",
                         lambda: samples.append(segment(z, "oc")) or "interrupted" in samples[-1], timeout=20)
            except AssertionError:
                self.fail(f"the agent marked its turn interrupted; the bar showed only {sorted(set(samples))}")
            self.assertFalse([s for s in samples if "done" in s], f"never done: {samples}")

    def test_http_400_is_failed(self):
        with self.zellij([("oc", self.argv())]) as z:
            self.ready(z, "oc")
            self.submit(z, "oc", "fail:400")
            wait_for("failed", lambda: "failed" in segment(z, "oc"), timeout=30)

    def test_http_500_is_working_while_retried_then_escape_is_interrupted(self):
        """OpenCode retries a 500 for ever; Escape while a retry waits ends
        the message with neither finish nor error, and `session.idle` fires
        without `session.error`: an interrupt, never a done."""
        with self.zellij([("oc", self.argv())]) as z:
            self.ready(z, "oc")
            self.submit(z, "oc", "fail:500")
            wait_for("retried", lambda: self.opencode.prompt_count("fail:500") >= 2, timeout=30)
            for _ in range(10):
                self.assertIn("working", segment(z, "oc"), "working while retried")
                time.sleep(0.3)
            self.escape(z, "oc")
            samples = []
            wait_for("interrupted", lambda: samples.append(segment(z, "oc")) or "interrupted" in samples[-1],
                     timeout=20)
            self.assertFalse([s for s in samples if "done" in s], f"never done: {samples}")

    def test_two_opencode_panes_in_one_folder_keep_their_own_state(self):
        """The second is typed into a shell once the first is up: two
        OpenCodes started at the same instant on a database never created
        may hang in OpenCode's own first migration (seen once in eight runs
        under load)."""
        panes = [("o1", self.argv()), ("o2", SHELL)]
        with self.zellij(panes) as z:
            wait_for("o1 ready", lambda: self.agent_ready(z.screen()), timeout=90)
            type_prompt(z, "o2", " ".join(shlex.quote(a) for a in self.argv()))
            wait_for("both ready", lambda: z.screen().count("Ask anything") >= 2, timeout=90)
            wait_for("both in the bar", lambda: segment(z, "o1") and segment(z, "o2"), timeout=30)
            self.submit(z, "o1", "tool:12")
            wait_for("o1 working", lambda: "working" in segment(z, "o1"), timeout=30)
            self.submit(z, "o2", "echo:quick")
            wait_for("o2 confirmed done", lambda: is_confirmed_done(segment(z, "o2")), timeout=30)
            self.assertIn("working", segment(z, "o1"), "o1 never takes o2's done")
            wait_for("o1 confirmed done", lambda: is_confirmed_done(segment(z, "o1")), timeout=40)

    def test_a_flow_opencode_to_claude(self):
        panes = [("oc", self.argv()), ("cc", claude_argv(self.claude_api))]
        with self.zellij(panes, plugin_config={"flows": "oc -> cc"}) as z:
            self.ready(z, "oc")
            wait_for("claude ready", lambda: claude_ready(z.screen()), timeout=60)
            self.submit(z, "oc", "echo:ping from opencode")
            wait_for("claude got opencode's answer", lambda: any(
                "ping from opencode" in p for _, p in self.claude_api.prompts), timeout=40)

    def test_a_flow_claude_to_opencode(self):
        panes = [("cc", claude_argv(self.claude_api)), ("oc", self.argv())]
        with self.zellij(panes, plugin_config={"flows": "cc -> oc"}) as z:
            self.ready(z, "oc")
            wait_for("claude ready", lambda: claude_ready(z.screen()), timeout=60)
            self.submit(z, "cc", "echo:ping from claude", api=self.claude_api)
            wait_for("opencode got claude's answer", lambda: any(
                "ping from claude" in p for _, p in self.opencode.prompts), timeout=40)


if __name__ == "__main__":
    unittest.main()
