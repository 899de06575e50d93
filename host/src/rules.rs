//! The user's rules file on the host: which file (`--rules`, else
//! `$TURNSTILE_RULES`, else the default under the config folder), read
//! without blocking (a FIFO or a device is refused, at most 1 MiB), parsed,
//! and loaded into the agent model's registry, so every command that
//! recognises or classifies an agent knows the user's kinds.

use std::io;
use std::path::{Path, PathBuf};
use turnstile_core::agent::user;
use turnstile_core::agent::user::file::{self, RuleError};
use turnstile_core::protocol::RulesReport;

/// Largest rules file read.
pub const MAX_BYTES: u64 = 1 << 20;

/// The environment variable naming the rules file (for hooks and scripts
/// that do not get the plugin's `--rules`).
pub const ENV: &str = "TURNSTILE_RULES";

/// What loading the rules file came to: what `turnstile rules --json`
/// prints, and what the bar reads.
pub type Loaded = RulesReport;

/// Which rules file: `explicit` (the `--rules` option), else the
/// environment's [`ENV`], else the default path. The second value is true
/// when the file was named (a missing named file is a problem; a missing
/// default one is not).
pub fn path_of(explicit: Option<&Path>, var: &dyn Fn(&str) -> Option<String>) -> Option<(PathBuf, bool)> {
    if let Some(path) = explicit.filter(|p| !p.as_os_str().is_empty()) {
        return Some((path.to_path_buf(), true));
    }
    if let Some(path) = var(ENV).filter(|p| !p.is_empty()) {
        return Some((PathBuf::from(path), true));
    }
    file::default_path(var).map(|p| (p, false))
}

/// Reads and parses the rules file (see [`path_of`]) and loads its agents
/// into the registry. A broken file loads nothing and says why.
pub fn load(explicit: Option<&Path>) -> Loaded {
    let loaded = read_rules(explicit);
    user::load(&loaded.rules);
    loaded
}

/// Reads and parses the rules file (see [`path_of`]), loading nothing.
pub fn read_rules(explicit: Option<&Path>) -> Loaded {
    let var = |name: &str| std::env::var(name).ok();
    let this_build = Loaded {
        build: Some(turnstile_core::identity::LABEL.to_owned()),
        ..Loaded::default()
    };
    let Some((path, named)) = path_of(explicit, &var) else {
        return this_build;
    };
    let mut loaded = Loaded {
        path: Some(path.display().to_string()),
        ..this_build
    };
    match read(&path) {
        Ok(text) => match file::parse(&text) {
            Ok(rules) => {
                let home = var("HOME").map(PathBuf::from).unwrap_or_default();
                loaded.notes = log_notes(&rules, &home);
                loaded.rules = rules;
            }
            Err(problem) => loaded.problem = Some(problem),
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound && !named => {}
        Err(e) => {
            loaded.problem = Some(RuleError {
                line: 0,
                message: turnstile_core::text::first_line(&e.to_string()),
            })
        }
    }
    loaded
}

/// Most entries of a log folder looked at for a file its glob names.
const MAX_ENTRIES_LOOKED_AT: usize = 10_000;

/// The agents whose log glob matches no file now (its folder missing, or
/// no file of that name in it): such an agent's dones stay guesses until
/// it writes one. A glob under each agent's working directory is not
/// looked at (there is no one folder).
pub fn log_notes(rules: &user::rules::Rules, home: &Path) -> Vec<turnstile_core::protocol::RuleNote> {
    let note = |agent: &str, message: String| turnstile_core::protocol::RuleNote {
        agent: agent.to_owned(),
        message,
    };
    let mut notes = Vec::new();
    for agent in &rules.agents {
        let Some(glob) = agent.log.as_ref().map(|log| &log.glob) else {
            continue;
        };
        if glob.is_per_working_directory() {
            continue;
        }
        let folder = glob.folder(home, Path::new("/"));
        let written = glob.as_str();
        match std::fs::read_dir(&folder) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => notes.push(note(
                &agent.name,
                format!("log {written} matches no file: {} does not exist", folder.display()),
            )),
            Err(e) => notes.push(note(
                &agent.name,
                format!("log {written}: {} cannot be read ({e})", folder.display()),
            )),
            Ok(entries) => {
                let named = entries
                    .take(MAX_ENTRIES_LOOKED_AT)
                    .flatten()
                    .any(|e| e.file_name().to_str().is_some_and(|name| glob.names(name)));
                if !named {
                    notes.push(note(
                        &agent.name,
                        format!("log {written} matches no file in {} (yet)", folder.display()),
                    ));
                }
            }
        }
    }
    notes
}

/// The rules file a long-lived process (the watcher) loaded, loaded again
/// when it changes: its modification time, size or file (an editor's
/// rename, a dotfile symlink pointed elsewhere) are looked at with one
/// `stat` that follows links.
pub struct Reloader {
    explicit: Option<PathBuf>,
    stamp: Option<Stamp>,
}

