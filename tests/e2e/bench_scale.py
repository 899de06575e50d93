#!/usr/bin/env python3
"""What the bar costs with many agents, the way heavy users run them (a bench, not a test).

  python3 tests/e2e/bench_scale.py [--agents 8,16,32,64,128] [--tabs 1,4,8] [--view-tab N|last] [--seconds 10] [--rounds 3]
                                   [--latency-turns 20] [--latency-at 32x4] [--scrollback N] [--tour] [--pairs 1]

For every (agents, tabs) pair two zellij sessions run side by side, in the
same run, with the same panes: N simulated Claude Code agents
(`turnstile demo-agent`: a spinner redrawn every 100 ms, the terminal title
set as Claude Code sets it, transcript lines and `sessions/<pid>.json`
written as each turn goes, random outcomes, 4-8 s at the prompt between
turns), a probe agent and a quiet shell pane, spread over the tabs. One session
has the bar in every tab, the other the same layout without it. CPU is
sampled over `rounds` windows, both sessions in every window (the order
alternates); the added cost of a window is the bar session's CPU minus the
other's, and the figure is the median of the windows. With `--pairs K`,
K pairs of sessions are started one after the other and the medians over
the pairs given too: zellij sometimes starts 64 agents 35-50 MiB higher,
with or without the bar, so one pair's RSS can be off either way.

CPU of a session = the zellij server (all its threads, and the processes it
started and reaped: host runs), the zellij client, and the live processes the
server started that are not panes (the watcher, its `zellij pipe`, a host run
in flight). The agents' own CPU is left out of both sides.

Latency under load (at --latency-at), after the CPU windows: transcript
append -> bar flip on the probe agent; then two shell panes start printing a
spinner and a finished banner in turn (agents only their screens show), one
in the viewed tab and one in a hidden tab (the first, or the second when the
first is viewed), and banner printed -> bar flip is timed on each.
"""
import argparse, glob, json, os, statistics, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Zellij, percentile, segments_by_pane, turnstile_bin, wait_for

BANNER = r"""while [ ! -e "$GO" ]; do sleep 0.2; done; i=0; while :; do i=$((i+1)); printf '\033[H\033[J\342\234\275 Pondering\342\200\246 (1s)\n'; sleep 1.2;
printf '\033[H\033[J\342\234\273 Baked for 1s \302\267 done\n'; date +%s.%N >> "$STAMPS"; sleep 1.2; done"""
HZ = os.sysconf("SC_CLK_TCK")


def processes():
    """{pid: (ppid, argv, cpu seconds incl. reaped children, rss peak kB)}."""
    out = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
            argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        cpu = sum(int(x) for x in stat[11:15]) / HZ
        out[int(pid)] = (int(stat[1]), [a.decode(errors="replace") for a in argv if a], cpu)
    return out


def is_pane_process(argv):
    return "demo-agent" in argv or argv[:1] in (["/bin/bash"], ["bash"], ["sleep"])


def session_cpu(session, procs):
    """CPU seconds of one session's zellij server, client and the non-pane processes the server started."""
    server = next((p for p, (_, argv, _) in procs.items() if "--server" in argv and any(session in a for a in argv)), None)
    if server is None:
        return None
    total = procs[server][2]
    for pid, (ppid, argv, cpu) in procs.items():
        if ppid == server and not is_pane_process(argv):
            total += cpu + sum(c for q, (pp, _, c) in procs.items() if pp == pid)
        elif "--session" in argv and session in argv and "--server" not in argv and "pipe" not in argv:
            total += cpu  # the client
    return total


def peak_rss_mib(session):
    for pid, (_, argv, _) in processes().items():
        if "--server" in argv and any(session in a for a in argv):
            for line in open(f"/proc/{pid}/status"):
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    return float("nan")


def banner_pane(name, stamps, go):
    return (name, ["/bin/bash", "-c", BANNER.replace('"$STAMPS"', stamps).replace('"$GO"', go)])


