//! The KDL edits `setup` makes, read and written with the `kdl` crate (never
//! by string search): a node added or changed, every other byte of the
//! user's file kept, comments and odd spacing included. A file that does
//! not parse is refused with its line, and nothing is written.

use crate::error::{bail, Result};
use kdl::{KdlDocument, KdlEntry, KdlNode, KdlValue};
use std::path::Path;

/// The permissions turnstile's plugin asks for, granted ahead so that no
/// prompt appears.
pub const PERMISSIONS: [&str; 8] = [
    "ReadApplicationState",
    "ReadPaneContents",
    "RunCommands",
    "WriteToStdin",
    "ChangeApplicationState",
    "ReadCliPipes",
    "MessageAndLaunchOtherPlugins",
    "WriteToClipboard",
];

/// The name of the layout `setup` writes (`turnstile.kdl` in the layout folder).
pub const LAYOUT_NAME: &str = "turnstile";

/// The bar's pane: the plugin file and the host command it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BarPane {
    /// The plugin file (absolute).
    pub wasm: String,
    /// The `turnstile` binary the plugin runs (absolute).
    pub host_command: String,
}

impl BarPane {
    /// The pane's KDL, its lines indented by `indent`.
    fn kdl(&self, indent: &str) -> String {
        let location = quoted(&format!("file:{}", self.wasm));
        let host = quoted(&self.host_command);
        format!(
            "{indent}pane size=1 borderless=true {{\n\
             {indent}    plugin location={location} {{\n\
             {indent}        host_command {host}\n\
             {indent}    }}\n\
             {indent}}}\n"
        )
    }
}

/// Parses `text` (from `path`); a syntax error names the file and its line.
pub fn parse(text: &str, path: &Path) -> Result<KdlDocument> {
    text.parse::<KdlDocument>().map_err(|e: kdl::KdlError| {
        let line = text[..e.span.offset().min(text.len())].matches('\n').count() + 1;
        let what = e
            .help
            .map_or_else(|| e.kind.to_string(), |h| format!("{}: {h}", e.kind));
        crate::error::Error::msg(format!(
            "{} line {line} is not valid KDL ({what}); nothing was written",
            path.display()
        ))
    })
}

/// The config's `default_layout` (`None`: zellij's built-in `default`).
pub fn default_layout(config: &KdlDocument) -> Option<String> {
    string_arg(config.get("default_layout")?)
}

/// The config's `layout_dir`, when it sets one.
pub fn layout_dir(config: &KdlDocument) -> Option<String> {
    string_arg(config.get("layout_dir")?)
}

/// `config` with `default_layout` naming `layout`: the node's value
/// changed where it is, or a node added at the end.
pub fn set_default_layout(config: &str, path: &Path, layout: &str) -> Result<String> {
    let mut doc = parse(config, path)?;
    match doc.get_mut("default_layout") {
        Some(node) if node.entries().first().is_some_and(|e| e.name().is_none()) => {
            let old = &node.entries()[0];
            let mut entry = KdlEntry::new(layout);
            entry.set_leading(old.leading().unwrap_or(" ").to_owned());
            node.entries_mut()[0] = entry;
        }
        Some(_) => bail!("{}: `default_layout` has no value to change", path.display()),
        None => {
            let mut node = KdlNode::new("default_layout");
            node.push(KdlEntry::new(layout));
            let lead = if config.is_empty() || config.ends_with('\n') {
                ""
            } else {
                "\n"
            };
            node.set_leading(format!(
                "{lead}// turnstile setup: the bar in every tab (`turnstile setup --undo` takes it out)\n"
            ));
            node.set_trailing("\n");
            doc.nodes_mut().push(node);
        }
    }
    Ok(doc.to_string())
}

