"""End-to-end: the turnstile bar in a real zellij 0.45.1, driven by replays of
real Claude Code recordings and by the simulated demo agent."""
import glob, json, os, re, subprocess, sys, tempfile, time, unittest

sys.path.insert(0, os.path.dirname(__file__))
import harness
from harness import Zellij, replay, wait_for, turnstile_bin

SGR = re.compile(r"\x1b\[[0-9;]*m")


def demo(name, script, pace=0.4, turns=None, listen=False, kind="claude", drop_enters=0, deaf_ms=0):
    argv = [turnstile_bin(), "demo-agent", "--name", name, "--kind", kind, "--script", script, "--pace", str(pace)]
    argv += ["--listen"] if listen else []
    argv += ["--drop-enters", str(drop_enters)] if drop_enters else []
    argv += ["--deaf-ms", str(deaf_ms)] if deaf_ms else []
    return argv + (["--turns", str(turns)] if turns is not None else [])


def segment(bar, title):
    """The text of the segment whose pane is named `title`."""
    for part in bar.split("│"):
        if re.search(rf"\b{re.escape(title)}\b", part):
            return part.strip()
    return None


class ReplayedRecordings(unittest.TestCase):
    """Real Claude Code 2.1.332 recordings replayed in panes."""

    def test_tool_turn_goes_working_then_confirmed_done_and_interrupt_shows(self):
        with Zellij([("tool", replay("2.1.332-tool", 1.5)), ("intr", replay("2.1.332-interrupt", 1.5))]) as z:
            seen = []

            def state_of(title, want):
                seg = segment(z.bar(), title)
                if seg and (not seen or seen[-1] != seg):
                    seen.append(seg)
                return seg if seg and want(seg) else None

            wait_for("tool working", lambda: state_of("tool", lambda s: "working" in s), timeout=25)
            done = wait_for("tool confirmed done", lambda: state_of("tool", lambda s: "done" in s), timeout=25)
            self.assertTrue(done.startswith("✓ "), f"confirmed mark, not a guess: {done!r}")
            self.assertNotIn("✓?", done)
            wait_for("intr interrupted", lambda: state_of("intr", lambda s: "interrupted" in s), timeout=25)
            history = [s for s in seen if "tool" in s]
            first_done = next(i for i, s in enumerate(history) if "done" in s)
            self.assertFalse(any("done" in s for s in history[:first_done] if "working" in s))
            self.assertTrue(all("done" not in s for s in history[:first_done]), history)

    def test_old_release_answer_is_confirmed_by_the_quiet_screen(self):
        # 2.1.39 writes no stop reason and no banner for short turns: the
        # transcript alone only has a candidate; the quiet screen confirms it.
        with Zellij([("old", replay("2.1.39-tool", 1.5))]) as z:
            wait_for("working", lambda: "working" in (segment(z.bar(), "old") or ""), timeout=25)
            seg = wait_for("confirmed done", lambda: (s := segment(z.bar(), "old")) and "done" in s and s, timeout=25)
            self.assertIn("✓ ", seg)
            out = wait_for("state", lambda: z.pipe("state").stdout.strip(), timeout=10)
            row = next(r for r in json.loads(out.splitlines()[0]) if r["name"] == "old")
            self.assertIn("confirmed: the screen shows no activity", row["reason"])

    def test_state_pipe_answers_json_for_all_agent_panes(self):
        with Zellij([("tool", replay("2.1.332-tool", 2.0))]) as z:
            wait_for("tool done", lambda: "done" in (segment(z.bar(), "tool") or ""), timeout=25)
            out = wait_for("state pipe answer", lambda: z.pipe("state").stdout.strip(), timeout=10)
            rows = json.loads(out.splitlines()[0])
            tool = next(r for r in rows if r["name"] == "tool")
            self.assertEqual((tool["state"], tool["source"], tool["confirmed"]), ("done", "transcript", True))

    def test_deeply_nested_pipe_payloads_leave_every_copy_working(self):
        # serde_json stops at its recursion limit; the plugin's stack (128
        # KiB, .cargo/config.toml) must hold that far in every copy.
        tabs = [[("tool", replay("2.1.332-tool", 2.0))], [("quiet", ["sleep", "100000"])]]
        with Zellij([], tabs=tabs) as z:
            wait_for("tool in the bar", lambda: segment(z.bar(), "tool"), timeout=25)
            nested = "[" * 60_000 + "{\"a\":" * 10_000
            for name in ("verdict", "turnstile-push", "turnstile-sync", "turnstile-panes", "turnstile-view", "route",
                         "turnstile-inbox-entries", "turnstile-inbox-act"):
                z.pipe(name, nested)
            wait_for("tool done after the payloads", lambda: "done" in (segment(z.bar(), "tool") or ""), timeout=25)
            out = wait_for("state pipe answer", lambda: z.pipe("state").stdout.strip(), timeout=10)
            self.assertTrue(any(r["name"] == "tool" for r in json.loads(out.splitlines()[0])))


