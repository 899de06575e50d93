//! Command-line parsing and the subcommands of `turnstile`.

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use serde_json::{json, Value};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use turnstile_core::agent::AgentKind;
use turnstile_core::ansi;
use turnstile_core::transcript::TranscriptVerdict;
use turnstile_host::rules::{Loaded, Reloader};
use turnstile_host::simulate::SimOptions;
use turnstile_host::{files, home, hooks, mailbox, relay, report, state, watch};

// Commands.
mod demo_agent;
mod explain;
mod replay;
mod setup;
mod wait;

const STATES_HELP: &str = "\
STATES
  working      a turn is running (model streaming, tool running, retrying, sub-agents busy)
  done         the turn ended normally; the answer is final
  failed       the turn ended with an API error (HTTP 400, retries exhausted, …)
  interrupted  the user pressed Escape
  waiting      the agent needs the user (permission prompt, dialog)
  idle         the agent is at its prompt; this source cannot tell how the turn ended
  unknown      nothing decisive yet (no prompt, no status line)

SOURCES
  transcript   the JSONL session transcript: authoritative
  hook         a Claude Code hook event: authoritative
  session      ~/.claude/sessions/<pid>.json status
  screen       the visible pane: a fast guess, never routed on

EXIT CODES
  0  a verdict was printed    2  the input could not be read (one line on stderr)
  wait: 0 reached, 3 timed out, 4 the pane's agent or the session is gone";

