"""Real Claude Code 2.1.39 (npm, cli.js on node) in a real zellij, against the
loopback fake of the Messages API (`fake_api.py`). The fast subset of issue 7:
a tool turn with hooks, a plain turn without hooks, and a flow between two
real agents."""
import json, os, subprocess, sys, time, unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_api import FakeApi
from harness import ROOT, Zellij, turnstile_bin, wait_for

KEY = "sk-ant-api03-turnstile-e2e-key-0123456789abcdef"


def claude_cli():
    return os.environ.get("TURNSTILE_CLAUDE_CLI") or subprocess.check_output(
        [os.path.join(ROOT, "scripts", "ensure-claude")], text=True).strip()


def claude_pane(name, api, ask=False, retries=1):
    env = ["env", "-u", "TMUX", "-u", "TMUX_PANE", "TERM_PROGRAM=", "IS_SANDBOX=1", f"ANTHROPIC_BASE_URL={api.url}",
           f"ANTHROPIC_API_KEY={KEY}", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", f"CLAUDE_CODE_MAX_RETRIES={retries}"]
    mode = [] if ask else ["--dangerously-skip-permissions"]
    return (name, env + ["node", claude_cli()] + mode)


def prepare_home(hooks):
    """Claude Code's first-run answers (and our hooks) in the sandbox HOME."""
    def prepare(z):
        os.makedirs(os.path.join(z.home, ".claude"), exist_ok=True)
        with open(os.path.join(z.home, ".claude.json"), "w") as f:
            json.dump({"hasCompletedOnboarding": True, "theme": "dark", "bypassPermissionsModeAccepted": True,
                       "customApiKeyResponses": {"approved": [KEY[-20:]], "rejected": []},
                       "projects": {z.work: {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}}}, f)
        with open(os.path.join(z.home, ".claude", "settings.json"), "w") as f:
            json.dump({"skipDangerousModePermissionPrompt": True}, f)
        if hooks:
            subprocess.run([turnstile_bin(), "install-hooks"], env={**os.environ, "HOME": z.home}, check=True,
                           capture_output=True)
    return prepare


def pane_id(z, title):
    return z.pane_id(title)


def segment(z, title):
    """The bar segment of the pane first named `title` (matched by pane id)."""
    pane = pane_id(z, title)
    for part in z.bar().split("│"):
        words = part.split()
        if len(words) > 1 and words[1] == str(pane) or len(words) > 2 and words[2] == str(pane):
            return part.strip()
    return None


def type_prompt(z, title, text):
    pane = f"terminal_{pane_id(z, title)}"
    z.action("write-chars", "--pane-id", pane, text)
    time.sleep(0.3)  # a TUI swallows an Enter that arrives with the text
    z.action("write", "--pane-id", pane, "13")


def ready(z, title):
    """Claude Code drew its input box and its footer."""
    wait_for(f"{title} ready", lambda: "shift+tab to cycle" in z.screen() or "? for shortcuts" in z.screen(),
             timeout=40)
    return pane_id(z, title)


def bar_state(z, title, want):
    seg = segment(z, title) or ""
    return want in seg and seg


class RealClaude(unittest.TestCase):
    def setUp(self):
        self.api = FakeApi(os.path.join(os.environ.get("TMPDIR", "/tmp"), f"fake-api-{os.getpid()}-{time.time()}.jsonl"))

    def tearDown(self):
        self.api.close()

    def test_tool_turn_with_hooks_is_working_then_confirmed_done_never_done_between(self):
        with Zellij([claude_pane("agent", self.api)], before_start=prepare_home(hooks=True)) as z:
            ready(z, "agent")
            type_prompt(z, "agent", "tool:3")
            seen = []

            def state(want):
                seg = segment(z, "agent") or ""
                seen.append(seg)
                return want in seg and seg
            wait_for("working", lambda: state("working"), timeout=20, interval=0.05)
            done = wait_for("done", lambda: state("done"), timeout=30, interval=0.05)
            self.assertIn("✓ ", done, "confirmed by the transcript or the Stop hook")
            first_working = next(i for i, s in enumerate(seen) if "working" in s)
            first_done = next(i for i, s in enumerate(seen) if "done" in s)
            between = seen[first_working:first_done]
            self.assertFalse([s for s in between if "done" in s], between)
            bodies = [r["body"] for r in self.api.requests() if r["path"].startswith("/v1/messages") and r["body"].get("tools")]
            self.assertTrue(any("tool_result" in json.dumps(b.get("messages", [])[-1:]) for b in bodies))

    def test_plain_turn_without_hooks_is_confirmed_from_transcript_and_screen(self):
        with Zellij([claude_pane("bare", self.api)], before_start=prepare_home(hooks=False)) as z:
            ready(z, "bare")
            type_prompt(z, "bare", "hello")
            seg = wait_for("done", lambda: (s := segment(z, "bare") or "") and "done" in s and s, timeout=30)
            self.assertIn("✓ ", seg)

    def test_http_400_is_failed(self):
        with Zellij([claude_pane("agent", self.api)], before_start=prepare_home(hooks=True)) as z:
            ready(z, "agent")
            type_prompt(z, "agent", "fail:400")
            wait_for("failed", lambda: bar_state(z, "agent", "failed"), timeout=30)

    def test_overloaded_until_retries_run_out_is_failed(self):
        with Zellij([claude_pane("agent", self.api)], before_start=prepare_home(hooks=True)) as z:
            ready(z, "agent")
            type_prompt(z, "agent", "fail:529")
            wait_for("failed", lambda: bar_state(z, "agent", "failed"), timeout=60)

    def test_escape_during_an_overload_retry_wait_is_not_stuck_in_working(self):
        # Nothing reaches the transcript: only the screen shows the turn ended.
        with Zellij([claude_pane("agent", self.api, retries=10)], before_start=prepare_home(hooks=True)) as z:
            ready(z, "agent")
            type_prompt(z, "agent", "fail:529")
            wait_for("retrying", lambda: "etrying" in z.screen() and bar_state(z, "agent", "working"), timeout=30)
            z.action("write", "--pane-id", f"terminal_{pane_id(z, 'agent')}", "27")
            wait_for("no longer working", lambda: (s := segment(z, "agent") or "") and "working" not in s, timeout=20)

    def test_escape_during_a_tool_call_is_interrupted_then_the_next_prompt_works(self):
        with Zellij([claude_pane("agent", self.api)], before_start=prepare_home(hooks=True)) as z:
            ready(z, "agent")
            type_prompt(z, "agent", "tool:20")
            wait_for("tool running", lambda: "sleep 20" in z.screen() and bar_state(z, "agent", "working"), timeout=30)
            z.action("write", "--pane-id", f"terminal_{pane_id(z, 'agent')}", "27")
            wait_for("interrupted", lambda: bar_state(z, "agent", "interrupted"), timeout=30)
            type_prompt(z, "agent", "hello")
            wait_for("working again", lambda: bar_state(z, "agent", "working") or bar_state(z, "agent", "done"), timeout=20)
            seg = wait_for("done", lambda: bar_state(z, "agent", "done"), timeout=30)
            self.assertIn("✓ ", seg)

    def test_permission_prompt_in_ask_mode_is_waiting_then_done_after_approval(self):
        with Zellij([claude_pane("asker", self.api, ask=True)], before_start=prepare_home(hooks=True)) as z:
            ready(z, "asker")
            type_prompt(z, "asker", "perm:")
            wait_for("waiting", lambda: bar_state(z, "asker", "waiting"), timeout=30)
            self.assertIn("Do you want to proceed?", z.screen())
            z.action("write", "--pane-id", f"terminal_{pane_id(z, 'asker')}", "13")  # 1. Yes
            seg = wait_for("done after approval", lambda: bar_state(z, "asker", "done"), timeout=30)
            self.assertIn("✓ ", seg)

    def test_flow_planner_answer_is_the_coders_next_prompt_once(self):
        panes = [claude_pane("planner", self.api), claude_pane("coder", self.api)]
        with Zellij(panes, plugin_config={"flows": "planner -> coder"}, before_start=prepare_home(hooks=True)) as z:
            ready(z, "planner")
            pane_id(z, "coder")
            time.sleep(2)  # both agents draw their input box
            type_prompt(z, "planner", "echo:PLAN-42 build the parser first")

            def coder_prompts():
                out = []
                for r in self.api.requests():
                    msgs = r["body"].get("messages") or []
                    if r["body"].get("tools") and msgs and msgs[-1].get("role") == "user":
                        content = msgs[-1].get("content")
                        texts = [content] if isinstance(content, str) else [
                            b.get("text", "") for b in content or [] if b.get("type") == "text"]
                        out += [t.strip() for t in texts if "PLAN-42" in t and not t.startswith("echo:")]
                return out
            wait_for("the coder's prompt reached the API", coder_prompts, timeout=40)
            wait_for("coder done", lambda: "done" in (segment(z, "coder") or ""), timeout=30)
            self.assertEqual(sorted(set(coder_prompts())), ["PLAN-42 build the parser first"])


if __name__ == "__main__":
    unittest.main()
