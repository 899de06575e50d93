"""End-to-end: attention in a real zellij 0.45.1 — the jump to the pane that
needs you (keybinding and pipe, across tabs), the notify command, and the
floating inbox view (list, Enter, `y` into zellij's copy command, `r`)."""
import os, re, shutil, subprocess, sys, tempfile, time, unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Zellij, wait_for
from test_bar import demo, segment, user_prompts

# The keybindings the project ships (Alt a: attention, Alt b: inbox, …).
with open(os.path.join(os.path.dirname(__file__), "..", "..", "layouts", "keybindings.kdl")) as f:
    KEYS = f.read()


def focused_titles(z):
    """Titles of the terminal panes focused in their tab."""
    return {p["title"] for p in z.list_panes() if not p.get("is_plugin") and p.get("is_focused")}


def showing(z, title):
    """True when the client shows the tab of the demo agent `title` (its header is on screen)."""
    return f"turnstile demo agent · {title}" in z.screen()


def lines_of(path):
    try:
        with open(path) as f:
            return [l.rstrip("\n") for l in f if l.strip()]
    except FileNotFoundError:
        return []


class Attention(unittest.TestCase):
    def test_attention_lands_on_the_waiting_pane_in_a_hidden_tab_then_on_the_next(self):
        tabs = [[("front", demo("front", "", turns=0)), ("fin", demo("fin", "done", turns=1))],
                [("asker", demo("asker", "wait", turns=1, pace=8))]]
        with Zellij(None, tabs=tabs, extra_config=KEYS) as z:
            wait_for("asker waiting, fin done", lambda: "waiting" in (segment(z.bar(), "asker") or "")
                     and "done" in (segment(z.bar(), "fin") or ""), timeout=40)
            wait_for("the counter", lambda: "needs you: 2" in z.bar(), timeout=5)
            self.assertTrue(showing(z, "front") and not showing(z, "asker"))
            z.keys("M-a")
            wait_for("the waiting pane's tab shown", lambda: showing(z, "asker") and not showing(z, "front"), timeout=10)
            wait_for("asker focused", lambda: "asker" in focused_titles(z), timeout=5)
            answer = z.pipe("attention", "next")
            self.assertEqual(answer.stdout.strip(), f"→ {z.pane_id('fin')} fin done")
            wait_for("back to fin's tab", lambda: showing(z, "fin") and not showing(z, "asker"), timeout=10)
            wait_for("fin focused", lambda: "fin" in focused_titles(z), timeout=5)
            # fin is seen now; asker still waits.
            wait_for("the counter drops to 1", lambda: "needs you: 1" in z.bar(), timeout=10)

    def test_a_click_on_the_counter_goes_to_the_pane_that_needs_you(self):
        tabs = [[("front", demo("front", "", turns=0))], [("asker", demo("asker", "wait", turns=1, pace=8))]]
        with Zellij(None, tabs=tabs) as z:
            wait_for("the counter", lambda: "needs you: 1" in z.bar(), timeout=40)
            col = z.bar().index("needs you") + 1  # 1-based column, on the counter
            click(z, col, 1)
            wait_for("the waiting pane's tab shown", lambda: showing(z, "asker") and not showing(z, "front"), timeout=10)


def click(z, col, row):
    """A left click at (col, row), 1-based, as the terminal reports it (SGR mouse)."""
    subprocess.run(["tmux", "send-keys", "-t", z.tmux, "-l", f"\x1b[<0;{col};{row}M\x1b[<0;{col};{row}m"],
                   check=True)



NOTIFY = ('printf "%s|%s|%s|%s|%s|%s\\n" "$@" "$TURNSTILE_ANSWER_1" >> {log}; '
          'echo "$TURNSTILE_PANE_ID $TURNSTILE_STATE $TURNSTILE_COUNT $(date +%s.%N)" >> {env}; sleep {hang}')