/// Knows whether the coding agent in a pane is working, done, failed, interrupted or waiting.
#[derive(Parser, Debug)]
#[command(name = "turnstile", version = turnstile_core::identity::LABEL, about, after_help = STATES_HELP)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// The rules file of user-defined agents (default: $TURNSTILE_RULES,
    /// else ~/.config/turnstile/agents.kdl).
    #[arg(long, global = true, value_name = "FILE")]
    rules: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Classify a screen dump (ANSI escapes allowed): {"state", "line", "rule", …}.
    Screen {
        /// A file holding the screen, or `-` for stdin.
        #[arg(default_value = "-")]
        file: PathBuf,
        #[arg(long, default_value = "claude", value_parser = parse_agent,
              help = format!("Whose screen: {}", AgentKind::names_for_help(true, true)))]
        agent: AgentKind,
        /// The pane's terminal title (Codex shows its state there too).
        #[arg(long, default_value = "")]
        title: String,
    },
    /// Classify an agent's log from its tail: {"state", "answer", …}. Any
    /// log the watcher reads: a Claude Code transcript, a Codex rollout, a
    /// Gemini CLI or Qwen Code chat log, a Copilot CLI `events.jsonl`,
    /// OpenCode's database (its newest session; or `opencode.db/<session
    /// id>`) or a rules file's agent's log, told apart by path and first
    /// bytes unless `--agent` names the kind.
    Transcript {
        /// The log file.
        file: PathBuf,
        #[arg(long, value_parser = parse_agent,
              help = format!("Whose log it is: {}", AgentKind::names_for_help(false, true)))]
        agent: Option<AgentKind>,
    },
    /// Classify a Claude Code session status file (~/.claude/sessions/<pid>.json).
    Session {
        /// The status file.
        file: PathBuf,
    },
    /// For a zellij session, find the agent in each pane and classify its
    /// transcript and session status (what the plugin runs).
    Status {
        /// The zellij session (default: $ZELLIJ_SESSION_NAME).
        #[arg(long)]
        session: Option<String>,
        /// Only these terminal pane ids (comma-separated); default: every agent pane.
        #[arg(long, value_delimiter = ',')]
        panes: Vec<u32>,
        /// Print the JSON report instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Make plain `zellij` show the bar in every tab: write the plugin,
    /// grant its permissions, add the bar to your default layout, install
    /// the hooks of every agent found. Prints each file first; --undo puts
    /// them back.
    Setup {
        /// Write without asking.
        #[arg(long, short)]
        yes: bool,
        /// Print what would be written; write nothing.
        #[arg(long)]
        dry_run: bool,
        /// Put back every file an earlier setup changed, byte for byte.
        #[arg(long)]
        undo: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Ready another machine for agents the bar follows over ssh: copy
        /// this turnstile there, install its agents' hooks there, send the
        /// pane's ids (SendEnv in ~/.ssh/config). With --undo, take it back.
        #[arg(long, value_name = "HOST", conflicts_with = "hooks_only")]
        remote: Option<String>,
        /// Only install the hooks of the agents found (what --remote runs on
        /// the other machine, where no zellij runs).
        #[arg(long)]
        hooks_only: bool,
    },
    /// Say why the bar shows `✓?`, or nothing: zellij, the plugin, the
    /// layout, each agent's hooks, each live session. Exit 1 when something
    /// is wrong, each problem with the command that fixes it.
    Doctor {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Block until a pane's agent reaches a state: exit 0, 3 on timeout, 4 if the pane or session is gone.
    Wait {
        /// The terminal pane id.
        #[arg(long)]
        pane: u32,
        /// The state to wait for.
        #[arg(long, value_enum, default_value = "done")]
        until: wait::Until,
        /// Give up after this many seconds.
        #[arg(long)]
        timeout: Option<f64>,
        /// The zellij session (default: $ZELLIJ_SESSION_NAME).
        #[arg(long)]
        session: Option<String>,
    },
    /// Pull what the session's watcher posted after change number `--after`,
    /// waiting up to `--wait-ms` for news: {"at", "seq", "panes"} (the bar's
    /// leader runs it again and again; `seq` is the next `--after`). One
    /// answer holds at most about 16 KiB of the journal: pull again from
    /// `seq` for the rest.
    Pull {
        /// The number of the newest change already taken (0: everything).
        #[arg(long, default_value_t = 0)]
        after: u64,
        /// How long to wait for a change when there is none yet.
        #[arg(long, default_value_t = 5000)]
        wait_ms: u64,
        /// The zellij session (default: $ZELLIJ_SESSION_NAME).
        #[arg(long)]
        session: Option<String>,
    },
    /// Watch the session's transcripts and status files and post verdict
    /// changes to its mailbox (one per session; exits with the zellij server).
    Watch {
        /// The zellij session (default: $ZELLIJ_SESSION_NAME).
        #[arg(long)]
        session: Option<String>,
    },
    /// On a machine the zellij session does not run on (over ssh): follow
    /// the agents there that name the session and write their reports to
    /// stdout, one JSON line each (exits when stdout closes).
    Relay {
        /// The zellij session (default: $ZELLIJ_SESSION_NAME).
        #[arg(long)]
        session: Option<String>,
    },
    /// Play a recorded Claude Code session in this terminal (screens, transcript, status file).
    Replay {
        /// A recording folder (frames.json, transcript.jsonl), as in tests/fixtures.
        dir: PathBuf,
        /// The Claude home to write the transcript into (default: $CLAUDE_CONFIG_DIR or ~/.claude).
        #[arg(long)]
        home: Option<PathBuf>,
        /// Playback speed factor.
        #[arg(long, default_value_t = 1.0)]
        speed: f64,
        /// Seconds to stay alive after the last frame (default: forever).
        #[arg(long)]
        hold: Option<f64>,
    },
    /// Open the demo: four simulated agents (Claude Code, Qwen Code, Gemini CLI, Codex) and the bar in a zellij session of their own. No account, no network; none of your zellij files is touched.
    Demo,
    /// A simulated agent of any kind (its screen, title, log; Claude Code's status file) for demos and tests.
    DemoAgent {
        /// Shown in prompts and answers.
        #[arg(long, default_value = "agent")]
        name: String,
        #[arg(long, default_value = "claude", value_parser = parse_agent,
              help = format!("The agent to play: {}", AgentKind::names_for_help(true, false)))]
        kind: AgentKind,
        /// Its home to write into (default: $TMPDIR/turnstile-demo/.<kind>).
        #[arg(long)]
        home: Option<PathBuf>,
        /// Outcomes of the turns in order, e.g. `done,fail,wait,interrupt` (default: random, forever).
        #[arg(long, default_value = "")]
        script: String,
        /// Seed of the random outcomes and verbs.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Time scale (1.0 default pace, 0.5 twice as fast).
        #[arg(long, default_value_t = 1.0)]
        pace: f64,
        /// Stop after this many turns and stay at the prompt.
        #[arg(long)]
        turns: Option<u32>,
        /// Take prompts typed or pasted into the terminal (routed answers).
        #[arg(long)]
        listen: bool,
        /// Swallow the first N Enters that would submit a prompt, as a TUI
        /// still busy starting up does (the text stays in its input box; a
        /// later bare Enter submits it).
        #[arg(long, default_value_t = 0)]
        drop_enters: u32,
        /// Drop everything typed or pasted for this long after start, as a
        /// TUI still starting up on a busy machine does.
        #[arg(long, default_value_t = 0)]
        deaf_ms: u64,
    },
    /// What Claude Code runs for its hook events: reads the event on stdin,
    /// records the pane binding, pushes the verdict to the plugin. Always exits 0.
    Hook {
        #[arg(long, default_value = "claude", value_parser = parse_agent,
              help = format!("The agent that runs the hook: {}", AgentKind::names_for_help(true, true)))]
        agent: AgentKind,
        /// The event, for agents whose payload does not name it (Copilot CLI).
        #[arg(long)]
        event: Option<String>,
    },
    /// Report this pane's state from any program running in it (a build
    /// script, a test run, an agent turnstile does not know): the bar shows
    /// it as a hook's, and a flow routes a reported done's answer.
    /// Examples: `turnstile report working`; `turnstile report done
    /// --answer-file out.md`; `turnstile report waiting --message "approve
    /// deploy?"`; `turnstile report clear`.
    Report {
        /// working, done, failed, interrupted, waiting or idle (the Program
        /// Status Protocol's idle, working, done, blocked, error too), or
        /// clear (off the bar).
        state: String,
        /// The answer of a done turn, from this file (`-`: standard input).
        #[arg(long)]
        answer_file: Option<PathBuf>,
        /// Why, shown by `explain` and in the pane's reason.
        #[arg(long)]
        message: Option<String>,
    },
    /// Add turnstile's hooks to Claude Code's settings, or Codex's
    /// hooks.json with `--agent codex` (a backup is kept).
    InstallHooks {
        #[arg(long, default_value = "claude", value_parser = parse_agent,
              help = format!("Whose hooks: {}", AgentKind::names_for_help(true, false)))]
        agent: AgentKind,
        /// The project's .claude/settings.json instead of the user's.
        #[arg(long)]
        project: bool,
        /// Print the resulting settings instead of writing them.
        #[arg(long)]
        dry_run: bool,
        /// Also hook StopFailure (recent releases only: older ones reject the
        /// whole settings file over an unknown event).
        #[arg(long)]
        stop_failure: bool,
    },
    /// Remove turnstile's hooks from Claude Code's settings or Codex's
    /// hooks.json (a backup is kept).
    UninstallHooks {
        #[arg(long, default_value = "claude", value_parser = parse_agent,
              help = format!("Whose hooks: {}", AgentKind::names_for_help(true, false)))]
        agent: AgentKind,
        /// The project's .claude/settings.json instead of the user's.
        #[arg(long)]
        project: bool,
        /// Print the resulting settings instead of writing them.
        #[arg(long)]
        dry_run: bool,
    },
    /// The rules file of user-defined agents: which file, its agents, or
    /// its first problem with its line (`--json`: what the bar reads;
    /// otherwise a broken file exits 2).
    Rules {
        /// Print JSON: {"path", "rules", "problem"}.
        #[arg(long)]
        json: bool,
    },
    /// Explain for people which line decided and why.
    Explain {
        /// A transcript (.jsonl) or a screen dump.
        file: PathBuf,
        /// What the file is; guessed from its content when not given.
        #[arg(long = "as", value_enum)]
        kind: Option<InputKind>,
        #[arg(long, value_parser = parse_agent, help = format!(
            "Whose screen or log it is: {}. A screen is Claude Code's unless told; \
             a log's kind is guessed from its name and first bytes",
            AgentKind::names_for_help(false, true)))]
        agent: Option<AgentKind>,
        /// The pane's terminal title, for a screen dump.
        #[arg(long, default_value = "")]
        title: String,
    },
}

