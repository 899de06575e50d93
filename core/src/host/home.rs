//! The agents' homes, by kind. Each kind's home and the paths in it are
//! resolved in its own folder (`agent/<kind>/home.rs`); this module holds
//! them together for the host and gives the simulated agents theirs.

pub use crate::agent::claude::home::{project_folder_name, ClaudeHome};
pub use crate::agent::codex::home::CodexHome;
pub use crate::agent::gemini::home::GeminiHome;
use crate::agent::AgentKind;
use std::path::{Path, PathBuf};

/// The simulated agents' default home of `kind`, under `tmpdir` (default:
/// the system's temporary folder), never the user's real one.
pub fn demo_home(kind: AgentKind, tmpdir: Option<&Path>) -> PathBuf {
    let tmp = tmpdir.map(Path::to_path_buf).unwrap_or_else(std::env::temp_dir);
    tmp.join("turnstile-demo").join(format!(".{}", kind.name()))
}
