"""`turnstile setup` on a fresh HOME that already holds a user's zellij
config (a theme, a keybinding, `default_layout "compact"`) and a Claude Code
settings file with a hook of the user's own: plain `zellij` then shows the
bar with no permission prompt, in a tab opened later too; `doctor` is
happy; `setup --undo` puts both files back byte for byte."""

import os
import shutil
import subprocess
import tempfile
import time
import unittest

from harness import turnstile_bin, wait_for, zellij_bin

CONFIG = """// my zellij
theme "dracula"   // dark
keybinds {
    normal {
        bind "Alt x" { CloseFocus; }
    }
}
default_layout "compact"
"""

SETTINGS = """{
  "hooks": {
    "Stop": [{"hooks": [{"type": "command", "command": "echo mine"}]}]
  }
}
"""


class Setup(unittest.TestCase):
    def setUp(self):
        self.home = tempfile.mkdtemp(prefix="turnstile-setup-")
        self.addCleanup(shutil.rmtree, self.home, True)
        self.config = os.path.join(self.home, ".config/zellij/config.kdl")
        self.settings = os.path.join(self.home, ".claude/settings.json")
        for path, text in ((self.config, CONFIG), (self.settings, SETTINGS)):
            os.makedirs(os.path.dirname(path))
            with open(path, "w") as f:
                f.write(text)
        zdir = os.path.dirname(zellij_bin())
        self.env = {"HOME": self.home, "PATH": f"{zdir}:/usr/bin:/bin", "TERM": "xterm-256color", "SHELL": "/bin/sh"}
        self.session = f"setup-{os.getpid()}"

    def turnstile(self, *args, check=True):
        return subprocess.run([turnstile_bin(), *args], env=self.env, capture_output=True, text=True, timeout=60, check=check)

    def test_plain_zellij_shows_the_bar_and_undo_restores_every_file(self):
        first = self.turnstile("setup", "--yes")
        self.assertIn("done", first.stdout)
        second = self.turnstile("setup", "--yes")
        self.assertIn("nothing to change", second.stdout, second.stdout)
        with open(self.config) as f:
            config = f.read()
        self.assertEqual(config, CONFIG.replace('"compact"', '"turnstile"'))
        with open(self.settings) as f:
            self.assertIn("echo mine", f.read())

        tmux = f"turnstile-setup-{os.getpid()}"
        env_args = [f"{k}={v}" for k, v in self.env.items()]
        subprocess.run(["tmux", "new-session", "-d", "-s", tmux, "-x", "160", "-y", "40",
                        "env", "-i", *env_args, "zellij", "-s", self.session], check=True)
        self.addCleanup(subprocess.run, ["tmux", "kill-session", "-t", tmux], capture_output=True)
        self.addCleanup(subprocess.run, ["env", "-i", *env_args, "zellij", "kill-session", self.session], capture_output=True)

        def screen():
            return subprocess.run(["tmux", "capture-pane", "-t", tmux, "-p"], capture_output=True, text=True).stdout

        wait_for("the bar in plain zellij", lambda: "turnstile: no agent panes yet" in screen(), timeout=30)
        self.assertNotIn("Allow?", screen())
        zellij = ["env", "-i", *env_args, "zellij", "--session", self.session, "action"]
        subprocess.run([*zellij, "new-tab"], check=True, timeout=20)
        wait_for("the bar in a tab opened later", lambda: "Tab #2" in screen() and "turnstile: no agent panes yet" in screen(), timeout=30)
        doctor = self.turnstile("doctor", check=False)
        self.assertEqual(doctor.returncode, 0, doctor.stdout)
        self.assertIn(subprocess.run([zellij_bin(), "--version"], capture_output=True, text=True).stdout.split()[1], doctor.stdout)

        subprocess.run(["env", "-i", *env_args, "zellij", "kill-session", self.session], capture_output=True)
        undone = self.turnstile("setup", "--undo", "--yes")
        self.assertIn("restored", undone.stdout)
        with open(self.config) as f:
            self.assertEqual(f.read(), CONFIG)
        with open(self.settings) as f:
            self.assertEqual(f.read(), SETTINGS)
        self.assertFalse(os.path.exists(os.path.join(self.home, ".config/zellij/layouts/turnstile.kdl")))


if __name__ == "__main__":
    unittest.main()