/// What kind of input a file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum InputKind {
    /// A screen dump.
    Screen,
    /// A JSONL transcript.
    Transcript,
}

/// The `--rules` option's value, read before the arguments are parsed:
/// agent names in them (`--agent aider`) need the rules loaded.
fn rules_option(args: impl Iterator<Item = std::ffi::OsString>) -> Option<PathBuf> {
    let args: Vec<std::ffi::OsString> = args.collect();
    args.iter().enumerate().find_map(|(i, arg)| {
        let arg = arg.to_str()?;
        match arg.strip_prefix("--rules") {
            Some("") => args.get(i + 1).map(PathBuf::from),
            Some(value) => value.strip_prefix('=').map(PathBuf::from),
            None => None,
        }
    })
}

/// The rules file, loaded on first need: by the commands that recognise
/// agents, and by an agent name no built-in kind has. The others (`pull`,
/// `report`, a built-in kind's `hook`, run again and again) never read it.
fn rules() -> &'static Loaded {
    static LOADED: OnceLock<Loaded> = OnceLock::new();
    LOADED.get_or_init(|| turnstile_host::rules::load(rules_option(std::env::args_os()).as_deref()))
}

/// Runs the CLI and returns the process exit code.
pub fn run() -> i32 {
    let cli = Cli::parse();
    if let Command::Rules { json } = cli.command {
        return print_rules(rules(), json);
    }
    let outcome = match cli.command {
        Command::Wait {
            pane,
            until,
            timeout,
            session,
        } => {
            rules();
            wait::run(session, pane, until, timeout)
        }
        Command::Watch { session } => watch::run(session, Reloader::load(cli.rules).0).map_err(anyhow::Error::from),
        Command::Relay { session } => relay::run(session, Reloader::load(cli.rules).0).map_err(anyhow::Error::from),
        Command::Setup {
            yes,
            dry_run,
            undo,
            json,
            remote,
            hooks_only,
        } => setup::run(&setup::SetupOptions {
            yes,
            dry_run,
            undo,
            json,
            remote,
            hooks_only,
        }),
        Command::Doctor { json } => setup::doctor(json),
        Command::Demo => demo(),
        command => dispatch(command).map(|()| 0),
    };
    match outcome {
        Ok(code) => code,
        Err(e) => {
            eprintln!("turnstile: {e:#}");
            2
        }
    }
}