type Stamp = (Option<std::time::SystemTime>, u64, u64);

fn stamp_of(explicit: Option<&Path>) -> Option<Stamp> {
    use std::os::unix::fs::MetadataExt;
    let var = |name: &str| std::env::var(name).ok();
    let (path, _) = path_of(explicit, &var)?;
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok(), meta.len(), meta.ino()))
}

impl Reloader {
    /// Loads the rules file (see [`load`]) and remembers its stamp.
    pub fn load(explicit: Option<PathBuf>) -> (Reloader, Loaded) {
        let stamp = stamp_of(explicit.as_deref());
        let loaded = load(explicit.as_deref());
        (Reloader { explicit, stamp }, loaded)
    }

    /// Loads the file again when it changed since; true when it did.
    pub fn reload_if_changed(&mut self) -> bool {
        let stamp = stamp_of(self.explicit.as_deref());
        if stamp == self.stamp {
            return false;
        }
        self.stamp = stamp;
        load(self.explicit.as_deref());
        true
    }
}

fn read(path: &Path) -> io::Result<String> {
    let bytes = super::files::read_capped(path, MAX_BYTES)?;
    String::from_utf8(bytes).map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8 text"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_glob_that_matches_no_file_is_noted() {
        let home = tempfile::tempdir().unwrap();
        let rules = |glob: &str| {
            let text = format!(
                "agent \"lg\" {{\n  process \"^lg$\"\n  log \"{glob}\" {{\n    answer \"type\" \"^a$\" text=\"m\"\n  }}\n}}\n"
            );
            file::parse(&text).unwrap()
        };
        let notes = log_notes(&rules("~/.lg/logs/*.jsonl"), home.path());
        assert_eq!(notes.len(), 1);
        assert!(notes[0].message.contains("does not exist"), "{notes:?}");
        std::fs::create_dir_all(home.path().join(".lg/logs")).unwrap();
        std::fs::write(home.path().join(".lg/logs/notes.txt"), "x").unwrap();
        let notes = log_notes(&rules("~/.lg/logs/*.jsonl"), home.path());
        assert!(notes[0].message.contains("matches no file in"), "{notes:?}");
        std::fs::write(home.path().join(".lg/logs/s1.jsonl"), "{}\n").unwrap();
        assert!(log_notes(&rules("~/.lg/logs/*.jsonl"), home.path()).is_empty());
        assert!(
            log_notes(&rules("./logs/*.jsonl"), home.path()).is_empty(),
            "no one folder"
        );
    }

    #[test]
    fn an_edited_file_is_loaded_again_and_an_untouched_one_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agents.kdl");
        let agent = |state: &str| {
            format!(
                "agent \"reload-probe\" {{\n  process \"^rp$\"\n  screen {{\n    {state} \"^x$\" rows=1\n  }}\n}}\n"
            )
        };
        std::fs::write(&path, agent("done")).unwrap();
        let (mut reloader, loaded) = Reloader::load(Some(path.clone()));
        assert_eq!(loaded.problem, None);
        assert!(!reloader.reload_if_changed(), "untouched");
        let kind = turnstile_core::agent::AgentKind::parse("reload-probe").unwrap();
        let rows = ["x".to_owned()];
        assert_eq!(kind.classify_screen(&rows, "").state, turnstile_core::State::Done);
        // An editor writes a new file and renames it over the old one.
        let new = dir.path().join("agents.kdl.new");
        std::fs::write(&new, agent("waiting")).unwrap();
        std::fs::rename(&new, &path).unwrap();
        assert!(reloader.reload_if_changed());
        assert_eq!(kind.classify_screen(&rows, "").state, turnstile_core::State::Waiting);
    }

    #[test]
    fn the_option_then_the_environment_then_the_default() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
        };
        let home = env(&[("HOME", "/home/u")]);
        let named = env(&[("HOME", "/home/u"), (ENV, "/etc/agents.kdl")]);
        assert_eq!(
            path_of(Some(Path::new("/x.kdl")), &named),
            Some((PathBuf::from("/x.kdl"), true))
        );
        assert_eq!(path_of(None, &named), Some((PathBuf::from("/etc/agents.kdl"), true)));
        assert_eq!(
            path_of(None, &home),
            Some((PathBuf::from("/home/u/.config/turnstile/agents.kdl"), false))
        );
        assert_eq!(path_of(Some(Path::new("")), &env(&[])), None);
    }

    #[test]
    fn a_fifo_a_device_and_a_missing_named_file_are_problems_with_no_line() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("agents.kdl");
        let made = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(made.as_ptr(), 0o600) }, 0);
        for path in [fifo, PathBuf::from("/dev/zero"), dir.path().join("missing.kdl")] {
            let loaded = read_rules(Some(&path));
            let problem = loaded.problem.clone().unwrap_or_else(|| panic!("{path:?}"));
            assert_eq!(problem.line, 0);
            assert!(loaded.problem_line().unwrap().contains(&path.display().to_string()));
        }
    }
}
