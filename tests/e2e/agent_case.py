"""What the real-agent test cases of Codex and Gemini CLI share (a mixin of
`unittest.TestCase`; no tests of its own)."""
import time

from harness import segments_by_pane, wait_for
from test_real_claude import clear_input, is_confirmed_done


def claude_ready(screen):
    """Claude Code's own footer (the other agents' footers also say `? for shortcuts`)."""
    return "bypass permissions" in screen


def segment(z, title):
    """The bar segment of the pane named `title` ("" when there is none)."""
    return segments_by_pane(z.bar()).get(z.pane_id(title)) or ""


class AgentCase:
    """`self.agent_api` is the fake API the agent under test talks to."""

    def submit(self, z, title, text, api=None, attempts=3):
        """Types a prompt, and Enter once it shows in the pane, until the fake
        API gets it. (A TUI busy starting up on a loaded machine drops keys:
        Codex drew its composer and then lost all but a letter of a prompt.)"""
        api = api or self.agent_api
        pane = f"terminal_{z.pane_id(title)}"
        for _ in range(attempts):
            before = api.prompt_count(text)
            shown = z.screen().count(text)
            z.action("write-chars", "--pane-id", pane, text)
            try:
                wait_for(f"{text!r} typed", lambda: z.screen().count(text) > shown, timeout=5)
            except AssertionError:
                clear_input(z, title)
                continue
            time.sleep(0.3)  # a TUI swallows an Enter that arrives with the text
            z.action("write", "--pane-id", pane, "13")
            try:
                wait_for(f"{text!r} submitted", lambda: api.prompt_count(text) > before, timeout=8)
                return
            except AssertionError:
                clear_input(z, title)
        self.fail(f"{text!r} never reached the API")

    def press(self, z, title, code):
        """Writes one key (a decimal byte) into the pane."""
        z.action("write", "--pane-id", f"terminal_{z.pane_id(title)}", code)

    def assert_never_done_until(self, z, title, what, end, timeout=40):
        """Samples the pane's segment until `end()` returns the answer that
        really ends the turn: no sample before it may say done. The samples."""
        samples = []

        def ended():
            # Stamped once read: a capture takes a while, and what it shows
            # may be newer than when it began.
            seen = segment(z, title)
            samples.append((time.time(), seen))
            return end()
        result = wait_for(what, ended, timeout=timeout, interval=0.05)
        early = [s for t, s in samples if t < result["t"] and "done" in s]
        self.assertFalse(early, f"done shown before {what}")
        return samples

    def assert_quit_after_done_sends_once(self, z, title, answer, quit_command):
        """Issue 42: `title` (flowing to a listening demo pane `dst`) gets
        `echo:<answer>` and is quit with `quit_command` right after its
        confirmed done: its answer reaches dst once, and never again as its
        segment goes."""
        from test_bar import user_prompts
        self.submit(z, title, f"echo:{answer}")
        wait_for(f"{title} confirmed done", lambda: is_confirmed_done(segment(z, title)), timeout=60)
        pane = f"terminal_{z.pane_id(title)}"
        z.action("write-chars", "--pane-id", pane, quit_command)
        time.sleep(0.3)
        z.action("write", "--pane-id", pane, "13")
        routed = lambda: [t for _, t in user_prompts(z) if answer in t and not t.startswith("echo:")]
        wait_for("the answer routed to dst", routed, timeout=40)
        wait_for(f"{title} gone from the bar", lambda: "done" not in segment(z, title), timeout=30)
        time.sleep(4)  # not a step: a second paste would come within the watcher's next reads
        self.assertEqual(len(routed()), 1, user_prompts(z))