class Notify(unittest.TestCase):
    def setUp(self):
        self.out = tempfile.mkdtemp(prefix="turnstile-notify-")
        self.addCleanup(shutil.rmtree, self.out, True)

    def test_the_notifier_gets_unseen_panes_once_and_a_hanging_one_never_stalls_the_bar(self):
        log, env = os.path.join(self.out, "notify.log"), os.path.join(self.out, "notify.env")
        panes = [("front", demo("front", "done", turns=1)), ("early", demo("early", "done", turns=1)),
                 ("late", demo("late", "done", turns=1, pace=2))]
        cfg = {"notify": NOTIFY.format(log=log, env=env, hang=60), "notify_interval_ms": "0"}
        with Zellij(panes, plugin_config=cfg) as z:
            early, late = z.pane_id("early"), z.pane_id("late")
            wait_for("early notified", lambda: lines_of(log), timeout=30)
            self.assertEqual(lines_of(log), [f"{early}|early|done|claude||Answer 1 from early: all 4 checks pass."])
            running = notifier_cmdlines()
            self.assertTrue(running, "the notifier hangs, so it is still there")
            self.assertFalse([c for c in running if b"Answer" in c], "answers never on a command line")
            # That notifier hangs; the bar goes on meanwhile ...
            wait_for("late done in the bar", lambda: "done" in (segment(z.bar(), "late") or ""), timeout=40)
            late_in_bar = time.time()
            # ... and the next run waits until `timeout` kills it (10 s).
            # The notifier writes its log line, then (another command, later
            # on a busy machine) its env line: wait for both.
            wait_for("late notified once the hung notifier is killed",
                     lambda: len(lines_of(log)) == 2 and len(lines_of(env)) == 2, timeout=25)
            self.assertEqual(lines_of(log)[1], f"{late}|late|done|claude||Answer 1 from late: all 4 checks pass.")
            runs = [l.split() for l in lines_of(env)]
            self.assertEqual([r[:3] for r in runs], [[str(early), "done", "1"], [str(late), "done", "1"]])
            first, second = float(runs[0][3]), float(runs[1][3])
            self.assertGreater(second - first, 9, "one notifier at a time: the second ran after the first was killed")
            self.assertLess(late_in_bar, second, "the bar showed late done while the notifier hung")
            time.sleep(2)
            self.assertFalse(any("front" in l for l in lines_of(log)), "the pane looked at is never notified")
            self.assertEqual(len(lines_of(log)), 2, "once per turn")


def notifier_cmdlines():
    """The command lines of the running notifiers (any local user can read these)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if b"turnstile-notify" in cmdline:
            found.append(cmdline)
    return found


def view_lines(z):
    """The inbox view's entry rows on screen (pane id, title, state), top to bottom."""
    rows = []
    for line in z.screen().splitlines():
        m = re.search(r"ago\s+(\d+)\s+(\S+)\s+\S+\s+\S+\s+(done|failed|interrupted)", line)
        if m:
            rows.append((int(m.group(1)), m.group(2), m.group(3)))
    return rows


class Inbox(unittest.TestCase):
    def setUp(self):
        self.out = tempfile.mkdtemp(prefix="turnstile-clip-")
        self.addCleanup(shutil.rmtree, self.out, True)

    def test_the_inbox_lists_turns_newest_first_copies_routes_once_and_enter_focuses(self):
        clip = os.path.join(self.out, "clip")
        panes = [("dst", demo("dst", "", turns=0, listen=True)), ("oops", demo("oops", "fail", turns=1)),
                 ("src", demo("src", "done", turns=1, pace=2.5))]
        answer = "Answer 1 from src: all 4 checks pass."
        with Zellij(panes, extra_config=f'copy_command "tee {clip}"\n') as z:
            wait_for("src done after oops failed", lambda: "done" in (segment(z.bar(), "src") or "")
                     and "failed" in (segment(z.bar(), "oops") or ""), timeout=40)
            src, oops = z.pane_id("src"), z.pane_id("oops")
            z.pipe("inbox", "open")
            wait_for("the view lists both turns, newest first",
                     lambda: view_lines(z) == [(src, "src", "done"), (oops, "oops", "failed")], timeout=10)
            self.assertIn("all 4 checks pass.", z.screen(), "the answer's first line is shown")
            z.keys("y")
            wait_for("the whole answer in the clipboard", lambda: open(clip).read() if os.path.exists(clip) else "",
                     timeout=10)
            self.assertEqual(open(clip).read(), answer)
            z.keys("r")
            wait_for("the pane picker", lambda: "route to:" in z.screen(), timeout=5)
            z.keys("d", "s", "t")
            wait_for("dst picked", lambda: re.search(r"▸\s+\d+\s+dst", z.screen()), timeout=5)
            z.keys("Enter")
            wait_for("dst got src's answer", lambda: any(t == answer for _, t in user_prompts(z)), timeout=15)
            wait_for("back in the list", lambda: "turnstile inbox" in z.screen(), timeout=5)
            z.keys("Enter")
            wait_for("the view closed", lambda: "turnstile inbox" not in z.screen(), timeout=10)
            wait_for("src focused", lambda: "src" in focused_titles(z), timeout=5)
            time.sleep(1.5)
            self.assertEqual([t for _, t in user_prompts(z)].count(answer), 1, "routed once")

    def test_the_inbox_survives_the_leader_moving_to_another_tab(self):
        tabs = [[("gone", demo("gone", "done", turns=1))], [("stay", demo("stay", "", turns=0))]]
        with Zellij(None, tabs=tabs, extra_config=KEYS) as z:
            wait_for("gone done", lambda: "done" in (segment(z.bar(), "gone") or ""), timeout=30)
            gone = z.pane_id("gone")
            # Closing the first tab takes the leading copy of the bar with it.
            z.action("close-tab")
            wait_for("the other tab's bar leads", lambda: segment(z.bar(), "stay") and not segment(z.bar(), "gone"),
                     timeout=15)
            z.keys("M-b")
            wait_for("the closed pane's turn is still listed", lambda: view_lines(z) == [(gone, "gone", "done")],
                     timeout=10)


if __name__ == "__main__":
    unittest.main()
