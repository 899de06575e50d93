//! User-defined agents: what a rules file says, and what its rules say of
//! a pane.
//!
//! A rules file describes, in KDL like zellij's own configuration, agents
//! turnstile does not know: how to recognise one (its program, its command
//! line, its pane title), what its screen says (regular expressions over the
//! last rows or the title, each naming a state, tried in the file's order),
//! what its hook events mean, and where its JSONL logs are and what their
//! lines mean (`log.rs`). `file.rs` reads the file; this module
//! holds the model and the matching, pure. Patterns are `regex-lite`'s (the
//! `regex` crate's syntax without Unicode classes): the full `regex` adds
//! 227–297 KB to `turnstile.wasm`, `regex-lite` 47 KB, and one engine on
//! both sides gives the same answers.
//!
//! A rule never says more than it is written to: a screen rule is a guess
//! like every screen rule (the arbiter keeps a screen done unconfirmed), and
//! a user agent replaces a built-in kind only when its file says so.
//!
//! The model travels as JSON (`turnstile rules --json`): the host reads the
//! file, the bar compiles the same patterns with the same engine.
//! `agent::user` makes each agent a kind of the agent model.

use super::log::LogRules;
pub use super::pattern::Pattern;
use crate::agent::AgentKind;
use crate::State;
use serde::{Deserialize, Serialize};

/// The first problem of a rules file: its line, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleError {
    /// The line (from 1).
    pub line: usize,
    /// What is wrong, in one line.
    pub message: String,
}

impl std::fmt::Display for RuleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for RuleError {}

/// Every user-defined agent of one rules file, in its order.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Rules {
    /// The agents, in the file's order (the first that recognises a pane wins).
    pub agents: Vec<UserAgent>,
}

/// One agent a rules file describes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct UserAgent {
    /// Its name (`agent "<name>"`): in JSON, in `explain`, for hooks.
    pub name: String,
    /// Its short tag in the bar (`tag`; the name's first two letters by default).
    pub tag: String,
    /// The line of its `agent` node.
    pub line: usize,
    /// Matched against the file name of the program and of the script an
    /// interpreter runs (`process`).
    pub process: Option<Pattern>,
    /// Matched against the whole command line, arguments joined by spaces (`argv`).
    pub argv: Option<Pattern>,
    /// Matched against the pane title (`title`).
    pub title: Option<Pattern>,
    /// Its input box's row (`input`): the lowest row it matches; its first
    /// capture group, when it has one, is the text in the box.
    #[serde(default)]
    pub input: Option<Pattern>,
    /// What its screen says, tried in order (`screen { … }`).
    pub screen: Vec<ScreenRule>,
    /// What its hook events mean (`hooks { … }`).
    pub hooks: Vec<HookRule>,
    /// Its logs and what their lines mean (`log "<glob>" { … }`): the
    /// host's alone (the plugin reads no log, and skips them in JSON).
    #[serde(default)]
    pub log: Option<LogRules>,
    /// The built-in kind it replaces (`replaces "<kind>"`): never implied.
    pub replaces: Option<AgentKind>,
    /// How it takes a routed answer (`paste "bracketed"`, the default, or
    /// `paste "line"` for a program that reads its input line by line).
    #[serde(default)]
    pub paste: crate::agent::Paste,
}

/// The part of the screen a rule reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Region {
    /// The last `n` rows that are not blank.
    Last(usize),
    /// The `n` rows that are not blank above the input box (its `input` row).
    Above(usize),
    /// The pane title.
    Title,
}

/// One screen rule: a pattern over a region, and the state it says.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScreenRule {
    /// The state a match says.
    pub state: State,
    /// What it reads.
    pub region: Region,
    /// What it looks for.
    pub pattern: Pattern,
    /// The answer's region: the `n` rows that are not blank above the row
    /// it matched, up to the input box's row (its prompt) (`answer=N`).
    #[serde(default)]
    pub answer: Option<usize>,
}

