"""Heavy: eight real Claude Code 2.1.39 agents at once for a minute, with our
hooks, in one zellij (TURNSTILE_E2E_HEAVY=1). Each agent runs turn after turn
(tool calls, slowly streamed answers, plain answers); the next prompt goes in
as soon as the bar shows the previous turn done. The fake API knows when each
turn really ended, so the test can say:

- no false done: no bar sample shows a pane done while its turn runs, from
  `START_GRACE` s after the agent sent the turn's first request (the prompt
  is submitted by then; under this load Claude Code may need seconds after
  Enter to get there, and the previous done shows meanwhile);
- the bar keeps up: every turn shows done within `KEEP_UP` s of its end.

It prints the figures (turns, done latency p50/p95, start latency)."""
import os, sys, time, unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agents import claude_argv, heavy, prepare_home
from fake_api import FakeApi
from harness import Zellij, percentile, segments_by_pane, wait_for

AGENTS, DURATION, START_GRACE, KEEP_UP = 8, 60.0, 1.0, 10.0
PROMPTS = ("tool:2", "slow:3", "hello", "tool:1", "slow:2", "tool:3")


class Agent:
    """One pane's turns: what was sent when, and whether the fake finished it."""

    def __init__(self, name, pane):
        self.name, self.pane, self.turns = name, pane, []

    def send(self, z, k):
        tag = f"#{self.name}.{k}"
        target = f"terminal_{self.pane}"
        z.action("write-chars", "--pane-id", target, f"{PROMPTS[k % len(PROMPTS)]} {tag}")
        time.sleep(0.3)  # a TUI swallows an Enter that arrives with the text
        z.action("write", "--pane-id", target, "13")
        self.turns.append({"tag": tag, "sent": time.time(), "started": None, "end": None, "shown_done": None,
                           "shown_working": None})

    @property
    def current(self):
        return self.turns[-1] if self.turns else None


@unittest.skipUnless(heavy(), "heavy: set TURNSTILE_E2E_HEAVY=1")
class ManyAgents(unittest.TestCase):
    def test_eight_agents_for_a_minute_no_false_done_and_the_bar_keeps_up(self):
        api = FakeApi(os.path.join(os.environ.get("TMPDIR", "/tmp"), f"fake-api-many-{os.getpid()}.jsonl"))
        names = [f"a{i}" for i in range(AGENTS)]
        panes = [(n, claude_argv(api, "legacy")) for n in names]
        try:
            with Zellij(panes, cols=220, rows=50, before_start=lambda z: prepare_home(z.home, z.work, True)) as z:
                wait_for("every agent ready", lambda: z.screen().count("bypass permissions") >= AGENTS, timeout=120)
                agents = [Agent(n, z.pane_id(n)) for n in names]
                false_dones, late = [], []
                for a in agents:
                    a.send(z, 0)
                deadline = time.time() + DURATION
                while time.time() < deadline or any(a.current["shown_done"] is None for a in agents):
                    now, segs = time.time(), segments_by_pane(z.bar())
                    for a in agents:
                        self.observe(api, a, segs.get(a.pane, ""), now, false_dones, late)
                        turn = a.current
                        if turn["shown_done"] is not None and now < deadline:
                            a.send(z, len(a.turns))
                    if time.time() > deadline + 60:
                        break
                    time.sleep(0.1)
                self.report(agents)
                self.assertEqual(false_dones[:5], [], f"done shown while the turn ran ({len(false_dones)} samples)")
                self.assertEqual(late[:5], [], f"{len(late)} turns not shown done within {KEEP_UP}s of their end")
                unfinished = [a.name for a in agents if a.current["shown_done"] is None]
                self.assertEqual(unfinished, [], "the last turn of every agent shows done")
        finally:
            api.close()

    @staticmethod
    def observe(api, agent, seg, now, false_dones, late):
        turn = agent.current
        # Matched by tag: a TUI may drop a character of what was typed.
        turn["started"] = turn["started"] or api.seen_at(turn["tag"])
        if turn["end"] is None:
            ends = api.finished_with(turn["tag"])
            turn["end"] = ends[0]["t"] if ends else None
        if "working" in seg and turn["shown_working"] is None:
            turn["shown_working"] = now
        if "done" in seg:
            running = turn["started"] and (turn["end"] is None or now < turn["end"])
            if running and now > turn["started"] + START_GRACE:
                false_dones.append((agent.name, turn["tag"], round(now - turn["sent"], 2), seg))
            elif not running and turn["shown_done"] is None:
                turn["shown_done"] = now
        if turn["end"] is not None and turn["shown_done"] is None and now > turn["end"] + KEEP_UP:
            late.append((agent.name, turn["tag"], seg))
            turn["shown_done"] = now  # counted once; let the agent go on

    @staticmethod
    def report(agents):
        turns = [t for a in agents for t in a.turns if t["end"] and t["shown_done"]]
        done = [t["shown_done"] - t["end"] for t in turns]
        start = [t["shown_working"] - t["sent"] for a in agents for t in a.turns if t["shown_working"]]
        print(f"\n  {len(turns)} turns by {len(agents)} agents; bar done after the turn's end: "
              f"p50 {percentile(done, .5) * 1000:.0f} ms, p95 {percentile(done, .95) * 1000:.0f} ms, "
              f"max {max(done, default=0) * 1000:.0f} ms; working after Enter: p50 "
              f"{percentile(start, .5) * 1000:.0f} ms, p95 {percentile(start, .95) * 1000:.0f} ms", file=sys.stderr)


if __name__ == "__main__":
    unittest.main()
