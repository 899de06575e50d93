//! `turnstile setup --remote HOST`: what the agents on another machine need
//! for the bar to know them as well as local ones, over the user's own
//! `ssh` (`$TURNSTILE_SSH`, default `ssh`, in `BatchMode`):
//!
//! - this `turnstile` copied to `HOST:~/.local/bin/turnstile` (where the
//!   relay link looks for it), unless the same version is there; another
//!   system or architecture is refused, with the reason;
//! - the hooks of the agents found there (`turnstile setup --hooks-only`
//!   run there, which keeps its own undo record);
//! - in `~/.ssh/config` here, a `Host HOST` block that sends the pane's
//!   ids (`SendEnv ZELLIJ_PANE_ID ZELLIJ_SESSION_NAME`), at the top with a
//!   `Match all` after it so every line of the file keeps its meaning;
//! - a probe of whether HOST's sshd accepts them (`AcceptEnv ZELLIJ_*` is
//!   the server's to say: turnstile cannot change it, it says so).
//!
//! `--undo` takes each back: the hooks there (`setup --undo` there), the
//! copy, and the block here (only the block: the rest of the file as it is).

use crate::error::{Context, Error, Result};
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Where the copy goes on the other machine (`~` is its HOME).
pub const REMOTE_BINARY: &str = "~/.local/bin/turnstile";

/// The lines around the block setup adds to the ssh config.
fn block_marks(host: &str) -> (String, String) {
    (
        format!("# turnstile setup --remote {host}: the pane's ids go along (--undo removes this block)"),
        format!("# end of turnstile's block for {host}"),
    )
}

/// What a run found and would do.
#[derive(Debug, Clone, Serialize)]
pub struct RemotePlan {
    /// The other machine, as `ssh` names it.
    pub host: String,
    /// Its system and architecture (`uname -sm`).
    pub system: String,
    /// The `turnstile` already there (its `--version`), if any.
    pub installed: Option<String>,
    /// This `turnstile`'s version.
    pub version: String,
    /// True when the copy is needed (none there, or another version).
    pub copy: bool,
    /// The ssh config file here.
    pub ssh_config: PathBuf,
    /// The file as it would be after the run (`None`: as it is).
    #[serde(skip)]
    config_text: Option<String>,
}

/// How the other machine's `ssh` is run (`$TURNSTILE_SSH`, split on
/// spaces; default `ssh`).
fn ssh_command(var: super::Env, options: &[&str], host: &str) -> Command {
    let words = var("TURNSTILE_SSH").unwrap_or_else(|| "ssh".to_owned());
    let mut words = words.split_whitespace();
    let mut command = Command::new(words.next().unwrap_or("ssh"));
    command
        .args(words)
        .args(["-o", "BatchMode=yes", "-o", "ConnectTimeout=10"])
        .args(options)
        .args(["--", host]);
    command
}