/// `turnstile rules`: JSON for the bar (exit 0 whatever it says), or text
/// for people (exit 2 for a broken file).
fn print_rules(loaded: &Loaded, json: bool) -> i32 {
    if json {
        let answer = Loaded {
            zellij: turnstile_host::zellij::server_version(),
            ..loaded.clone()
        };
        return match serde_json::to_value(&answer)
            .map_err(anyhow::Error::from)
            .and_then(|v| print_json(&v))
        {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("turnstile: {e:#}");
                2
            }
        };
    }
    let path = loaded.path.as_deref().unwrap_or("(none)");
    let mut out = format!("rules file: {path}\n");
    for agent in &loaded.rules.agents {
        let replaces = agent
            .replaces
            .map(|k| format!(", replaces {}", k.name()))
            .unwrap_or_default();
        let log = agent
            .log
            .as_ref()
            .map(|log| format!(", log {} ({} line rules)", log.glob.as_str(), log.lines.len()))
            .unwrap_or_default();
        out.push_str(&format!(
            "agent {} (tag {}, line {}): {} screen rules, {} hook rules{log}{replaces}\n",
            agent.name,
            agent.tag,
            agent.line,
            agent.screen.len(),
            agent.hooks.len()
        ));
    }
    if loaded.rules.agents.is_empty() && loaded.problem.is_none() {
        out.push_str("no user-defined agents\n");
    }
    for note in &loaded.notes {
        out.push_str(&format!("note: agent {}: {}\n", note.agent, note.message));
    }
    let _ = write_out(&out);
    match loaded.problem_line() {
        Some(problem) => {
            eprintln!("turnstile: {problem}");
            2
        }
        None => 0,
    }
}

