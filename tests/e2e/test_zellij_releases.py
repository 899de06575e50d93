"""The smoke test on the other zellij releases turnstile promises (0.44.x;
the rest of the suite runs 0.45.1): the bar loads, a real recording's turn
ends in a confirmed done, and one answer is routed, once.

`TURNSTILE_ZELLIJ_OTHERS` names them, `VERSION=PATH` separated by commas
(scripts/test builds 0.44.3 once and caches it, as it does 0.45.1)."""

import os
import re
import subprocess
import time
import unittest

from harness import Zellij, replay, turnstile_bin, wait_for
from test_bar import demo, segment, user_prompts


def releases():
    """(version, zellij path) of each release to try besides 0.45.1."""
    named = [item.split("=", 1) for item in os.environ.get("TURNSTILE_ZELLIJ_OTHERS", "").split(",") if "=" in item]
    return [(version.strip(), path.strip()) for version, path in named]


@unittest.skipUnless(releases(), "TURNSTILE_ZELLIJ_OTHERS names no other zellij (scripts/test sets it)")
class OtherReleases(unittest.TestCase):
    def each_release(self, check):
        for version, path in releases():
            with self.subTest(zellij=version):
                said = subprocess.run([path, "--version"], capture_output=True, text=True, check=True).stdout
                self.assertEqual(said.split()[-1], version, said)
                saved = os.environ.get("TURNSTILE_ZELLIJ")
                os.environ["TURNSTILE_ZELLIJ"] = path
                try:
                    check()
                finally:
                    os.environ["TURNSTILE_ZELLIJ"] = saved or ""

    def test_the_bar_loads_and_a_recorded_turn_ends_in_a_confirmed_done(self):
        def check():
            with Zellij([("tool", replay("2.1.332-tool", 1.5))]) as z:
                wait_for("tool working", lambda: "working" in (segment(z.bar(), "tool") or ""), timeout=25)
                done = wait_for("tool done", lambda: (s := segment(z.bar(), "tool")) and "done" in s and s, timeout=25)
                self.assertTrue(done.startswith("✓ ") and "✓?" not in done, f"confirmed, not a guess: {done!r}")
        self.each_release(check)

    def test_the_host_names_the_zellij_that_runs_it_and_the_bar_is_quiet_about_it(self):
        def check():
            with Zellij([("rules", [turnstile_bin(), "rules", "--json"])]) as z:
                said = wait_for("the host's answer on screen",
                                lambda: re.search(r'"zellij":"([0-9.]+)"', re.sub(r"[\s│]", "", z.screen())), timeout=20)
                self.assertEqual(said.group(1), subprocess.run([z.zellij, "--version"], capture_output=True,
                                                               text=True).stdout.split()[-1])
                time.sleep(2)
                self.assertNotIn("is not a release turnstile is tested with", z.bar())
        self.each_release(check)

    def test_one_answer_is_routed_once(self):
        def check():
            panes = [("planner", demo("planner", "done", turns=1)), ("coder", demo("coder", "", turns=0, listen=True))]
            with Zellij(panes, plugin_config={"flows": "planner -> coder"}) as z:
                answer = "Answer 1 from planner: all 4 checks pass."
                wait_for("the coder got the planner's answer",
                         lambda: any(t == answer for _, t in user_prompts(z)), timeout=30)
                wait_for("the coder answered", lambda: "done" in (segment(z.bar(), "coder") or ""), timeout=20)
                time.sleep(1.5)
                self.assertEqual([t for _, t in user_prompts(z)].count(answer), 1, "sent exactly once")
        self.each_release(check)


if __name__ == "__main__":
    unittest.main()