class SimulatedAgents(unittest.TestCase):
    """The demo agent: failures, permission waits, unseen marks, closed panes."""

    def test_failed_and_waiting_states(self):
        with Zellij([("fails", demo("fails", "fail")), ("asks", demo("asks", "wait"))]) as z:
            wait_for("asks waiting", lambda: "waiting" in (segment(z.bar(), "asks") or ""), timeout=20)
            wait_for("fails failed", lambda: "failed" in (segment(z.bar(), "fails") or ""), timeout=20)
            wait_for("asks done after approval", lambda: "done" in (segment(z.bar(), "asks") or ""), timeout=20)

    def test_simulated_codex_agents_show_every_state_next_to_claude(self):
        # cxdone has a folder of its own: its rollout is bound (the others
        # share one folder and no hooks tell their rollouts apart: screen only).
        solo = ["sh", "-c", 'mkdir -p solo && cd solo && exec "$@"', "sh"]
        panes = [("cxdone", solo + demo("cxdone", "done", kind="codex")), ("cxwait", demo("cxwait", "wait", kind="codex")),
                 ("cxfail", demo("cxfail", "fail", kind="codex")), ("cxstop", demo("cxstop", "interrupt", kind="codex")),
                 ("cc", demo("cc", "done", turns=1))]
        with Zellij(panes) as z:
            wait_for("cxwait waiting", lambda: "waiting" in (segment(z.bar(), "cxwait") or ""), timeout=20)
            for name, state in [("cxfail", "failed"), ("cxstop", "interrupted"), ("cxdone", "done"), ("cxwait", "done")]:
                wait_for(f"{name} {state}", lambda: state in (segment(z.bar(), name) or ""), timeout=25)
            self.assertTrue((segment(z.bar(), "cxdone") or "").startswith("✓ "), "confirmed by the rollout")
            self.assertIn(" cx ", segment(z.bar(), "cxdone"), "kinds mix: the bar names them")

    def test_simulated_gemini_agents_show_every_state(self):
        solo = ["sh", "-c", 'mkdir -p solo && cd solo && exec "$@"', "sh"]
        panes = [("gmdone", solo + demo("gmdone", "done", kind="gemini")), ("gmwait", demo("gmwait", "wait", kind="gemini")),
                 ("gmfail", demo("gmfail", "fail", kind="gemini")), ("gmstop", demo("gmstop", "interrupt", kind="gemini"))]
        with Zellij(panes) as z:
            wait_for("gmwait waiting", lambda: "waiting" in (segment(z.bar(), "gmwait") or ""), timeout=20)
            for name, state in [("gmfail", "failed"), ("gmstop", "interrupted"), ("gmdone", "done"), ("gmwait", "done")]:
                wait_for(f"{name} {state}", lambda: state in (segment(z.bar(), name) or ""), timeout=25)
            # Its log holds a candidate; the quiet screen confirms it.
            wait_for("gmdone confirmed", lambda: (segment(z.bar(), "gmdone") or "").startswith("✓ "), timeout=10)

    def test_unfocused_pane_that_finishes_stays_highlighted_until_focused(self):
        with Zellij([("front", demo("front", "", turns=0)), ("back", demo("back", "done", turns=1))]) as z:
            wait_for("back done", lambda: "done" in (segment(z.bar(), "back") or ""), timeout=20)
            bar = z.screen(escapes=True).splitlines()[0]
            back = next(p for p in bar.split("│") if "back" in p)
            self.assertIn("\x1b[1m", back, "unseen segment is bold on the state colour")
            back_id = z.pane_id("back")
            z.action("focus-pane-id", f"terminal_{back_id}")

            def plain():
                seg = next((p for p in z.screen(escapes=True).splitlines()[0].split("│") if "back" in p), "")
                return "\x1b[1m" not in seg
            wait_for("highlight cleared after focus", plain, timeout=10)

    def test_closed_pane_disappears(self):
        with Zellij([("stay", demo("stay", "done", turns=1)), ("gone", demo("gone", "done", turns=1))]) as z:
            wait_for("both shown", lambda: segment(z.bar(), "gone") and segment(z.bar(), "stay"), timeout=20)
            gone = z.pane_id("gone")
            z.action("close-pane", "--pane-id", f"terminal_{gone}")
            wait_for("gone vanished", lambda: segment(z.bar(), "gone") is None and segment(z.bar(), "stay"), timeout=10)
            stay = z.pane_id("stay")
            z.action("focus-pane-id", f"terminal_{stay}")
            z.action("rename-pane", "kept")
            wait_for("renamed pane shows its new name", lambda: segment(z.bar(), "kept"), timeout=15)


