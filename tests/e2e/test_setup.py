"""`cargo install --locked --path cli` as a newcomer runs it (no plugin
built beforehand: the crate builds and embeds its own), into a temporary
root that then holds one file, `bin/turnstile`; then `turnstile setup` on a fresh HOME that already holds a user's zellij
config (a theme, a keybinding, `default_layout "compact"`) and a Claude Code
settings file with a hook of the user's own: plain `zellij` then shows the
bar with no permission prompt, in a tab opened later too; `doctor` is
happy; `setup --undo` puts both files back byte for byte."""

import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest

from harness import ROOT, Timeout, wait_for, zellij_bin

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


def cargo_install(root):
    """Installs turnstile into `root` the way the README says; its path."""
    env = {k: v for k, v in os.environ.items() if k != "TURNSTILE_PLUGIN_WASM"}
    # Its own target folder, kept between runs (a second run is quick).
    env["CARGO_TARGET_DIR"] = os.path.join(ROOT, "target", "install-check")
    subprocess.run(["cargo", "install", "--locked", "--quiet", "--path", os.path.join(ROOT, "cli"), "--root", root],
                   env=env, check=True, timeout=1800)
    return os.path.join(root, "bin", "turnstile")


class Setup(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = tempfile.mkdtemp(prefix="turnstile-install-")
        cls.bin = cargo_install(cls.root)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.root, True)

    def test_cargo_install_gives_one_file(self):
        self.assertEqual(os.listdir(os.path.join(self.root, "bin")), ["turnstile"])
        version = subprocess.run([self.bin, "--version"], capture_output=True, text=True, check=True).stdout
        self.assertRegex(version, r"^turnstile \d+\.\d+\.\d+\+[0-9a-f]{8}$")

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
        return subprocess.run([self.bin, *args], env=self.env, capture_output=True, text=True, timeout=60, check=check)

    def files_of_the_user(self):
        """Every file under the user's config folders, with its bytes."""
        found = {}
        for top in (".config", ".claude"):
            for folder, _, names in os.walk(os.path.join(self.home, top)):
                for name in names:
                    with open(os.path.join(folder, name), "rb") as f:
                        found[os.path.relpath(os.path.join(folder, name), self.home)] = f.read()
        return found

    def test_plain_zellij_shows_the_bar_and_undo_restores_every_file(self):
        before = self.files_of_the_user()
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

        def bar_line(title):
            """The bar's row naming `title` (a segment is `title state`)."""
            return next((line for line in screen().splitlines() if re.search(rf"{title}\s+(working|done|✓)", line)), None)

        wait_for("the bar in plain zellij", lambda: "turnstile: no agent panes yet" in screen(), timeout=30)
        self.assertNotIn("Allow?", screen())
        zellij = ["env", "-i", *env_args, "zellij", "--session", self.session, "action"]
        agent = [self.bin, "demo-agent", "--name", "newcomer", "--script", "done", "--turns", "1", "--pace", "0.4"]
        subprocess.run([*zellij, "new-pane", "--name", "newcomer", "--", *agent], check=True, timeout=20)
        wait_for("a simulated agent started in a new pane", lambda: "done" in (bar_line("newcomer") or ""), timeout=40)
        subprocess.run([*zellij, "new-tab"], check=True, timeout=20)
        wait_for("the bar in a tab opened later", lambda: "Tab #2" in screen() and bar_line("newcomer") is not None, timeout=30)
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
        self.assertEqual(self.files_of_the_user(), before, "undo removes every file setup added")

    def test_undo_after_zellij_and_the_user_changed_the_files_takes_out_only_ours(self):
        self.turnstile("setup", "--yes")
        permissions = os.path.join(self.home, ".cache/zellij/permissions.kdl")
        with open(permissions) as f:
            granted = f.read()
        self.assertIn("turnstile.wasm", granted)
        # zellij rewrites the file when the user grants another plugin; the user edits the config.
        other = '"/home/u/zjstatus.wasm" {\n    ReadApplicationState\n}\n'
        with open(permissions, "w") as f:
            f.write(other + granted)
        with open(self.config, "a") as f:
            f.write("pane_frames false\n")
        undone = self.turnstile("setup", "--undo", "--yes")
        self.assertIn("only turnstile's part taken out", undone.stdout, undone.stdout)
        with open(permissions) as f:
            left = f.read()
        self.assertNotIn("turnstile.wasm", left)
        self.assertIn('"/home/u/zjstatus.wasm"', left)
        with open(self.config) as f:
            self.assertEqual(f.read(), CONFIG + "pane_frames false\n")
        with open(self.settings) as f:
            self.assertEqual(f.read(), SETTINGS)

    def test_demo_shows_four_agents_on_the_bar_and_touches_no_user_file(self):
        env_args = [f"{k}={v}" for k, v in self.env.items()]

        # The demo's zellij keeps its sockets in the demo's own TMPDIR.
        demo_env = [*env_args, f"TMPDIR=/tmp/turnstile-demo-{os.getuid()}"]

        def sessions():
            out = subprocess.run(["env", "-i", *demo_env, "zellij", "list-sessions", "--short", "--no-formatting"],
                                 capture_output=True, text=True).stdout
            return set(out.split())

        before = sessions()
        tmux = f"turnstile-demo-{os.getpid()}"
        # The shell keeps the window open when the demo fails: its error stays on the screen.
        subprocess.run(["tmux", "new-session", "-d", "-s", tmux, "-x", "160", "-y", "40",
                        "sh", "-c", 'env -i "$@"; echo "turnstile demo exited: $?"; sleep 120', "sh",
                        *env_args, self.bin, "demo"], check=True)
        self.addCleanup(subprocess.run, ["tmux", "kill-session", "-t", tmux], capture_output=True)

        def kill_demo_session():
            for name in sessions() - before:
                subprocess.run(["env", "-i", *demo_env, "zellij", "kill-session", name], capture_output=True)
        self.addCleanup(kill_demo_session)

        def screen():
            return subprocess.run(["tmux", "capture-pane", "-t", tmux, "-p"], capture_output=True, text=True).stdout

        seen = {}

        def four_agents():
            seen["screen"] = screen()
            bar = next((line for line in seen["screen"].splitlines() if "planner" in line and "tests" in line), "")
            return all(re.search(rf"{name} \w+ (working|done|failed|interrupted|waiting)", bar)
                       for name in ("planner", "coder", "reviewer", "tests"))

        try:
            wait_for("the demo's four agents on the bar", four_agents, timeout=60)
        except Timeout:
            self.fail("the demo's four agents never showed on the bar:\n" + seen.get("screen", ""))
        with open(self.config) as f:
            self.assertEqual(f.read(), CONFIG, "the user's zellij config is untouched")
        self.assertFalse(os.path.exists(os.path.join(self.home, ".cache/zellij/permissions.kdl")))


if __name__ == "__main__":
    unittest.main()