def layout(agents, tabs, stamps, go, view_tab=1):
    """`stamps`: {banner pane: its stamps file}; "banner" goes in the viewed
    tab, "hidden" (when there is another tab) in the first tab not viewed."""
    per_tab = [[] for _ in range(tabs)]
    per_tab[0].append(("probe", ["/bin/bash", "-c", f"mkdir -p probe && cd probe && exec {turnstile_bin()} demo-agent --name probe --turns 0"]))
    per_tab[view_tab - 1].append(banner_pane("banner", stamps["banner"], go))
    if "hidden" in stamps:
        per_tab[1 if view_tab == 1 else 0].append(banner_pane("hidden", stamps["hidden"], go))
    for i in range(agents):
        per_tab[i % tabs].append((f"a{i}", [turnstile_bin(), "demo-agent", "--name", f"a{i}", "--seed", str(i + 1)]))
    return per_tab


def view(bar, bare, tab, names):
    """Both clients view `tab`. zellij answers `go-to-tab` before the
    layout's last tabs exist, and does nothing: it is asked again until the
    bar (which draws its own tab's agents first) starts with one of that
    tab's panes."""
    ids = {bar.pane_id(name) for name in names}
    deadline = time.time() + 60
    while time.time() < deadline:
        for z in (bare, bar):
            z.action("go-to-tab", str(tab), check=False)
        try:
            wait_for(f"tab {tab} viewed", lambda: next(iter(segments_by_pane(bar.bar())), None) in ids, timeout=3)
            return
        except Exception:
            continue
    raise RuntimeError(f"tab {tab} never viewed: {bar.bar()}")


def measure_cpu(bare, bar, seconds, rounds):
    """Per window: (bar session CPU %, bare session CPU %), and the two
    servers' peak RSS in MiB at the window's end (bar, bare)."""
    windows, peaks = [], []
    for r in range(rounds):
        order = [bare, bar] if r % 2 == 0 else [bar, bare]
        p0 = processes()
        c0 = {z.session: session_cpu(z.session, p0) for z in order}
        t0 = time.time()
        time.sleep(seconds)
        p1 = processes()
        dt = time.time() - t0
        c1 = {z.session: session_cpu(z.session, p1) for z in order}
        share = {s: (c1[s] - c0[s]) / dt * 100 for s in c0 if c0[s] is not None and c1[s] is not None}
        windows.append((share.get(bar.session, float("nan")), share.get(bare.session, float("nan"))))
        peaks.append((peak_rss_mib(bar.session), peak_rss_mib(bare.session)))
    return windows, peaks


def probe_transcript(z):
    files = glob.glob(os.path.join(z.dir, "tmp", "turnstile-demo", ".claude", "projects", "*-probe", "*.jsonl"))
    return max(files, key=os.path.getmtime) if files else None


def segment(z, name):
    """The bar's segment of the pane titled `name`, as a state word (a full
    bar drops names and state words: the glyph tells the state)."""
    text = segments_by_pane(z.bar()).get(z.pane_id(name), "")
    glyph = text.split()[0] if text.split() else ""
    return {"⠿": "working", "✓": "done", "✓?": "done", "✗": "failed", "?": "waiting"}.get(glyph, text)


def transcript_latency(z, turns):
    path = wait_for("the probe's transcript", lambda: probe_transcript(z), timeout=30)
    wait_for("the probe in the bar", lambda: segment(z, "probe"), timeout=30)
    lat = []
    for n in range(turns):
        with open(path, "a") as f:
            f.write(json.dumps({"type": "user", "message": {"role": "user", "content": f"bench {n}"}}) + "\n")
        wait_for("probe working", lambda: "working" in segment(z, "probe"), timeout=10, interval=0.005)
        time.sleep(0.3)
        answer = {"type": "assistant", "message": {"id": f"m{n}", "role": "assistant", "stop_reason": "end_turn",
                                                   "content": [{"type": "text", "text": f"answer {n}"}]}}
        with open(path, "a") as f:
            f.write(json.dumps(answer) + "\n")
        t0 = time.time()
        wait_for("probe done", lambda: "done" in segment(z, "probe"), timeout=10, interval=0.005)
        lat.append((time.time() - t0) * 1000)
    return lat