SCROLLER = r"""printf '\342\234\273 Baked for 3s\n'; seq 1 300; while :; do printf '\r\342\234\275 Pondering\342\200\246 (%ss)' $SECONDS; sleep 0.3; done"""


class PluginInterface(unittest.TestCase):
    """Config errors and pushed verdicts."""

    def test_bad_config_is_a_message_in_the_bar_not_a_crash(self):
        with Zellij([("tool", replay("2.1.332-tool", 2.0))], plugin_config={"poll_ms": "fast"}) as z:
            wait_for("config message", lambda: "turnstile config: poll_ms" in z.bar(), timeout=15)
            wait_for("still classifying", lambda: "working" in z.bar() or "done" in z.bar(), timeout=25)

    def test_a_host_of_another_build_is_named_in_the_bar_with_the_fix(self):
        # The real host, answering `rules --json` as a build other than the plugin's would.
        folder = tempfile.mkdtemp(prefix="ts-otherbuild-")
        host = os.path.join(folder, "turnstile-old")
        with open(host, "w") as f:
            f.write("#!/bin/sh\n"
                    f'if [ "$1" = rules ]; then "{turnstile_bin()}" "$@" | sed \'s/"build":"[^"]*"/"build":"0.0.9+0badc0de"/\'; '
                    f'exit 0; fi\nexec "{turnstile_bin()}" "$@"\n')
        os.chmod(host, 0o755)
        with Zellij([("tool", replay("2.1.332-tool", 2.0))], plugin_config={"host_command": host}) as z:
            wait_for("mismatch named", lambda: "0.0.9+0badc0de" in z.bar() and "turnstile setup" in z.bar(), timeout=20)
            wait_for("still classifying", lambda: "working" in z.bar() or "done" in z.bar(), timeout=25)

    def test_a_pushed_verdict_reaches_the_bar(self):
        with Zellij([("pushed", demo("pushed", "", turns=0))]) as z:
            wait_for("agent pane shown", lambda: segment(z.bar(), "pushed"), timeout=20)
            pane = z.pane_id("pushed")
            report = {"pane": pane, "agent": {"pid": 1}, "verdicts": [
                {"state": "failed", "source": "hook", "reason": "StopFailure hook", "at": int(time.time() * 1000),
                 "key": "push-1"}]}
            z.pipe("verdict", json.dumps(report))
            wait_for("pushed failure shown", lambda: "failed" in (segment(z.bar(), "pushed") or ""), timeout=10)


