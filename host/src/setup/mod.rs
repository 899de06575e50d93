//! `turnstile setup`: plain `zellij` shows the bar in every tab.
//!
//! It writes the embedded plugin to turnstile's data folder, grants its
//! permissions (no prompt), writes a layout `turnstile` made from the
//! user's own `default_layout` with the bar added, points `default_layout`
//! at it (every other line of the config kept), and installs the hooks of
//! every agent found on the machine. Each run plans first ([`plan`]):
//! what it would write, file by file, so `--dry-run` prints the same and
//! writes nothing, and a second run finds nothing to change.
//!
//! Safety: one run at a time (a lock in the data folder, taken before
//! planning); every write atomic; the first write of each file keeps its
//! bytes in the undo record ([`journal`]), and [`undo`] puts them back byte
//! for byte, leaving alone a file the user changed since.

pub mod edits;
pub mod journal;
pub mod remote;

use crate::error::{Context, Result};
use crate::zellij::{self, Zellij, ZellijPaths};
use crate::{embedded, files, hooks, state};
use edits::{BarPane, LAYOUT_NAME};
use journal::Journal;
use serde::Serialize;
use std::fs::{self, File};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use turnstile_core::agent::AgentKind;

/// What setup does to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// The file is made.
    Create,
    /// The file is rewritten.
    Change,
    /// The file is as setup would write it already.
    Keep,
}

/// One file setup writes.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    /// The file.
    pub path: PathBuf,
    /// What it is, for people.
    pub what: String,
    /// What setup does to it.
    pub action: Action,
    #[serde(skip)]
    bytes: Vec<u8>,
    #[serde(skip)]
    mode: u32,
    /// The agent whose hooks file this is: written under the settings'
    /// edit lock, from the file as it is then (see [`write`]).
    #[serde(skip)]
    hooks_of: Option<AgentKind>,
}

/// Everything one run would write, and what it noticed.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    /// The files, in the order they are written.
    pub changes: Vec<Change>,
    /// The layout the bar was added to (`default` when the config names none).
    pub base_layout: String,
    /// The agents whose hooks are installed.
    pub agents: Vec<String>,
    /// What setup could not do and why (setup goes on without it).
    pub notes: Vec<String>,
    #[serde(skip)]
    base_named: Option<String>,
}

impl Plan {
    /// True when a run would write nothing.
    pub fn is_empty(&self) -> bool {
        self.changes.iter().all(|c| c.action == Action::Keep)
    }
}

/// The environment setup reads (the process's, or a test's).
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Plans a run: reads everything, writes nothing.
pub fn plan(var: Env) -> Result<Plan> {
    let data = zellij::data_dir(var)?;
    let paths = ZellijPaths::from_env(var)?;
    let journal = Journal::load(&data)?;
    let bar = bar_pane(&data)?;
    let mut changes = vec![planned(
        data.join("turnstile.wasm"),
        format!("the zellij plugin (turnstile {})", embedded::VERSION),
        embedded::PLUGIN.to_vec(),
        0o644,
    )?];
    let permissions = read_text(&paths.permissions)?;
    let granted = edits::grant(&permissions, &paths.permissions, &bar.wasm)?;
    changes.push(planned(
        paths.permissions.clone(),
        "zellij's permission grants: the plugin's, so no prompt appears".into(),
        granted.into_bytes(),
        0o644,
    )?);
    let config = read_text(&paths.config_file)?;
    let config_doc = edits::parse(&config, &paths.config_file)?;
    let named = edits::default_layout(&config_doc);
    let base_named = match named.as_deref() {
        Some(LAYOUT_NAME) => journal.base_layout.clone(),
        _ => named,
    };
    let layout_dir = paths.layout_dir(edits::layout_dir(&config_doc).as_deref());
    let base_layout = base_named.clone().unwrap_or_else(|| "default".into());
    let (layout, swap) = layout_with_bar(&base_layout, &layout_dir, &bar)?;
    let header = format!(
        "// Written by `turnstile setup`: the layout {base_layout:?} with the turnstile bar in every tab.\n\
         // `turnstile setup --undo` removes it and puts {base_layout:?} back as the default layout.\n"
    );
    let what = format!("the layout {base_layout:?} with the bar");
    changes.push(planned(
        layout_dir.join(format!("{LAYOUT_NAME}.kdl")),
        what,
        (header.clone() + &layout).into_bytes(),
        0o644,
    )?);
    if let Some(swap) = swap {
        let what = format!("the swap layouts of {base_layout:?} with the bar");
        changes.push(planned(
            layout_dir.join(format!("{LAYOUT_NAME}.swap.kdl")),
            what,
            (header + &swap).into_bytes(),
            0o644,
        )?);
    }
    let configured = edits::set_default_layout(&config, &paths.config_file, LAYOUT_NAME)?;
    changes.push(planned(
        paths.config_file.clone(),
        format!("zellij's config: default_layout {LAYOUT_NAME:?} (the rest kept)"),
        configured.into_bytes(),
        0o644,
    )?);
    let hooks = plan_hooks(var)?;
    changes.extend(hooks.changes);
    Ok(Plan {
        changes,
        base_layout,
        agents: hooks.agents,
        notes: hooks.notes,
        base_named,
    })
}

