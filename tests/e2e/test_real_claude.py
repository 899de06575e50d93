"""Real Claude Code in a real zellij, against the loopback fake of the
Messages API (`fake_api.py`). Every scenario runs on 2.1.39 (`cli.js` on
node) in the default test command; `RealClaudeNative` runs the same
scenarios on the pinned native release when TURNSTILE_E2E_NATIVE=1 or
TURNSTILE_E2E_HEAVY=1 (a ~400 MB download, cached)."""
import json, os, shlex, subprocess, sys, time, unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agents import claude_argv, native_wanted, prepare_home
from agents import ready as ready_screen
from fake_api import FakeApi, current_prompt, user_texts
from harness import ROOT, Zellij, segments_by_pane, wait_for, zellij_bin


def segment(z, title):
    """The bar segment of the pane first named `title` (matched by pane id)."""
    return segments_by_pane(z.bar()).get(z.pane_id(title))


def type_prompt(z, title, text):
    pane = f"terminal_{z.pane_id(title)}"
    z.action("write-chars", "--pane-id", pane, text)
    time.sleep(0.3)  # a TUI swallows an Enter that arrives with the text
    z.action("write", "--pane-id", pane, "13")


def clear_input(z, title):
    """Empties the input box (text typed too early, or a prompt Claude Code put back)."""
    z.action("write", "--pane-id", f"terminal_{z.pane_id(title)}", *["127"] * 60)


def ready(z, title, count=1):
    """Claude Code drew its input box and its footer (in `count` panes)."""
    def drawn():
        screen = z.screen()
        return ready_screen(screen) and (count == 1 or screen.count("bypass permissions") >= count)
    wait_for(f"{title} ready", drawn, timeout=60)
    return z.pane_id(title)


def bar_state(z, title, want):
    seg = segment(z, title) or ""
    return want in seg and seg


def is_confirmed_done(seg):
    """A done confirmed by the transcript or a hook (`✓ `); a screen guess
    alone is `✓?`, which new releases show first."""
    return "done" in seg and seg.startswith("✓ ") and seg


def confirmed_done(z, title):
    return is_confirmed_done(segment(z, title) or "")


