"""Real Claude Code for the tests: which release, how to start it offline
against the fake Messages API, and its sandboxed HOME.

Releases: `legacy` is 2.1.39 (`cli.js` on node, always installed by
scripts/test); `native` is the pinned native release (a ~400 MB binary,
installed only when asked: TURNSTILE_E2E_NATIVE=1 or TURNSTILE_E2E_HEAVY=1)."""
import json, os, subprocess

from harness import ROOT, turnstile_bin

KEY = "sk-ant-api03-turnstile-e2e-key-0123456789abcdef"
RELEASES = ("legacy", "native")


def flag(name):
    return os.environ.get(name, "") not in ("", "0", "no", "false")


def heavy():
    """The slow scenarios (8 agents for a minute, every native-release run)."""
    return flag("TURNSTILE_E2E_HEAVY")


def native_wanted():
    return heavy() or flag("TURNSTILE_E2E_NATIVE")


def claude_command(release="legacy"):
    """argv that starts Claude Code of `release` (installed and cached on first use)."""
    env_var = {"legacy": "TURNSTILE_CLAUDE_CLI", "native": "TURNSTILE_CLAUDE_NATIVE"}[release]
    path = os.environ.get(env_var) or subprocess.check_output(
        [os.path.join(ROOT, "scripts", "ensure-claude"), release], text=True).strip()
    return ["node", path] if path.endswith(".js") else [path]


