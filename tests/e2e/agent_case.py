"""What the real-agent test cases of Codex and Gemini CLI share (a mixin of
`unittest.TestCase`; no tests of its own)."""
import time

from harness import segments_by_pane, wait_for
from test_real_claude import clear_input, type_prompt


def claude_ready(screen):
    """Claude Code's own footer (the other agents' footers also say `? for shortcuts`)."""
    return "bypass permissions" in screen


def segment(z, title):
    """The bar segment of the pane named `title` ("" when there is none)."""
    return segments_by_pane(z.bar()).get(z.pane_id(title)) or ""


class AgentCase:
    """`self.agent_api` is the fake API the agent under test talks to."""

    def submit(self, z, title, text, api=None, attempts=3):
        """Types a prompt and Enter until the fake API gets it."""
        api = api or self.agent_api
        for _ in range(attempts):
            before = api.prompt_count(text)
            type_prompt(z, title, text)
            try:
                wait_for(f"{text!r} submitted", lambda: api.prompt_count(text) > before, timeout=8)
                return
            except AssertionError:
                clear_input(z, title)
        self.fail(f"{text!r} never reached the API")

    def settle(self, z, title):
        """Waits for Codex's animated start-up logo to end: while it plays the
        composer is drawn but loses what is typed (a cold start on a busy
        machine). Escape ends it when it lingers."""
        try:
            wait_for("the start-up animation over", lambda: "⣿" not in z.screen(), timeout=8)
        except AssertionError:
            self.press(z, title, "27")
            wait_for("the start-up animation over", lambda: "⣿" not in z.screen(), timeout=10)

    def press(self, z, title, code):
        """Writes one key (a decimal byte) into the pane."""
        z.action("write", "--pane-id", f"terminal_{z.pane_id(title)}", code)

    def assert_never_done_until(self, z, title, what, end, timeout=40):
        """Samples the pane's segment until `end()` returns the answer that
        really ends the turn: no sample before it may say done. The samples."""
        samples = []

        def ended():
            samples.append((time.time(), segment(z, title)))
            return end()
        result = wait_for(what, ended, timeout=timeout, interval=0.05)
        early = [s for t, s in samples if t < result["t"] and "done" in s]
        self.assertFalse(early, f"done shown before {what}")
        return samples
