//! The user's zellij, as `setup` and `doctor` see it: where its config,
//! layouts and permission grants live (as zellij resolves them), which
//! release is installed, and the built-in layouts it can print.

use crate::error::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

pub use turnstile_core::identity::{zellij_supported as supported, ZELLIJ_SUPPORTED as SUPPORTED};

/// Where zellij keeps what `setup` edits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZellijPaths {
    /// `config.kdl` (`$ZELLIJ_CONFIG_FILE`, else in the config folder).
    pub config_file: PathBuf,
    /// The config folder (`$ZELLIJ_CONFIG_DIR`, else `$XDG_CONFIG_HOME/zellij`).
    pub config_dir: PathBuf,
    /// `permissions.kdl`, the plugins' granted permissions (in zellij's cache folder).
    pub permissions: PathBuf,
}

impl ZellijPaths {
    /// The paths zellij itself uses for this environment.
    pub fn from_env(var: &dyn Fn(&str) -> Option<String>) -> Result<ZellijPaths> {
        let home = var("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
        let xdg = |name: &str, fallback: &str| -> Result<PathBuf> {
            match var(name).filter(|v| v.starts_with('/')) {
                Some(dir) => Ok(PathBuf::from(dir)),
                None => Ok(home.clone().context("HOME is not set")?.join(fallback)),
            }
        };
        let config_dir = match var("ZELLIJ_CONFIG_DIR").filter(|v| !v.is_empty()) {
            Some(dir) => PathBuf::from(dir),
            None => xdg("XDG_CONFIG_HOME", ".config")?.join("zellij"),
        };
        let config_file = match var("ZELLIJ_CONFIG_FILE").filter(|v| !v.is_empty()) {
            Some(file) => PathBuf::from(file),
            None => config_dir.join("config.kdl"),
        };
        let permissions = xdg("XDG_CACHE_HOME", ".cache")?.join("zellij/permissions.kdl");
        Ok(ZellijPaths {
            config_file,
            config_dir,
            permissions,
        })
    }

    /// The folder of named layouts: the config's `layout_dir`, else `layouts`
    /// in the config folder.
    pub fn layout_dir(&self, layout_dir_option: Option<&str>) -> PathBuf {
        match layout_dir_option {
            Some(dir) => self.config_dir.join(expand_home(dir)),
            None => self.config_dir.join("layouts"),
        }
    }
}

/// The file a `default_layout` value names: a path (`…kdl`, or with a
/// `/`) in the layout folder, else `<name>.kdl` there (a user's layout of
/// that name; zellij's built-in one when no such file exists).
pub fn layout_file(name: &str, layout_dir: &Path) -> PathBuf {
    match name.ends_with(".kdl") || name.contains('/') {
        true => layout_dir.join(expand_home(name)),
        false => layout_dir.join(format!("{name}.kdl")),
    }
}

/// `~/x` as `$HOME/x`; anything else as it is.
pub fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ => PathBuf::from(path),
    }
}

/// turnstile's own data folder (`$XDG_DATA_HOME/turnstile`, else
/// `~/.local/share/turnstile`): the plugin file and setup's undo record.
pub fn data_dir(var: &dyn Fn(&str) -> Option<String>) -> Result<PathBuf> {
    if let Some(dir) = var("XDG_DATA_HOME").filter(|v| v.starts_with('/')) {
        return Ok(PathBuf::from(dir).join("turnstile"));
    }
    let home = var("HOME").filter(|h| !h.is_empty()).context("HOME is not set")?;
    Ok(PathBuf::from(home).join(".local/share/turnstile"))
}

/// The installed zellij: its program and release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Zellij {
    /// The program run (`zellij` on PATH).
    pub program: PathBuf,
    /// Its release, as `zellij --version` says it (`0.45.1`).
    pub version: String,
}

impl Zellij {
    /// The zellij on PATH; an error in words when there is none.
    pub fn find() -> Result<Zellij> {
        let program = PathBuf::from("zellij");
        let out = Command::new(&program)
            .arg("--version")
            .output()
            .context("zellij is not on PATH: install zellij 0.44 or 0.45 (https://zellij.dev) first")?;
        let text = String::from_utf8_lossy(&out.stdout);
        let version = text.split_whitespace().nth(1).unwrap_or("").to_owned();
        if !out.status.success() || version.is_empty() {
            bail!(
                "`zellij --version` said {:?}: not a zellij turnstile knows",
                text.trim()
            );
        }
        Ok(Zellij { program, version })
    }

    /// True for a release turnstile is tested with.
    pub fn supported(&self) -> bool {
        supported(&self.version)
    }

    /// A built-in layout's text (`zellij setup --dump-layout NAME`), and
    /// its swap layouts when it has them.
    pub fn built_in_layout(&self, name: &str) -> Result<(String, Option<String>)> {
        let dump = |flag: &str| {
            Command::new(&self.program)
                .args(["setup", flag, name])
                .output()
                .ok()
                .filter(|o| o.status.success() && !o.stdout.is_empty())
                .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        };
        let layout = dump("--dump-layout").with_context(|| {
            format!("zellij has no built-in layout named {name:?} and there is no layout file of that name")
        })?;
        Ok((layout, dump("--dump-swap-layout")))
    }
}

/// The release of the zellij server that started this process (the bar
/// runs the host from the server), from its executable's `--version`;
/// `None` when the parent is no zellij or does not say.
pub fn server_version() -> Option<String> {
    let parent = std::os::unix::process::parent_id();
    let exe = std::fs::read_link(format!("/proc/{parent}/exe")).ok()?;
    let named_zellij = exe
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("zellij"));
    if !named_zellij {
        return None;
    }
    let out = super::files::within(std::time::Duration::from_secs(2), move || {
        Command::new(exe).arg("--version").output().ok()
    })??;
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace().nth(1).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
    }

    #[test]
    fn paths_follow_zellij_and_xdg() {
        let paths = ZellijPaths::from_env(&env(&[("HOME", "/h")])).unwrap();
        assert_eq!(paths.config_file, Path::new("/h/.config/zellij/config.kdl"));
        assert_eq!(paths.permissions, Path::new("/h/.cache/zellij/permissions.kdl"));
        assert_eq!(paths.layout_dir(None), Path::new("/h/.config/zellij/layouts"));
        let paths = ZellijPaths::from_env(&env(&[
            ("HOME", "/h"),
            ("ZELLIJ_CONFIG_DIR", "/z"),
            ("XDG_CACHE_HOME", "/c"),
        ]))
        .unwrap();
        assert_eq!(paths.config_file, Path::new("/z/config.kdl"));
        assert_eq!(paths.permissions, Path::new("/c/zellij/permissions.kdl"));
        assert_eq!(paths.layout_dir(Some("/l")), Path::new("/l"));
        assert_eq!(
            data_dir(&env(&[("HOME", "/h")])).unwrap(),
            Path::new("/h/.local/share/turnstile")
        );
    }

    #[test]
    fn supported_releases() {
        assert!(supported("0.45.1") && supported("0.44.3"));
        assert!(!supported("0.43.1") && !supported("0.46.0") && !supported("nightly"));
    }
}