/// One hook rule: an event name and the state it says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookRule {
    /// The event, as `turnstile hook --agent <name> --event <event>` names it.
    pub event: String,
    /// The state it says.
    pub state: State,
    /// Where it was written.
    pub line: usize,
}

/// A screen rule that matched: the state, and which rule said it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleMatch<'a> {
    /// The state it says.
    pub state: State,
    /// The rule's line in its file.
    pub line: usize,
    /// The rule's pattern, as written.
    pub pattern: &'a str,
    /// The index of the row it matched (`None`: the title).
    pub row: Option<usize>,
    /// The answer its region holds, rows joined by newlines (`None`: the
    /// rule names no answer region, or it is empty).
    pub answer: Option<String>,
}

/// Rows a rule reads when its file names no region.
pub const DEFAULT_ROWS: usize = 5;

impl Rules {
    /// The agent of a process whose argv is `argv` (`None`: none of them).
    pub fn agent_of_argv(&self, argv: &[String]) -> Option<&UserAgent> {
        self.agents.iter().find(|a| a.runs(argv))
    }

    /// The agent a pane's title names (`None`: none of them).
    pub fn agent_of_title(&self, title: &str) -> Option<&UserAgent> {
        self.agents
            .iter()
            .find(|a| a.title.as_ref().is_some_and(|t| t.is_match(title)))
    }

    /// The agent named `name`.
    pub fn agent(&self, name: &str) -> Option<&UserAgent> {
        self.agents.iter().find(|a| a.name == name)
    }
}

impl UserAgent {
    /// An agent with no rules at all (recognised by nothing, no screen or
    /// hook rules).
    pub const BARE: UserAgent = UserAgent {
        name: String::new(),
        tag: String::new(),
        line: 0,
        process: None,
        argv: None,
        title: None,
        input: None,
        screen: Vec::new(),
        hooks: Vec::new(),
        log: None,
        replaces: None,
        paste: crate::agent::Paste::Bracketed,
    };

    /// A bare agent named `name`, tagged `tag`.
    pub fn bare(name: &str, tag: &str) -> UserAgent {
        UserAgent {
            name: name.to_owned(),
            tag: tag.to_owned(),
            ..UserAgent::BARE
        }
    }

    /// True when a process's argv runs this agent: its `process` pattern
    /// matches the program's file name or, for a script an interpreter
    /// runs, the script's; its `argv` pattern the command line. Both must
    /// match where both are written; an agent with neither is recognised
    /// by its title only.
    pub fn runs(&self, argv: &[String]) -> bool {
        if self.process.is_none() && self.argv.is_none() {
            return false;
        }
        let file_name = |arg: &'_ String| arg.rsplit('/').next().unwrap_or(arg).to_owned();
        let program = argv.first().map(file_name).unwrap_or_default();
        let script = argv.get(1).filter(|_| is_interpreter(&program)).map(file_name);
        let by_process = self
            .process
            .as_ref()
            .is_none_or(|p| p.is_match(&program) || script.is_some_and(|s| p.is_match(&s)));
        by_process && self.argv.as_ref().is_none_or(|p| p.is_match(&argv.join(" ")))
    }

    /// The first screen rule that matches the pane's rows and title.
    pub fn classify<'a>(&'a self, rows: &[String], title: &str) -> Option<RuleMatch<'a>> {
        let input = self.input_row(rows);
        self.screen.iter().find_map(|rule| {
            let row = rule.matching_row(rows, title, input)?;
            let answer = rule
                .answer
                .zip(row)
                .map(|(n, row)| text_above(rows, row, n, self.input.as_ref()));
            Some(RuleMatch {
                state: rule.state,
                line: rule.pattern.line(),
                pattern: rule.pattern.as_str(),
                row,
                answer: answer.filter(|a| !a.is_empty()),
            })
        })
    }

    /// The index of its input box's row: the lowest its `input` pattern matches.
    pub fn input_row(&self, rows: &[String]) -> Option<usize> {
        let input = self.input.as_ref()?;
        rows.iter().rposition(|row| input.is_match(row.trim_end()))
    }

    /// What its input box holds: the `input` pattern's first capture group
    /// (blank: empty); without a group, or without the box on screen, it
    /// cannot be told.
    pub fn input_text(&self, rows: &[String]) -> Option<String> {
        let row = self.input_row(rows)?;
        self.input.as_ref()?.group(rows[row].trim_end())
    }

    /// The state a hook event says (`None`: the file says nothing of it).
    pub fn hook_state(&self, event: &str) -> Option<State> {
        self.hooks.iter().find(|h| h.event == event).map(|h| h.state)
    }
}

