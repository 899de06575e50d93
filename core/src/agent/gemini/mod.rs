//! Gemini CLI (`@google/gemini-cli`, run by node): its screen and title
//! rules ([`screen`]) and its chat log classifier ([`chat`]).

pub mod chat;
pub mod screen;

/// True when a process's argv runs Gemini CLI: `node …/gemini.js` (the
/// bundle), `node …/bin/gemini`, or a `gemini` launcher.
pub fn is_gemini_argv(argv: &[String]) -> bool {
    let program = |arg: &String| arg.rsplit('/').next().unwrap_or(arg).to_owned();
    match argv.first().map(program).as_deref() {
        Some("gemini") => true,
        Some("node" | "nodejs") => argv
            .iter()
            .skip(1)
            .find(|a| !a.starts_with('-'))
            .map(program)
            .is_some_and(|p| p == "gemini.js" || p == "gemini"),
        _ => false,
    }
}

/// True when a command line zellij reports for a pane runs Gemini CLI.
pub fn is_gemini_command(command: &str) -> bool {
    let argv: Vec<String> = command.split_whitespace().map(str::to_owned).collect();
    is_gemini_argv(&argv)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemini_processes() {
        let argv = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
        assert!(is_gemini_argv(&argv(
            "node /c/node_modules/@google/gemini-cli/bundle/gemini.js"
        )));
        assert!(is_gemini_argv(&argv("node --no-warnings=DEP0040 /usr/bin/gemini")));
        assert!(is_gemini_argv(&argv("/usr/local/bin/gemini -m flash")));
        assert!(!is_gemini_argv(&argv("node server.js")));
        assert!(!is_gemini_command("vim gemini.md"));
    }
}
