"""Agents on another machine, in a real zellij, against a real sshd on
127.0.0.1 (issue 46): a pane runs `ssh devbox …`; the session's watcher
opens one `ssh … turnstile relay` link per machine and posts what the
remote relay reports, for that pane only. Simulated agents (`turnstile
demo-agent`) write real transcripts under the remote HOME, which the local
side never reads: everything it knows came over the link."""
import glob, json, os, shlex, shutil, signal, subprocess, sys, tempfile, time, unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agent_case import segment
from harness import Zellij, turnstile_bin, wait_for, zellij_bin
from sshd import Sshd
from test_bar import demo, prompt_of
from test_real_claude import is_confirmed_done, type_prompt

SHELL = ["/bin/bash", "--norc", "--noprofile", "-i"]


class Remote(unittest.TestCase):
    def zellij(self, panes, control_master=False, accept_env=True, **kw):
        z = Zellij(panes, before_start=lambda z: self.start_sshd(z, control_master, accept_env), **kw)
        self.addCleanup(self.sshd.close)
        return z

    def start_sshd(self, z, control_master, accept_env):
        self.sshd = Sshd(z.dir, control_master=control_master, accept_env=accept_env)

    def remote(self, name, script, turns, listen=False, kind="claude"):
        """A pane command: `ssh -t devbox turnstile demo-agent …`."""
        agent = ["turnstile"] + demo(name, script, pace=0.4, turns=turns, listen=listen, kind=kind)[1:]
        return self.sshd.ssh("-t", self.sshd.host, shlex.join(agent))

    def remote_prompts(self):
        """The user prompts the remote agents' transcripts hold."""
        return prompts_under(self.sshd.remote_tmp)

    def local_prompts(self, z):
        """The user prompts this machine's simulated agents' transcripts hold."""
        return prompts_under(os.path.join(z.dir, "tmp"))

    def host_report(self, z):
        """What `turnstile status` finds on this machine."""
        return subprocess.run([turnstile_bin(), "status", "--session", z.session, "--json"], capture_output=True,
                              text=True, env=z.env, timeout=20).stdout

    def links(self, z):
        """The watcher's links, as `links.json` records them."""
        paths = glob.glob(os.path.join(z.home, ".local", "state", "turnstile", "bindings", "*", "links.json"))
        if not paths:
            return []
        with open(paths[0]) as f:
            return json.load(f)

    def test_a_remote_agent_is_confirmed_done_from_its_remote_transcript_and_its_answer_routed(self):
        with self.zellij([("dst", demo("dst", "", turns=0, listen=True))], plugin_config={"flows": "far -> dst"}) as z:
            # The remote pane's command needs the sshd the sandbox started.
            z.action("new-pane", "--name", "far", "--", *self.remote("far", "done", 1))
            started = time.time()
            wait_for("a confirmed done from the remote transcript", lambda: is_confirmed_done(segment(z, "far")),
                     timeout=60)
            self.done_after = time.time() - started
            wait_for("the remote answer routed to the local pane",
                     lambda: any("far" in p for p in self.local_prompts(z)), timeout=30)
            self.assertEqual([(l["host"], l["state"]) for l in self.links(z)], [("devbox", "up")])
            env = {**z.env, "PATH": os.path.dirname(zellij_bin()) + ":" + z.env["PATH"]}
            doctor = subprocess.run([turnstile_bin(), "doctor"], env=env, capture_output=True, text=True,
                                    timeout=60).stdout
            self.assertRegex(doctor, rf"session {z.session}:.*\n(.*\n)*    link to devbox\s+up: ssh ", doctor)
            far, dst = z.pane_id("far"), z.pane_id("dst")
            local = json.loads(self.host_report(z))["panes"]
            self.assertTrue([p for p in local if p["pane"] == dst and p.get("agent")], f"the local one is: {local}")
            self.assertFalse([p for p in local if p["pane"] == far and p.get("agent")],
                             f"this machine's look at /proc leaves the remote agent to its relay: {local}")

    def test_an_sshd_that_drops_the_panes_ids_still_binds_a_direct_connections_agent_by_its_source_port(self):
        """A default sshd accepts no `ZELLIJ_*`: the agent's `SSH_CLIENT`
        names the source port of its pane's own ssh, and no other pane's."""
        with self.zellij([("dst", demo("dst", "", turns=0, listen=True))], accept_env=False,
                         plugin_config={"flows": "far -> dst"}) as z:
            z.action("new-pane", "--name", "near", "--", *self.remote("near", "wait", 1))
            z.action("new-pane", "--name", "far", "--", *self.remote("far", "done", 1))
            wait_for("far confirmed done, bound by its port", lambda: is_confirmed_done(segment(z, "far")), timeout=60)
            wait_for("near waiting", lambda: "waiting" in segment(z, "near"), timeout=60)
            self.assertTrue(is_confirmed_done(segment(z, "far")), f"each its own state: {z.bar()}")
            wait_for("far's answer routed", lambda: any("far" in p for p in self.local_prompts(z)), timeout=30)

    def test_two_remote_agents_through_one_control_master_each_on_its_own_pane(self):
        with self.zellij([("dst", demo("dst", "", turns=0, listen=True))], control_master=True) as z:
            z.action("new-pane", "--name", "r1", "--", *self.remote("r1", "done", 1))
            wait_for("r1 done", lambda: is_confirmed_done(segment(z, "r1")), timeout=60)
            z.action("new-pane", "--name", "r2", "--", *self.remote("r2", "wait", 1))
            wait_for("r2 waiting", lambda: "waiting" in segment(z, "r2"), timeout=60)
            self.assertTrue(is_confirmed_done(segment(z, "r1")), f"r1 keeps its own state: {z.bar()}")
            masters = subprocess.run(["pgrep", "-f", f"ssh: {self.sshd.dir}/cm-"], capture_output=True,
                                     text=True).stdout.split()
            self.assertEqual(len(masters), 1, "one ControlMaster carries both panes (and the link)")

    def test_agents_sharing_a_control_master_behind_an_sshd_that_drops_the_ids_show_their_screens_only(self):
        """No pane's process tells whose agent names the shared connection:
        neither pane gets a relay's report, so neither shows the other's
        state (a screen's done is `✓?`, never confirmed, never routed)."""
        with self.zellij([("dst", demo("dst", "", turns=0, listen=True))], control_master=True, accept_env=False,
                         plugin_config={"flows": "r1 -> dst"}) as z:
            z.action("new-pane", "--name", "r1", "--", *self.remote("r1", "done", 1))
            # r2 must go through r1's master (started together, each makes its own connection).
            wait_for("the master's socket", lambda: glob.glob(os.path.join(self.sshd.dir, "cm-*")), timeout=30)
            z.action("new-pane", "--name", "r2", "--", *self.remote("r2", "wait", 1))
            wait_for("both drawn their turns", lambda: "r1" in z.bar() and "r2" in z.bar(), timeout=60)
            deadline, samples = time.time() + 12, []
            while time.time() < deadline:
                samples.append((segment(z, "r1"), segment(z, "r2")))
                time.sleep(0.3)
            self.assertFalse([s for s in samples if is_confirmed_done(s[0]) or is_confirmed_done(s[1])],
                             f"no relay's word for a shared connection: {sorted(set(samples))}")
            self.assertFalse([p for p in self.local_prompts(z) if "r1" in p], "nothing routed from a screen")

    def test_an_agent_typed_into_a_remote_shell_after_the_bar_is_up_is_found(self):
        with self.zellij([("dst", demo("dst", "", turns=0, listen=True))]) as z:
            z.action("new-pane", "--name", "box", "--", *self.sshd.ssh("-t", self.sshd.host, "bash --norc -i"))
            wait_for("the remote shell", lambda: "bash" in z.screen() or "$" in z.screen(), timeout=30)
            time.sleep(1)
            self.assertEqual(segment(z, "box"), "", "a remote shell is no agent")
            agent = demo("box", "done", pace=0.4, turns=1, kind="codex")
            type_prompt(z, "box", shlex.join(["turnstile"] + agent[1:]))
            wait_for("a confirmed done of the codex typed there", lambda: is_confirmed_done(segment(z, "box")),
                     timeout=60)

    def test_a_flow_from_a_local_agent_reaches_a_remote_one(self):
        with self.zellij([("src", demo("src", "done", turns=1))], plugin_config={"flows": "src -> far"}) as z:
            z.action("new-pane", "--name", "far", "--", *self.remote("far", "", 0, listen=True))
            wait_for("far in the bar", lambda: segment(z, "far"), timeout=60)
            wait_for("the local answer typed into the remote agent",
                     lambda: any("src" in p for p in self.remote_prompts()), timeout=60)

    def test_a_cut_link_falls_back_to_the_screen_says_so_and_a_reconnect_restores_the_truth(self):
        with self.zellij([("dst", demo("dst", "", turns=0, listen=True))]) as z:
            z.action("new-pane", "--name", "far", "--", *self.remote("far", "done", 1))
            wait_for("a confirmed done", lambda: is_confirmed_done(segment(z, "far")), timeout=60)
            self.sshd.stop_listening()
            cut = time.time()
            self.assertTrue(self.sshd.cut_relay_links(), "a relay ran")
            samples = []
            wait_for("link lost in the bar", lambda: samples.append(segment(z, "far")) or "link lost" in samples[-1],
                     timeout=20)
            lost_after = time.time() - cut
            self.assertFalse(is_confirmed_done(samples[-1]), f"the screen only: {samples[-1]}")
            self.sshd.start()
            wait_for("the truth back", lambda: samples.append(segment(z, "far")) or is_confirmed_done(samples[-1]),
                     timeout=60)
            self.assertNotIn("link lost", samples[-1])
            print(f"\nlink loss seen in the bar after {lost_after:.1f}s", file=sys.stderr)

    def test_a_hung_relay_is_a_lost_link_and_the_bar_goes_on(self):
        """A relay that stops speaking (SIGSTOP: a hung machine) is lost
        after its silence; the bar and the local panes go on; once it runs
        again it finds its reader gone and exits, and the next link restores
        the truth."""
        with self.zellij([("dst", demo("dst", "", turns=0, listen=True))]) as z:
            z.action("new-pane", "--name", "far", "--", *self.remote("far", "done", 1))
            wait_for("a confirmed done", lambda: is_confirmed_done(segment(z, "far")), timeout=60)
            relays = self.sshd.relays()
            self.assertTrue(relays)
            for pid in relays:
                os.kill(int(pid), signal.SIGSTOP)
            stopped = time.time()
            try:
                wait_for("link lost in the bar", lambda: "link lost" in segment(z, "far"), timeout=20)
                lost_after = time.time() - stopped
                self.assertIn("dst", z.bar(), "the bar goes on")
            finally:
                for pid in relays:
                    try:
                        os.kill(int(pid), signal.SIGCONT)
                    except ProcessLookupError:
                        pass  # its session ended: an orphaned stopped group gets SIGHUP
            wait_for("the truth back", lambda: is_confirmed_done(segment(z, "far")), timeout=60)
            print(f"\na hung relay seen as a lost link after {lost_after:.1f}s", file=sys.stderr)