impl ScreenRule {
    /// Where the pattern matches its region (`input`: the input box's row,
    /// if on screen): `Some(Some(row))` the index of the lowest row it
    /// matches, `Some(None)` the title, `None` nowhere.
    pub fn matching_row(&self, rows: &[String], title: &str, input: Option<usize>) -> Option<Option<usize>> {
        let (end, n) = match self.region {
            Region::Title => return self.pattern.is_match(title).then_some(None),
            Region::Last(n) => (rows.len(), n),
            Region::Above(n) => (input?, n),
        };
        non_blank_above(rows, end, n)
            .find(|(_, row)| self.pattern.is_match(row))
            .map(|(i, _)| Some(i))
    }
}

/// The `n` rows that are not blank above row `end` (exclusive), bottom up,
/// each with its index, trailing blanks trimmed.
fn non_blank_above(rows: &[String], end: usize, n: usize) -> impl Iterator<Item = (usize, &str)> {
    rows[..end.min(rows.len())]
        .iter()
        .enumerate()
        .rev()
        .map(|(i, row)| (i, row.trim_end()))
        .filter(|(_, row)| !row.is_empty())
        .take(n)
}

/// The `n` rows that are not blank above row `row`, up to the input box's
/// row above them (the prompt the answer answers), top down, joined by
/// newlines.
fn text_above(rows: &[String], row: usize, n: usize, input: Option<&Pattern>) -> String {
    let is_input = |text: &str| input.is_some_and(|p| p.is_match(text));
    let mut above: Vec<&str> = non_blank_above(rows, row, n)
        .map(|(_, text)| text)
        .take_while(|text| !is_input(text))
        .collect();
    above.reverse();
    above.join("\n")
}

/// A state's name in a rules file: turnstile's, or the Program Status
/// Protocol's (`blocked`, `error`).
pub fn parse_state(name: &str) -> Option<State> {
    State::from_word(name).filter(|s| *s != State::Unknown)
}

