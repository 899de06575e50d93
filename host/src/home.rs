//! The simulated agents' homes. A real agent's home and the paths in it
//! are resolved by its kind ([`turnstile_core::agent::AgentLog::home`], in
//! `agent/<kind>/home.rs`).

use std::path::{Path, PathBuf};
use turnstile_core::agent::AgentKind;

/// The simulated agents' default home of `kind`, under `tmpdir` (default:
/// the system's temporary folder), never the user's real one.
pub fn demo_home(kind: AgentKind, tmpdir: Option<&Path>) -> PathBuf {
    let tmp = tmpdir.map(Path::to_path_buf).unwrap_or_else(std::env::temp_dir);
    tmp.join("turnstile-demo").join(format!(".{}", kind.name()))
}