fn dispatch(command: Command) -> Result<()> {
    match command {
        Command::Screen { file, agent, title } => print_json(&screen_json(&read_text(&file)?, agent, &title)),
        Command::Transcript { file, agent } => {
            rules(); // a rules file's agent's log is read by its rules, as `explain` reads it
            let kind = agent.unwrap_or_else(|| report::kind_of_transcript(&file));
            let log = report::log_named(&file, kind)?;
            print_json(&transcript_json(&report::classify_file(&log, kind, false)?))
        }
        Command::Session { file } => print_json(&session_json(&read_bytes(&file)?)?),
        Command::Status { session, panes, json } => {
            rules();
            let report = report::host_report(session, &panes)?;
            if json {
                print_json(&serde_json::to_value(&report)?)
            } else {
                write_out(&status_table(&report))
            }
        }
        Command::Replay { dir, home, speed, hold } => replay::run(replay::ReplayOptions { dir, home, speed, hold }),
        Command::DemoAgent {
            name,
            kind,
            home,
            script,
            seed,
            pace,
            turns,
            listen,
            drop_enters,
            deaf_ms,
        } => demo_agent::run(
            kind,
            &SimOptions {
                name,
                home: match home {
                    Some(home) => home,
                    None => private_demo_home(kind)?,
                },
                script,
                seed,
                pace,
                turns,
                listen,
                drop_enters,
                deaf_ms,
            },
        ),
        Command::Wait { pane, .. } => bail!("wait for pane {pane} is handled by run"),
        Command::Rules { .. } => bail!("rules is handled by run"),
        Command::Demo => bail!("demo is handled by run"),
        Command::Watch { .. } | Command::Relay { .. } => bail!("watch and relay are handled by run"),
        Command::Setup { .. } | Command::Doctor { .. } => bail!("setup and doctor are handled by run"),
        Command::Pull {
            after,
            wait_ms,
            session,
        } => print_json(&pull_json(after, wait_ms, session)?),
        Command::Hook { agent, event } => {
            hooks::run_hook(agent, event);
            Ok(())
        }
        Command::Report {
            state,
            answer_file,
            message,
        } => Ok(turnstile_host::program::report(&turnstile_host::program::Report {
            state,
            answer_file,
            message,
        })?),
        Command::InstallHooks {
            agent,
            project,
            dry_run,
            stop_failure,
        } => install_hooks(agent, project, dry_run, false, stop_failure),
        Command::UninstallHooks {
            agent,
            project,
            dry_run,
        } => install_hooks(agent, project, dry_run, true, false),
        Command::Explain {
            file,
            kind,
            agent,
            title,
        } => {
            let kind = match kind {
                Some(k) => k,
                None => guess_kind(&file)?,
            };
            let text = match kind {
                InputKind::Screen => {
                    let agent = agent.unwrap_or_default();
                    explain::screen(&read_text(&file)?, agent, &title, rules().path.as_deref())
                }
                InputKind::Transcript => explain::transcript(&file, agent)?,
            };
            write_out(&text)
        }
    }
}

/// The demo's default home (`$TMPDIR/turnstile-demo/.<kind>`), its shared
/// root made or checked as a private folder of this user's: one another
/// user planted there (a symlink to a folder of theirs) is refused.
/// `turnstile demo`: replaces this process with the demo's zellij (in a
/// terminal only: zellij needs one).
fn demo() -> Result<i32> {
    use std::io::IsTerminal;
    use std::os::unix::process::CommandExt;
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        bail!("turnstile demo opens zellij, which needs a terminal: run it in one");
    }
    let exe = std::env::current_exe().context("cannot find the turnstile executable")?;
    let run = turnstile_host::demo::prepare(&|name| std::env::var(name).ok(), &exe)?;
    let error = std::process::Command::new(&run.program)
        .args(&run.args)
        .envs(run.env)
        .exec();
    Err(anyhow::Error::from(error).context(format!("cannot run {}", run.program.display())))
}

fn private_demo_home(kind: AgentKind) -> Result<PathBuf> {
    let home = home::demo_home(kind, None);
    if let Some(root) = home.parent() {
        state::ensure_private(root).with_context(|| "the demo's folder in the temporary folder")?;
    }
    Ok(home)
}

fn parse_agent(name: &str) -> Result<AgentKind, String> {
    let user_kind = || {
        rules();
        AgentKind::parse(name)
    };
    AgentKind::built_in(name).or_else(user_kind).ok_or_else(|| {
        // The agent may be one the broken rules file would have defined.
        if let Some(problem) = rules().problem_line() {
            return format!("unknown agent `{name}`: the {problem}");
        }
        let known: Vec<&str> = AgentKind::agents().map(|a| a.name()).collect();
        format!(
            "unknown agent `{name}` ({}; more in a rules file: `turnstile rules`)",
            known.join(", ")
        )
    })
}

fn install_hooks(agent: AgentKind, project: bool, dry_run: bool, uninstall: bool, recent_events: bool) -> Result<()> {
    let summary = hooks::install(&hooks::InstallOptions {
        agent,
        project,
        dry_run,
        uninstall,
        recent_events,
    })?;
    eprintln!("turnstile: {summary}");
    Ok(())
}

