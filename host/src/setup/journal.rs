//! setup's undo record: for every file setup wrote, the bytes and mode it
//! had before the first write (or that it did not exist), kept in a private
//! folder of turnstile's data folder, so that `setup --undo` puts each back
//! byte for byte and removes what setup added.

use crate::error::{Context, Result};
use crate::{files, state};
use serde::{Deserialize, Serialize};
use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Largest file the journal keeps a copy of (settings and configs are small).
const MAX_KEPT_BYTES: u64 = 64 << 20;

/// What a file was before setup first wrote it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Entry {
    /// The file (absolute).
    pub path: PathBuf,
    /// The copy of its bytes in the journal's folder (`None`: setup made it).
    pub kept: Option<String>,
    /// Its mode before.
    #[serde(default)]
    pub mode: Option<u32>,
}

/// The undo record.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Journal {
    /// The files setup wrote, in the order it first wrote them.
    pub files: Vec<Entry>,
    /// The folders setup made (removed on undo when empty).
    #[serde(default)]
    pub folders: Vec<PathBuf>,
    /// The layout plain `zellij` used before setup (`None`: zellij's default).
    #[serde(default)]
    pub base_layout: Option<String>,
}

impl Journal {
    /// The journal's folder in `data_dir`.
    pub fn folder(data_dir: &Path) -> PathBuf {
        data_dir.join("setup")
    }

    /// Reads the journal (an empty one when setup never ran).
    pub fn load(data_dir: &Path) -> Result<Journal> {
        let path = Journal::folder(data_dir).join("journal.json");
        match files::read_capped(&path, MAX_KEPT_BYTES) {
            Ok(bytes) => serde_json::from_slice(&bytes).with_context(|| format!("{} is damaged", path.display())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Journal::default()),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    /// True when setup has written `path` before.
    pub fn knows(&self, path: &Path) -> bool {
        self.files.iter().any(|e| e.path == path)
    }

    /// Records what `path` is now, before its first write by setup.
    pub fn keep(&mut self, data_dir: &Path, path: &Path) -> Result<()> {
        if self.knows(path) {
            return Ok(());
        }
        let folder = Journal::folder(data_dir);
        state::ensure_private(&folder).with_context(|| format!("setup's undo folder {}", folder.display()))?;
        let (kept, mode) = match fs::metadata(path) {
            Ok(meta) => {
                let bytes = files::read_capped(path, MAX_KEPT_BYTES)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                let name = format!("{}.kept", self.files.len());
                files::write_atomic(&folder.join(&name), &bytes, 0o600)
                    .with_context(|| format!("cannot keep a copy of {}", path.display()))?;
                (Some(name), Some(meta.mode() & 0o7777))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => (None, None),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        self.files.push(Entry {
            path: path.to_path_buf(),
            kept,
            mode,
        });
        self.save(data_dir)
    }

    /// Records a folder setup is about to make.
    pub fn made_folder(&mut self, data_dir: &Path, folder: &Path) -> Result<()> {
        if !self.folders.iter().any(|f| f == folder) {
            self.folders.push(folder.to_path_buf());
            self.save(data_dir)?;
        }
        Ok(())
    }

    /// Writes the journal (private, atomic).
    pub fn save(&self, data_dir: &Path) -> Result<()> {
        let folder = Journal::folder(data_dir);
        state::ensure_private(&folder).with_context(|| format!("setup's undo folder {}", folder.display()))?;
        let text = serde_json::to_string_pretty(self)? + "\n";
        files::write_atomic(&folder.join("journal.json"), text.as_bytes(), 0o600)
            .with_context(|| format!("cannot write {}", folder.display()))
    }

    /// The bytes `entry` had before setup (`None`: it did not exist).
    pub fn original(&self, data_dir: &Path, entry: &Entry) -> Result<Option<Vec<u8>>> {
        let Some(name) = &entry.kept else { return Ok(None) };
        let path = Journal::folder(data_dir).join(name);
        files::read_capped(&path, MAX_KEPT_BYTES)
            .map(Some)
            .with_context(|| format!("the copy of {} in {} is gone", entry.path.display(), path.display()))
    }

    /// Deletes the journal and its copies.
    pub fn forget(data_dir: &Path) -> Result<()> {
        let folder = Journal::folder(data_dir);
        match fs::remove_dir_all(&folder) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                Err(e).with_context(|| format!("cannot remove {}", folder.display()))
            }
            _ => Ok(()),
        }
    }
}
