#!/usr/bin/env python3
"""Latency and CPU figures of the bar in a real zellij (a bench, not a test).

  python3 tests/e2e/bench.py [--turns N] [--cpu-seconds S]

1. banner on screen -> bar flip: a pane prints a spinner, then a finished
   banner at a recorded instant; the bar (read with tmux) is polled every 5 ms.
2. transcript append -> bar flip: an idle simulated agent sits in a pane; the
   bench appends a prompt and, later, the final answer to its transcript and
   times the bar's working -> done flip (no screen change: host path only).
3. CPU of the zellij server (and the host commands it runs) with 16 panes
   streaming agent-like output, with and without the plugin.
"""
import argparse, glob, json, os, statistics, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Zellij, turnstile_bin, wait_for

BANNER_PANE = r"""i=0; while :; do i=$((i+1)); printf '\033[H\033[J\342\234\275 Pondering\342\200\246 (1s)\n'; sleep 1.2;
printf '\033[H\033[J\342\234\273 Baked for 1s \302\267 done\n'; date +%s.%N >> "$STAMPS"; sleep 1.2; done"""


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def fmt(name, ms):
    return f"{name}: n={len(ms)} p50={pct(ms, 50):.0f} ms p95={pct(ms, 95):.0f} ms max={max(ms):.0f} ms"


def bar_segment(z, title):
    for part in z.bar().split("│"):
        if title in part:
            return part
    return ""


def run_banner(turns):
    """(ms from the banner's print to the bar flip, ms from the banner being
    visible in the terminal to the bar flip: 0 = the same rendered frame)."""
    stamps = f"/tmp/turnstile-bench-stamps-{os.getpid()}"
    open(stamps, "w").close()
    script = BANNER_PANE.replace('"$STAMPS"', stamps)
    flips, frames = [], []
    with Zellij([("banner", ["/bin/bash", "-c", script])]) as z:
        wait_for("first working", lambda: "working" in bar_segment(z, "banner"), timeout=20)
        last, seen_banner = "working", None
        while len(flips) < turns:
            screen = z.screen()
            now = time.time()
            lines = screen.splitlines()
            seg = next((p for p in (lines[0] if lines else "").split("│") if "banner" in p), "")
            if "Baked for" in screen and seen_banner is None:
                seen_banner = now
            state = "done" if "done" in seg else "working" if "working" in seg else last
            if state == "done" and last != "done":
                flips.append(now)
                frames.append((now - (seen_banner or now)) * 1000)
            if state != "done" and "Baked for" not in screen:
                seen_banner = None
            last = state
            time.sleep(0.002)
    printed = [float(l) for l in open(stamps) if l.strip()]
    os.unlink(stamps)
    lat = []
    for f in flips:
        before = [p for p in printed if p <= f]
        if before:
            lat.append((f - before[-1]) * 1000)
    return lat, frames


def transcript_latency(turns):
    lat = []
    with Zellij([("quiet", [turnstile_bin(), "demo-agent", "--name", "quiet", "--turns", "0"])]) as z:
        files = wait_for("agent transcript", lambda: glob.glob(os.path.join(z.dir, "tmp", "turnstile-demo", ".claude", "projects", "*", "*.jsonl")), timeout=20)
        path = max(files, key=os.path.getmtime)
        prompt = json.dumps({"type": "user", "message": {"role": "user", "content": "bench"}}) + "\n"
        for n in range(turns):
            with open(path, "a") as f:
                f.write(prompt)
            wait_for("working", lambda: "working" in bar_segment(z, "quiet"), timeout=10, interval=0.005)
            answer = json.dumps({"type": "assistant", "message": {"id": f"m{n}", "role": "assistant", "content": [
                {"type": "text", "text": f"answer {n}"}], "stop_reason": "end_turn"}}) + "\n"
            time.sleep(0.3)
            with open(path, "a") as f:
                f.write(answer)
            t0 = time.time()
            wait_for("done", lambda: "done" in bar_segment(z, "quiet"), timeout=10, interval=0.005)
            lat.append((time.time() - t0) * 1000)
    return lat


def server_cpu(z):
    """utime+stime+cutime+cstime (s) of the zellij server process."""
    hz = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(stat) as f:
                data = f.read()
            cmd = open(stat.replace("stat", "cmdline"), "rb").read()
        except OSError:
            continue
        if b"--server" in cmd and z.session.encode() in cmd:
            fields = data.rsplit(")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15]) / hz
    return total


STREAM = r"""while :; do printf '\342\234\275 Working\342\200\246 (%ss) line %s of agent-like output with some words\n' $SECONDS $RANDOM; sleep 0.05; done"""


def cpu_share(with_plugin, seconds):
    panes = [(f"s{i}", ["/bin/bash", "-c", STREAM]) for i in range(16)]
    z = Zellij(panes, with_plugin=with_plugin)
    try:
        time.sleep(5)
        c0, t0 = server_cpu(z), time.time()
        time.sleep(seconds)
        return (server_cpu(z) - c0) / (time.time() - t0) * 100
    finally:
        z.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=30)
    ap.add_argument("--cpu-seconds", type=float, default=20)
    ap.add_argument("--cpu-only", action="store_true")
    a = ap.parse_args()
    if not a.cpu_only:
        printed, visible = run_banner(a.turns)
        print(fmt("banner printed -> bar flip (through zellij and tmux)", printed))
        print(fmt("banner visible in the terminal -> bar flip (0 = same frame)", visible))
        print(fmt("transcript append -> bar flip (host polling)", transcript_latency(a.turns)))
    without = cpu_share(False, a.cpu_seconds)
    with_ = cpu_share(True, a.cpu_seconds)
    print(f"zellij server CPU, 16 streaming panes: without plugin {without:.1f}% of a core, with {with_:.1f}% "
          f"(added {with_ - without:+.1f} points)")


if __name__ == "__main__":
    main()