/// Largest screen dump or session file read whole (`screen`, `session`,
/// `explain` of a screen): far above any real one, far below what would
/// exhaust memory.
const MAX_INPUT_BYTES: u64 = 16 << 20;

fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    if path != Path::new("-") {
        return files::read_capped(path, MAX_INPUT_BYTES).with_context(|| format!("cannot read {}", path.display()));
    }
    let mut bytes = Vec::new();
    io::stdin()
        .take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .context("cannot read stdin")?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        bail!("stdin holds more than {MAX_INPUT_BYTES} bytes");
    }
    Ok(bytes)
}

fn read_text(path: &Path) -> Result<String> {
    Ok(String::from_utf8_lossy(&read_bytes(path)?).into_owned())
}

fn screen_json(text: &str, agent: AgentKind, title: &str) -> Value {
    let plain = ansi::strip(text);
    let rows: Vec<String> = plain.lines().map(str::to_owned).collect();
    let v = agent.classify_screen(&rows, title);
    json!({
        "state": v.state,
        "source": "screen",
        "line": v.line,
        "row": v.row,
        "rule": v.rule.id(),
        "active": v.active,
    })
}

fn transcript_json(v: &TranscriptVerdict) -> Value {
    let mut out = serde_json::to_value(v).unwrap_or_else(|_| json!({}));
    if let Some(map) = out.as_object_mut() {
        map.insert("source".into(), json!("transcript"));
    }
    out
}

fn session_json(bytes: &[u8]) -> Result<Value> {
    let status = turnstile_core::agent::status::parse(bytes)?;
    Ok(json!({
        "state": status.state.unwrap_or_default(),
        "source": "session",
        "status": status.word,
        "waiting_for": status.waiting_for,
        "session_id": status.session_id,
        "pid": status.pid,
    }))
}

fn status_table(report: &turnstile_core::protocol::HostReport) -> String {
    let mut out = String::from("PANE  STATE        SOURCE      SINCE                     PID      TRANSCRIPT\n");
    for pane in &report.panes {
        let Some(agent) = &pane.agent else {
            continue;
        };
        let first = pane.verdicts.first();
        out.push_str(&format!(
            "{:<5} {:<12} {:<11} {:<25} {:<8} {}\n",
            pane.pane,
            first.map_or("unknown", |v| v.state.as_str()),
            first.map_or("-", |v| v.source.as_str()),
            pane.since.as_deref().unwrap_or("-"),
            agent.pid,
            agent.transcript.as_deref().unwrap_or("-"),
        ));
    }
    out
}

fn guess_kind(path: &Path) -> Result<InputKind> {
    let mut head = Vec::new();
    files::open_regular(path)
        .and_then(|f| f.take(64 << 10).read_to_end(&mut head))
        .with_context(|| format!("cannot read {}", path.display()))?;
    let first = head.iter().find(|b| !b.is_ascii_whitespace());
    // A log kept in a database (its kind told by the file's first bytes).
    let is_database = turnstile_host::store::of(AgentKind::of_log("", "", &head)).is_some();
    let is_jsonl = path.extension().is_some_and(|e| e == "jsonl") || first == Some(&b'{') || is_database;
    Ok(if is_jsonl {
        InputKind::Transcript
    } else {
        InputKind::Screen
    })
}

fn print_json(value: &Value) -> Result<()> {
    write_out(&format!("{value}\n"))
}

fn write_out(text: &str) -> Result<()> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        // A closed pipe (`| head`) is not an error worth a message.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("cannot write to stdout"),
    }
}

/// The reports the session's watcher posted after `after`, as the bar reads them.
fn pull_json(after: u64, wait_ms: u64, session: Option<String>) -> Result<Value> {
    let session = session
        .or_else(|| std::env::var("ZELLIJ_SESSION_NAME").ok())
        .context("no zellij session: pass --session or run inside zellij")?;
    let folder = state::mailbox_folder(&session).context("cannot use the mailbox's folder")?;
    let wait = std::time::Duration::from_millis(wait_ms.min(60_000));
    let (seq, panes) = mailbox::pull(&folder, after, wait).context("cannot read the watcher's mailbox")?;
    let report = turnstile_core::protocol::HostReport {
        session: Some(session),
        at: turnstile_host::clock::now_ms(),
        panes,
        seq: Some(seq),
    };
    Ok(serde_json::to_value(report)?)
}