/// Plans a run that installs only the hooks of the agents found: what
/// `setup --remote` runs on the other machine (`setup --hooks-only`), where
/// no zellij runs. `--undo` there puts them back.
pub fn plan_hooks(var: Env) -> Result<Plan> {
    let (mut changes, mut agents, mut notes) = (Vec::new(), Vec::new(), Vec::new());
    for kind in agents_found(var) {
        match hooks::planned(kind) {
            Ok((target, original, text)) => {
                let bytes = text.map(String::into_bytes).or(original).unwrap_or_default();
                let what = format!("{}'s hooks", kind.agent().name());
                let change = planned(target, what, bytes, 0o600)?;
                changes.push(Change {
                    hooks_of: Some(kind),
                    ..change
                });
                agents.push(kind.agent().name().to_owned());
            }
            Err(e) => notes.push(format!("{}: hooks not installed: {e:#}", kind.agent().name())),
        }
    }
    Ok(Plan {
        changes,
        base_layout: String::new(),
        agents,
        notes,
        base_named: None,
    })
}

/// Plans and applies a run under setup's lock; returns what it did.
pub fn apply(var: Env) -> Result<Plan> {
    apply_planned(var, plan)
}

/// [`apply`] for [`plan_hooks`].
pub fn apply_hooks(var: Env) -> Result<Plan> {
    apply_planned(var, plan_hooks)
}

fn apply_planned(var: Env, plan: fn(Env) -> Result<Plan>) -> Result<Plan> {
    let data = zellij::data_dir(var)?;
    let _lock = lock(&data)?;
    let plan = plan(var)?;
    let mut journal = Journal::load(&data)?;
    if journal.files.is_empty() {
        journal.base_layout = plan.base_named.clone();
    }
    for change in plan.changes.iter().filter(|c| c.action != Action::Keep) {
        write(&mut journal, &data, change)?;
    }
    Ok(plan)
}

