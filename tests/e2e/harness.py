"""A real zellij 0.45.1 in tmux, sandboxed, for end-to-end tests.

Each `Zellij` gets its own HOME, config dir, cache (pre-granted plugin
permissions), TMPDIR and session name. Steps poll a condition until it holds
or a timeout passes: no fixed sleeps decide a test."""
import atexit, re, glob, json, os, shutil, signal, subprocess, sys, tempfile, time, uuid

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "claude-code")
PERMISSIONS = ("ReadApplicationState", "ReadPaneContents", "RunCommands", "WriteToStdin",
               "ChangeApplicationState", "ReadCliPipes", "MessageAndLaunchOtherPlugins", "WriteToClipboard")


def zellij_bin():
    return os.environ.get("TURNSTILE_ZELLIJ") or subprocess.check_output(
        [os.path.join(ROOT, "scripts", "ensure-zellij")], text=True).strip()


def turnstile_bin():
    return os.environ.get("TURNSTILE_BIN") or os.path.join(ROOT, "target", "release", "turnstile")


def wasm_path():
    return os.environ.get("TURNSTILE_WASM") or os.path.join(ROOT, "dist", "turnstile.wasm")


def kdl(s):
    return json.dumps(s)  # KDL strings use the same escapes as JSON for our paths


class Timeout(AssertionError):
    pass


def segments_by_pane(bar):
    """{pane id: segment text} from the bar row (segments are `mark id name state …`)."""
    out = {}
    for part in bar.split("│"):
        if re.match(r"\s*(needs you: \d+|!\d+)\s*$", part):
            continue  # the attention counter
        pane = next((w for w in part.split()[:3] if w.isdigit()), None)
        if pane is not None:
            out[int(pane)] = part.strip()
    return out


def percentile(values, q):
    """The nearest-rank `q` quantile (0..1) of `values`; nan when there are none."""
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))] if values else float("nan")


def processes_with_home(home):
    """Pids of the processes whose HOME is `home` (a sandbox's agents, hooks, watcher)."""
    needle = f"HOME={home}\0".encode()
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if needle in f.read():
                    pids.append(int(pid))
        except OSError:
            continue
    return pids


def end_sandbox_processes(home):
    """Waits a moment for a sandbox's processes to exit, then kills what is
    left: a busy zellij server may not answer `kill-session` (nothing is
    done), and a server left behind keeps its agents running and loads every
    later test (the scale bench left two servers with 64 agents each)."""
    try:
        wait_for("the sandbox's processes to exit", lambda: not processes_with_home(home), timeout=5)
    except Timeout:
        for pid in processes_with_home(home):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def remove_sandbox(folder, home):
    """Removes a sandbox once its processes are gone (exiting agents still write into it)."""
    end_sandbox_processes(home)
    shutil.rmtree(folder, ignore_errors=True)