class Hooks(unittest.TestCase):
    """`turnstile hook`, as Claude Code runs it in a pane, flips the bar."""

    def run_hook(self, z, pane, payload):
        env = {**z.env, "ZELLIJ_PANE_ID": str(pane), "ZELLIJ_SESSION_NAME": z.session,
               "TURNSTILE_ZELLIJ": z.zellij, "XDG_STATE_HOME": os.path.join(z.dir, "state")}
        out = subprocess.run([turnstile_bin(), "hook"], input=json.dumps(payload).encode(), env=env,
                             capture_output=True, timeout=10)
        self.assertEqual((out.returncode, out.stdout), (0, b""))

    def test_prompt_submit_and_stop_hooks_flip_the_bar(self):
        with Zellij([("hooked", demo("hooked", "", turns=0))]) as z:
            wait_for("agent pane shown", lambda: segment(z.bar(), "hooked"), timeout=20)
            pane = z.pane_id("hooked")
            base = {"session_id": "s1", "cwd": z.work, "transcript_path": os.path.join(z.dir, "none.jsonl")}
            self.run_hook(z, pane, {**base, "hook_event_name": "UserPromptSubmit", "prompt": "go"})
            wait_for("working from the hook", lambda: "working" in (segment(z.bar(), "hooked") or ""), timeout=10)
            self.run_hook(z, pane, {**base, "hook_event_name": "Stop", "last_assistant_message": "ok",
                                    "background_tasks": []})
            seg = wait_for("confirmed done from the hook",
                           lambda: (s := segment(z.bar(), "hooked")) and "done" in s and s, timeout=10)
            self.assertIn("✓ ", seg)
            self.assertNotIn("✓?", seg)


class Watcher(unittest.TestCase):
    """`turnstile watch` pushes transcript changes: no polling involved."""

    def test_transcript_appends_reach_the_bar_without_polling(self):
        slow = {"poll_ms": "600000", "idle_poll_ms": "600000"}
        with Zellij([("quiet", demo("quiet", "", turns=0))], plugin_config=slow) as z:
            wait_for("agent pane shown", lambda: segment(z.bar(), "quiet"), timeout=20)
            files = wait_for("agent transcript", lambda: glob.glob(os.path.join(
                z.dir, "tmp", "turnstile-demo", ".claude", "projects", "*", "*.jsonl")), timeout=10)
            path = files[0]
            prompt = {"type": "user", "message": {"role": "user", "content": "go"}}
            answer = {"type": "assistant", "message": {"id": "m1", "role": "assistant", "stop_reason": "end_turn",
                                                       "content": [{"type": "text", "text": "pushed"}]}}
            with open(path, "a") as f:
                f.write(json.dumps(prompt) + "\n")
            wait_for("working pushed by the watcher", lambda: "working" in (segment(z.bar(), "quiet") or ""), timeout=10)
            line = json.dumps(answer) + "\n"
            with open(path, "a") as f:  # a half-written line first, as appends arrive
                f.write(line[:40])
                f.flush()
                time.sleep(0.3)
                self.assertIn("working", segment(z.bar(), "quiet") or "")
                f.write(line[40:])
            seg = wait_for("done pushed by the watcher", lambda: (s := segment(z.bar(), "quiet")) and "done" in s and s,
                           timeout=10)
            self.assertIn("✓ ", seg)

    def test_a_killed_watcher_is_replaced_and_the_bar_keeps_following(self):
        """The bar polls while its watcher is gone and starts a new one: a
        dead watcher leaves no stale state."""
        with Zellij([("quiet", demo("quiet", "", turns=0))]) as z:
            wait_for("agent pane shown", lambda: segment(z.bar(), "quiet"), timeout=20)
            first = wait_for("the watcher", lambda: watchers(z), timeout=10)
            path = wait_for("agent transcript", lambda: glob.glob(os.path.join(
                z.dir, "tmp", "turnstile-demo", ".claude", "projects", "*", "*.jsonl")), timeout=10)[0]
            for pid in first:
                os.kill(pid, 9)
            with open(path, "a") as f:  # written while no watcher runs: polling must see it
                f.write(json.dumps({"type": "user", "message": {"role": "user", "content": "go"}}) + "\n")
            wait_for("working seen without the watcher", lambda: "working" in (segment(z.bar(), "quiet") or ""),
                     timeout=10)
            wait_for("a new watcher", lambda: (w := watchers(z)) and not set(w) & set(first), timeout=20)
            answer = {"type": "assistant", "message": {"id": "m1", "role": "assistant", "stop_reason": "end_turn",
                                                       "content": [{"type": "text", "text": "after restart"}]}}
            with open(path, "a") as f:
                f.write(json.dumps(answer) + "\n")
            wait_for("done", lambda: "done" in (segment(z.bar(), "quiet") or ""), timeout=10)


