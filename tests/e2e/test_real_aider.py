"""Real Aider 0.86.2 (pip aider-chat, installed once and cached by
scripts/ensure-aider), an agent turnstile does not build in, known through
the example rules file `layouts/agents.kdl` alone (issue 25): offline
against the Chat Completions fake, it shows working while it answers, a
done never before the fake sent the answer's end (and never confirmed, so
never routed), and an API error as failed."""
import os, subprocess, sys, time, unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agent_case import AgentCase, segment
from fake_chat import FakeChat
from harness import ROOT, Zellij, wait_for
from test_bar import demo, user_prompts
from test_real_claude import is_confirmed_done

RULES = os.path.join(ROOT, "layouts", "agents.kdl")


def aider_command():
    """The pinned Aider (installed and cached on first use)."""
    return os.environ.get("TURNSTILE_AIDER") or subprocess.check_output(
        [os.path.join(ROOT, "scripts", "ensure-aider")], text=True).strip()


def aider_argv(api):
    """A pane command: Aider against `api`, with no git, no update check,
    no analytics and no commits (nothing it would fetch from the network)."""
    env = ["env", f"OPENAI_API_BASE={api.url}", "OPENAI_API_KEY=sk-fake-key"]
    return env + [aider_command(), "--model", "openai/fake-model", "--no-git", "--no-check-update",
                  "--no-show-model-warnings", "--analytics-disable", "--no-auto-commits",
                  "--no-show-release-notes"]


def aider_ready(screen):
    """Aider drew its banner, down to its last line (the prompt follows)."""
    return "Aider v0.86" in screen and "Repo-map: disabled" in screen


class RealAider(AgentCase, unittest.TestCase):
    def setUp(self):
        tmp = os.environ.get("TMPDIR", "/tmp")
        self.chat = self.agent_api = FakeChat(os.path.join(tmp, f"fake-chat-{os.getpid()}-{time.time()}.jsonl"))
        self.chat.toolless_turns = True

    def tearDown(self):
        self.chat.close()

    def zellij(self, panes, **kw):
        return Zellij(panes, plugin_config={"rules": RULES, **kw.pop("plugin_config", {})}, **kw)

    def ready(self, z, title):
        wait_for(f"{title} ready", lambda: aider_ready(z.screen()), timeout=90)
        time.sleep(1)

    def finished(self, prompt):
        return lambda: next(iter(self.chat.finished(prompt)), None)

    def test_a_slow_answer_is_working_until_it_ends_then_a_done_never_routed(self):
        panes = [("ai", aider_argv(self.chat)), ("dst", demo("dst", "", turns=0, listen=True))]
        with self.zellij(panes, plugin_config={"flows": "ai -> dst"}) as z:
            self.ready(z, "ai")
            self.submit(z, "ai", "slow:6")
            samples = self.assert_never_done_until(z, "ai", "the whole answer", self.finished("slow:6"))
            self.assertTrue([s for _, s in samples if "working" in s], f"working while it streams: {samples}")
            done = wait_for("done", lambda: "done" in segment(z, "ai") and segment(z, "ai"), timeout=20)
            self.assertIn("ai", done)
            self.assertFalse(is_confirmed_done(done), f"a screen rule's done stays a guess: {done!r}")
            time.sleep(2)
            self.assertEqual(user_prompts(z), [], "a guess is never routed")

    def test_an_api_error_is_failed(self):
        with self.zellij([("ai", aider_argv(self.chat))]) as z:
            self.ready(z, "ai")
            self.submit(z, "ai", "fail:400")
            wait_for("failed", lambda: "failed" in segment(z, "ai"), timeout=30)


if __name__ == "__main__":
    unittest.main()