def banner_latency(z, stamps, go, turns):
    """The banner panes start drawing only now: the CPU windows measured the
    agents alone; a pane only its screen shows as an agent is found first.
    {banner pane: latencies in ms}."""
    open(go, "w").close()
    for name in stamps:
        try:
            wait_for(f"the {name} pane in the bar", lambda: segment(z, name) in ("working", "done"), timeout=30)
        except Exception:
            print(f"{name} is pane {z.pane_id(name)}; the bar: {z.bar()}", file=sys.stderr)
            raise
    flips = {name: [] for name in stamps}
    last = {name: None for name in stamps}
    deadline = time.time() + turns * 2.4 + 10
    while min(len(f) for f in flips.values()) < turns and time.time() < deadline:
        segs = segments_by_pane(z.bar())
        now = time.time()
        for name in stamps:
            text = segs.get(z.pane_id(name), "")
            glyph = text.split()[0] if text.split() else ""
            state = {"⠿": "working", "✓": "done", "✓?": "done"}.get(glyph, last[name])
            if state == "done" and last[name] == "working":
                flips[name].append(now)
            last[name] = state
        time.sleep(0.003)
    lat = {}
    for name, path in stamps.items():
        printed = [float(l) for l in open(path) if l.strip()]
        lat[name] = []
        for f in flips[name]:
            before = [p for p in printed if p <= f]
            if before:
                lat[name].append((f - before[-1]) * 1000)
    return lat


def fmt(ms):
    return f"n={len(ms)} p50={percentile(ms, .5):.0f} ms p95={percentile(ms, .95):.0f} ms max={max(ms or [0]):.0f} ms"


def run(agents, tabs, seconds, rounds, latency_turns, view_tab=1, scrollback=None, tour=False):
    """`scrollback`: zellij's `scroll_buffer_size` in both sessions (None:
    zellij's default, 10,000 lines a pane). `tour`: both clients view every
    tab in turn (3 s each) before the viewed one, as a person does."""
    banners = ["banner", "hidden"] if tabs > 1 else ["banner"]
    stamps = [{b: f"/tmp/turnstile-bench-stamps-{os.getpid()}-{k}-{b}" for b in banners} for k in ("bare", "bar")]
    go = f"/tmp/turnstile-bench-go-{os.getpid()}"
    files = [f for st in stamps for f in st.values()]
    for f in files:
        open(f, "w").close()
    cols = 300  # every segment of 34 agent panes and the attention counter fit
    extra = f"scroll_buffer_size {scrollback}\n" if scrollback is not None else ""
    bare = Zellij([], tabs=layout(agents, tabs, stamps[0], go + "-never", view_tab), with_plugin=False, cols=cols,
                  extra_config=extra)
    bar = Zellij([], tabs=layout(agents, tabs, stamps[1], go, view_tab), cols=cols, extra_config=extra,
                 plugin_config={"poll_ms": "500", "idle_poll_ms": "3000", "hidden_poll_ms": "2000"})
    try:
        wait_for("the agents in the bar", lambda: len(segments_by_pane(bar.bar())) >= min(agents, 8), timeout=60)
        if tour:
            for t in range(1, tabs + 1):
                for z in (bare, bar):
                    z.action("go-to-tab", str(t), check=False)
                time.sleep(3)
        if view_tab > 1 or tour:
            # The person works in another tab than the leader's: pane lists
            # then reach the leader through the copy of the viewed tab.
            view(bar, bare, view_tab, [name for name, _ in layout(agents, tabs, stamps[1], go, view_tab)[view_tab - 1]])
        time.sleep(8)  # warm up: every agent in its turn cycle
        windows, peaks = measure_cpu(bare, bar, seconds, rounds)
        added = statistics.median(b - a for b, a in windows)
        spread = (min(b - a for b, a in windows), max(b - a for b, a in windows))
        result = {"agents": agents, "tabs": tabs, "view": view_tab, "added": added, "spread": spread,
                  "bar": statistics.median(b for b, _ in windows), "bare": statistics.median(a for _, a in windows),
                  # Both servers' memory grows with their panes' scrollback
                  # (~0.7 MiB/s at 64 agents, unless --scrollback bounds
                  # it): the difference is read at each window's end, and
                  # its median given.
                  "rss_bar": peaks[-1][0], "rss_bare": peaks[-1][1],
                  "rss_added": statistics.median(b - a for b, a in peaks),
                  "rss_spread": (min(b - a for b, a in peaks), max(b - a for b, a in peaks))}
        if latency_turns:
            result["transcript"] = transcript_latency(bar, latency_turns)
            result["banner"] = banner_latency(bar, stamps[1], go, latency_turns)
        return result
    finally:
        bar.close()
        bare.close()
        for f in files + [go]:
            if os.path.exists(f):
                os.unlink(f)