def watchers(z):
    """Pids of the sandbox's `turnstile watch` processes."""
    out = []
    for pid in harness.processes_with_home(z.home):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if len(argv) > 1 and argv[1] == b"watch":
            out.append(pid)
    return out


def transcripts(z):
    """The lines of every transcript (Claude) and rollout (Codex) the
    sandbox's simulated agents wrote."""
    demo = os.path.join(z.dir, "tmp", "turnstile-demo")
    paths = glob.glob(os.path.join(demo, ".claude", "projects", "*", "*.jsonl"))
    paths += glob.glob(os.path.join(demo, ".codex", "sessions", "*", "*", "*", "rollout-*.jsonl"))
    out = []
    for path in paths:
        with open(path, errors="replace") as f:
            out.append([l for l in f.read().splitlines() if l.strip()])
    return out


def prompt_of(record):
    """The user prompt a transcript or rollout line records, if any."""
    content = (record.get("message") or {}).get("content")
    if record.get("type") == "user" and isinstance(content, str):
        return content
    item = record.get("payload") or {}
    if record.get("type") == "response_item" and item.get("type") == "message" and item.get("role") == "user":
        return "".join(part.get("text", "") for part in item.get("content") or [])
    return None


def user_prompts(z):
    """Every user prompt written to any transcript of the sandbox: (file, text)."""
    out = []
    for n, lines in enumerate(transcripts(z)):
        for line in lines:
            try:
                prompt = prompt_of(json.loads(line))
            except (ValueError, AttributeError):
                continue
            if prompt is not None:
                out.append((n, prompt))
    return out


