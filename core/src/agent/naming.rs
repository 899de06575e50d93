//! Names the agents give the folders of a project, in neutral terms: each
//! kind that keys its logs by the working directory says which scheme it
//! uses, and no kind borrows another's.

use std::path::Path;

/// A working directory as one folder name, every character but ASCII
/// letters and digits a `-` (`/home/u/p.x` → `-home-u-p-x`): Claude Code's
/// project folders, and the key Codex's sessions are grouped by here.
pub fn dashed(cwd: &Path) -> String {
    cwd.to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_non_alphanumeric_becomes_a_dash() {
        assert_eq!(
            dashed(Path::new("/home/u/wrk/a/2.1.332-tool/proj")),
            "-home-u-wrk-a-2-1-332-tool-proj"
        );
    }
}