class RealClaude(unittest.TestCase):
    RELEASE = "legacy"

    def setUp(self):
        self.api = FakeApi(os.path.join(os.environ.get("TMPDIR", "/tmp"), f"fake-api-{os.getpid()}-{time.time()}.jsonl"))

    def tearDown(self):
        self.api.close()

    def submit(self, z, title, text, attempts=3):
        """Types a prompt and Enter, as a person would, until the fake API gets
        it: a TUI still starting up (or showing a notice) can drop typed keys."""
        for _ in range(attempts):
            before = self.api.prompt_count(text)
            type_prompt(z, title, text)
            if self.attempt(lambda: wait_for(f"{text!r} submitted", lambda: self.api.prompt_count(text) > before,
                                             timeout=8)):
                return
            clear_input(z, title)
        self.fail(f"{text!r} never reached the API")

    @staticmethod
    def attempt(step):
        """Runs a polled step; False instead of its timeout (to retry it)."""
        try:
            return step()
        except AssertionError:
            return False

    def assert_working_until(self, z, title, what, real_end, timeout=40):
        """Samples the pane's segment until `real_end()` (the fake API's answer
        that really ends the turn) returns it: no sample before it shows done,
        some show working; then the bar must show a confirmed done."""
        samples = []

        def ended():
            samples.append((time.time(), segment(z, title) or ""))
            return real_end()
        end = wait_for(what, ended, timeout=timeout, interval=0.05)
        early = [(round(end["t"] - t, 3), seg) for t, seg in samples if t < end["t"] and "done" in seg]
        self.assertFalse(early, f"done shown before {what}")
        self.assertTrue([seg for t, seg in samples if "working" in seg], "working shown meanwhile")
        wait_for("confirmed done", lambda: confirmed_done(z, title), timeout=30)

    def claude(self, name, ask=False, retries=1):
        """A pane running Claude Code of this class's release."""
        return (name, claude_argv(self.api, self.RELEASE, ask=ask, retries=retries))

    def zellij(self, panes, hooks=True, **kw):
        """zellij with the bar; each agent's HOME prepared (with our hooks, or without)."""
        return Zellij(panes, before_start=lambda z: prepare_home(z.home, z.work, hooks), **kw)

    def test_tool_turn_with_hooks_is_working_then_confirmed_done_never_done_between(self):
        with self.zellij([self.claude("agent")]) as z:
            ready(z, "agent")
            self.submit(z, "agent", "tool:3")
            self.assert_working_until(z, "agent", "the final answer",
                                      lambda: next(iter(self.api.finished("tool:3")), None))
            bodies = [r["body"] for r in self.api.requests() if r["path"].startswith("/v1/messages") and r["body"].get("tools")]
            self.assertTrue(any("tool_result" in json.dumps(b.get("messages", [])[-1:]) for b in bodies))

    def test_plain_turn_without_hooks_is_confirmed_from_transcript_and_screen(self):
        with self.zellij([self.claude("bare")], hooks=False) as z:
            ready(z, "bare")
            self.submit(z, "bare", "hello")
            wait_for("confirmed done", lambda: confirmed_done(z, "bare"), timeout=30)

    def test_http_400_is_failed(self):
        with self.zellij([self.claude("agent")]) as z:
            ready(z, "agent")
            self.submit(z, "agent", "fail:400")
            wait_for("failed", lambda: bar_state(z, "agent", "failed"), timeout=30)

    def test_overloaded_until_retries_run_out_is_failed(self):
        with self.zellij([self.claude("agent")]) as z:
            ready(z, "agent")
            self.submit(z, "agent", "fail:529")
            wait_for("failed", lambda: bar_state(z, "agent", "failed"), timeout=60)

    def test_escape_during_an_overload_retry_wait_is_not_stuck_in_working(self):
        # Nothing reaches the transcript: only the screen shows the turn ended.
        with self.zellij([self.claude("agent", retries=10)]) as z:
            ready(z, "agent")
            self.submit(z, "agent", "fail:529")
            wait_for("retrying", lambda: "etrying" in z.screen() and bar_state(z, "agent", "working"), timeout=30)
            z.action("write", "--pane-id", f"terminal_{z.pane_id('agent')}", "27")
            wait_for("no longer working", lambda: (s := segment(z, "agent") or "") and "working" not in s, timeout=20)

    def test_escape_during_a_tool_call_is_interrupted_then_the_next_prompt_works(self):
        with self.zellij([self.claude("agent")]) as z:
            ready(z, "agent")
            self.submit(z, "agent", "tool:20")
            wait_for("tool running", lambda: "sleep 20" in z.screen() and bar_state(z, "agent", "working"), timeout=30)
            z.action("write", "--pane-id", f"terminal_{z.pane_id('agent')}", "27")
            wait_for("interrupted", lambda: bar_state(z, "agent", "interrupted"), timeout=30)
            self.submit(z, "agent", "hello")
            wait_for("working again", lambda: bar_state(z, "agent", "working") or bar_state(z, "agent", "done"), timeout=20)
            wait_for("confirmed done", lambda: confirmed_done(z, "agent"), timeout=30)

    def test_permission_prompt_in_ask_mode_is_waiting_then_done_after_approval(self):
        with self.zellij([self.claude("asker", ask=True)]) as z:
            ready(z, "asker")
            self.submit(z, "asker", "perm:")
            wait_for("the dialog", lambda: "Do you want to proceed?" in z.screen(), timeout=30)
            wait_for("waiting within two seconds of the dialog", lambda: bar_state(z, "asker", "waiting"), timeout=2)
            self.assertTrue(bar_state(z, "asker", "waiting"), "still waiting while the dialog shows")

            def approve():  # "1. Yes"; a dialog that was just drawn may miss the first Enter
                z.action("write", "--pane-id", f"terminal_{z.pane_id('asker')}", "13")
                return wait_for("the dialog gone", lambda: "Do you want to proceed?" not in z.screen(), timeout=1.5)
            wait_for("approved", lambda: self.attempt(approve), timeout=10, interval=0)
            wait_for("working after approval", lambda: bar_state(z, "asker", "working"), timeout=3)
            wait_for("confirmed done after approval", lambda: confirmed_done(z, "asker"), timeout=30)

    def test_a_question_is_waiting_with_what_it_asks_and_only_the_turns_end_is_routed(self):
        """Issue 45: the AskUserQuestion dialog is `waiting` with its
        question, counted and jumped to; answering it resumes the turn,
        whose real end alone is routed, once."""
        from test_bar import demo, user_prompts
        panes = [self.claude("asker"), ("dst", demo("dst", "", turns=0, listen=True))]
        with self.zellij(panes, plugin_config={"flows": "asker -> dst"}) as z:
            ready(z, "asker")
            self.submit(z, "asker", "ask:Which database?")
            wait_for("waiting with its question",
                     lambda: bar_state(z, "asker", "waiting") and "Which database?" in segment(z, "asker"), timeout=30)
            self.assertIn("needs you: 1", z.bar())
            routed = lambda: [t for _, t in user_prompts(z) if "going with your choice" in t]
            self.assertEqual(routed(), [], "nothing routed while it asks")
            pane = f"terminal_{z.pane_id('asker')}"
            wait_for("the dialog", lambda: "Enter to select" in z.screen(), timeout=20)
            for _ in range(5):
                z.action("write", "--pane-id", pane, "13")
                if self.attempt(lambda: wait_for("the dialog gone", lambda: "Enter to select" not in z.screen(),
                                                 timeout=3)):
                    break
            wait_for("confirmed done", lambda: confirmed_done(z, "asker"), timeout=40)
            wait_for("the turn's end routed", routed, timeout=30)
            time.sleep(3)  # not a step: a second delivery would show by now
            self.assertEqual(len(routed()), 1, user_prompts(z))

    def test_flow_planner_answer_is_the_coders_next_prompt_once(self):
        panes = [self.claude("planner"), self.claude("coder")]
        with self.zellij(panes, plugin_config={"flows": "planner -> coder"}) as z:
            ready(z, "planner", count=2)
            z.pane_id("coder")
            self.submit(z, "planner", "echo:PLAN-42 build the parser first")
            self.assert_routed_once(z, "PLAN-42 build the parser first")

    def assert_panes_keep_their_own_state(self, hooks):
        """Three agents in one folder, two never prompted: while the first
        works and after it finished, the others never show its state."""
        panes = [self.claude("first"), self.claude("second"), self.claude("third")]
        with self.zellij(panes, hooks=hooks) as z:
            ready(z, "first", count=3)
            for title in ("second", "third"):
                z.pane_id(title)
            self.submit(z, "first", "tool:3")
            samples = []

            def finished():
                samples.extend(segment(z, t) or "" for t in ("second", "third"))
                return self.api.finished("tool:3")
            wait_for("the first agent's turn to end", finished, timeout=40, interval=0.1)
            if hooks:
                wait_for("first confirmed done", lambda: confirmed_done(z, "first"), timeout=30)
            deadline = time.time() + 3
            while time.time() < deadline:  # not a step: what must not appear needs a moment to show
                samples.extend(segment(z, t) or "" for t in ("second", "third"))
                time.sleep(0.1)
            borrowed = [seg for seg in samples if "working" in seg or "done" in seg]
            self.assertFalse(borrowed, "a pane never prompted showed its neighbour's state")

    def test_agents_in_one_folder_with_hooks_never_show_each_others_state(self):
        self.assert_panes_keep_their_own_state(hooks=True)

    def test_agents_in_one_folder_without_hooks_never_show_each_others_state(self):
        self.assert_panes_keep_their_own_state(hooks=False)

    def test_ping_pong_in_one_folder_stops_at_max_hops(self):
        panes = [self.claude("ping"), self.claude("pong")]
        with self.zellij(panes, plugin_config={"flows": "ping -> pong, pong -> ping", "max_hops": "2"}) as z:
            ready(z, "ping", count=2)
            z.pane_id("pong")
            # ping answers "echo:PONG" (hop 1 to pong), pong answers "PONG"
            # (hop 2 back to ping), ping answers the default text: hop 3 is refused.
            self.submit(z, "ping", "echo:echo:PONG")
            wait_for("the second hop reached ping", lambda: self.api.prompt_count("PONG") > 0, timeout=60)
            wait_for("ping done after the second hop", lambda: self.api.finished("PONG") and
                     confirmed_done(z, "ping"), timeout=40)
            time.sleep(4)  # not a step: a third hop needs a moment to show
            self.assertEqual(self.api.prompt_count("echo:PONG"), 1, "hop 1 once")
            self.assertEqual(self.api.prompt_count("PONG"), 1, "hop 2 once")
            self.assertEqual(self.api.prompt_count("Hello from the fake model."), 0, "no third hop")

    def test_clear_moves_the_pane_to_its_new_transcript(self):
        with self.zellij([self.claude("agent")]) as z:
            ready(z, "agent")
            self.submit(z, "agent", "echo:before clear")
            wait_for("confirmed done", lambda: confirmed_done(z, "agent"), timeout=30)
            first = self.bound_transcript(z, "agent")
            type_prompt(z, "agent", "/clear")
            wait_for("a new transcript", lambda: self.bound_transcript(z, "agent") not in (None, first), timeout=30)
            self.submit(z, "agent", "tool:2")
            wait_for("working on the new transcript", lambda: bar_state(z, "agent", "working"), timeout=20)
            wait_for("confirmed done again", lambda: confirmed_done(z, "agent"), timeout=30)
            self.assertNotEqual(self.bound_transcript(z, "agent"), first)

    @staticmethod
    def bound_transcript(z, title):
        """The transcript the host binds the pane to (`turnstile status`)."""
        out = subprocess.run([os.environ.get("TURNSTILE_BIN") or os.path.join(ROOT, "target", "release", "turnstile"),
                              "status", "--session", z.session, "--json"], capture_output=True, text=True, env=z.env)
        try:
            panes = json.loads(out.stdout)["panes"]
        except (ValueError, KeyError):
            return None
        pane = next((p for p in panes if p["pane"] == z.pane_id(title)), {})
        return (pane.get("agent") or {}).get("transcript")

    def test_the_projects_flows_layout_as_users_run_it(self):
        """layouts/flows.kdl as shipped: `claude` and `turnstile` found on
        PATH, the plugin put in place by scripts/install (cargo install, then
        turnstile setup) in the sandbox HOME."""
        def install(z):
            prepare_home(z.home, z.work, hooks=True)
            bin_dir = os.path.join(z.dir, "bin")
            os.makedirs(bin_dir)
            with open(os.path.join(bin_dir, "claude"), "w") as f:
                f.write("#!/bin/sh\nexec " + shlex.join(claude_argv(self.api, self.RELEASE)) + ' "$@"\n')
            os.chmod(os.path.join(bin_dir, "claude"), 0o755)
            toolchain = {k: os.environ.get(k, os.path.expanduser(d)) for k, d in (
                ("CARGO_HOME", "~/.cargo"), ("RUSTUP_HOME", "~/.rustup"))}
            root = os.path.join(z.home, ".local")
            path = os.pathsep.join([os.path.dirname(zellij_bin()), os.environ["PATH"]])
            subprocess.run([os.path.join(ROOT, "scripts", "install"), "--root", root, "--yes"], check=True,
                           capture_output=True, env={**z.env, **toolchain, "PATH": path,
                                                     "CARGO_TARGET_DIR": os.path.join(ROOT, "target", "install-check")})
            z.env["PATH"] = os.pathsep.join([os.path.join(root, "bin"), bin_dir, z.env["PATH"]])
        layout = os.path.join(ROOT, "layouts", "flows.kdl")
        with Zellij(None, layout_file=layout, bar_row=-3, before_start=install) as z:  # bar above the status bar
            ready(z, "planner", count=2)
            z.pane_id("coder")
            self.submit(z, "planner", "echo:PLAN-7 write the tests first")
            self.assert_routed_once(z, "The planner's plan:\n\nPLAN-7 write the tests first")

    def assert_routed_once(self, z, routed):
        """The coder's next prompt, as the fake API saw it, is `routed`, once."""
        def coder_requests():
            return [r["body"] for r in self.api.requests() if r["body"].get("tools")
                    and current_prompt(r["body"]) == routed]
        wait_for("the coder's prompt reached the API", coder_requests, timeout=40)
        wait_for("coder done", lambda: confirmed_done(z, "coder"), timeout=30)
        time.sleep(2)  # not a step: the absence of a second delivery needs a moment to show
        messages = coder_requests()[-1]["messages"]
        sent = [t for m in messages if m.get("role") == "user" for t in user_texts(m) if t == routed]
        self.assertEqual(sent, [routed], "the answer arrived exactly once, as it was written")

    def test_sub_agent_turn_is_working_until_the_main_answer(self):
        with self.zellij([self.claude("agent")]) as z:
            ready(z, "agent")
            self.submit(z, "agent", "agent:3")
            self.assert_working_until(z, "agent", "the main answer after the sub-agent's",
                                      lambda: self.api.answer_after("agent:3", "subtask:3"))

    def test_long_streamed_answer_with_banner_shaped_prose_is_never_done_early(self):
        with self.zellij([self.claude("agent")]) as z:
            ready(z, "agent")
            self.submit(z, "agent", "long:60")
            self.assert_working_until(z, "agent", "the whole answer",
                                      lambda: next(iter(self.api.finished("long:60")), None))

    def test_background_agent_keeps_working_until_it_reports_back(self):
        with self.zellij([self.claude("agent")]) as z:
            ready(z, "agent")
            self.submit(z, "agent", "bg:6")
            wait_for("the main turn launched the agent and answered", lambda: next((
                a for a in self.api.finished("bg:6") if a["text"].startswith("Started it")), None), timeout=30)
            self.assert_working_until(z, "agent", "the agent reported back", lambda: next(
                (a for a in self.api.finished("bg:6") if "reported back" in (a["text"] or "")), None), timeout=60)


@unittest.skipUnless(native_wanted(), "native release: set TURNSTILE_E2E_NATIVE=1 or TURNSTILE_E2E_HEAVY=1")
class RealClaudeNative(RealClaude):
    """The same scenarios on the pinned native release."""
    RELEASE = "native"


if __name__ == "__main__":
    unittest.main()