class Flows(unittest.TestCase):
    """Routing a confirmed answer to another agent pane."""

    def test_planner_answer_arrives_once_as_the_coders_next_prompt(self):
        panes = [("planner", demo("planner", "done", turns=1)), ("coder", demo("coder", "", turns=0, listen=True))]
        with Zellij(panes, plugin_config={"flows": "planner -> coder"}) as z:
            answer = "Answer 1 from planner: all 4 checks pass."
            wait_for("the coder got the planner's answer", lambda: any(t == answer for _, t in user_prompts(z)), timeout=30)
            wait_for("the coder answered", lambda: "done" in (segment(z.bar(), "coder") or ""), timeout=20)
            time.sleep(1.5)
            self.assertEqual([t for _, t in user_prompts(z)].count(answer), 1, "sent exactly once")

    def test_a_swallowed_enter_is_pressed_again_and_the_turn_submitted_once(self):
        # Issue 21: under load the target swallowed the Enter and the answer
        # stood in its input box for good. The coder here swallows the first
        # Enter (as a TUI busy starting up does) and shows the paste in its
        # box: delivery must notice that no turn started, press Enter again,
        # and submit the turn exactly once. For every kind: a Claude box
        # showing the paste itself is no suggestion.
        for kind in ("claude", "codex"):
            with self.subTest(kind=kind):
                panes = [("planner", demo("planner", "done", turns=1)),
                         ("coder", demo("coder", "", turns=0, listen=True, drop_enters=1, kind=kind))]
                with Zellij(panes, plugin_config={"flows": "planner -> coder"}) as z:
                    answer = "Answer 1 from planner: all 4 checks pass."
                    wait_for("the coder got the planner's answer",
                             lambda: any(t == answer for _, t in user_prompts(z)), timeout=30)
                    wait_for("the coder answered", lambda: "done" in (segment(z.bar(), "coder") or ""), timeout=20)
                    time.sleep(5)  # past every retry
                    self.assertEqual([t for _, t in user_prompts(z)].count(answer), 1, "submitted exactly once")
                    self.assertNotIn("not confirmed", z.bar())

    def test_a_paste_lost_while_the_target_starts_up_is_pasted_again_once(self):
        # Issue 21 under two busy loops: a TUI still starting up lost the
        # paste itself; its box stayed empty. The coder here (a simulated
        # Codex, whose composer never shows a suggestion) drops all input for
        # its first 6 s: the paste and the first Enters are lost, the empty
        # box tells so, and the answer goes again, once.
        panes = [("planner", demo("planner", "done", turns=1)),
                 ("coder", demo("coder", "", turns=0, listen=True, deaf_ms=6000, kind="codex"))]
        with Zellij(panes, plugin_config={"flows": "planner -> coder"}) as z:
            answer = "Answer 1 from planner: all 4 checks pass."
            wait_for("the coder got the planner's answer", lambda: any(t == answer for _, t in user_prompts(z)), timeout=40)
            wait_for("the coder answered", lambda: "done" in (segment(z.bar(), "coder") or ""), timeout=20)
            time.sleep(5)
            self.assertEqual([t for _, t in user_prompts(z)].count(answer), 1, "submitted exactly once")

    def test_a_lost_paste_into_claude_is_said_never_pasted_again(self):
        # Claude Code that has ended a turn may show a suggestion in its
        # empty box at any moment, which Enter submits and before which a
        # second paste would land: a paste lost there is said in the bar,
        # never repeated. (The coder ends a turn of its own first; the
        # planner's answer waits for it.)
        panes = [("planner", demo("planner", "done", turns=1)),
                 ("coder", demo("coder", "done", turns=1, listen=True, deaf_ms=20000))]
        with Zellij(panes, plugin_config={"flows": "planner -> coder"}) as z:
            started = time.monotonic()
            wait_for("the delivery said unconfirmed", lambda: "not confirmed" in z.bar(), timeout=40)
            time.sleep(max(0, 24 - (time.monotonic() - started)))  # past the deaf start: a repeat would now arrive
            self.assertEqual([t for _, t in user_prompts(z) if t.startswith("Answer")], [], "never pasted again")

    def test_a_busy_target_gets_the_answer_only_after_it_finishes(self):
        panes = [("fast", demo("fast", "done", turns=1)), ("slow", demo("slow", "done", turns=1, listen=True, pace=1.5))]
        with Zellij(panes, plugin_config={"flows": "fast -> slow"}) as z:
            wait_for("queued while slow works", lambda: "queued" in z.bar(), timeout=25)
            answer = "Answer 1 from fast: all 4 checks pass."
            wait_for("slow got it", lambda: any(t == answer for _, t in user_prompts(z)), timeout=30)
            prompts = [t for _, t in user_prompts(z) if t in ("task 1 for slow", answer)]
            self.assertEqual(prompts, ["task 1 for slow", answer], "delivered after slow's own turn")
            rows = next(rs for rs in ([json.loads(l) for l in ls] for ls in transcripts(z))
                        if any((r.get("message") or {}).get("content") == answer for r in rs))
            answered = [r.get("type") for r in rows].index("system")  # slow's own turn ended (turn_duration) ...
            texts = [(r.get("message") or {}).get("content") for r in rows]
            self.assertGreater(texts.index(answer), answered, "... before the routed prompt arrived")

    def test_agents_routed_to_each_other_stop_at_the_hop_limit(self):
        panes = [("ping", demo("ping", "done", turns=1, listen=True)), ("pong", demo("pong", "", turns=0, listen=True))]
        with Zellij(panes, plugin_config={"flows": "ping -> pong, pong -> ping", "max_hops": "2"}) as z:
            wait_for("hop limit message", lambda: "hop limit" in z.bar(), timeout=40)
            routed = [t for _, t in user_prompts(z) if t.startswith("Answer")]
            self.assertEqual(len(routed), 2, routed)
            time.sleep(2)
            self.assertEqual(len([t for _, t in user_prompts(z) if t.startswith("Answer")]), 2, "no further hops")