def wait_for(what, probe, timeout=20.0, interval=0.1):
    """Polls `probe` until it returns a truthy value; raises with the last value seen."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(interval)
    raise Timeout(f"timed out after {timeout}s waiting for {what}; last: {last!r}")


# Sessions started and not yet closed. A run stopped by a signal or an
# error outside a test's cleanup still closes them: a session left behind
# keeps its agents running and loads the machine every later test runs on.
_OPEN = {}


def _close_open_sessions():
    for z in list(_OPEN.values()):
        try:
            z.close()
        except Exception as e:  # best effort at exit: the others still close
            sys.stderr.write(f"could not close session {z.session}: {e}\n")


class Stopped(KeyboardInterrupt):
    """The run was told to stop (SIGTERM, SIGHUP). unittest records any
    other exception raised in a test, `SystemExit` too, and goes on to the
    next test: only an interrupt ends the run."""

    def __init__(self, signum):
        super().__init__(f"stopped by signal {signum}")
        self.code = 128 + signum


def _exit_on_signal(signum, _frame):
    raise Stopped(signum)  # unwinds: cleanups, `finally` blocks, then atexit


atexit.register(_close_open_sessions)
for _signal in (signal.SIGTERM, signal.SIGHUP):
    if signal.getsignal(_signal) == signal.SIG_DFL:
        signal.signal(_signal, _exit_on_signal)


class Zellij:
    """One sandboxed zellij session running `layout_body` in a tmux window."""

    def __init__(self, panes, plugin_config=None, cols=160, rows=45, tabs=None, with_plugin=True, extra_config="",
                 before_start=None, layout_file=None, bar_row=0):
        """`panes`: [(title, argv)] in a grid under the bar (or `tabs` of
        them), or `layout_file`: a layout of the project, used as it is.
        `before_start(self)` runs once the sandbox exists (it may change
        `self.env`, e.g. PATH). `bar_row`: the screen row of the bar (negative:
        from the bottom)."""
        self.bar_row = bar_row
        self.with_plugin = with_plugin
        self.extra_config = extra_config
        self.dir = tempfile.mkdtemp(prefix="turnstile-e2e-")
        self.home = os.path.join(self.dir, "home")
        self.work = os.path.join(self.dir, "work")
        self.session = "ts" + uuid.uuid4().hex[:8]
        self.tmux = "tse" + uuid.uuid4().hex[:8]
        self.zellij = zellij_bin()
        for d in (self.home, self.work, os.path.join(self.dir, "config"), os.path.join(self.dir, "cache", "zellij"),
                  os.path.join(self.dir, "tmp")):
            os.makedirs(d, exist_ok=True)
        self.plugin_config = {"host_command": turnstile_bin(), "poll_ms": "300", "idle_poll_ms": "1000",
                              "hidden_poll_ms": "500", **(plugin_config or {})}
        self._write_config()
        self.layout = layout_file or os.path.join(self.dir, "layout.kdl")
        if not layout_file:
            with open(self.layout, "w") as f:
                f.write(self.layout_kdl(tabs or [panes]))
        self.env = {**os.environ, "HOME": self.home, "XDG_CACHE_HOME": os.path.join(self.dir, "cache"),
                    "XDG_CONFIG_HOME": os.path.join(self.dir, "config"), "TMPDIR": os.path.join(self.dir, "tmp"),
                    "SHELL": "/bin/bash"}
        for k in ("TMUX", "TMUX_PANE", "TERM_PROGRAM", "ZELLIJ", "ZELLIJ_SESSION_NAME", "ZELLIJ_PANE_ID"):
            self.env.pop(k, None)
        if before_start:
            before_start(self)
        cmd = [self.zellij, "--config-dir", os.path.join(self.dir, "config"), "--new-session-with-layout", self.layout,
               "--session", self.session]
        subprocess.run(["tmux", "new-session", "-d", "-s", self.tmux, "-x", str(cols), "-y", str(rows), "-c", self.work,
                        "env", *[f"{k}={v}" for k, v in self.env.items() if k in (
                            "HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "TMPDIR", "PATH", "SHELL")],
                        "TERM=xterm-256color", *cmd], check=True, env=self.env)
        _OPEN[self.session] = self

    def _write_config(self):
        with open(os.path.join(self.dir, "config", "config.kdl"), "w") as f:
            f.write('show_startup_tips false\nshow_release_notes false\nsession_serialization false\n'
                    'pane_frames false\nmouse_mode true\n' + self.extra_config)
        perms = " ".join(PERMISSIONS)
        with open(os.path.join(self.dir, "cache", "zellij", "permissions.kdl"), "w") as f:
            f.write(f'{kdl(wasm_path())} {{\n' + "".join(f"    {p}\n" for p in PERMISSIONS) + "}\n")

    def plugin_block(self):
        if not self.with_plugin:
            return '    pane size=1 borderless=true {\n        command "sleep"\n        args "100000"\n    }\n'
        cfg = "".join(f"            {k} {kdl(v)}\n" for k, v in self.plugin_config.items())
        return (f'    pane size=1 borderless=true {{\n        plugin location={kdl("file:" + wasm_path())} {{\n'
                f'{cfg}        }}\n    }}\n')

    def layout_kdl(self, tabs):
        out = "layout {\n"
        for i, panes in enumerate(tabs):
            out += f'    tab name="t{i}" {{\n' + self.plugin_block().replace("\n    ", "\n        ").replace("    pane size=1", "        pane size=1", 1)
            # Up to four panes side by side per row, rows stacked: a grid.
            out += '        pane split_direction="horizontal" {\n'
            for row in range(0, len(panes), 4):
                out += '            pane split_direction="vertical" {\n'
                for name, argv in panes[row:row + 4]:
                    args = " ".join(kdl(a) for a in argv[1:])
                    out += (f'                pane name={kdl(name)} command={kdl(argv[0])} {{\n'
                            f'                    args {args}\n                    cwd {kdl(self.work)}\n'
                            '                }\n')
                out += "            }\n"
            out += "        }\n    }\n"
        return out + "}\n"

    # ------------------------------------------------------------------ reading
    def screen(self, escapes=False):
        args = ["tmux", "capture-pane", "-p", "-t", self.tmux] + (["-e"] if escapes else [])
        return subprocess.run(args, capture_output=True, text=True).stdout

    def bar(self):
        """The bar row (the first line of the screen unless the layout puts it elsewhere)."""
        lines = self.screen().splitlines()
        try:
            return lines[self.bar_row]
        except IndexError:
            return ""

    def keys(self, *keys):
        """Types keys into the client, as a person would (tmux key names: M-r is Alt r)."""
        subprocess.run(["tmux", "send-keys", "-t", self.tmux, *keys], check=True)

    def action(self, *args, check=True, attempts=3):
        """`zellij action …`; the CLI now and then fails to reach a busy
        server (exit 1, nothing done): such a failure is retried."""
        for attempt in range(attempts):
            out = subprocess.run([self.zellij, "--session", self.session, "action", *args], capture_output=True,
                                 text=True, env=self.env, stdin=subprocess.DEVNULL, timeout=20)
            if out.returncode == 0 or attempt == attempts - 1:
                break
            time.sleep(0.3)
        if check and out.returncode != 0:
            raise subprocess.CalledProcessError(out.returncode, out.args, out.stdout, out.stderr)
        return out

    def pipe(self, name, payload="", plugin=None):
        cmd = [self.zellij, "--session", self.session, "pipe", "--name", name]
        if plugin:
            cmd += ["--plugin", plugin]
        return subprocess.run(cmd + ["--", payload], capture_output=True, text=True, env=self.env,
                              stdin=subprocess.DEVNULL, timeout=20)

    def list_panes(self):
        out = self.action("list-panes", "--json", "--all", check=False).stdout
        try:
            return json.loads(out)
        except ValueError:
            return []

    def pane_id(self, title):
        """A terminal pane's id by its title (retried: `list-panes` can fail
        while zellij is busy). Cached: ids are stable, titles may change."""
        ids = self.__dict__.setdefault("_pane_ids", {})
        if title not in ids:
            found = wait_for(f"pane {title}", lambda: next(
                (str(p["id"]) for p in self.list_panes() if p.get("title") == title and not p.get("is_plugin")), None),
                timeout=10)
            ids[title] = int(found)
        return ids[title]

    def close(self):
        _OPEN.pop(self.session, None)
        subprocess.run([self.zellij, "kill-session", self.session], capture_output=True, env=self.env,
                       stdin=subprocess.DEVNULL, timeout=20)
        subprocess.run(["tmux", "kill-session", "-t", self.tmux], capture_output=True)
        if os.environ.get("TURNSTILE_KEEP"):
            end_sandbox_processes(self.home)
        else:
            # Agents and hooks still write into the sandbox while they exit.
            remove_sandbox(self.dir, self.home)

    def evidence(self):
        """What a failed test leaves behind, for people: the bar and the
        screen, the host's report, the transcripts' tails, the hook bindings
        and the zellij log's last lines."""
        out = [f"--- evidence of session {self.session} ({self.dir})", "bar: " + self.bar(), "screen:", self.screen()]
        status = subprocess.run([turnstile_bin(), "status", "--session", self.session, "--json"], capture_output=True,
                                text=True, env=self.env, timeout=20)
        out += ["host report:", status.stdout.strip() or status.stderr.strip()]
        for pattern in (os.path.join(self.home, ".claude", "projects", "*", "*.jsonl"),
                        os.path.join(self.dir, "tmp", "turnstile-demo", ".claude", "projects", "*", "*.jsonl"),
                        os.path.join(self.home, ".local", "state", "turnstile", "bindings", "*", "*.json"),
                        os.path.join(self.home, ".claude", "sessions", "*.json")):
            for path in sorted(glob.glob(pattern)):
                with open(path, errors="replace") as f:
                    lines = f.readlines()
                out += [f"{path} ({len(lines)} lines, last 12, each cut at 400 chars):"]
                out += [l.rstrip()[:400] for l in lines[-12:]]
        for log in glob.glob(os.path.join(self.dir, "tmp", "zellij-*", "zellij-log", "zellij.log")):
            with open(log, errors="replace") as f:
                out += ["zellij log (last 30 lines):"] + [l.rstrip()[:300] for l in f.readlines()[-30:]]
        return "\n".join(out)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc):
        if exc_type is not None:
            try:
                sys.stderr.write(self.evidence() + "\n")
            except Exception as e:  # evidence is best effort: the failure itself is what counts
                sys.stderr.write(f"(no evidence: {e})\n")
        self.close()


def replay(fixture, speed=1.0, hold=600):
    return [turnstile_bin(), "replay", os.path.join(FIXTURES, fixture), "--speed", str(speed), "--hold", str(hold)]