/// What `--undo` did to one file.
#[derive(Debug, Clone, Serialize)]
pub struct Undone {
    /// The file.
    pub path: PathBuf,
    /// `restored`, `removed`, or `left` (changed since setup wrote it).
    pub action: &'static str,
    /// Why it was left, or where its original is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Puts back every file setup changed and removes what it added; with
/// `dry_run`, only says so.
pub fn undo(var: Env, dry_run: bool) -> Result<Vec<Undone>> {
    let data = zellij::data_dir(var)?;
    let lock = match dry_run {
        true => None,
        false => Some(lock(&data)?),
    };
    let journal = Journal::load(&data)?;
    let mut done = Vec::new();
    let mut kept_any = false;
    for entry in journal.files.iter().rev() {
        let original = journal.original(&data, entry)?;
        let now = read_bytes(&entry.path)?;
        let written = entry_written(&data, &journal, entry);
        let untouched = written.as_deref().is_none_or(|w| now.as_deref() == Some(w));
        let action = match (&original, untouched) {
            (_, false) => {
                if let Some(text) = our_part_taken_out(var, &journal, &data, entry, now.as_deref())? {
                    if !dry_run {
                        restore(&entry.path, Some(text.as_bytes()), entry.mode)?;
                    }
                    done.push(Undone {
                        path: entry.path.clone(),
                        action: "edited",
                        note: Some("changed since setup wrote it: only turnstile's part taken out".into()),
                    });
                    continue;
                }
                kept_any = true;
                let note = format!(
                    "changed since setup wrote it; left as it is (its original is kept in {})",
                    Journal::folder(&data).display()
                );
                done.push(Undone {
                    path: entry.path.clone(),
                    action: "left",
                    note: Some(note),
                });
                continue;
            }
            (Some(_), true) => "restored",
            (None, true) => "removed",
        };
        if !dry_run {
            restore(&entry.path, original.as_deref(), entry.mode)?;
        }
        done.push(Undone {
            path: entry.path.clone(),
            action,
            note: None,
        });
    }
    if !dry_run {
        for folder in journal.folders.iter().rev() {
            let _ = fs::remove_dir(folder); // only when empty
        }
        if !kept_any {
            Journal::forget(&data)?;
            drop(lock);
            let _ = fs::remove_file(data.join("setup.lock"));
            let _ = fs::remove_dir(&data); // only when empty
        }
    }
    Ok(done)
}

/// A file changed since setup wrote it, with only setup's part taken out,
/// for the files that part can be told in: zellij rewrites its
/// `permissions.kdl` whenever a plugin is granted (our grant is removed),
/// and a user may edit `config.kdl` (its `default_layout` goes back, unless
/// they chose another). `None` for the other files (left as they are).
fn our_part_taken_out(
    var: Env,
    journal: &Journal,
    data: &Path,
    entry: &journal::Entry,
    now: Option<&[u8]>,
) -> Result<Option<String>> {
    let (Ok(paths), Some(now)) = (ZellijPaths::from_env(var), now) else {
        return Ok(None);
    };
    let Ok(text) = std::str::from_utf8(now) else {
        return Ok(None);
    };
    let same = |path: &Path| files_equal(path, &entry.path);
    let edited = if same(&paths.permissions) {
        let key = data.join("turnstile.wasm").display().to_string();
        edits::revoke(text, &entry.path, &key)?
    } else if same(&paths.config_file) {
        edits::restore_default_layout(text, &entry.path, LAYOUT_NAME, journal.base_layout.as_deref())?
    } else {
        return Ok(None);
    };
    Ok(Some(edited))
}

/// True when `a` and `b` name one file (a symlink's target included).
fn files_equal(a: &Path, b: &Path) -> bool {
    a == b
        || fs::canonicalize(a)
            .ok()
            .zip(fs::canonicalize(b).ok())
            .is_some_and(|(a, b)| a == b)
}

/// The bar's pane: the plugin in `data`, run by this very binary.
fn bar_pane(data: &Path) -> Result<BarPane> {
    let exe = std::env::current_exe().context("cannot find the turnstile executable")?;
    let exe = fs::canonicalize(&exe).unwrap_or(exe);
    Ok(BarPane {
        wasm: data.join("turnstile.wasm").display().to_string(),
        host_command: exe.display().to_string(),
    })
}

/// The layout named `base` with the bar, and its swap layouts: the user's
/// own file in `layout_dir` (or a path), else zellij's built-in one.
fn layout_with_bar(base: &str, layout_dir: &Path, bar: &BarPane) -> Result<(String, Option<String>)> {
    let path_named = base.ends_with(".kdl") || base.contains('/');
    let file = Some(zellij::layout_file(base, layout_dir)).filter(|f| path_named || f.exists());
    let (layout, swap, path) = match file {
        Some(file) => {
            let text = read_text(&file)?;
            let swap_file = file.with_extension("swap.kdl");
            let swap = swap_file.exists().then(|| read_text(&swap_file)).transpose()?;
            (text, swap, file)
        }
        None => {
            let (layout, swap) = Zellij::find()?.built_in_layout(base)?;
            (
                layout,
                swap,
                PathBuf::from(format!("zellij's built-in layout {base:?}")),
            )
        }
    };
    let layout = edits::layout_with_bar(&layout, &path, bar)?;
    let swap = swap
        .map(|s| edits::swap_with_bar(&s, &path.with_extension("swap.kdl"), bar))
        .transpose()?;
    Ok((layout, swap))
}

/// The built-in kinds whose program is on PATH or whose home folder exists.
pub fn agents_found(var: Env) -> Vec<AgentKind> {
    let on_path = programs_on_path(var);
    AgentKind::ALL
        .into_iter()
        .filter(|kind| !kind.hooks().hook_events(false).is_empty())
        .filter(|kind| {
            let agent = kind.agent();
            let home = kind.log().home(var).is_some_and(|h| h.is_dir());
            home || on_path.iter().any(|name| agent.runs(std::slice::from_ref(name)))
        })
        .collect()
}

/// The names of the programs on PATH.
fn programs_on_path(var: Env) -> Vec<String> {
    let path = var("PATH").unwrap_or_default();
    let mut names: Vec<String> = std::env::split_paths(&path)
        .filter_map(|dir| fs::read_dir(dir).ok())
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// One planned file: its action from what is there now. A symlinked file
/// (stow, chezmoi, home-manager) is written at its target: the link stays.
fn planned(path: PathBuf, what: String, bytes: Vec<u8>, mode: u32) -> Result<Change> {
    let path = crate::settings::resolve(&path)?;
    let action = match read_bytes(&path)? {
        None => Action::Create,
        Some(now) if now == bytes => Action::Keep,
        Some(_) => Action::Change,
    };
    Ok(Change {
        path,
        what,
        action,
        bytes,
        mode,
        hooks_of: None,
    })
}

/// Writes one change: its original kept first, its folders made (and
/// recorded), then the file replaced atomically with its own mode.
fn write(journal: &mut Journal, data: &Path, change: &Change) -> Result<()> {
    let path = &change.path;
    let mut missing = Vec::new();
    let mut dir = path.parent();
    while let Some(d) = dir.filter(|d| !d.exists()) {
        missing.push(d.to_path_buf());
        dir = d.parent();
    }
    for folder in missing.iter().rev() {
        journal.made_folder(data, folder)?;
        fs::create_dir(folder).with_context(|| format!("cannot create {}", folder.display()))?;
    }
    if let Some(kind) = change.hooks_of {
        return write_hooks(journal, data, path, kind);
    }
    journal.keep(data, path)?;
    let mode = fs::metadata(path).map_or(change.mode, |m| m.mode() & 0o7777);
    files::write_atomic(path, &change.bytes, mode).with_context(|| format!("cannot write {}", path.display()))?;
    record_written(data, journal, path, &change.bytes)
}

/// Writes an agent's hooks file as `install-hooks` does: under its edit
/// lock, from the file as it is now (an edit since the plan is kept; the
/// original goes to the undo record, not a backup beside it); nothing when
/// the hooks are there already.
fn write_hooks(journal: &mut Journal, data: &Path, path: &Path, kind: AgentKind) -> Result<()> {
    // The lock's file is setup's too: undo removes it.
    journal.keep(data, &crate::settings::lock_path(path))?;
    let edit = crate::settings::SettingsEdit::begin(path)?;
    let Some(text) = hooks::with_hooks(kind, &edit.target, edit.original.as_deref())? else {
        return Ok(());
    };
    journal.keep(data, path)?;
    edit.commit_unbacked(&text)?;
    record_written(data, journal, path, text.as_bytes())
}

/// Keeps what setup last wrote to `path` (to tell a later edit by the user).
fn record_written(data: &Path, journal: &Journal, path: &Path, bytes: &[u8]) -> Result<()> {
    let index = journal.files.iter().position(|e| e.path == path).unwrap_or(0);
    let file = Journal::folder(data).join(format!("{index}.written"));
    files::write_atomic(&file, bytes, 0o600).with_context(|| format!("cannot write {}", file.display()))
}

/// What setup last wrote to `entry`'s file.
fn entry_written(data: &Path, journal: &Journal, entry: &journal::Entry) -> Option<Vec<u8>> {
    let index = journal.files.iter().position(|e| e.path == entry.path)?;
    files::read_capped(&Journal::folder(data).join(format!("{index}.written")), 64 << 20).ok()
}

/// Puts `path` back as it was: its bytes and mode, or gone.
fn restore(path: &Path, original: Option<&[u8]>, mode: Option<u32>) -> Result<()> {
    match original {
        Some(bytes) => {
            files::write_atomic(path, bytes, mode.unwrap_or(0o644))
                .with_context(|| format!("cannot restore {}", path.display()))?;
            if let Some(mode) = mode {
                use std::os::unix::fs::PermissionsExt;
                fs::set_permissions(path, fs::Permissions::from_mode(mode))
                    .with_context(|| format!("cannot restore the mode of {}", path.display()))?;
            }
            Ok(())
        }
        None => match fs::remove_file(path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                Err(e).with_context(|| format!("cannot remove {}", path.display()))
            }
            _ => Ok(()),
        },
    }
}

/// Setup's lock (`setup.lock` in the data folder, made private), held
/// until dropped: two runs at once take turns.
fn lock(data: &Path) -> Result<File> {
    fs::create_dir_all(data).with_context(|| format!("cannot create {}", data.display()))?;
    state::ensure_private(data).with_context(|| format!("turnstile's data folder {}", data.display()))?;
    let path = data.join("setup.lock");
    let file = files::open_lock(&path).with_context(|| format!("cannot open {}", path.display()))?;
    // SAFETY: the descriptor is open for the call.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(io::Error::last_os_error()).with_context(|| format!("cannot lock {}", path.display()));
    }
    Ok(file)
}

/// A text file's content ("" when it does not exist); a FIFO, a device or
/// a file that is not UTF-8 is refused in words.
fn read_text(path: &Path) -> Result<String> {
    let bytes = read_bytes(path)?.unwrap_or_default();
    String::from_utf8(bytes)
        .map_err(|_| crate::error::Error::msg(format!("{} is not UTF-8 text; nothing was written", path.display())))
}

fn read_bytes(path: &Path) -> Result<Option<Vec<u8>>> {
    match files::read_capped(path, 64 << 20) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}
