//! `turnstile setup` and `turnstile doctor`: print what the host library
//! planned, did or found, for people or (`--json`) for scripts.

use anyhow::{bail, Result};
use serde_json::json;
use std::io::{self, BufRead, IsTerminal, Write};
use turnstile_host::doctor;
use turnstile_host::setup::{self, remote, Action, Plan};

/// What `setup` was asked.
pub struct SetupOptions {
    /// Write without asking.
    pub yes: bool,
    /// Print the plan, write nothing.
    pub dry_run: bool,
    /// Put back what an earlier setup changed.
    pub undo: bool,
    /// JSON instead of lines.
    pub json: bool,
    /// Ready this other machine instead (`--remote HOST`).
    pub remote: Option<String>,
    /// Only the hooks of the agents found.
    pub hooks_only: bool,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Runs `setup`; exit code 0 when done (or nothing to do).
pub fn run(options: &SetupOptions) -> Result<i32> {
    if let Some(host) = &options.remote {
        return remote(options, host);
    }
    if options.undo {
        return undo(options);
    }
    let plan = match options.hooks_only {
        true => setup::plan_hooks(&env)?,
        false => setup::plan(&env)?,
    };
    if options.dry_run || plan.is_empty() {
        print_plan(
            &plan,
            options.json,
            if plan.is_empty() {
                "nothing to change"
            } else {
                "dry run: nothing written"
            },
        );
        return Ok(0);
    }
    if !options.yes {
        print_plan(&plan, false, "to be written");
        confirm("Write these files?")?;
    }
    let (done, verdict) = match options.hooks_only {
        true => (setup::apply_hooks(&env)?, "done: the hooks are in"),
        false => (setup::apply(&env)?, "done: start `zellij` and the bar is in every tab"),
    };
    print_plan(&done, options.json, verdict);
    Ok(0)
}

/// `setup --remote HOST` (and its `--undo`).
fn remote(options: &SetupOptions, host: &str) -> Result<i32> {
    if options.undo {
        if !options.yes && !options.dry_run {
            for step in remote::undo(&env, host, true)? {
                println!("  {step}");
            }
            confirm("Undo these?")?;
        }
        let steps = remote::undo(&env, host, options.dry_run)?;
        print_steps(&steps, options.json, options.dry_run);
        return Ok(0);
    }
    let plan = remote::plan(&env, host)?;
    let copy = match (&plan.installed, plan.copy) {
        (_, true) => format!("copy {} to {host}:{}", plan.version, remote::REMOTE_BINARY),
        (Some(there), false) => format!("keep {there} on {host} (this version)"),
        (None, false) => String::new(),
    };
    let lines = [
        format!("{host}: {}", plan.system),
        copy,
        format!("install the hooks of the agents found on {host} (`turnstile setup --hooks-only` there)"),
        format!(
            "{}: send the pane's ids to {host} (SendEnv, a block at the top)",
            plan.ssh_config.display()
        ),
    ];
    if options.dry_run || !options.yes {
        if options.json {
            println!("{}", json!({ "status": "dry run: nothing written", "plan": plan }));
        } else {
            lines.iter().filter(|l| !l.is_empty()).for_each(|l| println!("  {l}"));
        }
        if options.dry_run {
            return Ok(0);
        }
        confirm("Do this?")?;
    }
    let steps = remote::apply(&env, &plan)?;
    print_steps(&steps, options.json, false);
    Ok(0)
}

fn print_steps(steps: &[String], as_json: bool, dry_run: bool) {
    match as_json {
        true => println!("{}", json!({ "dry_run": dry_run, "steps": steps })),
        false => steps.iter().for_each(|s| println!("  {s}")),
    }
}

fn undo(options: &SetupOptions) -> Result<i32> {
    if !options.yes && !options.dry_run {
        let planned = setup::undo(&env, true)?;
        if planned.is_empty() {
            println!("setup has changed nothing here: nothing to undo");
            return Ok(0);
        }
        for u in &planned {
            println!("  {:<9} {}", u.action, u.path.display());
        }
        confirm("Undo these?")?;
    }
    let done = setup::undo(&env, options.dry_run)?;
    if options.json {
        println!("{}", json!({ "dry_run": options.dry_run, "files": done }));
        return Ok(0);
    }
    if done.is_empty() {
        println!("setup has changed nothing here: nothing to undo");
    }
    for u in &done {
        let note = u.note.as_deref().map_or(String::new(), |n| format!(" ({n})"));
        println!("  {:<9} {}{note}", u.action, u.path.display());
    }
    Ok(0)
}

fn print_plan(plan: &Plan, as_json: bool, verdict: &str) {
    if as_json {
        println!("{}", json!({ "status": verdict, "plan": plan }));
        return;
    }
    match plan.base_layout.is_empty() {
        true => println!("turnstile setup --hooks-only: the hooks of the agents found"),
        false => println!("turnstile setup: the bar in the layout {:?}", plan.base_layout),
    }
    for change in &plan.changes {
        let action = match change.action {
            Action::Create => "create",
            Action::Change => "change",
            Action::Keep => "keep",
        };
        println!("  {action:<7} {}  ({})", change.path.display(), change.what);
    }
    if plan.agents.is_empty() {
        println!("  no agent found on PATH or in its home folder: run `turnstile setup` again after installing one");
    }
    for note in &plan.notes {
        println!("  note: {note}");
    }
    println!("{verdict}");
}

/// Asks on the terminal; refuses without one (scripts pass `--yes`).
fn confirm(question: &str) -> Result<()> {
    if !io::stdin().is_terminal() {
        bail!("nothing written: stdin is not a terminal to ask on; pass --yes to write (or --dry-run to see only)");
    }
    print!("{question} [y/N] ");
    io::stdout().flush()?;
    let mut answer = String::new();
    io::stdin().lock().read_line(&mut answer)?;
    if !matches!(answer.trim(), "y" | "Y" | "yes") {
        bail!("nothing written");
    }
    Ok(())
}

/// Runs `doctor`: exit 0 when nothing is wrong, 1 otherwise.
pub fn doctor(as_json: bool) -> Result<i32> {
    let d = doctor::diagnose(&env);
    match as_json {
        true => println!("{}", serde_json::to_string_pretty(&d)?),
        false => print!("{}", doctor::table(&d)),
    }
    Ok(if d.ok { 0 } else { 1 })
}