/// `permissions` granting the plugin at `key` every permission it asks
/// for; unchanged when it has them all already.
pub fn grant(permissions: &str, path: &Path, key: &str) -> Result<String> {
    let mut doc = parse(permissions, path)?;
    let granted = |node: &KdlNode| {
        let has: Vec<&str> = node
            .children()
            .map_or_else(Vec::new, |c| c.nodes().iter().map(|n| n.name().value()).collect());
        PERMISSIONS.iter().all(|p| has.contains(p))
    };
    if doc.nodes().iter().any(|n| n.name().value() == key && granted(n)) {
        return Ok(permissions.to_owned());
    }
    doc.nodes_mut().retain(|n| n.name().value() != key);
    let lines: String = PERMISSIONS.iter().map(|p| format!("    {p}\n")).collect();
    let block = format!("{} {{\n{lines}}}\n", quoted(key));
    let mut node = only_node(&block)?;
    if !permissions.is_empty() && !permissions.ends_with('\n') {
        node.set_leading("\n");
    }
    doc.nodes_mut().push(node);
    Ok(doc.to_string())
}

/// `permissions` without the grant of the plugin at `key` (the rest as
/// it is); unchanged when there is none.
pub fn revoke(permissions: &str, path: &Path, key: &str) -> Result<String> {
    let mut doc = parse(permissions, path)?;
    let before = doc.nodes().len();
    doc.nodes_mut().retain(|n| n.name().value() != key);
    match doc.nodes().len() == before {
        true => Ok(permissions.to_owned()),
        false => Ok(doc.to_string()),
    }
}

/// `config` with `default_layout` back from `ours` to `base` (`None`: the
/// node taken out, zellij's default again); unchanged when it names
/// another layout now (the user chose one since).
pub fn restore_default_layout(config: &str, path: &Path, ours: &str, base: Option<&str>) -> Result<String> {
    let mut doc = parse(config, path)?;
    if default_layout(&doc).as_deref() != Some(ours) {
        return Ok(config.to_owned());
    }
    match base {
        Some(base) => set_default_layout(config, path, base),
        None => {
            doc.nodes_mut().retain(|n| n.name().value() != "default_layout");
            Ok(doc.to_string())
        }
    }
}

/// A layout's text with the bar in every tab, tabs opened later included:
/// in each tab template after its `children`, or, in a layout of panes
/// alone (zellij's `default`, `compact`), before the plugin panes at the
/// bottom. A layout that has the bar already is returned unchanged.
pub fn layout_with_bar(layout: &str, path: &Path, bar: &BarPane) -> Result<String> {
    let mut doc = parse(layout, path)?;
    if has_bar(&doc, &bar.wasm) {
        return Ok(layout.to_owned());
    }
    let Some(root) = doc.get_mut("layout") else {
        bail!("{} has no `layout` node: not a zellij layout", path.display());
    };
    let body = root.ensure_children();
    let templated = body
        .nodes()
        .iter()
        .any(|n| matches!(n.name().value(), "tab" | "default_tab_template"));
    if templated {
        insert_in_templates(body, bar)?;
        if body.get("default_tab_template").is_none() {
            let indent = indent_of(body);
            let template = format!(
                "{indent}default_tab_template {{\n{indent}    children\n{}{indent}}}\n",
                bar.kdl(&format!("{indent}    "))
            );
            let mut node = only_node(&template)?;
            node.set_leading(format!("\n{indent}"));
            body.nodes_mut().insert(0, node);
        }
    } else {
        insert_bar(body, bar)?;
    }
    Ok(doc.to_string())
}

/// A swap layout file's text with the bar in its tab templates.
pub fn swap_with_bar(swap: &str, path: &Path, bar: &BarPane) -> Result<String> {
    let mut doc = parse(swap, path)?;
    if has_bar(&doc, &bar.wasm) {
        return Ok(swap.to_owned());
    }
    insert_in_templates(&mut doc, bar)?;
    Ok(doc.to_string())
}

/// True when a plugin pane of `doc` loads `wasm` (or any `turnstile.wasm`).
pub fn has_bar(doc: &KdlDocument, wasm: &str) -> bool {
    doc.nodes().iter().any(|node| {
        let loads = node.name().value() == "plugin"
            && node
                .get("location")
                .and_then(|e| e.value().as_string())
                .is_some_and(|l| {
                    let file = l.strip_prefix("file:").unwrap_or(l);
                    file == wasm || file.ends_with("/turnstile.wasm")
                });
        loads || node.children().is_some_and(|c| has_bar(c, wasm))
    })
}

