"""`turnstile report` (issue 25): a plain shell script reports its own
state from inside its pane, through the hooks' path, as the `program`
kind: working, waiting with its message, then done with an answer file;
a flow routes the reported answer to an agent; `clear` takes the pane off
the bar; a report outside zellij fails with a clear error."""
import os, shlex, subprocess, sys, unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Zellij, turnstile_bin, wait_for
from test_bar import demo, segment, user_prompts
from test_real_claude import is_confirmed_done


def script(steps):
    """A bash pane running `steps` (a shell snippet), then idling."""
    return ["bash", "--norc", "--noprofile", "-c", steps + "; exec sleep 600"]


class Report(unittest.TestCase):
    def test_a_shell_loop_drives_its_pane_and_a_flow_routes_its_answer(self):
        ts = shlex.quote(turnstile_bin())
        steps = (f"sleep 3; {ts} report working --message 'building'; sleep 3; "
                 f"{ts} report blocked --message 'approve deploy?'; sleep 3; "
                 f"{ts} report working; sleep 1; echo 'the build passed: 42 tests' > answer.md; "
                 f"{ts} report done --answer-file answer.md")
        panes = [("job", script(steps)), ("dst", demo("dst", "", turns=0, listen=True))]
        with Zellij(panes, plugin_config={"flows": "job -> dst"}) as z:
            wait_for("the bar up", lambda: segment(z.bar(), "dst"), timeout=30)
            wait_for("job working", lambda: "working" in (segment(z.bar(), "job") or ""), timeout=30)
            wait_for("job waiting, with its message",
                     lambda: "waiting" in (segment(z.bar(), "job") or "") and "approve deploy?" in z.bar(), timeout=20)
            wait_for("job confirmed done", lambda: is_confirmed_done(segment(z.bar(), "job") or ""), timeout=20)
            wait_for("the answer routed to dst",
                     lambda: any("the build passed: 42 tests" in t for _, t in user_prompts(z)), timeout=30)

    def test_clear_takes_the_pane_off_the_bar(self):
        ts = shlex.quote(turnstile_bin())
        steps = f"sleep 3; {ts} report working; sleep 4; {ts} report clear"
        panes = [("job", script(steps)), ("dst", demo("dst", "", turns=0, listen=True))]
        with Zellij(panes) as z:
            wait_for("job working", lambda: "working" in (segment(z.bar(), "job") or ""), timeout=30)
            wait_for("job gone", lambda: segment(z.bar(), "job") is None, timeout=20)

    def test_outside_zellij_a_report_fails_clearly(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith("ZELLIJ")}
        out = subprocess.run([turnstile_bin(), "report", "done"], env=env, capture_output=True, text=True)
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("not inside a zellij pane", out.stderr)
        out = subprocess.run([turnstile_bin(), "report", "finishd"], env={**env, "ZELLIJ_PANE_ID": "1",
                                                                           "ZELLIJ_SESSION_NAME": "x"},
                             capture_output=True, text=True)
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("unknown state", out.stderr)


if __name__ == "__main__":
    unittest.main()
