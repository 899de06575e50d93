//! Claude Code (`@anthropic-ai/claude-code`: the native `claude` binary,
//! or `cli.js` run by node): how its process and its pane's command are
//! recognised, its screen rules ([`screen`]), its transcript classifier
//! ([`transcript`]) and its session status file ([`session`]).

pub mod screen;
pub mod session;
pub mod transcript;

/// Command names that run Claude Code.
const COMMANDS: &[&str] = &["claude", "claude-code"];

/// True when a pane's running command (as zellij reports it) is Claude Code.
pub fn is_claude_command(command: &str) -> bool {
    command.split_whitespace().take(2).any(|word| {
        let name = word.rsplit('/').next().unwrap_or(word);
        COMMANDS.contains(&name) || word.contains("claude-code/cli")
    })
}

/// True when a process's argv runs Claude Code (native or `cli.js`).
pub fn is_claude_argv(argv: &[String]) -> bool {
    !argv.is_empty() && is_claude_command(&argv.iter().take(3).cloned().collect::<Vec<_>>().join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argvs() {
        let argv = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
        assert!(is_claude_argv(&argv("node /x/@anthropic-ai/claude-code/cli.js")));
        assert!(is_claude_argv(&argv("/home/u/.local/bin/claude --resume")));
        assert!(!is_claude_argv(&argv("/usr/local/bin/turnstile status")));
        assert!(!is_claude_argv(&[]));
    }

    #[test]
    fn commands() {
        assert!(is_claude_command("claude"));
        assert!(is_claude_command(
            "/home/u/.local/bin/claude --dangerously-skip-permissions"
        ));
        assert!(is_claude_command(
            "node /usr/lib/node_modules/@anthropic-ai/claude-code/cli.js"
        ));
        assert!(!is_claude_command("vim claude.md"));
        assert!(!is_claude_command("bash"));
    }
}