/// Runs `script` on `host` (with `input` on its stdin); its stdout.
fn run_there(var: super::Env, host: &str, script: &str, input: Option<&[u8]>) -> Result<String> {
    let mut command = ssh_command(var, &[], host);
    command.arg(script).stdout(Stdio::piped()).stderr(Stdio::piped());
    command.stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() });
    let mut child = command.spawn().context("cannot run ssh")?;
    if let (Some(bytes), Some(mut stdin)) = (input, child.stdin.take()) {
        stdin.write_all(bytes).context("cannot send the copy over ssh")?;
    }
    let out = child.wait_with_output().context("ssh did not end")?;
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        return Err(Error::msg(format!("ssh {host} failed ({}): {said}", out.status)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The ssh config file here: `$HOME/.ssh/config`.
fn ssh_config_path(var: super::Env) -> Result<PathBuf> {
    let home = var("HOME").context("HOME is not set")?;
    Ok(Path::new(&home).join(".ssh").join("config"))
}

/// Looks at `host` and plans; writes nothing.
pub fn plan(var: super::Env, host: &str) -> Result<RemotePlan> {
    let probe = format!("uname -sm; {REMOTE_BINARY} --version 2>/dev/null; true");
    let said = run_there(var, host, &probe, None)?;
    let mut lines = said.lines();
    let system = lines.next().unwrap_or_default().trim().to_owned();
    check_system(&system, host)?;
    let installed = lines.next().map(|l| l.trim().to_owned()).filter(|l| !l.is_empty());
    let version = format!("turnstile {}", turnstile_core::identity::LABEL);
    let ssh_config = ssh_config_path(var)?;
    let now = read_text(&ssh_config)?;
    let edited = with_block(&now, host);
    Ok(RemotePlan {
        host: host.to_owned(),
        copy: installed.as_deref() != Some(version.as_str()),
        system,
        installed,
        version,
        ssh_config,
        config_text: (edited != now).then_some(edited),
    })
}

/// Refuses another system or architecture than this binary's.
fn check_system(system: &str, host: &str) -> Result<()> {
    let mut words = system.split_whitespace();
    let (os, arch) = (words.next().unwrap_or_default(), words.next().unwrap_or_default());
    let arch = match arch {
        "arm64" => "aarch64",
        other => other,
    };
    if os != "Linux" || arch != std::env::consts::ARCH {
        return Err(Error::msg(format!(
            "{host} runs {system:?}; this turnstile is built for Linux {}: build turnstile there \
             (cargo install --path cli) and run `turnstile setup --hooks-only` there",
            std::env::consts::ARCH
        )));
    }
    Ok(())
}

/// What a run did, step by step, for people.
pub type Steps = Vec<String>;

/// Does what `plan` said.
pub fn apply(var: super::Env, plan: &RemotePlan) -> Result<Steps> {
    let mut steps = Steps::new();
    if plan.copy {
        let me = std::env::current_exe().context("cannot find this turnstile")?;
        let bytes = std::fs::read(&me).with_context(|| format!("cannot read {}", me.display()))?;
        let script = format!(
            "mkdir -p ~/.local/bin && cat > {REMOTE_BINARY}.part && chmod 755 {REMOTE_BINARY}.part \
             && mv -f {REMOTE_BINARY}.part {REMOTE_BINARY}"
        );
        run_there(var, &plan.host, &script, Some(&bytes))?;
        steps.push(format!("copied {} to {}:{REMOTE_BINARY}", plan.version, plan.host));
    }
    let hooks = run_there(
        var,
        &plan.host,
        &format!("{REMOTE_BINARY} setup --hooks-only --yes"),
        None,
    )?;
    steps.extend(
        hooks
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| format!("{}: {}", plan.host, l.trim())),
    );
    if let Some(text) = &plan.config_text {
        write_config(&plan.ssh_config, text)?;
        steps.push(format!(
            "{}: SendEnv ZELLIJ_PANE_ID ZELLIJ_SESSION_NAME for {}",
            plan.ssh_config.display(),
            plan.host
        ));
    }
    steps.push(accept_env_probe(var, &plan.host));
    Ok(steps)
}

/// Whether `host`'s sshd takes the ids the pane sends.
fn accept_env_probe(var: super::Env, host: &str) -> String {
    let mut command = ssh_command(var, &["-o", "SendEnv=ZELLIJ_SESSION_NAME"], host);
    command
        .env("ZELLIJ_SESSION_NAME", "turnstile-probe")
        .arg("printf %s \"$ZELLIJ_SESSION_NAME\"")
        .stdin(Stdio::null());
    match command.output() {
        Ok(out) if out.stdout == b"turnstile-probe" => {
            format!("{host}'s sshd takes the pane's ids: each agent there is bound to its pane")
        }
        _ => format!(
            "{host}'s sshd drops the pane's ids: add `AcceptEnv ZELLIJ_*` to its /etc/ssh/sshd_config and reload sshd; \
             until then its agents show their screens only"
        ),
    }
}

/// Takes back what `apply` did for `host` (with `dry_run`, only says so).
pub fn undo(var: super::Env, host: &str, dry_run: bool) -> Result<Steps> {
    let mut steps = Steps::new();
    let config = ssh_config_path(var)?;
    let now = read_text(&config)?;
    let without = without_block(&now, host);
    if without != now {
        if !dry_run {
            write_config(&config, &without)?;
        }
        steps.push(format!("{}: turnstile's block for {host} removed", config.display()));
    }
    let script =
        format!("if [ -x {REMOTE_BINARY} ]; then {REMOTE_BINARY} setup --undo --yes && rm -f {REMOTE_BINARY}; fi");
    match dry_run {
        true => steps.push(format!(
            "{host}: `turnstile setup --undo` there, and {REMOTE_BINARY} removed"
        )),
        false => {
            let said = run_there(var, host, &script, None)?;
            steps.extend(
                said.lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(|l| format!("{host}: {}", l.trim())),
            );
            steps.push(format!("{host}: {REMOTE_BINARY} removed"));
        }
    }
    Ok(steps)
}

/// `config` with turnstile's block for `host` at its top (kept as it is
/// when the block is there already).
pub fn with_block(config: &str, host: &str) -> String {
    let (start, end) = block_marks(host);
    if config.lines().any(|l| l == start) {
        return config.to_owned();
    }
    format!("{start}\nHost {host}\n    SendEnv ZELLIJ_PANE_ID ZELLIJ_SESSION_NAME\nMatch all\n{end}\n{config}")
}

/// `config` without turnstile's block for `host`.
pub fn without_block(config: &str, host: &str) -> String {
    let (start, end) = block_marks(host);
    let mut out = String::with_capacity(config.len());
    let mut inside = false;
    for line in config.split_inclusive('\n') {
        let bare = line.trim_end_matches('\n');
        match (inside, bare == start, bare == end) {
            (false, true, _) => inside = true,
            (true, _, true) => inside = false,
            (true, _, _) => {}
            (false, _, _) => out.push_str(line),
        }
    }
    out
}

fn read_text(path: &Path) -> Result<String> {
    match crate::files::read_capped(path, 16 << 20) {
        Ok(bytes) => String::from_utf8(bytes).map_err(|_| Error::msg(format!("{} is not UTF-8", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(Error::msg(format!("cannot read {}: {e}", path.display()))),
    }
}

/// Writes the ssh config (0600, as ssh wants it; its folder 0700).
fn write_config(path: &Path, text: &str) -> Result<()> {
    if let Some(folder) = path.parent() {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(folder)
            .with_context(|| format!("cannot create {}", folder.display()))?;
    }
    let path = crate::settings::resolve(path)?;
    crate::files::write_atomic(&path, text.as_bytes(), 0o600)
        .with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const USERS: &str = "ForwardAgent no\n\nHost gpu\n    User me\n";

    #[test]
    fn the_block_goes_on_top_and_leaves_every_line_its_meaning() {
        let edited = with_block(USERS, "gpu");
        assert!(edited.starts_with("# turnstile setup --remote gpu"));
        assert!(edited.contains("Host gpu\n    SendEnv ZELLIJ_PANE_ID ZELLIJ_SESSION_NAME\nMatch all\n"));
        assert!(edited.ends_with(USERS), "the user's lines follow, after `Match all`");
        assert_eq!(with_block(&edited, "gpu"), edited, "a second run changes nothing");
    }

    #[test]
    fn undo_takes_out_only_the_block() {
        let both = with_block(&with_block(USERS, "gpu"), "box");
        assert_eq!(without_block(&without_block(&both, "gpu"), "box"), USERS);
        assert_eq!(without_block(&both, "gpu"), with_block(USERS, "box"));
        assert_eq!(without_block(USERS, "gpu"), USERS);
    }

    #[test]
    fn another_system_or_architecture_is_refused_with_its_reason() {
        let here = format!("Linux {}", std::env::consts::ARCH);
        assert!(check_system(&here, "gpu").is_ok());
        let why = check_system("Darwin arm64", "mac").unwrap_err().to_string();
        assert!(why.contains("mac runs \"Darwin arm64\""), "{why}");
        assert!(check_system("Linux riscv64", "board").is_err());
    }
}
