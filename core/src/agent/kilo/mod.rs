//! Kilo CLI (`kilo`, a Bun single-file binary; npm `@kilocode/cli`, its
//! platform package `@kilocode/cli-linux-x64`): a fork of OpenCode, so a
//! kind of the event-database family ([`crate::agent::eventdb`]), which
//! reads its screen, its session log (rows of
//! `~/.local/share/kilo/kilo.db`) and its plugin's events. What is Kilo's
//! own is its names and folders ([`APP`]).
//!
//! Facts checked on 7.7.9 (offline, against a fake Chat Completions API):
//! `kilo debug paths` names its data `~/.local/share/kilo`, config
//! `~/.config/kilo` (`kilo.json`: a provider with
//! `@ai-sdk/openai-compatible` and a `baseURL`, OpenCode's schema);
//! plugins load from `~/.config/kilo/plugins/*.js` and
//! `.kilo/plugins/*.js`. `KILO_DISABLE_MODELS_FETCH`,
//! `KILO_DISABLE_AUTOUPDATE`, `KILO_DISABLE_LSP_DOWNLOAD` and
//! `KILO_DISABLE_SESSION_INGEST` keep it off the network. Its database has
//! OpenCode's `event` and `session` tables (and more of its own). Its
//! screen is OpenCode's: the end line names its mode (`▣  Code · <model> ·
//! 9.9s`), the placeholder is `Ask anything... "<a suggestion>"`, the
//! approval dialog `△ Permission required`. Its user message carries an
//! `<environment_details>` part after the person's words.

use super::eventdb::{App, EventDbAgent};
use super::{AgentKind, SharedDatabase};

/// Kilo CLI's names and folders.
pub static APP: App = App {
    kind: AgentKind::Kilo,
    name: "kilo",
    tag: "kl",
    title: "Kilo CLI",
    aliases: &["kilocode"],
    package: "@kilocode/cli",
    folder: "kilo",
    database: SharedDatabase { file_name: "kilo.db" },
    project_folder: ".kilo",
};

/// Kilo CLI, for the agent model.
pub static KILO: EventDbAgent = EventDbAgent(&APP);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::replay::{assert_cold_agrees_with_incremental, fixture, states};
    use crate::agent::{Agent, AgentLog};
    use crate::State::{Done, Failed, Interrupted, Unknown, Working};
    use std::path::{Path, PathBuf};

    const RECORDINGS: [&str; 5] = [
        "7.7.9-tool",
        "7.7.9-perm",
        "7.7.9-interrupt",
        "7.7.9-fail",
        "7.7.9-slow",
    ];

    #[test]
    fn real_sessions_go_through_their_hand_checked_states() {
        let states_of = |name: &str| states(AgentKind::Kilo, &fixture("kilo", name));
        assert_eq!(states_of("7.7.9-tool"), [Unknown, Working, Done]);
        assert_eq!(states_of("7.7.9-perm"), [Unknown, Working, Done]);
        assert_eq!(
            states_of("7.7.9-interrupt"),
            [Unknown, Working, Interrupted, Working, Done]
        );
        // The 500 was retried until Escape: completed with neither finish nor error.
        assert_eq!(
            states_of("7.7.9-fail"),
            [Unknown, Working, Failed, Working, Interrupted, Working, Done]
        );
    }

    #[test]
    fn the_cold_path_agrees_with_the_incremental_one_on_every_prefix() {
        assert_cold_agrees_with_incremental(AgentKind::Kilo, "kilo", &RECORDINGS, 211);
    }

    fn argv(s: &str) -> Vec<String> {
        s.split(' ').map(str::to_owned).collect()
    }

    #[test]
    fn kilo_processes_but_not_its_servers() {
        assert!(KILO.runs(&argv("/c/node_modules/@kilocode/cli-linux-x64/bin/kilo")));
        assert!(KILO.runs(&argv("kilo /work/proj")));
        assert!(KILO.runs(&argv("node /usr/lib/node_modules/@kilocode/cli/bin/kilo")));
        assert!(!KILO.runs(&argv("kilo serve")));
        assert!(!KILO.runs(&argv("kilo debug paths")));
        assert!(!KILO.runs(&argv("opencode")));
        let home = Path::new("/h/.local/share/kilo");
        assert_eq!(
            KILO.log_of_session(home, "ses_1"),
            Some(PathBuf::from("/h/.local/share/kilo/kilo.db/ses_1"))
        );
        assert!(KILO.owns_log("ses_1", "kilo.db", b""));
        assert!(!KILO.owns_log("ses_1", "opencode.db", b"{}"));
    }
}