ROUTE_KEY = """keybinds {
    shared {
        bind "Alt r" { MessagePlugin { name "route"; payload "next"; }; }
    }
}
"""


class Keybindings(unittest.TestCase):
    def test_alt_r_sends_the_focused_panes_answer_to_the_next_agent(self):
        panes = [("src", demo("src", "done", turns=1)), ("dst", demo("dst", "", turns=0, listen=True))]
        with Zellij(panes, extra_config=ROUTE_KEY) as z:
            wait_for("src done", lambda: "done" in (segment(z.bar(), "src") or ""), timeout=25)
            src = z.pane_id("src")
            z.action("focus-pane-id", f"terminal_{src}")
            time.sleep(0.5)  # the focus change reaches the plugin with the next pane update
            z.keys("M-r")
            answer = "Answer 1 from src: all 4 checks pass."
            wait_for("dst got src's answer", lambda: any(t == answer for _, t in user_prompts(z)), timeout=15)
            wait_for("feedback in the bar", lambda: "dst" in z.bar(), timeout=5)


class ScreenOnly(unittest.TestCase):
    """Panes without a transcript: the screen guess alone, and its traps."""

    def test_viewport_scrolled_back_to_an_old_banner_is_not_a_done(self):
        with Zellij([("scroller", ["/bin/bash", "-c", SCROLLER])]) as z:
            wait_for("working from the spinner", lambda: "working" in (segment(z.bar(), "scroller") or ""), timeout=15)
            z.action("scroll-to-top")
            wait_for("old banner visible in the viewport", lambda: "Baked for 3s" in z.screen(), timeout=10)
            deadline = time.monotonic() + 3
            while time.monotonic() < deadline:
                seg = segment(z.bar(), "scroller") or ""
                self.assertNotIn("done", seg, "a scrolled-back viewport produced a screen done")
                time.sleep(0.1)
            self.assertIn("working", segment(z.bar(), "scroller") or "")

    def test_banner_on_screen_flips_to_an_unconfirmed_done(self):
        # The spinner stays until the test saw it (the bar may load later than the pane).
        script = (r"""printf '\342\234\275 Pondering\342\200\246 (1s)'; while [ ! -e "$0" ]; do sleep 0.1; done; """
                  r"""printf '\r\342\234\273 Zorbled for 2s \302\267 done 9:41 AM\n'; sleep 600""")
        with tempfile.TemporaryDirectory(prefix="turnstile-go-") as tmp, \
                Zellij([("guess", ["/bin/bash", "-c", script, os.path.join(tmp, "go")])]) as z:
            wait_for("working", lambda: "working" in (segment(z.bar(), "guess") or ""), timeout=15)
            open(os.path.join(tmp, "go"), "w").close()
            seg = wait_for("guessed done", lambda: (s := segment(z.bar(), "guess")) and "done" in s and s, timeout=15)
            self.assertIn("✓?", seg, "a screen-only done is marked as a guess")


