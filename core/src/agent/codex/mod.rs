//! Codex CLI (`@openai/codex`, a static binary named `codex`): its screen
//! and title rules ([`screen`]) and its rollout classifier ([`rollout`]).

pub mod rollout;
pub mod screen;

/// True when a process's argv runs Codex CLI: the native binary, or its
/// node launcher (`node …/bin/codex.js`).
///
/// Codex's own helpers (its app-server daemon, which holds the rollouts
/// open, an MCP server) are not agents.
pub fn is_codex_argv(argv: &[String]) -> bool {
    let program = |arg: &String| arg.rsplit('/').next().unwrap_or(arg).to_owned();
    let (codex, rest) = match argv.first().map(program).as_deref() {
        Some("codex") => (true, argv.get(1..)),
        Some("node" | "nodejs") => (
            argv.get(1)
                .map(program)
                .is_some_and(|p| p == "codex.js" || p == "codex"),
            argv.get(2..),
        ),
        _ => (false, None),
    };
    let helper = rest
        .and_then(<[String]>::first)
        .is_some_and(|sub| matches!(sub.as_str(), "app-server" | "mcp-server"));
    codex && !helper
}

/// True when a command line zellij reports for a pane runs Codex CLI.
pub fn is_codex_command(command: &str) -> bool {
    let argv: Vec<String> = command.split_whitespace().map(str::to_owned).collect();
    is_codex_argv(&argv)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_processes() {
        let argv = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
        assert!(is_codex_argv(&argv(
            "/root/.cache/x/vendor/x86_64-unknown-linux-musl/bin/codex"
        )));
        assert!(is_codex_argv(&argv(
            "node /usr/lib/node_modules/@openai/codex/bin/codex.js --yolo"
        )));
        assert!(!is_codex_argv(&argv("vim codex.md")));
        assert!(!is_codex_argv(&argv("/h/bin/codex app-server --listen unix://")));
        assert!(!is_codex_argv(&argv("/h/bin/codex app-server --listen unix://")));
        assert!(is_codex_command("codex resume"));
        assert!(!is_codex_command("claude"));
    }
}