/// The bar inserted in every `tab_template` and `default_tab_template` of `doc`.
fn insert_in_templates(doc: &mut KdlDocument, bar: &BarPane) -> Result<()> {
    for node in doc.nodes_mut() {
        if matches!(node.name().value(), "tab_template" | "default_tab_template") {
            insert_bar(node.ensure_children(), bar)?;
        }
    }
    Ok(())
}

/// The bar inserted among `panes`: after the pane holding `children`, else
/// before the plugin panes at the end (zellij's status bars), else last.
fn insert_bar(panes: &mut KdlDocument, bar: &BarPane) -> Result<()> {
    let nodes = panes.nodes();
    let at = match nodes.iter().position(holds_children) {
        Some(i) => i + 1,
        None => {
            let trailing_plugins = nodes.iter().rev().take_while(|n| is_plugin_pane(n)).count();
            nodes.len() - trailing_plugins.min(nodes.len().saturating_sub(1))
        }
    };
    let indent = indent_of(panes);
    let mut node = only_node(&bar.kdl(&indent))?;
    node.set_leading(match at {
        0 => format!("\n{indent}"),
        _ => indent.clone(),
    });
    // A node written on its own line: the one before it must end its line.
    if at > 0 {
        let before = &mut panes.nodes_mut()[at - 1];
        if !before.trailing().is_some_and(|t| t.contains('\n')) {
            before.set_trailing("\n");
        }
    }
    panes.nodes_mut().insert(at, node);
    Ok(())
}

/// True for `children`, or a node that holds it somewhere inside.
fn holds_children(node: &KdlNode) -> bool {
    node.name().value() == "children" || node.children().is_some_and(|c| c.nodes().iter().any(holds_children))
}

/// True for a pane that only shows a plugin (`pane … { plugin … }`).
fn is_plugin_pane(node: &KdlNode) -> bool {
    node.name().value() == "pane"
        && node
            .children()
            .is_some_and(|c| !c.nodes().is_empty() && c.nodes().iter().all(|n| n.name().value() == "plugin"))
}

/// The indentation of `doc`'s nodes (that of its first node), four spaces
/// when it has none.
fn indent_of(doc: &KdlDocument) -> String {
    let leading = doc.nodes().first().and_then(KdlNode::leading).unwrap_or("    ");
    let last_line = leading.rsplit('\n').next().unwrap_or("");
    match last_line.chars().all(|c| c == ' ' || c == '\t') && !last_line.is_empty() {
        true => last_line.to_owned(),
        false => "    ".to_owned(),
    }
}

/// The one node of a KDL snippet this module wrote.
fn only_node(snippet: &str) -> Result<KdlNode> {
    let doc: KdlDocument = snippet
        .parse()
        .map_err(|e: kdl::KdlError| crate::error::Error::msg(format!("turnstile wrote bad KDL: {e}")))?;
    doc.nodes()
        .first()
        .cloned()
        .ok_or_else(|| crate::error::Error::msg("turnstile wrote an empty KDL snippet"))
}

fn string_arg(node: &KdlNode) -> Option<String> {
    node.entries()
        .iter()
        .find(|e| e.name().is_none())
        .and_then(|e| e.value().as_string())
        .map(str::to_owned)
}