/// True for a program that runs the script its first argument names.
fn is_interpreter(program: &str) -> bool {
    matches!(
        program,
        "node" | "bun" | "deno" | "ruby" | "perl" | "sh" | "bash" | "zsh"
    ) || program.starts_with("python")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(state: State, region: Region, pattern: &str) -> ScreenRule {
        ScreenRule {
            state,
            region,
            pattern: Pattern::new(pattern, 1).unwrap(),
            answer: None,
        }
    }

    fn agent(screen: Vec<ScreenRule>) -> UserAgent {
        UserAgent {
            name: "aider".into(),
            tag: "ai".into(),
            line: 1,
            process: Some(Pattern::new("^aider$", 2).unwrap()),
            argv: None,
            title: None,
            input: None,
            screen,
            hooks: Vec::new(),
            log: None,
            replaces: None,
            paste: crate::agent::Paste::Bracketed,
        }
    }

    fn rows(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn the_first_rule_that_matches_its_region_says_the_state() {
        let a = agent(vec![
            rule(State::Waiting, Region::Last(3), r"\(Y\)es/\(N\)o"),
            rule(State::Working, Region::Title, "^⠋|^⠙"),
            rule(State::Done, Region::Last(1), r"^> $|^>$"),
        ]);
        let screen = rows(&["some answer", "", "> ", "   "]);
        let hit = a.classify(&screen, "aider").unwrap();
        assert_eq!((hit.state, hit.pattern), (State::Done, r"^> $|^>$"));
        assert_eq!(a.classify(&screen, "⠋ aider").unwrap().state, State::Working);
        let asking = rows(&["Create file? (Y)es/(N)o [Yes]:", "> "]);
        assert_eq!(a.classify(&asking, "").unwrap().state, State::Waiting);
        assert_eq!(a.classify(&rows(&["> ", "more output"]), ""), None, "only the last row");
    }

    #[test]
    fn rows_above_the_input_box_and_an_answer_region_are_read() {
        let a = UserAgent {
            input: Some(Pattern::new(r"^> ?(.*)$", 2).unwrap()),
            screen: vec![
                ScreenRule {
                    answer: Some(2),
                    ..rule(State::Done, Region::Above(1), r"^Tokens: \d+")
                },
                rule(State::Working, Region::Above(2), "^Thinking"),
            ],
            ..agent(Vec::new())
        };
        let screen = rows(&[
            "> fix it",
            "",
            "  fn x() {}",
            "Answer.",
            "Tokens: 12",
            "> ",
            "",
            "status line",
        ]);
        let hit = a.classify(&screen, "").unwrap();
        assert_eq!((hit.state, hit.row), (State::Done, Some(4)));
        assert_eq!(
            hit.answer.as_deref(),
            Some("  fn x() {}\nAnswer."),
            "indentation kept, blanks skipped"
        );
        assert_eq!(a.input_text(&screen).as_deref(), Some(""));
        let typed = rows(&["Tokens: 12", "> half a prompt"]);
        assert_eq!(a.input_text(&typed).as_deref(), Some("half a prompt"));
        let busy = rows(&["> fix it", "Thinking…", "status"]);
        assert_eq!(a.classify(&busy, ""), None, "above the box: no box on screen, no match");
        let busy = rows(&["Thinking…", "", "> "]);
        assert_eq!(
            a.classify(&busy, "").map(|h| (h.state, h.answer)),
            Some((State::Working, None))
        );
        let no_group = UserAgent {
            input: Some(Pattern::new("^> ", 2).unwrap()),
            ..agent(Vec::new())
        };
        assert_eq!(no_group.input_text(&typed), None, "no capture group: cannot be told");
    }

    #[test]
    fn a_process_is_recognised_by_its_program_or_its_script() {
        let a = agent(Vec::new());
        let argv = |args: &[&str]| args.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(a.runs(&argv(&["/usr/local/bin/aider", "--model", "x"])));
        assert!(a.runs(&argv(&["python3", "/home/u/.local/bin/aider"])));
        assert!(
            !a.runs(&argv(&["vim", "aider"])),
            "only the program, or an interpreter's script"
        );
        assert!(!a.runs(&argv(&["python3", "-m", "aider"])));
        let by_argv = UserAgent {
            process: None,
            argv: Some(Pattern::new(r"-m aider\b", 1).unwrap()),
            ..agent(Vec::new())
        };
        assert!(by_argv.runs(&argv(&["python3", "-m", "aider"])));
        let by_title = UserAgent {
            process: None,
            title: Some(Pattern::new("^aider", 1).unwrap()),
            ..agent(Vec::new())
        };
        assert!(!by_title.runs(&argv(&["aider"])), "recognised by its title only");
        let rules = Rules {
            agents: vec![by_argv, by_title],
        };
        assert_eq!(
            rules.agent_of_title("aider v0.86").map(|a| a.title.is_some()),
            Some(true)
        );
    }

    #[test]
    fn state_names_are_turnstiles_or_the_program_status_protocols() {
        assert_eq!(parse_state("blocked"), Some(State::Waiting));
        assert_eq!(parse_state("error"), Some(State::Failed));
        assert_eq!(parse_state("done"), Some(State::Done));
        assert_eq!(parse_state("unknown"), None);
        assert_eq!(parse_state("finito"), None);
    }
}
