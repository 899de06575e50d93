#!/usr/bin/env python3
"""Latency and CPU figures of the bar in a real zellij (a bench, not a test).

  python3 tests/e2e/bench.py [--turns N] [--cpu-seconds S]

0. (see main) hook and watcher paths, the hook's own run time, the watcher's idle CPU.
1. banner on screen -> bar flip: a pane prints a spinner, then a finished
   banner at a recorded instant; the bar (read with tmux) is polled every 5 ms.
2. transcript append -> bar flip: an idle simulated agent sits in a pane; the
   bench appends a prompt and, later, the final answer to its transcript and
   times the bar's working -> done flip (no screen change: host path only).
3. CPU of the zellij server (and the host commands it runs) with 16 panes
   streaming agent-like output, with and without the plugin.
"""
import argparse, glob, json, os, statistics, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Zellij, percentile, turnstile_bin, wait_for

BANNER_PANE = r"""i=0; while :; do i=$((i+1)); printf '\033[H\033[J\342\234\275 Pondering\342\200\246 (1s)\n'; sleep 1.2;
printf '\033[H\033[J\342\234\273 Baked for 1s \302\267 done\n'; date +%s.%N >> "$STAMPS"; sleep 1.2; done"""


def fmt(name, ms):
    return f"{name}: n={len(ms)} p50={percentile(ms, .5):.0f} ms p95={percentile(ms, .95):.0f} ms max={max(ms):.0f} ms"


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


def transcript_latency(turns, watcher=True):
    config = None if watcher else {"watcher": "off"}
    with Zellij([("quiet", [turnstile_bin(), "demo-agent", "--name", "quiet", "--turns", "0"])],
                plugin_config=config) as z:
        files = wait_for("agent transcript", lambda: glob.glob(os.path.join(z.dir, "tmp", "turnstile-demo", ".claude", "projects", "*", "*.jsonl")), timeout=20)
        return time_appended_turns(z, "quiet", max(files, key=os.path.getmtime), turns)


def time_appended_turns(z, title, path, turns):
    """ms from appending each turn's final answer to transcript `path` to
    the bar's done for pane `title` (a prompt appended first: working)."""
    lat = []
    prompt = json.dumps({"type": "user", "message": {"role": "user", "content": "bench"}}) + "\n"
    for n in range(turns):
        with open(path, "a") as f:
            f.write(prompt)
        wait_for("working", lambda: "working" in bar_segment(z, title), timeout=10, interval=0.005)
        answer = json.dumps({"type": "assistant", "message": {"id": f"m{n}", "role": "assistant", "content": [
            {"type": "text", "text": f"answer {n}"}], "stop_reason": "end_turn"}}) + "\n"
        time.sleep(0.3)
        with open(path, "a") as f:
            f.write(answer)
        t0 = time.time()
        wait_for("done", lambda: "done" in bar_segment(z, title), timeout=10, interval=0.005)
        lat.append((time.time() - t0) * 1000)
    return lat


def hook_latency(turns):
    """ms from starting `turnstile hook` (Stop) to the bar showing done."""
    lat = []
    with Zellij([("hooked", [turnstile_bin(), "demo-agent", "--name", "hooked", "--turns", "0"])]) as z:
        wait_for("pane shown", lambda: "hooked" in z.bar(), timeout=20)
        pane = z.pane_id("hooked")
        env = {**z.env, "ZELLIJ_PANE_ID": str(pane), "ZELLIJ_SESSION_NAME": z.session, "TURNSTILE_ZELLIJ": z.zellij,
               "XDG_STATE_HOME": os.path.join(z.dir, "state")}

        def hook(event):
            payload = {"hook_event_name": event, "session_id": "s", "cwd": z.work, "background_tasks": [],
                       "transcript_path": os.path.join(z.dir, "none.jsonl"), "last_assistant_message": "ok"}
            subprocess.run([turnstile_bin(), "hook"], input=json.dumps(payload).encode(), env=env, check=True)
        for _ in range(turns):
            hook("UserPromptSubmit")
            wait_for("working", lambda: "working" in bar_segment(z, "hooked"), timeout=10, interval=0.005)
            t0 = time.time()
            hook("Stop")
            wait_for("done", lambda: "done" in bar_segment(z, "hooked"), timeout=10, interval=0.005)
            lat.append((time.time() - t0) * 1000)
    return lat


def hook_own_time(runs=50):
    """ms of one `turnstile hook` run (a Stop with a real transcript, no zellij to reach)."""
    import tempfile
    payload = json.dumps({"hook_event_name": "Stop", "session_id": "s", "cwd": "/tmp", "background_tasks": [],
                          "transcript_path": os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures",
                                                          "claude-code", "2.1.332-hooks", "transcript.jsonl")})
    state = tempfile.mkdtemp()
    env = {**os.environ, "ZELLIJ_PANE_ID": "1", "ZELLIJ_SESSION_NAME": "bench", "TURNSTILE_ZELLIJ": "/bin/true",
           "XDG_STATE_HOME": state}
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([turnstile_bin(), "hook"], input=payload.encode(), env=env, check=True)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def watcher_idle_cpu(seconds, panes=16):
    """CPU seconds the watcher uses over `seconds` with `panes` bound idle agents."""
    import tempfile
    tmp = tempfile.mkdtemp()
    session = f"bench-idle-{os.getpid()}"
    procs = [subprocess.Popen([turnstile_bin(), "demo-agent", "--name", f"a{i}", "--turns", "0"],
                              env={**os.environ, "ZELLIJ_PANE_ID": str(i), "ZELLIJ_SESSION_NAME": session,
                                   "TMPDIR": tmp}, cwd=tmp, stdout=subprocess.DEVNULL) for i in range(panes)]
    time.sleep(1)
    watcher = subprocess.Popen([turnstile_bin(), "watch", "--session", session],
                               env={**os.environ, "TURNSTILE_ZELLIJ": "/bin/true", "XDG_STATE_HOME": tmp})
    try:
        time.sleep(3)  # binding and the first pushes
        hz = os.sysconf("SC_CLK_TCK")

        def cpu():
            f = open(f"/proc/{watcher.pid}/stat").read().rsplit(")", 1)[1].split()
            return (int(f[11]) + int(f[12])) / hz
        c0 = cpu()
        time.sleep(seconds)
        return cpu() - c0
    finally:
        for p in procs + [watcher]:
            p.kill()
            p.wait()


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
    ap.add_argument("--idle-seconds", type=float, default=60)
    a = ap.parse_args()
    if not a.cpu_only:
        printed, visible = run_banner(a.turns)
        print(fmt("banner printed -> bar flip (through zellij and tmux)", printed))
        print(fmt("banner visible in the terminal -> bar flip (0 = same frame)", visible))
        print(fmt("transcript append -> bar flip (watcher)", transcript_latency(a.turns)))
        print(fmt("transcript append -> bar flip (host polling, watcher off)", transcript_latency(a.turns, watcher=False)))
        print(fmt("hook (Stop) -> bar flip", hook_latency(a.turns)))
        print(fmt("turnstile hook, own run time (process start to exit)", hook_own_time()))
        idle = watcher_idle_cpu(a.idle_seconds)
        print(f"watcher CPU over {a.idle_seconds:.0f} s idle with 16 bound panes: {idle:.3f} s")
    without = cpu_share(False, a.cpu_seconds)
    with_ = cpu_share(True, a.cpu_seconds)
    print(f"zellij server CPU, 16 streaming panes: without plugin {without:.1f}% of a core, with {with_:.1f}% "
          f"(added {with_ - without:+.1f} points)")


if __name__ == "__main__":
    main()