def claude_env(api, retries=1):
    """The environment of an offline Claude Code talking to `api`."""
    return {"IS_SANDBOX": "1", "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": KEY,
            "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "CLAUDE_CODE_MAX_RETRIES": str(retries)}


def permission_args(release, ask):
    """Bypass permissions, or ask before each risky tool call. The native
    release's default is "auto" (approves by itself): ask is "manual" there."""
    if not ask:
        return ["--dangerously-skip-permissions"]
    return ["--permission-mode", "manual" if release == "native" else "default"]


def claude_argv(api, release="legacy", ask=False, retries=1):
    """A pane command: Claude Code with a clean terminal environment."""
    env = ["env", "-u", "TMUX", "-u", "TMUX_PANE", "TERM_PROGRAM="] + [
        f"{k}={v}" for k, v in claude_env(api, retries).items()]
    return env + claude_command(release) + permission_args(release, ask)


def prepare_home(home, work, hooks):
    """Claude Code's first-run answers (and, if asked, our hooks) in a sandbox HOME."""
    os.makedirs(os.path.join(home, ".claude"), exist_ok=True)
    with open(os.path.join(home, ".claude.json"), "w") as f:
        json.dump({"hasCompletedOnboarding": True, "theme": "dark", "bypassPermissionsModeAccepted": True,
                   "customApiKeyResponses": {"approved": [KEY[-20:]], "rejected": []},
                   "projects": {work: {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}}}, f)
    with open(os.path.join(home, ".claude", "settings.json"), "w") as f:
        json.dump({"skipDangerousModePermissionPrompt": True}, f)
    if hooks:
        subprocess.run([turnstile_bin(), "install-hooks"], env={**os.environ, "HOME": home}, check=True,
                       capture_output=True)


def ready(screen):
    """Claude Code drew its input box and footer (2.1.39 and the native release)."""
    return any(s in screen for s in ("shift+tab to cycle", "? for shortcuts", "permissions on"))


def codex_command():
    """argv that starts the pinned Codex CLI (installed and cached on first use)."""
    path = os.environ.get("TURNSTILE_CODEX") or subprocess.check_output(
        [os.path.join(ROOT, "scripts", "ensure-codex")], text=True).strip()
    return [path]


def codex_argv(hooks=True):
    """A pane command: Codex CLI with a clean terminal environment (its home
    is the sandbox's `~/.codex`, prepared by `prepare_codex_home`)."""
    env = ["env", "-u", "TMUX", "-u", "TMUX_PANE", "TERM_PROGRAM="]
    return env + codex_command() + (["--dangerously-bypass-hook-trust"] if hooks else [])


def prepare_codex_home(home, work, api, hooks):
    """Codex's config in a sandbox HOME: the fake provider, the work folder
    trusted (no trust prompt), no retries; our hooks if asked."""
    codex_home = os.path.join(home, ".codex")
    os.makedirs(codex_home, exist_ok=True)
    with open(os.path.join(codex_home, "config.toml"), "w") as f:
        f.write(f'model = "gpt-5.1-codex"\nmodel_provider = "fake"\n\n'
                f'[model_providers.fake]\nname = "fake"\nbase_url = "{api.url}"\nwire_api = "responses"\n'
                f'request_max_retries = 0\nstream_max_retries = 0\n\n'
                f'[projects."{work}"]\ntrust_level = "trusted"\n')
    if hooks:
        subprocess.run([turnstile_bin(), "install-hooks", "--agent", "codex"], env={**os.environ, "HOME": home},
                       check=True, capture_output=True)


def codex_ready(screen):
    """Codex drew its composer."""
    return "Ask Codex to do anything" in screen or "for shortcuts" in screen


def gemini_command():
    """argv that starts the pinned Gemini CLI on node (installed and cached on first use)."""
    path = os.environ.get("TURNSTILE_GEMINI") or subprocess.check_output(
        [os.path.join(ROOT, "scripts", "ensure-gemini")], text=True).strip()
    return ["node", path]


def gemini_argv(api):
    """A pane command: Gemini CLI against the fake Gemini API (its home is the
    sandbox's `~/.gemini`, prepared by `prepare_gemini_home`)."""
    # Gemini CLI runs non-interactively (reads stdin, no TUI) when `CI` is set.
    env = ["env", "-u", "TMUX", "-u", "TMUX_PANE", "-u", "CI", "-u", "CONTINUOUS_INTEGRATION", "TERM_PROGRAM=",
           "GEMINI_API_KEY=fake-key", f"GOOGLE_GEMINI_BASE_URL={api.url}"]
    return env + gemini_command()


def prepare_gemini_home(home, work, hooks, allow_sleep=False):
    """Gemini CLI's settings in a sandbox HOME: API-key auth, a pinned model,
    no update check or telemetry, the work folder trusted; our hooks if
    asked; `sleep` allowed without approval if asked."""
    gemini = os.path.join(home, ".gemini")
    os.makedirs(os.path.join(gemini, "policies"), exist_ok=True)
    with open(os.path.join(gemini, "settings.json"), "w") as f:
        json.dump({"security": {"auth": {"selectedType": "gemini-api-key"}}, "model": {"name": "gemini-2.5-flash"},
                   "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
                   "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False}}, f)
    with open(os.path.join(gemini, "trustedFolders.json"), "w") as f:
        json.dump({work: "TRUST_FOLDER"}, f)
    if allow_sleep:
        with open(os.path.join(gemini, "policies", "allow-sleep.toml"), "w") as f:
            f.write('[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "sleep"\ndecision = "allow"\n'
                    'priority = 100\n')
    if hooks:
        subprocess.run([turnstile_bin(), "install-hooks", "--agent", "gemini"], env={**os.environ, "HOME": home},
                       check=True, capture_output=True)


def gemini_ready(screen):
    """Gemini CLI drew its input box."""
    return "Type your message" in screen


def qwen_command():
    """argv that starts the pinned Qwen Code on node (installed and cached on first use)."""
    path = os.environ.get("TURNSTILE_QWEN") or subprocess.check_output(
        [os.path.join(ROOT, "scripts", "ensure-qwen")], text=True).strip()
    return ["node", path]


def qwen_env(api):
    """The environment of an offline Qwen Code talking to `api` (Chat Completions)."""
    return {"OPENAI_API_KEY": "fake-key", "OPENAI_BASE_URL": api.url, "OPENAI_MODEL": "fake-model"}


def qwen_argv(api):
    """A pane command: Qwen Code against the fake Chat Completions API (its
    home is the sandbox's `~/.qwen`, prepared by `prepare_qwen_home`)."""
    env = ["env", "-u", "TMUX", "-u", "TMUX_PANE", "-u", "CI", "-u", "CONTINUOUS_INTEGRATION", "TERM_PROGRAM="]
    return env + [f"{k}={v}" for k, v in qwen_env(api).items()] + qwen_command()


def qwen_settings(hooks=None):
    """Qwen Code's settings: the OpenAI-compatible provider, a pinned model,
    no update check or telemetry, approvals asked (its default, `auto`, asks
    the model itself), `sleep` allowed unasked."""
    settings = {"security": {"auth": {"selectedType": "openai"}}, "model": {"name": "fake-model"},
                "general": {"enableAutoUpdate": False}, "privacy": {"usageStatisticsEnabled": False},
                "telemetry": {"enabled": False}, "tools": {"approvalMode": "default"},
                "permissions": {"allow": ["Bash(sleep *)"]}}
    if hooks:
        settings["hooks"] = hooks
    return settings


def prepare_qwen_home(home, work, hooks):
    """Qwen Code's settings in a sandbox HOME; our hooks if asked."""
    qwen = os.path.join(home, ".qwen")
    os.makedirs(qwen, exist_ok=True)
    with open(os.path.join(qwen, "settings.json"), "w") as f:
        json.dump(qwen_settings(), f)
    if hooks:
        subprocess.run([turnstile_bin(), "install-hooks", "--agent", "qwen"], env={**os.environ, "HOME": home},
                       check=True, capture_output=True)


def qwen_ready(screen):
    """Qwen Code drew its input box."""
    return "Type your message" in screen


def copilot_command():
    """argv that starts the pinned Copilot CLI (installed and cached on first use)."""
    path = os.environ.get("TURNSTILE_COPILOT") or subprocess.check_output(
        [os.path.join(ROOT, "scripts", "ensure-copilot")], text=True).strip()
    return [path]


def copilot_env(api):
    """The environment of an offline Copilot CLI talking to `api` (its own
    provider, no GitHub account); it unpacks itself once into a shared cache."""
    cache = os.path.join(os.path.expanduser("~"), ".cache", "turnstile", "copilot-pkg")
    return {"COPILOT_OFFLINE": "true", "COPILOT_PROVIDER_BASE_URL": api.url, "COPILOT_PROVIDER_API_KEY": "fake-key",
            "COPILOT_MODEL": "gpt-4.1", "COPILOT_AUTO_UPDATE": "false", "COPILOT_PKG_CACHE_HOME": cache}


def copilot_argv(api):
    """A pane command: Copilot CLI against the fake Chat Completions API,
    `sleep` allowed unasked (its home is the sandbox's `~/.copilot`)."""
    env = ["env", "-u", "TMUX", "-u", "TMUX_PANE", "-u", "CI", "TERM_PROGRAM="]
    return env + [f"{k}={v}" for k, v in copilot_env(api).items()] + copilot_command() + ["--allow-tool", "shell(sleep)"]


def prepare_copilot_home(home, work, hooks=None):
    """Copilot CLI's state in a sandbox HOME: the work folder trusted; `hooks`
    (a hooks.json object) if given."""
    copilot = os.path.join(home, ".copilot")
    os.makedirs(os.path.join(copilot, "hooks"), exist_ok=True)
    with open(os.path.join(copilot, "config.json"), "w") as f:
        json.dump({"trustedFolders": [work]}, f)
    if hooks:
        with open(os.path.join(copilot, "hooks", "hooks.json"), "w") as f:
            json.dump(hooks, f)


def copilot_ready(screen):
    """Copilot CLI drew its input box and footer (a narrow pane drops the
    footer's `← open sidebar`)."""
    return "open sidebar" in screen or "Manual Approval" in screen


def install_copilot_hooks(home):
    """turnstile's hooks into the sandbox's `~/.copilot/hooks/hooks.json`."""
    subprocess.run([turnstile_bin(), "install-hooks", "--agent", "copilot"], env={**os.environ, "HOME": home},
                   check=True, capture_output=True)


def opencode_command():
    """argv that starts the pinned OpenCode (a Bun single-file binary, installed and cached on first use)."""
    path = os.environ.get("TURNSTILE_OPENCODE") or subprocess.check_output(
        [os.path.join(ROOT, "scripts", "ensure-opencode")], text=True).strip()
    return [path]


OPENCODE_OFFLINE = {"OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1",
                    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1"}


def opencode_env(home):
    """The environment of an offline OpenCode whose every folder is under `home`."""
    return {"XDG_CONFIG_HOME": os.path.join(home, ".config"), "XDG_DATA_HOME": os.path.join(home, ".local", "share"),
            "XDG_CACHE_HOME": os.path.join(home, ".cache"), "XDG_STATE_HOME": os.path.join(home, ".local", "state"),
            **OPENCODE_OFFLINE}


def opencode_argv():
    """A pane command: OpenCode against the fake Chat Completions API its
    config names (`prepare_opencode_home`); its folders follow the pane's
    HOME and XDG variables."""
    return offline_pane_argv(OPENCODE_OFFLINE, opencode_command())


def offline_pane_argv(offline, command):
    """A pane command: `command` with the `offline` variables, outside tmux and CI."""
    env = ["env", "-u", "TMUX", "-u", "TMUX_PANE", "-u", "CI", "TERM_PROGRAM="]
    return env + [f"{k}={v}" for k, v in offline.items()] + command


def prepare_opencode_home(home, api, hooks=False, config=None):
    """OpenCode's config (in `config`, default `home/.config`) for a sandbox
    HOME: the fake provider, no updates or sharing, `touch` asks for
    approval (everything else allowed); turnstile's plugin if `hooks`."""
    prepare_eventdb_home("opencode", "opencode.json", home, api, hooks, config,
                         {"$schema": "https://opencode.ai/config.json"})


def prepare_eventdb_home(agent, file, home, api, hooks, config, extra=None):
    """The config file `file` of `agent` (OpenCode or a fork: one schema) in
    `config/<agent>`: the fake provider, no updates or sharing, `touch` asks
    for approval; turnstile's plugin (`install-hooks --agent <agent>`) if `hooks`."""
    config = config or os.path.join(home, ".config")
    folder = os.path.join(config, agent)
    os.makedirs(folder, exist_ok=True)
    provider = {"npm": "@ai-sdk/openai-compatible", "name": "Fake", "options": {"baseURL": api.url, "apiKey": "x"},
                "models": {"fake-model": {"name": "Fake Model", "tool_call": True}}}
    settings = {**(extra or {}), "model": "fake/fake-model",
                "small_model": "fake/fake-model", "autoupdate": False, "share": "disabled",
                "provider": {"fake": provider}, "permission": {"bash": {"*": "allow", "touch *": "ask"}}}
    with open(os.path.join(folder, file), "w") as f:
        json.dump(settings, f)
    if hooks:
        subprocess.run([turnstile_bin(), "install-hooks", "--agent", agent],
                       env={**os.environ, "HOME": home, "XDG_CONFIG_HOME": config}, check=True, capture_output=True)


def opencode_ready(screen):
    """OpenCode drew its input box."""
    return "Ask anything" in screen


def kilo_command():
    """argv that starts the pinned Kilo CLI (a Bun single-file binary, installed and cached on first use)."""
    path = os.environ.get("TURNSTILE_KILO") or subprocess.check_output(
        [os.path.join(ROOT, "scripts", "ensure-kilo")], text=True).strip()
    return [path]


KILO_OFFLINE = {"KILO_DISABLE_MODELS_FETCH": "1", "KILO_DISABLE_AUTOUPDATE": "1",
                "KILO_DISABLE_LSP_DOWNLOAD": "1", "KILO_DISABLE_SESSION_INGEST": "1"}


def kilo_env(home):
    """The environment of an offline Kilo CLI whose every folder is under `home`."""
    return {**opencode_env(home), **KILO_OFFLINE}


def kilo_argv():
    """A pane command: Kilo CLI against the fake Chat Completions API its
    config names (`prepare_kilo_home`); its folders follow the pane's HOME
    and XDG variables."""
    return offline_pane_argv(KILO_OFFLINE, kilo_command())


def prepare_kilo_home(home, api, hooks=False, config=None):
    """Kilo CLI's config (`kilo.json`, OpenCode's schema) for a sandbox HOME,
    as `prepare_opencode_home` writes OpenCode's; turnstile's plugin if `hooks`."""
    prepare_eventdb_home("kilo", "kilo.json", home, api, hooks, config)


def kilo_ready(screen):
    """Kilo CLI drew its input box."""
    return "Ask anything" in screen
