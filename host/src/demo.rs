//! `turnstile demo`: four simulated agents and the bar in a zellij of their
//! own, from the installed binary alone (no clone, no account, no network).
//!
//! Everything the demo needs lives in a private folder of turnstile's data
//! folder (`demo/`): the plugin this binary carries, a config, the layout,
//! and a zellij cache folder whose `permissions.kdl` grants the plugin, so
//! no prompt appears and none of the user's own zellij files is touched.

use super::files;
use super::setup::edits;
use super::state::ensure_private;
use super::zellij::{self, Zellij};
use crate::error::{bail, Context, Result};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The demo's four agents: pane name, kind, seed, pace.
const AGENTS: [(&str, &str, u32, &str); 4] = [
    ("planner", "claude", 11, "1"),
    ("coder", "qwen", 23, "1"),
    ("reviewer", "gemini", 37, "1.4"),
    ("tests", "codex", 41, "0.8"),
];

/// The zellij run that shows the demo: its program, arguments and the
/// environment variables to set.
#[derive(Debug)]
pub struct DemoRun {
    /// The zellij executable.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Variables set for it (its cache folder, a private temporary folder).
    pub env: Vec<(String, PathBuf)>,
}

/// Writes the demo's folder for `exe` (this binary) and says how to start it.
pub fn prepare(var: &dyn Fn(&str) -> Option<String>, exe: &Path) -> Result<DemoRun> {
    let zellij = Zellij::find()?;
    if !zellij.supported() {
        bail!(
            "zellij {} is not a release turnstile supports: install zellij 0.44 or 0.45",
            zellij.version
        );
    }
    let dir = zellij::data_dir(var)?.join("demo");
    private_dir(&dir)?;
    let wasm = dir.join("turnstile.wasm");
    write_if_changed(&wasm, super::embedded::PLUGIN)?;
    let config = "show_startup_tips false\nshow_release_notes false\n";
    write_if_changed(&dir.join("config.kdl"), config.as_bytes())?;
    let layout = dir.join("demo.kdl");
    write_if_changed(&layout, layout_text(exe, &wasm).as_bytes())?;
    let cache = dir.join("cache");
    let permissions = cache.join("zellij/permissions.kdl");
    let granted = edits::grant("", &permissions, &wasm.display().to_string())?;
    private_dir(permissions.parent().expect("a parent folder"))?;
    write_if_changed(&permissions, granted.as_bytes())?;
    let tmp = temp_dir();
    private_dir(&tmp)?;
    let args = [
        "--config-dir".into(),
        dir.clone().into(),
        "--new-session-with-layout".into(),
        layout.into(),
    ];
    Ok(DemoRun {
        program: zellij.program,
        args: args.into(),
        env: vec![("XDG_CACHE_HOME".into(), cache), ("TMPDIR".into(), tmp)],
    })
}

/// The demo's layout: the agents in a two-by-two grid, the bar above
/// zellij's status bar; every command is `exe` itself.
fn layout_text(exe: &Path, wasm: &Path) -> String {
    let quote = |s: &str| edits::quoted(s);
    let exe = quote(&exe.display().to_string());
    let pane = |(name, kind, seed, pace): (&str, &str, u32, &str)| {
        format!(
            "            pane name=\"{name}\" command={exe} {{\n                args \"demo-agent\" \"--name\" \"{name}\" \"--kind\" \"{kind}\" \"--seed\" \"{seed}\" \"--pace\" \"{pace}\"\n            }}\n"
        )
    };
    let column = |pair: &[(&str, &str, u32, &str)]| {
        let panes: String = pair.iter().copied().map(pane).collect();
        format!("        pane split_direction=\"horizontal\" {{\n{panes}        }}\n")
    };
    format!(
        "// turnstile demo: four simulated agents and the bar (written by `turnstile demo`).\n\
         layout {{\n    pane size=1 borderless=true {{\n        plugin location=\"zellij:tab-bar\"\n    }}\n    \
         pane split_direction=\"vertical\" {{\n{}{}    }}\n    pane size=1 borderless=true {{\n        \
         plugin location={} {{\n            host_command {exe}\n        }}\n    }}\n    \
         pane size=2 borderless=true {{\n        plugin location=\"zellij:status-bar\"\n    }}\n}}\n",
        column(&AGENTS[..2]),
        column(&AGENTS[2..]),
        quote(&format!("file:{}", wasm.display())),
    )
}

/// The demo's temporary folder, its zellij's `TMPDIR`: the simulated
/// agents write under it, and zellij keeps the session's socket there (so
/// the path stays short: a socket path has at most 107 bytes). One per
/// user, private, so no other local user can plant files in it.
pub fn temp_dir() -> PathBuf {
    std::env::temp_dir().join(format!("turnstile-demo-{}", unsafe { libc::getuid() }))
}

/// Creates `dir` and its missing parents (0700) and checks it is a
/// private folder of this user's.
fn private_dir(dir: &Path) -> Result<()> {
    let create = || -> std::io::Result<()> {
        std::os::unix::fs::DirBuilderExt::mode(std::fs::DirBuilder::new().recursive(true), 0o700).create(dir)?;
        ensure_private(dir)
    };
    create().with_context(|| format!("cannot make the private folder {}", dir.display()))
}

/// Writes `bytes` to `path` (private) unless it holds them already.
fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<()> {
    if files::read_capped(path, 64 << 20).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    files::write_atomic(path, bytes, 0o600).with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_parses_and_runs_this_binary_in_every_pane_and_as_host() {
        let text = layout_text(Path::new("/opt/a b/turnstile"), Path::new("/h/demo/turnstile.wasm"));
        let doc = edits::parse(&text, Path::new("demo.kdl")).expect("the demo layout is KDL");
        assert!(edits::has_bar(&doc, "/h/demo/turnstile.wasm"), "{text}");
        assert_eq!(text.matches("command=\"/opt/a b/turnstile\"").count(), 4, "{text}");
        assert!(text.contains("host_command \"/opt/a b/turnstile\""), "{text}");
        for (name, kind, _, _) in AGENTS {
            assert!(
                text.contains(&format!("\"--name\" \"{name}\" \"--kind\" \"{kind}\"")),
                "{text}"
            );
        }
    }
}
