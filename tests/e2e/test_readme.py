"""Every command in README.md is run by a test: each line of its `sh`
blocks is one of the commands below, and the test named beside it exists
(and runs it as the README says). A command added to the README without a
test, or a test renamed away, fails here."""

import importlib
import os
import re
import unittest

from harness import ROOT

# The README's commands, and the test that runs each.
TESTED = {
    "cargo install --locked --path cli": "test_setup.Setup.test_cargo_install_gives_one_file",
    "turnstile setup": "test_setup.Setup.test_plain_zellij_shows_the_bar_and_undo_restores_every_file",
    "zellij": "test_setup.Setup.test_plain_zellij_shows_the_bar_and_undo_restores_every_file",
    "turnstile demo": "test_setup.Setup.test_demo_shows_four_agents_on_the_bar_and_touches_no_user_file",
    "turnstile doctor": "test_setup.Setup.test_plain_zellij_shows_the_bar_and_undo_restores_every_file",
    # scripts/demo outside a terminal replays the recordings; CI runs scripts/test itself.
    "scripts/demo": "test_readme.Readme.test_scripts_demo_replays_outside_a_terminal",
    "scripts/test": "test_readme.Readme.test_ci_runs_the_readmes_test_command",
}


def readme_commands():
    """The command of each line in README.md's `sh` blocks (comments cut)."""
    with open(os.path.join(ROOT, "README.md")) as f:
        blocks = re.findall(r"```sh\n(.*?)```", f.read(), re.S)
    lines = (line.split("#", 1)[0].strip() for block in blocks for line in block.splitlines())
    return [line for line in lines if line]


class Readme(unittest.TestCase):
    def test_every_readme_command_has_a_test(self):
        commands = readme_commands()
        self.assertIn("turnstile setup", commands)
        for command in commands:
            with self.subTest(command=command):
                self.assertIn(command, TESTED, "a README command no test runs")
                module, cls, method = TESTED[command].split(".")
                self.assertTrue(hasattr(getattr(importlib.import_module(module), cls), method), TESTED[command])

    def test_ci_runs_the_readmes_test_command(self):
        with open(os.path.join(ROOT, ".ci", "run")) as f:
            self.assertIn("exec bash scripts/test", f.read())

    def test_scripts_demo_replays_outside_a_terminal(self):
        import subprocess
        out = subprocess.run([os.path.join(ROOT, "scripts", "demo")], stdin=subprocess.DEVNULL, capture_output=True,
                             text=True, timeout=600)
        self.assertEqual(out.returncode, 0, out.stderr[-2000:])
        self.assertIn("replaying the recorded sessions", out.stderr)
        self.assertIn("transcript done", out.stdout)


if __name__ == "__main__":
    unittest.main()
