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
    use wasmparser::{ExternalKind, FuncType, Parser, Payload, TypeRef, ValType};

    /// An imported function: its module, name and signature.
    type Import = (String, String, FuncType);
    /// An exported function: its name and signature.
    type Export = (String, FuncType);

    /// The plugin's imported and exported functions, read from its sections.
    fn imports_and_exports(wasm: &[u8]) -> (Vec<Import>, Vec<Export>) {
        let (mut types, mut functions, mut imports, mut exports) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for payload in Parser::new(0).parse_all(wasm) {
            match payload.expect("the plugin parses") {
                Payload::TypeSection(reader) => {
                    for group in reader {
                        types.extend(group.unwrap().into_types().map(|t| t.unwrap_func().clone()));
                    }
                }
                Payload::ImportSection(reader) => {
                    for import in reader {
                        let import = import.unwrap();
                        if let TypeRef::Func(ty) = import.ty {
                            functions.push(ty);
                            imports.push((import.module.to_owned(), import.name.to_owned(), ty));
                        }
                    }
                }
                Payload::FunctionSection(reader) => functions.extend(reader.into_iter().map(Result::unwrap)),
                Payload::ExportSection(reader) => {
                    for export in reader {
                        let export = export.unwrap();
                        if export.kind == ExternalKind::Func {
                            exports.push((export.name.to_owned(), export.index));
                        }
                    }
                }
                _ => {}
            }
        }
        let ty = |index: u32| types[index as usize].clone();
        let imports = imports.into_iter().map(|(m, n, t)| (m, n, ty(t))).collect();
        let exports = exports
            .into_iter()
            .map(|(n, f)| (n, ty(functions[f as usize])))
            .collect();
        (imports, exports)
    }

    /// The exports zellij 0.45.1 calls, with the signatures it asks for
    /// (`get_typed_func` in zellij-server's `plugin_loader.rs`,
    /// `wasm_bridge.rs`, `pipes.rs`; `plugin_version` when it loads one),
    /// and its one host import (`zellij_exports.rs`), as the built plugin has them.
    #[test]
    fn the_embedded_plugin_exports_and_imports_what_zellij_links() {
        let (imports, exports) = imports_and_exports(PLUGIN);
        let sig =
            |params: &[ValType], results: &[ValType]| FuncType::new(params.iter().copied(), results.iter().copied());
        let none = sig(&[], &[]);
        for (name, wanted) in [
            ("_start", none.clone()),
            ("load", none.clone()),
            ("update", sig(&[], &[ValType::I32])),
            ("pipe", sig(&[], &[ValType::I32])),
            ("render", sig(&[ValType::I32, ValType::I32], &[])),
            ("plugin_version", none.clone()),
        ] {
            let found = exports.iter().find(|(n, _)| n == name).map(|(_, t)| t);
            assert_eq!(found, Some(&wanted), "export {name}");
        }
        let (module, name) = ("zellij", "host_run_plugin_command");
        let from_zellij: Vec<_> = imports.iter().filter(|(m, _, _)| m == module).collect();
        assert_eq!(from_zellij.len(), 1, "one import from zellij: {from_zellij:?}");
        assert_eq!((from_zellij[0].1.as_str(), &from_zellij[0].2), (name, &none));
        let others: Vec<_> = imports
            .iter()
            .filter(|(m, _, _)| m != module && m != "wasi_snapshot_preview1")
            .collect();
        assert!(others.is_empty(), "imports zellij does not link: {others:?}");
    }

    #[test]
    fn a_plugin_of_other_bytes_has_another_fingerprint() {
        assert!(PLUGIN.starts_with(b"\0asm\x01\0\0\0"), "not a wasm module");
        assert_eq!(fingerprint(PLUGIN), fingerprint(PLUGIN));
        assert_ne!(fingerprint(PLUGIN), fingerprint(&PLUGIN[1..]));
    }
}