/// `s` as a KDL string, escaped.
pub fn quoted(s: &str) -> String {
    KdlValue::String(s.to_owned()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revoke_takes_out_our_grant_alone_from_a_file_zellij_rewrote() {
        let path = Path::new("permissions.kdl");
        let granted = grant(
            "\"/other.wasm\" {\n    ReadApplicationState\n}\n",
            path,
            "/h/turnstile.wasm",
        )
        .unwrap();
        // zellij rewrites the file when another plugin is granted.
        let rewritten = format!("{granted}\"/third.wasm\" {{\n    RunCommands\n}}\n");
        let revoked = revoke(&rewritten, path, "/h/turnstile.wasm").unwrap();
        assert!(!revoked.contains("turnstile.wasm"), "{revoked}");
        assert!(
            revoked.contains("\"/other.wasm\"") && revoked.contains("\"/third.wasm\""),
            "{revoked}"
        );
        assert_eq!(revoke(&revoked, path, "/h/turnstile.wasm").unwrap(), revoked);
    }

    #[test]
    fn restore_default_layout_puts_the_users_back_unless_they_chose_another() {
        let path = Path::new("config.kdl");
        let edited = "theme \"dracula\"\ndefault_layout \"turnstile\"\nkeybinds {}\n";
        let back = restore_default_layout(edited, path, "turnstile", Some("compact")).unwrap();
        assert_eq!(back, "theme \"dracula\"\ndefault_layout \"compact\"\nkeybinds {}\n");
        let none = restore_default_layout(edited, path, "turnstile", None).unwrap();
        assert_eq!(none, "theme \"dracula\"\nkeybinds {}\n");
        let chosen = "default_layout \"mine\"\n";
        assert_eq!(
            restore_default_layout(chosen, path, "turnstile", Some("compact")).unwrap(),
            chosen
        );
    }

    const USER_CONFIG: &str = "// my zellij\ntheme \"dracula\"   // dark\n\nkeybinds {\n    normal {\n        bind \"Alt x\" { CloseFocus; }\n    }\n}\ndefault_layout \"compact\"\nweird_unknown_node 1 2 { x; }\n";

    fn bar() -> BarPane {
        BarPane {
            wasm: "/h/.local/share/turnstile/turnstile.wasm".into(),
            host_command: "/h/.cargo/bin/turnstile".into(),
        }
    }

    fn p() -> &'static Path {
        Path::new("/h/.config/zellij/config.kdl")
    }

    #[test]
    fn default_layout_is_changed_in_place_and_everything_else_kept() {
        let out = set_default_layout(USER_CONFIG, p(), LAYOUT_NAME).unwrap();
        assert_eq!(
            out,
            USER_CONFIG.replace("default_layout \"compact\"", "default_layout \"turnstile\"")
        );
        assert_eq!(
            default_layout(&parse(USER_CONFIG, p()).unwrap()).as_deref(),
            Some("compact")
        );
    }

    #[test]
    fn a_config_without_default_layout_gets_one_line_at_the_end() {
        let config = "theme \"nord\"\n  /* odd */  simplified_ui true\n";
        let out = set_default_layout(config, p(), LAYOUT_NAME).unwrap();
        assert!(out.starts_with(config), "{out}");
        assert!(out.ends_with("default_layout \"turnstile\"\n"), "{out}");
        assert_eq!(default_layout(&parse(&out, p()).unwrap()).as_deref(), Some("turnstile"));
        let empty = set_default_layout("", p(), LAYOUT_NAME).unwrap();
        assert!(empty.ends_with("default_layout \"turnstile\"\n"), "{empty}");
    }

    #[test]
    fn a_config_that_does_not_parse_is_refused_with_its_line() {
        let err = set_default_layout("theme \"a\"\nkeybinds {\n  bind \"x\" {\n", p(), LAYOUT_NAME).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("config.kdl line "), "{text}");
        assert!(text.contains("nothing was written"), "{text}");
    }

    #[test]
    fn permissions_are_granted_once() {
        let key = "/h/.local/share/turnstile/turnstile.wasm";
        let other = "\"/other.wasm\" {\n    RunCommands\n}\n";
        let once = grant(other, p(), key).unwrap();
        assert!(once.starts_with(other), "{once}");
        let doc = parse(&once, p()).unwrap();
        let node = doc.nodes().iter().find(|n| n.name().value() == key).unwrap();
        assert_eq!(node.children().unwrap().nodes().len(), PERMISSIONS.len());
        assert_eq!(grant(&once, p(), key).unwrap(), once, "idempotent");
        let partial = format!("{other}\"{key}\" {{\n    RunCommands\n}}\n");
        let replaced = grant(&partial, p(), key).unwrap();
        assert_eq!(replaced.matches(key).count(), 1, "{replaced}");
    }

    #[test]
    fn zellij_default_layout_gets_the_bar_above_the_status_bar() {
        let default = "layout {\n    pane size=1 borderless=true {\n        plugin location=\"tab-bar\"\n    }\n    pane\n    pane size=1 borderless=true {\n        plugin location=\"status-bar\"\n    }\n}\n";
        let out = layout_with_bar(default, Path::new("default"), &bar()).unwrap();
        let tab = out.find("tab-bar").unwrap();
        let ours = out.find("turnstile.wasm").unwrap();
        let status = out.find("status-bar").unwrap();
        assert!(tab < ours && ours < status, "{out}");
        assert!(out.contains("host_command \"/h/.cargo/bin/turnstile\""), "{out}");
        assert!(has_bar(&parse(&out, p()).unwrap(), &bar().wasm));
        assert_eq!(layout_with_bar(&out, p(), &bar()).unwrap(), out, "idempotent");
        insta::assert_snapshot!(out);
    }

    #[test]
    fn compact_layout_and_its_swap_templates_get_the_bar() {
        let compact = "layout {\n    pane\n    pane size=1 borderless=true {\n        plugin location=\"compact-bar\"\n    }\n}\n";
        let out = layout_with_bar(compact, p(), &bar()).unwrap();
        assert!(
            out.find("turnstile.wasm").unwrap() < out.find("compact-bar").unwrap(),
            "{out}"
        );
        let swap = "tab_template name=\"ui\" {\n   children\n   pane size=1 borderless=true {\n       plugin location=\"compact-bar\"\n   }\n}\n\nswap_tiled_layout name=\"vertical\" {\n    ui max_panes=5 {\n        pane split_direction=\"vertical\" {\n            pane\n            pane { children; }\n        }\n    }\n}\n";
        let out = swap_with_bar(swap, p(), &bar()).unwrap();
        let doc = parse(&out, p()).unwrap();
        assert!(has_bar(
            doc.get("tab_template").unwrap().children().unwrap(),
            &bar().wasm
        ));
        assert!(!has_bar(
            doc.get("swap_tiled_layout").unwrap().children().unwrap(),
            &bar().wasm
        ));
        assert!(
            out.ends_with(&swap[swap.find("\nswap_tiled_layout").unwrap()..]),
            "{out}"
        );
    }

    #[test]
    fn a_layout_of_tabs_gets_a_template_and_its_own_templates_the_bar() {
        let tabs = "layout {\n    // my tabs\n    tab name=\"code\" {\n        pane command=\"hx\"\n    }\n    tab_template name=\"wide\" {\n        pane split_direction=\"vertical\" {\n            children\n        }\n    }\n}\n";
        let out = layout_with_bar(tabs, p(), &bar()).unwrap();
        let doc = parse(&out, p()).unwrap();
        let body = doc.get("layout").unwrap().children().unwrap();
        assert!(has_bar(
            body.get("default_tab_template").unwrap().children().unwrap(),
            &bar().wasm
        ));
        assert!(has_bar(
            body.get("tab_template").unwrap().children().unwrap(),
            &bar().wasm
        ));
        assert!(
            out.contains("// my tabs") && out.contains("pane command=\"hx\""),
            "{out}"
        );
    }

    #[test]
    fn a_file_without_a_layout_node_is_refused() {
        assert!(layout_with_bar("pane\n", p(), &bar()).is_err());
        assert!(layout_with_bar("layout {", p(), &bar())
            .unwrap_err()
            .to_string()
            .contains("line 1"));
    }

    #[test]
    fn odd_paths_are_escaped() {
        let odd = BarPane {
            wasm: "/h/we\"ird/turnstile.wasm".into(),
            host_command: "/h/a b\\c/turnstile".into(),
        };
        let out = layout_with_bar("layout {\n    pane\n}\n", p(), &odd).unwrap();
        let doc = parse(&out, p()).unwrap();
        assert!(has_bar(&doc, &odd.wasm), "{out}");
        assert!(out.contains(r#"host_command "/h/a b\\c/turnstile""#), "{out}");
    }
}
