//! The zellij plugin built into the `turnstile` binary (`build.rs`), which
//! `setup` writes out: one installed file is all a user needs, and the
//! plugin and the host it runs always come from the same build.

/// `turnstile.wasm`, as this build made it.
pub const PLUGIN: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/turnstile.wasm"));

/// This build's version (the plugin's and the host's).
pub const VERSION: &str = turnstile_core::identity::VERSION;

/// A short fingerprint of the embedded plugin (FNV-1a of its bytes, hex):
/// a plugin file with another fingerprint comes from another build.
pub fn fingerprint(bytes: &[u8]) -> String {
    format!("{:016x}", turnstile_core::text::fnv1a(bytes.iter().copied()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_plugin_is_a_wasm_module_with_the_plugin_exports() {
        assert!(PLUGIN.starts_with(b"\0asm\x01\0\0\0"), "not a wasm module");
        // zellij calls these exports; a module without them is not our plugin.
        for export in [&b"load"[..], b"update", b"render", b"pipe", b"plugin_version"] {
            assert!(
                PLUGIN.windows(export.len()).any(|w| w == export),
                "no {:?}",
                String::from_utf8_lossy(export)
            );
        }
        assert_eq!(fingerprint(PLUGIN), fingerprint(PLUGIN));
        assert_ne!(fingerprint(PLUGIN), fingerprint(&PLUGIN[1..]));
    }
}
