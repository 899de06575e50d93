#!/usr/bin/env python3
"""Figures of agents over ssh, in a real zellij against a real sshd on
127.0.0.1 (a bench, not a test; see test_remote.py for the cases).

  python3 tests/e2e/bench_remote.py [--turns N] [--agents N] [--cpu-seconds S]

1. remote transcript append -> bar flip: an idle simulated agent runs over
   `ssh -t`; the bench appends a prompt and, later, the final answer to its
   transcript under the remote HOME and times the bar's working -> done flip
   (the relay reads it there, the link carries it, the watcher posts it).
2. the relay's CPU and memory with N remote agents running turns
   (`turnstile demo-agent`, random outcomes), and those of the local link.
"""
import argparse, glob, os, shlex, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import fmt, time_appended_turns
from harness import Zellij, wait_for
from sshd import Sshd


def remote_agent(sshd, name, turns=None):
    argv = ["turnstile", "demo-agent", "--name", name] + (["--turns", str(turns)] if turns is not None else [])
    return sshd.ssh("-t", sshd.host, shlex.join(argv))


def sandbox(panes):
    holder = {}
    z = Zellij(panes, before_start=lambda z: holder.setdefault("sshd", Sshd(z.dir)))
    return z, holder["sshd"]


def transcript_latency(turns):
    z, sshd = sandbox([("dst", ["sleep", "100000"])])
    with z:
        z.action("new-pane", "--name", "far", "--", *remote_agent(sshd, "far", 0))
        pattern = os.path.join(sshd.remote_tmp, "turnstile-demo", ".claude", "projects", "*", "*.jsonl")
        path = max(wait_for("the remote transcript", lambda: glob.glob(pattern), timeout=30), key=os.path.getmtime)
        wait_for("far in the bar", lambda: "far" in z.bar(), timeout=30)
        lat = time_appended_turns(z, "far", path, turns)
        sshd.close()
    return lat


def cpu_of(pids):
    ticks = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            pass
    return ticks / os.sysconf("SC_CLK_TCK")


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            return next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
    except (OSError, StopIteration):
        return 0


def relay_cost(agents, seconds):
    """(relay CPU %, relay RSS KiB, link ssh CPU %) over `seconds` with `agents` remote agents."""
    z, sshd = sandbox([("dst", ["sleep", "100000"])])
    with z:
        for i in range(agents):
            z.action("new-pane", "--name", f"r{i}", "--", *remote_agent(sshd, f"r{i}"))
        wait_for("every remote agent in the bar", lambda: all(f"r{i}" in z.bar() for i in range(agents)),
                 timeout=60)
        relay = wait_for("the relay", lambda: sshd.relays(), timeout=30)
        links = subprocess.run(["pgrep", "-f", "BatchMode=yes -T -- devbox"], capture_output=True,
                               text=True).stdout.split()
        time.sleep(2)
        relay_before, link_before = cpu_of(relay), cpu_of(links)
        time.sleep(seconds)
        relay_cpu = (cpu_of(relay) - relay_before) / seconds * 100
        link_cpu = (cpu_of(links) - link_before) / seconds * 100
        rss = max(rss_kib(int(p)) for p in relay)
        sshd.close()
    return relay_cpu, rss, link_cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--agents", type=int, default=8)
    parser.add_argument("--cpu-seconds", type=int, default=30)
    args = parser.parse_args()
    lat = transcript_latency(args.turns)
    print(fmt("remote transcript append -> bar done (loopback sshd)", lat))
    relay_cpu, rss, link_cpu = relay_cost(args.agents, args.cpu_seconds)
    print(f"relay with {args.agents} remote agents running turns: {relay_cpu:.2f} % CPU, {rss / 1024:.1f} MiB RSS; "
          f"the local link's ssh: {link_cpu:.2f} % CPU (over {args.cpu_seconds} s)")


if __name__ == "__main__":
    main()
