//! Embeds the zellij plugin (`turnstile.wasm`) in the `turnstile` binary, so
//! that one installed file is all a user needs (`turnstile setup` writes the
//! plugin out). The plugin builds only turnstile-core, never this crate.
//!
//! Where the plugin comes from, first found:
//! 1. `TURNSTILE_PLUGIN_WASM`: a plugin file already built (`scripts/test`
//!    sets it to `scripts/build-plugin`'s output);
//! 2. the plugin's sources beside this crate (a clone): built here for
//!    `wasm32-wasip1` into this build's own folder, shrunk by `wasm-opt` when
//!    one is on PATH (or named by `TURNSTILE_WASM_OPT`);
//! 3. `assets/turnstile.wasm`, the file a published package carries
//!    (`scripts/release` puts it there).

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const TARGET: &str = "wasm32-wasip1";

fn main() {
    println!("cargo:rerun-if-env-changed=TURNSTILE_PLUGIN_WASM");
    println!("cargo:rerun-if-env-changed=TURNSTILE_WASM_OPT");
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("turnstile.wasm");
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let workspace = manifest.parent().expect("the crate has a parent folder").to_path_buf();
    let built = match env::var_os("TURNSTILE_PLUGIN_WASM").filter(|v| !v.is_empty()) {
        Some(given) => {
            let given = PathBuf::from(given);
            println!("cargo:rerun-if-changed={}", given.display());
            given
        }
        None if workspace.join("plugin/Cargo.toml").is_file() => build_plugin(&workspace, &out),
        None => {
            let bundled = manifest.join("assets/turnstile.wasm");
            println!("cargo:rerun-if-changed={}", bundled.display());
            bundled
        }
    };
    let bytes = fs::read(&built).unwrap_or_else(|e| panic!("turnstile's plugin {}: {e}", built.display()));
    assert!(
        bytes.starts_with(b"\0asm"),
        "{} is not a wasm module: rebuild it with scripts/build-plugin",
        built.display()
    );
    if built != out {
        fs::write(&out, bytes).expect("write the embedded plugin");
    }
}

/// Builds the plugin from the workspace's sources and returns its file.
fn build_plugin(workspace: &Path, out: &Path) -> PathBuf {
    for watched in [
        "plugin/src",
        "plugin/Cargo.toml",
        "shim/src",
        "shim/Cargo.toml",
        "core/src",
        "core/Cargo.toml",
        "Cargo.lock",
        "Cargo.toml",
    ] {
        println!("cargo:rerun-if-changed={}", workspace.join(watched).display());
    }
    ensure_target();
    let target_dir = out.with_file_name("plugin-target");
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .current_dir(workspace)
        .args([
            "build",
            "--profile",
            "wasm",
            "-p",
            "turnstile-plugin",
            "--target",
            TARGET,
        ])
        .arg("--target-dir")
        .arg(&target_dir);
    if workspace.join("Cargo.lock").is_file() {
        build.arg("--locked");
    }
    // The outer build's settings are for the host, and its features
    // (`CARGO_FEATURE_*`, `DEP_*`) are not the plugin's.
    let inherited = env::vars_os()
        .filter_map(|(k, _)| k.into_string().ok())
        .filter(|k| k.starts_with("CARGO_FEATURE_") || k.starts_with("CARGO_CFG_") || k.starts_with("DEP_"));
    let host_only = [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
    ];
    for var in inherited.chain(host_only.map(String::from)) {
        build.env_remove(var);
    }
    let status = build.status().expect("run cargo to build the plugin");
    assert!(
        status.success(),
        "building turnstile's zellij plugin for {TARGET} failed (see above)"
    );
    let wasm = target_dir.join(TARGET).join("wasm/turnstile-plugin.wasm");
    shrink(&wasm, out).unwrap_or(wasm)
}

/// The wasm target, added through rustup when it is missing (a one-line
/// install from a clone needs nothing else).
fn ensure_target() {
    let Ok(listed) = Command::new("rustup").args(["target", "list", "--installed"]).output() else {
        return; // no rustup: a toolchain that has the target, or a clear error from cargo
    };
    if String::from_utf8_lossy(&listed.stdout)
        .lines()
        .any(|l| l.trim() == TARGET)
    {
        return;
    }
    println!(
        "cargo:warning=adding the {TARGET} target (rustup target add {TARGET}) to build turnstile's zellij plugin"
    );
    let added = Command::new("rustup").args(["target", "add", TARGET]).status();
    assert!(
        added.is_ok_and(|s| s.success()),
        "turnstile embeds its zellij plugin, built for {TARGET}: run `rustup target add {TARGET}` and install again"
    );
}

/// `wasm-opt -Oz` when one is at hand (~150 KB smaller); None otherwise.
fn shrink(wasm: &Path, out: &Path) -> Option<PathBuf> {
    let opt = env::var_os("TURNSTILE_WASM_OPT").unwrap_or_else(|| "wasm-opt".into());
    let features = [
        "--enable-bulk-memory",
        "--enable-sign-ext",
        "--enable-nontrapping-float-to-int",
        "--enable-mutable-globals",
    ];
    let status = Command::new(opt)
        .arg("-Oz")
        .args(features)
        .arg(wasm)
        .arg("-o")
        .arg(out)
        .status();
    status.is_ok_and(|s| s.success()).then(|| out.to_path_buf())
}