def prompts_under(tmp):
    """The user prompts of the simulated Claude Codes' transcripts under `tmp`."""
    out = []
    for path in glob.glob(os.path.join(tmp, "turnstile-demo", ".claude", "projects", "*", "*.jsonl")):
        with open(path, errors="replace") as f:
            for line in f:
                try:
                    prompt = prompt_of(json.loads(line))
                except (ValueError, AttributeError):
                    continue
                if prompt is not None:
                    out.append(prompt)
    return out


def read(path):
    with open(path) as f:
        return f.read()


class RemoteSetup(unittest.TestCase):
    """`turnstile setup --remote HOST` against the same real sshd, from a
    fresh HOME whose ssh config is the user's own."""

    def test_setup_remote_copies_installs_hooks_sends_the_ids_and_undo_takes_it_all_back(self):
        folder = tempfile.mkdtemp(prefix="turnstile-e2e-setup-remote-")
        self.addCleanup(shutil.rmtree, folder, True)
        home = os.path.join(folder, "home")
        config = os.path.join(home, ".ssh", "config")
        sshd = Sshd(folder, install=False, config=config)
        self.addCleanup(sshd.close)
        users = read(config)
        os.makedirs(os.path.join(sshd.remote_home, ".claude"))  # Claude Code there
        env = {**os.environ, "HOME": home, "TURNSTILE_SSH": f"ssh -F {config}"}
        run = lambda *args: subprocess.run([turnstile_bin(), "setup", *args], env=env, capture_output=True,
                                           text=True, timeout=120)
        dry = run("--remote", sshd.host, "--dry-run")
        self.assertEqual(dry.returncode, 0, dry.stderr)
        self.assertIn("copy turnstile", dry.stdout)
        self.assertEqual(read(config), users, "a dry run writes nothing")
        done = run("--remote", sshd.host, "--yes")
        self.assertEqual(done.returncode, 0, done.stderr + done.stdout)
        copy = os.path.join(sshd.remote_home, ".local", "bin", "turnstile")
        with open(copy, "rb") as a, open(turnstile_bin(), "rb") as b:
            self.assertTrue(a.read() == b.read(), "the same binary there")
        self.assertTrue(os.access(copy, os.X_OK))
        with open(os.path.join(sshd.remote_home, ".claude", "settings.json")) as f:
            self.assertIn("turnstile", f.read(), "Claude Code's hooks there")
        edited = read(config)
        self.assertIn("SendEnv ZELLIJ_PANE_ID ZELLIJ_SESSION_NAME", edited)
        self.assertTrue(edited.endswith(users), "the user's own lines kept")
        self.assertIn("sshd takes the pane's ids", done.stdout)
        again = run("--remote", sshd.host, "--dry-run")
        self.assertIn("(this version)", again.stdout, "a second run copies nothing")
        undone = run("--remote", sshd.host, "--undo", "--yes")
        self.assertEqual(undone.returncode, 0, undone.stderr + undone.stdout)
        self.assertFalse(os.path.exists(copy), undone.stdout)
        self.assertFalse(os.path.exists(os.path.join(sshd.remote_home, ".claude", "settings.json")), undone.stdout)
        self.assertEqual(read(config), users, "the ssh config byte for byte")


if __name__ == "__main__":
    unittest.main()
