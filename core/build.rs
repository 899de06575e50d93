//! Names this build of turnstile-core by its sources (`TURNSTILE_BUILD`):
//! the plugin and the host compile this crate from the same files, so a
//! plugin and a host that carry the same hash come from one build.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};

fn main() {
    stamp_build();
}

/// Names this build of the crate by its sources: `TURNSTILE_BUILD`, an
/// FNV-1a hash of every `.rs` file under `src/` (path and bytes, in path
/// order). The plugin and the host compile this crate from the same
/// sources, so the same hash says they come from one build; a published
/// package carries the same files, so it names the same build as its clone.
fn stamp_build() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let src = manifest.join("src");
    println!("cargo:rerun-if-changed={}", src.display());
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for file in &files {
        let relative = file
            .strip_prefix(&src)
            .unwrap_or(file)
            .to_string_lossy()
            .replace('\\', "/");
        let bytes = fs::read(file).unwrap_or_else(|e| panic!("read {}: {e}", file.display()));
        for byte in relative.bytes().chain([0]).chain(bytes) {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    println!("cargo:rustc-env=TURNSTILE_BUILD={:08x}", hash >> 32);
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}