def print_pair(r, rounds):
    print(f"{r['agents']:3d} agents, {r['tabs']} tab(s), tab {r['view']} viewed: bar adds {r['added']:+5.1f} % of a core "
          f"(windows {r['spread'][0]:+.1f} .. {r['spread'][1]:+.1f}; "
          f"zellij with bar {r['bar']:.1f} %, without {r['bare']:.1f} %; median of {rounds} windows); "
          f"server peak RSS {r['rss_bar']:.0f} MiB with the bar, {r['rss_bare']:.0f} MiB without, "
          f"the bar adds {r['rss_added']:+.1f} MiB (windows {r['rss_spread'][0]:+.1f} .. {r['rss_spread'][1]:+.1f})",
          flush=True)


def listed(pairs, key):
    return ", ".join(f"{p[key]:+.1f}" for p in pairs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--agents", default="8,16,32,64")
    ap.add_argument("--tabs", default="1,4")
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--latency-turns", type=int, default=20)
    ap.add_argument("--latency-at", default="32x4", help="AGENTSxTABS where latency is measured under load")
    ap.add_argument("--view-tab", default="1",
                    help="the tab the client views while measuring: a number (1: the leader's) or 'last'")
    ap.add_argument("--scrollback", type=int, default=None,
                    help="zellij's scroll_buffer_size in both sessions: a bounded scrollback keeps both servers' "
                         "RSS flat, so their difference is the bar's alone (default: zellij's 10,000 lines)")
    ap.add_argument("--pairs", type=int, default=1,
                    help="session pairs per layout, each started afresh: the figures are then the medians over the "
                         "pairs (zellij itself sometimes starts 64 agents ~35-50 MiB higher, with or without the bar; "
                         "one pair can land that on either side)")
    ap.add_argument("--tour", action="store_true",
                    help="before measuring, the clients view every tab in turn (a copy of the bar grows when "
                         "its tab is first viewed)")
    a = ap.parse_args()
    rows = []
    for tabs in [int(t) for t in a.tabs.split(",")]:
        for agents in [int(n) for n in a.agents.split(",")]:
            lat = a.latency_turns if f"{agents}x{tabs}" == a.latency_at else 0
            view = tabs if a.view_tab == "last" else min(int(a.view_tab), tabs)
            pairs = []
            for k in range(a.pairs):
                pairs.append(run(agents, tabs, a.seconds, a.rounds, lat if k == 0 else 0, view, a.scrollback, a.tour))
                print_pair(pairs[-1], a.rounds)
            r = {**pairs[0], "added": statistics.median(p["added"] for p in pairs),
                 "rss_added": statistics.median(p["rss_added"] for p in pairs)}
            if a.pairs > 1:
                print(f"    over {a.pairs} pairs: bar adds {r['added']:+.1f} % of a core (pairs {listed(pairs, 'added')}), "
                      f"RSS {r['rss_added']:+.1f} MiB (pairs {listed(pairs, 'rss_added')})", flush=True)
            rows.append(r)
            if lat:
                print(f"    under load: transcript append -> bar {fmt(r['transcript'])}", flush=True)
                print(f"    under load: banner printed -> bar, viewed tab {fmt(r['banner']['banner'])}", flush=True)
                if "hidden" in r["banner"]:
                    print(f"    under load: banner printed -> bar, hidden tab {fmt(r['banner']['hidden'])}", flush=True)
    print("\ncurve (added % of one core):")
    for tabs in sorted({r["tabs"] for r in rows}):
        line = ", ".join(f"{r['agents']}: {r['added']:+.1f}" for r in rows if r["tabs"] == tabs)
        print(f"  {tabs} tab(s): {line}")


if __name__ == "__main__":
    main()
