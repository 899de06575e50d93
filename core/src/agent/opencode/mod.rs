//! OpenCode (`opencode`, a Bun single-file binary; npm `opencode-ai`, its
//! platform package `opencode-linux-x64`): a kind of the event-database
//! family ([`crate::agent::eventdb`]), which reads its screen, its session
//! log (rows of `~/.local/share/opencode/opencode.db`) and its plugin's
//! events. What is OpenCode's own is its names and folders ([`APP`]).
//!
//! Facts checked on 1.18.34 (offline, against a fake Chat Completions API):
//! its config is `~/.config/opencode/opencode.json` (a provider with
//! `@ai-sdk/openai-compatible` and a `baseURL`); plugins load from
//! `~/.config/opencode/plugins/*.js` and `.opencode/plugins/*.js`;
//! `OPENCODE_DISABLE_MODELS_FETCH`, `OPENCODE_DISABLE_AUTOUPDATE` and
//! `OPENCODE_DISABLE_LSP_DOWNLOAD` keep it off the network. An HTTP 500 is
//! retried for ever (`[retrying in 2s attempt #2]` in the footer).

use super::eventdb::{App, EventDbAgent};
use super::{AgentKind, SharedDatabase};

/// OpenCode's names and folders.
pub static APP: App = App {
    kind: AgentKind::OpenCode,
    name: "opencode",
    tag: "oc",
    title: "OpenCode",
    aliases: &[],
    package: "opencode-ai/",
    folder: "opencode",
    database: SharedDatabase {
        file_name: "opencode.db",
    },
    project_folder: ".opencode",
};

/// OpenCode, for the agent model.
pub static OPENCODE: EventDbAgent = EventDbAgent(&APP);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::eventdb::events::EventsClassifier;
    use crate::agent::replay::{assert_cold_agrees_with_incremental, fixture, states};
    use crate::agent::{Agent, AgentLog};
    use crate::State::{Done, Failed, Interrupted, Unknown, Working};
    use std::path::{Path, PathBuf};

    fn argv(s: &str) -> Vec<String> {
        s.split(' ').map(str::to_owned).collect()
    }

    #[test]
    fn opencode_processes_but_not_its_servers() {
        assert!(OPENCODE.runs(&argv("/c/node_modules/opencode-linux-x64/bin/opencode")));
        assert!(OPENCODE.runs(&argv("opencode /work/proj")));
        assert!(OPENCODE.runs(&argv("node /usr/lib/node_modules/opencode-ai/bin/opencode")));
        assert!(!OPENCODE.runs(&argv("opencode serve --port 4096")));
        assert!(!OPENCODE.runs(&argv("opencode run hello")));
        assert!(!OPENCODE.runs(&argv("kilo")));
        assert!(!OPENCODE.runs_command("vim opencode.json"));
        let home = Path::new("/h/.local/share/opencode");
        assert_eq!(
            OPENCODE.log_of_session(home, "ses_1"),
            Some(PathBuf::from("/h/.local/share/opencode/opencode.db/ses_1"))
        );
        assert!(OPENCODE.owns_log("ses_1", "opencode.db", b""));
    }

    fn log(name: &str) -> Vec<u8> {
        fixture("opencode", name)
    }

    #[test]
    fn real_sessions_go_through_their_hand_checked_states() {
        assert_eq!(
            states(AgentKind::OpenCode, &log("1.18.34-tool")),
            [Unknown, Working, Done]
        );
        assert_eq!(
            states(AgentKind::OpenCode, &log("1.18.34-perm")),
            [Unknown, Working, Done]
        );
        assert_eq!(
            states(AgentKind::OpenCode, &log("1.18.34-interrupt")),
            [Unknown, Working, Interrupted, Working, Done]
        );
        // The 500 was retried until Escape: completed with neither finish nor error.
        assert_eq!(
            states(AgentKind::OpenCode, &log("1.18.34-fail")),
            [Unknown, Working, Failed, Working, Interrupted, Working, Done]
        );
        let mut c = EventsClassifier::default();
        c.feed(&log("1.18.34-tool"));
        let v = c.verdict();
        assert_eq!(v.answer.as_deref(), Some("Done: slept 4s."));
        assert!(v.session_id.as_deref().is_some_and(|s| s.starts_with("ses_")));
    }

    #[test]
    fn the_cold_path_agrees_with_the_incremental_one_on_every_prefix() {
        assert_cold_agrees_with_incremental(
            AgentKind::OpenCode,
            "opencode",
            &["1.18.34-tool", "1.18.34-perm", "1.18.34-interrupt", "1.18.34-fail"],
            211,
        );
    }
}
