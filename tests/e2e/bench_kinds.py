#!/usr/bin/env python3
"""Answer → bar latency of real agents (Qwen Code, Copilot CLI, OpenCode), per kind (a bench, not a test).

  python3 tests/e2e/bench_kinds.py [--kinds qwen copilot opencode] [--turns N] [--hooks 0|1]

Each kind runs alone in a real zellij with the bar, against its loopback
fake API; the bench submits `echo:` prompts one after another and times,
for each, the fake's last byte of the final answer → the bar's confirmed
done (polled every 20 ms). Once the bar shows the turn working, every
sample before that answer is checked: a done then is a false done."""
import argparse, os, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agents import (copilot_argv, copilot_ready, install_copilot_hooks, opencode_argv, opencode_ready,
                    prepare_copilot_home, prepare_opencode_home, prepare_qwen_home, qwen_argv, qwen_ready)
from agent_case import AgentCase, segment
from fake_chat import FakeChat
from harness import Zellij, percentile, wait_for
from test_real_claude import is_confirmed_done


def setup(kind, api, hooks):
    """(pane command, ready check, before_start) of one kind."""
    if kind == "qwen":
        return qwen_argv(api), qwen_ready, lambda z: prepare_qwen_home(z.home, z.work, hooks)
    if kind == "opencode":
        return opencode_argv(), opencode_ready, lambda z: prepare_opencode_home(
            z.home, api, hooks, config=z.env["XDG_CONFIG_HOME"])

    def prepare(z):
        prepare_copilot_home(z.home, z.work)
        if hooks:
            install_copilot_hooks(z.home)
    return copilot_argv(api), copilot_ready, prepare


class Driver(AgentCase):
    """AgentCase's submit, outside unittest."""

    def fail(self, msg):
        raise AssertionError(msg)


def bench(kind, turns, hooks):
    api = FakeChat(os.devnull)
    argv, ready, prepare = setup(kind, api, hooks)
    driver = Driver()
    driver.agent_api = api
    latencies, false_dones = [], 0
    with Zellij([("ag", argv)], before_start=prepare) as z:
        wait_for("ready", lambda: ready(z.screen()), timeout=90)
        wait_for("in the bar", lambda: segment(z, "ag"), timeout=30)
        for n in range(turns):
            prompt = f"echo:turn {n} of the bench"
            driver.submit(z, "ag", prompt)
            wait_for("working", lambda: "working" in segment(z, "ag") or api.finished(prompt), timeout=10,
                     interval=0.02)
            while not api.finished(prompt):
                false_dones += "done" in segment(z, "ag")
                time.sleep(0.02)
            answered = api.finished(prompt)[-1]["t"]
            wait_for("confirmed done", lambda: is_confirmed_done(segment(z, "ag")), timeout=30, interval=0.02)
            latencies.append((time.time() - answered) * 1000)
            time.sleep(1.0)
    api.close()
    return latencies, false_dones


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kinds", nargs="*", default=["qwen", "copilot", "opencode"])
    ap.add_argument("--turns", type=int, default=8)
    ap.add_argument("--hooks", type=int, default=1)
    args = ap.parse_args()
    for kind in args.kinds:
        ms, early = bench(kind, args.turns, bool(args.hooks))
        print(f"{kind} (hooks {'on' if args.hooks else 'off'}): answer -> confirmed done n={len(ms)} "
              f"p50={percentile(ms, .5):.0f} ms p95={percentile(ms, .95):.0f} ms max={max(ms):.0f} ms; "
              f"early dones: {early}", flush=True)


if __name__ == "__main__":
    main()