class Tabs(unittest.TestCase):
    """One bar per tab; one leader does the work, every bar shows the same."""

    def test_every_tab_shows_the_same_segments(self):
        tabs = [[("one", demo("one", "done", turns=1))], [("two", demo("two", "done", turns=1))]]
        with Zellij(None, tabs=tabs) as z:
            wait_for("both done in tab 1", lambda: "done" in (segment(z.bar(), "one") or "") and "done" in (segment(z.bar(), "two") or ""), timeout=25)
            first = SGR.sub("", z.bar())
            z.action("go-to-next-tab")
            # The switch is drawn a moment after the action returns: poll until
            # the second tab's own bar (its first segment) shows, then compare.
            wait_for("tab 2 drawn", lambda: "two" in z.screen().splitlines()[1], timeout=10)
            self.assertNotIn("no agent panes", z.bar(), "the second tab's bar had rows before it was viewed")
            wait_for("tab 2's bar shows the same segments",
                     lambda: segment(z.bar(), "one") == segment(first, "one")
                     and segment(z.bar(), "two") == segment(first, "two"), timeout=10)

    def test_a_new_agent_pane_shows_while_the_leaders_tab_is_hidden(self):
        # zellij sends pane lists only to the viewed tab's plugins: the copy
        # there hands them to the leader (the first tab's copy).
        tabs = [[("one", demo("one", "done", turns=1))], [("two", demo("two", "", turns=0))]]
        with Zellij(None, tabs=tabs) as z:
            wait_for("one done", lambda: "done" in (segment(z.bar(), "one") or ""), timeout=30)
            z.action("go-to-next-tab")
            wait_for("tab 2 drawn", lambda: "two" in z.screen().splitlines()[1], timeout=10)
            z.action("new-pane", "--name", "three", "--", *demo("three", "done", turns=1))
            wait_for("the new pane's agent in the bar", lambda: "done" in (segment(z.bar(), "three") or ""), timeout=30)


class Permissions(unittest.TestCase):
    """Copies ask zellij for permissions one at a time, under a lock file in
    zellij's temporary folder: what is left there never keeps a bar out."""

    @staticmethod
    def lock_path(z):
        return os.path.join(z.dir, "tmp", f"zellij-{os.getuid()}", "turnstile", "permissions.lock")

    def leave(self, make):
        def before_start(z):
            os.makedirs(os.path.dirname(self.lock_path(z)), mode=0o700, exist_ok=True)
            make(self.lock_path(z))
        return before_start

    def both_tabs_show_their_agents(self, z, timeout):
        wait_for("tab 1's bar", lambda: "done" in (segment(z.bar(), "one") or ""), timeout=timeout)
        z.action("go-to-next-tab")
        wait_for("tab 2's bar", lambda: "done" in (segment(z.bar(), "two") or ""), timeout=10)

    def test_a_lock_held_by_a_zellij_killed_while_asking_is_taken_over(self):
        def held_just_now(path):
            with open(path, "w") as f:
                f.write(f"{int(time.time() * 1000)} 1")
        tabs = [[("one", demo("one", "done", turns=1))], [("two", demo("two", "done", turns=1))]]
        with Zellij(None, tabs=tabs, before_start=self.leave(held_just_now)) as z:
            self.both_tabs_show_their_agents(z, timeout=40)
            self.assertFalse(os.path.lexists(self.lock_path(z)), "the lock was let go once answered")

    def test_a_fifo_where_the_lock_goes_blocks_nothing(self):
        tabs = [[("one", demo("one", "done", turns=1))], [("two", demo("two", "done", turns=1))]]
        with Zellij(None, tabs=tabs, before_start=self.leave(os.mkfifo)) as z:
            self.both_tabs_show_their_agents(z, timeout=30)
            # The FIFO gave way to a lock the copies took turns under: left
            # in place, every copy would ask at once, and one could read
            # zellij's permission cache while another's answer rewrites it.
            self.assertFalse(os.path.lexists(self.lock_path(z)), "the lock was let go once answered")


if __name__ == "__main__":
    unittest.main()
