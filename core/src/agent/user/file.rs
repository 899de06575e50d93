//! Reading a rules file: KDL 1.0 (zellij's dialect, read by the `kdl` 4
//! crate zellij itself uses) into [`Rules`], or the first problem with its
//! line. Host only: the plugin cannot read the user's config folder.
//!
//! ```kdl
//! agent "aider" {
//!     tag "ai"
//!     process "^aider$"              // the program's (or its script's) file name
//!     title "aider"                  // or the pane title
//!     screen {                       // tried in order; the first match says
//!         waiting "\\(Y\\)es/\\(N\\)o" rows=3
//!         working "Waiting for|Thinking" rows=4
//!         done "^> ?$" rows=1
//!         failed "litellm\\.\\w+Error" rows=6
//!         working "^⠋|^⠙" title=true
//!     }
//!     hooks {                        // `turnstile hook --agent aider --event <event>`
//!         start "working"
//!         end "done"
//!     }
//!     log "~/.aider/logs/*.jsonl" {  // its JSONL logs, and what a line says
//!         start "event" "^turn_start$"
//!         answer "event" "^turn_end$" text="answer"
//!     }
//! }
//! ```

use super::log::{LineRule, LogGlob, LogRules};
pub use super::rules::RuleError;
use super::rules::{parse_state, HookRule, Pattern, Region, Rules, ScreenRule, UserAgent, DEFAULT_ROWS};
use crate::agent::AgentKind;
use crate::State;
use kdl::{KdlDocument, KdlEntry, KdlNode};
use std::path::PathBuf;

/// Most rows a screen rule may read.
pub const MAX_ROWS: usize = 200;
/// Longest tag (the bar shows it beside every pane of the agent).
pub const MAX_TAG_CHARS: usize = 6;

/// Where the rules file is unless the plugin's `rules` setting says:
/// `$XDG_CONFIG_HOME/turnstile/agents.kdl`, else `~/.config/turnstile/agents.kdl`.
pub fn default_path(var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let config = var("XDG_CONFIG_HOME")
        .filter(|v| v.starts_with('/'))
        .map(PathBuf::from)
        .or_else(|| {
            var("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".config"))
        })?;
    Some(config.join("turnstile").join("agents.kdl"))
}

/// Reads a rules file's text.
pub fn parse(text: &str) -> Result<Rules, RuleError> {
    let document: KdlDocument = text.parse().map_err(|e: kdl::KdlError| RuleError {
        line: line_of(text, e.span.offset()),
        message: format!("not KDL: {}", kdl_in_words(e.label, e.help)),
    })?;
    let reader = Reader { text };
    let mut rules = Rules::default();
    for node in document.nodes() {
        let agent = reader.agent(node)?;
        if rules.agent(&agent.name).is_some() {
            return Err(reader.error(node, format!("agent \"{}\" is described twice", agent.name)));
        }
        rules.agents.push(agent);
    }
    Ok(rules)
}

/// What the KDL parser's terse label or help means, in words that say
/// what to change.
fn kdl_in_words(label: Option<&str>, help: Option<&str>) -> String {
    let said = help.or(label).unwrap_or("a syntax error");
    let fix = match (label.unwrap_or_default(), said) {
        ("children block body" | "closing '}' in node children block", _) => {
            "a `{` block is not closed (a `}` is missing, or a block on one line lacks `;` before its `}`: `screen { done \"x\"; }`)"
        }
        (_, s) if s.starts_with("Nodes can only be terminated") => {
            "a node must end with a line break or `;` (a block on one line needs `;` before its `}`: `screen { done \"x\"; }`)"
        }
        (_, s) if s.contains("terminate the previous node") || label == Some("plain identifiers can't be used here") => {
            "a bare word where a value belongs: write values as quoted strings (`\"^Done\"`) or numbers (`rows=3`)"
        }
        ("comment block body", _) => "a `/*` comment is not closed with `*/`",
        _ => return said.replace('\n', " "),
    };
    fix.to_owned()
}

/// The line of a byte offset (from 1).
fn line_of(text: &str, offset: usize) -> usize {
    let end = text.len().min(offset);
    let end = (0..=end).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0);
    text[..end].matches('\n').count() + 1
}

struct Reader<'a> {
    text: &'a str,
}

impl Reader<'_> {
    fn line(&self, node: &KdlNode) -> usize {
        line_of(self.text, node.name().span().offset())
    }

    fn error(&self, node: &KdlNode, message: String) -> RuleError {
        RuleError {
            line: self.line(node),
            message,
        }
    }

    fn agent(&self, node: &KdlNode) -> Result<UserAgent, RuleError> {
        if node.name().value() != "agent" {
            let what = format!(
                "unknown node \"{}\": a rules file holds `agent` nodes",
                node.name().value()
            );
            return Err(self.error(node, what));
        }
        let name = self.argument(node, "agent \"<name>\" { … }")?;
        if node.entries().len() != 1 {
            return Err(self.error(node, "expected agent \"<name>\" { … }".to_owned()));
        }
        // A built-in kind's name is refused below, with its own reason.
        if !super::is_valid_name(name) && AgentKind::built_in(name).is_none() {
            let what = format!(
                "agent name {name:?}: one word of letters, digits, `-`, `_` or `.`, at most {} characters",
                super::MAX_NAME_CHARS
            );
            return Err(self.error(node, what));
        }
        let tag: String = name.chars().take(2).collect();
        let mut agent = UserAgent {
            line: self.line(node),
            ..UserAgent::bare(name, &tag)
        };
        for child in node.children().map(KdlDocument::nodes).unwrap_or_default() {
            self.agent_part(&mut agent, child)?;
        }
        self.check_agent(node, &agent)?;
        Ok(agent)
    }

    fn agent_part(&self, agent: &mut UserAgent, node: &KdlNode) -> Result<(), RuleError> {
        let line = self.line(node);
        let pattern = |what: &str| -> Result<Pattern, RuleError> {
            let source = self.only_string(node, what)?;
            Pattern::new(source, line).map_err(|why| self.error(node, format!("{what}: {why}")))
        };
        match node.name().value() {
            "tag" => {
                let tag = self.only_string(node, "tag \"<tag>\"")?;
                if tag.is_empty() || tag.chars().count() > MAX_TAG_CHARS {
                    return Err(self.error(node, format!("tag {tag:?}: 1 to {MAX_TAG_CHARS} characters")));
                }
                agent.tag = tag.to_owned();
            }
            "process" => agent.process = Some(pattern("process \"<pattern>\"")?),
            "argv" => agent.argv = Some(pattern("argv \"<pattern>\"")?),
            "title" => agent.title = Some(pattern("title \"<pattern>\"")?),
            "input" => agent.input = Some(pattern("input \"<pattern>\"")?),
            "paste" => {
                agent.paste = match self.only_string(node, "paste \"bracketed\" | \"line\"")? {
                    "bracketed" => crate::agent::Paste::Bracketed,
                    "line" => crate::agent::Paste::Line,
                    other => {
                        let what = format!("paste {other:?}: \"bracketed\" (a terminal UI) or \"line\" (reads lines)");
                        return Err(self.error(node, what));
                    }
                }
            }
            "replaces" => {
                let kind = self.only_string(node, "replaces \"<built-in kind>\"")?;
                let known = AgentKind::built_in(kind)
                    .ok_or_else(|| self.error(node, format!("replaces {kind:?}: no built-in kind of that name")))?;
                agent.replaces = Some(known);
            }
            "screen" => {
                for rule in node.children().map(KdlDocument::nodes).unwrap_or_default() {
                    agent.screen.push(self.screen_rule(rule, agent.input.is_some())?);
                }
            }
            "hooks" => {
                for hook in node.children().map(KdlDocument::nodes).unwrap_or_default() {
                    agent.hooks.push(self.hook_rule(hook)?);
                }
            }
            "log" if agent.log.is_some() => return Err(self.error(node, "a second log: an agent has one".to_owned())),
            "log" => agent.log = Some(self.log(node)?),
            other => {
                let known = "tag, process, argv, title, input, paste, replaces, screen, hooks, log";
                return Err(self.error(node, format!("unknown node \"{other}\" in an agent (known: {known})")));
            }
        }
        Ok(())
    }

    /// An agent as a whole: recognisable, and replacing a built-in kind only
    /// when it says so.
    fn check_agent(&self, node: &KdlNode, agent: &UserAgent) -> Result<(), RuleError> {
        if agent.process.is_none() && agent.argv.is_none() && agent.title.is_none() {
            let what = format!(
                "agent \"{}\" cannot be recognised: give it process, argv or title",
                agent.name
            );
            return Err(self.error(node, what));
        }
        if let Some(kind) = AgentKind::built_in(&agent.name) {
            let what = format!(
                "agent \"{}\" is built in: name yours otherwise, and write `replaces \"{}\"` to replace it",
                agent.name,
                kind.name()
            );
            return Err(self.error(node, what));
        }
        Ok(())
    }

    /// `<state> "<pattern>" [rows=N | above=N | title=true] [answer=N]`.
    fn screen_rule(&self, node: &KdlNode, has_input: bool) -> Result<ScreenRule, RuleError> {
        let word = node.name().value();
        let state = parse_state(word).ok_or_else(|| {
            let known = "working, waiting, done, failed, interrupted, idle, blocked, error";
            self.error(node, format!("screen rule \"{word}\": not a state (known: {known})"))
        })?;
        let what = format!("{word} \"<pattern>\" [rows=N | above=N | title=true] [answer=N]");
        let source = self.argument(node, &what)?;
        let pattern =
            Pattern::new(source, self.line(node)).map_err(|why| self.error(node, format!("{word}: {why}")))?;
        let mut rule = ScreenRule {
            state,
            region: Region::Last(DEFAULT_ROWS),
            pattern,
            answer: None,
        };
        for (key, entry) in self.properties(node, &what)? {
            let rows = || match entry.value().as_i64() {
                Some(n @ 1..) if n as usize <= MAX_ROWS => Ok(n as usize),
                _ => Err(self.error(node, format!("{key}: a number from 1 to {MAX_ROWS}"))),
            };
            match (key, entry.value().as_bool()) {
                ("rows", _) => rule.region = Region::Last(rows()?),
                ("above", _) if has_input => rule.region = Region::Above(rows()?),
                ("above", _) => {
                    let why = "above: the rows above the input box need the agent's `input \"<pattern>\"` first";
                    return Err(self.error(node, why.to_owned()));
                }
                ("title", Some(true)) => rule.region = Region::Title,
                ("title", Some(false)) => {}
                ("answer", _) if state == State::Done => rule.answer = Some(rows()?),
                ("answer", _) => return Err(self.error(node, "answer: only a done rule names an answer".to_owned())),
                (key, _) => return Err(self.error(node, format!("{key}: not a region ({what})"))),
            }
        }
        if rule.answer.is_some() && rule.region == Region::Title {
            return Err(self.error(node, "answer: the title has no rows above it".to_owned()));
        }
        Ok(rule)
    }

    /// `log "<glob>" { <rule> "<field>" "<pattern>" [text="<field>"] … }`.
    fn log(&self, node: &KdlNode) -> Result<LogRules, RuleError> {
        let what = "log \"<glob>\" { <rule> \"<field>\" \"<pattern>\" … }";
        let written = self.argument(node, what)?;
        if node.entries().len() != 1 {
            return Err(self.error(node, format!("expected {what}")));
        }
        let glob = LogGlob::new(written, self.line(node)).map_err(|why| self.error(node, format!("log {why}")))?;
        let rules = node.children().map(KdlDocument::nodes).unwrap_or_default();
        if rules.is_empty() {
            return Err(self.error(node, format!("log {written:?} says nothing of its lines: {what}")));
        }
        let lines = rules
            .iter()
            .map(|rule| self.line_rule(rule))
            .collect::<Result<_, _>>()?;
        Ok(LogRules { glob, lines })
    }

    /// `<rule> "<field>" "<pattern>" [text="<field>"]`: `start`, `answer`,
    /// `error`, `interrupt`, or a state's name.
    fn line_rule(&self, node: &KdlNode) -> Result<LineRule, RuleError> {
        let word = node.name().value();
        let state = match word {
            "start" => Some(State::Working),
            "answer" => Some(State::Done),
            "interrupt" => Some(State::Interrupted),
            word => parse_state(word),
        };
        let state = state.ok_or_else(|| {
            let known = "start, answer, error, interrupt, or a state: working, waiting, done, failed, interrupted";
            self.error(node, format!("log rule \"{word}\": not a rule (known: {known})"))
        })?;
        let what = format!("{word} \"<field>\" \"<pattern>\" [text=\"<field>\"]");
        let arguments: Vec<&str> = node
            .entries()
            .iter()
            .filter(|e| e.name().is_none())
            .filter_map(|e| e.value().as_string())
            .collect();
        let positional = node.entries().iter().filter(|e| e.name().is_none()).count();
        let [field, source] = arguments.as_slice() else {
            return Err(self.error(node, format!("expected {what}")));
        };
        if positional != 2 || field.is_empty() {
            return Err(self.error(node, format!("expected {what}")));
        }
        let pattern =
            Pattern::new(source, self.line(node)).map_err(|why| self.error(node, format!("{word}: {why}")))?;
        let mut text = None;
        for (key, entry) in self.properties(node, &what)? {
            match (key, entry.value().as_string()) {
                ("text", Some(field)) if state == State::Done && !field.is_empty() => text = Some(field.to_owned()),
                ("text", _) if state == State::Done => return Err(self.error(node, "text: a field's name".to_owned())),
                (key, _) => return Err(self.error(node, format!("{key}: not a property of {what}"))),
            }
        }
        Ok(LineRule {
            state,
            field: (*field).to_owned(),
            pattern,
            text,
        })
    }

    /// `<event> "<state>"`.
    fn hook_rule(&self, node: &KdlNode) -> Result<HookRule, RuleError> {
        let event = node.name().value();
        let word = self.only_string(node, &format!("{event} \"<state>\""))?;
        let state =
            parse_state(word).ok_or_else(|| self.error(node, format!("hook {event}: {word:?} is not a state")))?;
        Ok(HookRule {
            event: event.to_owned(),
            state,
            line: self.line(node),
        })
    }

    /// The node's one string argument, and nothing else.
    fn only_string<'n>(&self, node: &'n KdlNode, what: &str) -> Result<&'n str, RuleError> {
        let value = self.argument(node, what)?;
        if node.entries().len() != 1 || node.children().is_some() {
            return Err(self.error(node, format!("expected {what}")));
        }
        Ok(value)
    }

    /// The node's first argument, a string.
    fn argument<'n>(&self, node: &'n KdlNode, what: &str) -> Result<&'n str, RuleError> {
        let arguments: Vec<&KdlEntry> = node.entries().iter().filter(|e| e.name().is_none()).collect();
        match arguments.as_slice() {
            [one] => one
                .value()
                .as_string()
                .ok_or_else(|| self.error(node, format!("expected {what}: a quoted string"))),
            _ => Err(self.error(node, format!("expected {what}"))),
        }
    }

    /// The node's properties (`key=value`).
    fn properties<'n>(&self, node: &'n KdlNode, what: &str) -> Result<Vec<(&'n str, &'n KdlEntry)>, RuleError> {
        if node.children().is_some() {
            return Err(self.error(node, format!("expected {what}, without a block")));
        }
        Ok(node
            .entries()
            .iter()
            .filter_map(|e| Some((e.name()?.value(), e)))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::State;
    use proptest::prelude::*;

    const EXAMPLE: &str = r#"
// Aider, as its screen shows it.
agent "aider" {
    tag "ai"
    process "^aider$"
    screen {
        waiting "\\(Y\\)es/\\(N\\)o" rows=3
        working "Waiting for|Thinking" rows=4
        done "^> ?$" rows=1
        error "litellm\\.\\w+Error" rows=6
        working "^⠋" title=true
    }
    hooks {
        start "working"
        end "done"
    }
}
agent "mytool" {
    title "^mytool"
}
"#;

    fn error_of(text: &str) -> RuleError {
        parse(text).expect_err(text)
    }

    #[test]
    fn the_example_reads_as_written() {
        let rules = parse(EXAMPLE).unwrap();
        let aider = rules.agent("aider").unwrap();
        assert_eq!((aider.tag.as_str(), aider.line, aider.screen.len()), ("ai", 3, 5));
        assert_eq!(aider.screen[3].state, State::Failed, "the protocol's `error`");
        assert_eq!(aider.screen[0].region, Region::Last(3));
        assert_eq!(aider.screen[4].region, Region::Title);
        assert_eq!(aider.screen[1].pattern.line(), 8);
        assert_eq!(aider.hook_state("end"), Some(State::Done));
        let tool = rules.agent("mytool").unwrap();
        assert_eq!((tool.tag.as_str(), tool.screen.len()), ("my", 0));
        let rows = vec!["Thinking…".to_owned()];
        assert_eq!(
            aider.classify(&rows, "").map(|m| (m.state, m.line)),
            Some((State::Working, 8))
        );
    }

    #[test]
    fn every_problem_is_named_with_its_line() {
        // An agent "a" known by its title, with `body` after that line.
        let agent = |body: &str| format!("agent \"a\" {{\n  title \"x\"\n{body}}}");
        let screen = |rule: &str| agent(&format!("  screen {{\n    {rule}\n  }}\n"));
        let cases: Vec<(String, usize, &str)> = vec![
            ("agent \"a\" {\n  title \"x\"\n".into(), 1, "a `{` block is not closed"),
            (
                "agent \"a\" {\n  title \"x\"\n  screen { done \"x\" }\n}".into(),
                3,
                "before its `}`",
            ),
            ("agent \"a\" {\n  title x\n}".into(), 2, "quoted strings"),
            ("agent \"a\" {\n  title \"(x\"\n}".into(), 2, "title"),
            (screen("finito \"x\""), 4, "not a state"),
            (screen("done \"x\" rows=0"), 4, "rows"),
            (screen("done \"x\" colour=1"), 4, "not a region"),
            (agent("  scren {\n  }\n"), 3, "unknown node \"scren\""),
            ("\n\nagent \"a\" {\n  tag \"a\"\n}".into(), 3, "cannot be recognised"),
            ("agent \"a/b\" {\n  process \"x\"\n}".into(), 1, "one word of letters"),
            ("agent \"claude\" {\n  title \"x\"\n}".into(), 1, "built in"),
            (agent("  replaces \"vim\"\n"), 3, "no built-in kind"),
            (format!("{}\n{}", agent(""), agent("")), 4, "twice"),
            (agent("  tag \"toolong\"\n"), 3, "tag"),
            ("agnt \"a\"".into(), 1, "unknown node"),
            ("agent 3 {\n title \"x\"\n}".into(), 1, "quoted string"),
            (agent("  hooks {\n    end \"ended\"\n  }\n"), 4, "not a state"),
            ("// é ü\nagent \"a\" {\n  title \"(\"\n}".into(), 3, "title"),
        ];
        for (text, line, says) in &cases {
            let e = error_of(text);
            assert_eq!(e.line, *line, "{text:?}: {e}");
            assert!(e.message.contains(says), "{text:?}: {e}");
            assert!(!e.to_string().contains('\n'), "one line: {e}");
        }
    }

    #[test]
    fn the_input_box_the_rows_above_it_and_an_answer_region_read_as_written() {
        let text = "agent \"a\" {\n  title \"x\"\n  input \"^> (.*)$\"\n  screen {\n    done \"^Tokens\" above=2 answer=8\n  }\n}";
        let rules = parse(text).unwrap();
        let a = rules.agent("a").unwrap();
        assert_eq!(a.input.as_ref().map(|p| p.line()), Some(3));
        assert_eq!((a.screen[0].region, a.screen[0].answer), (Region::Above(2), Some(8)));
        let screen = |rule: &str| format!("agent \"a\" {{\n  title \"x\"\n  screen {{\n    {rule}\n  }}\n}}");
        for (rule, says) in [
            ("done \"x\" above=2", "need the agent's `input"),
            ("working \"x\" answer=3", "only a done rule"),
            ("done \"x\" title=true answer=3", "the title has no rows"),
            ("done \"x\" answer=0", "answer: a number"),
        ] {
            let e = error_of(&screen(rule));
            assert_eq!(e.line, 4, "{rule}: {e}");
            assert!(e.message.contains(says), "{rule}: {e}");
        }
    }

    #[test]
    fn a_log_reads_its_glob_and_line_rules() {
        let text = r#"
agent "toy" {
    process "^toy$"
    log "~/.toy/logs/*.jsonl" {
        start "type" "^prompt$"
        answer "type" "^answer$" text="message.content"
        error "/type" "^error$"
        interrupt "type" "^cancelled$"
        waiting "ask" "."
    }
}
"#;
        let rules = parse(text).unwrap();
        let log = rules.agent("toy").unwrap().log.as_ref().unwrap();
        assert_eq!(log.glob.as_str(), "~/.toy/logs/*.jsonl");
        let states: Vec<State> = log.lines.iter().map(|l| l.state).collect();
        use State::*;
        assert_eq!(states, [Working, Done, Failed, Interrupted, Waiting]);
        assert_eq!(log.lines[1].text.as_deref(), Some("message.content"));
        assert_eq!(log.lines[2].pattern.line(), 7);
        let agent = |body: &str| format!("agent \"a\" {{\n  title \"x\"\n{body}}}");
        let log = |rule: &str| agent(&format!("  log \"~/l/*.jsonl\" {{\n    {rule}\n  }}\n"));
        let cases: Vec<(String, usize, &str)> = vec![
            (
                agent("  log \"l/*.jsonl\" {\n start \"a\" \"b\"\n}\n"),
                3,
                "start it with",
            ),
            (
                agent("  log \"~/*/x.jsonl\" {\n start \"a\" \"b\"\n}\n"),
                3,
                "wildcards in the file name",
            ),
            (agent("  log \"~/x.jsonl\"\n"), 3, "says nothing of its lines"),
            (log("finish \"a\" \"b\""), 4, "not a rule"),
            (log("start \"a\""), 4, "expected start"),
            (log("start \"a\" \"(\""), 4, "start:"),
            (log("start \"a\" \"b\" text=\"c\""), 4, "not a property"),
            (log("answer \"a\" \"b\" text=3"), 4, "a field's name"),
            (log("answer \"\" \"b\""), 4, "expected answer"),
            (
                agent("  log \"~/a\" {\n start \"a\" \"b\"\n}\n  log \"~/b\" {\n start \"a\" \"b\"\n}\n"),
                6,
                "a second log",
            ),
        ];
        for (text, line, says) in &cases {
            let e = error_of(text);
            assert_eq!(e.line, *line, "{text:?}: {e}");
            assert!(e.message.contains(says), "{text:?}: {e}");
        }
    }

    #[test]
    fn a_built_in_kind_is_replaced_only_when_the_file_says_so() {
        let rules = parse("agent \"my-claude\" {\n  process \"^claude$\"\n  replaces \"claude\"\n}").unwrap();
        assert_eq!(rules.agents[0].replaces, Some(AgentKind::Claude));
        let taken = parse("agent \"claude\" {\n  process \"^claude$\"\n  replaces \"claude\"\n}").unwrap_err();
        assert!(taken.message.contains("name yours otherwise"), "{taken}");
    }

    #[test]
    fn the_default_path_is_under_the_users_config_folder() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
        };
        let home = env(&[("HOME", "/home/u")]);
        assert_eq!(
            default_path(&home),
            Some(PathBuf::from("/home/u/.config/turnstile/agents.kdl"))
        );
        let xdg = env(&[("HOME", "/home/u"), ("XDG_CONFIG_HOME", "/etc/x")]);
        assert_eq!(default_path(&xdg), Some(PathBuf::from("/etc/x/turnstile/agents.kdl")));
        let relative = env(&[("HOME", "/home/u"), ("XDG_CONFIG_HOME", "rel")]);
        assert_eq!(
            default_path(&relative),
            Some(PathBuf::from("/home/u/.config/turnstile/agents.kdl"))
        );
        assert_eq!(default_path(&env(&[])), None);
    }

    proptest! {
        /// Whatever the file says and whatever the screen shows, reading
        /// and matching never panic; a file that reads gives rules whose
        /// every match names a rule of the file.
        #[test]
        fn any_rules_and_any_screen_never_panic(
            pattern in "[a-z\\\\^$.*+?()\\[\\]{}|⠋ é-]{0,12}",
            state in "(working|waiting|done|failed|error|blocked|idle|nope)",
            rows in proptest::collection::vec("[a-z ⠋().*>é-]{0,20}", 0..8),
            region in "(rows=[0-9]{1,3}|title=true|title=false|)",
            junk in "[{}\"a-z =\\n]{0,30}",
        ) {
            let text = format!("agent \"x\" {{\n title \"t\"\n screen {{\n  {state} {pattern:?} {region}\n }}\n}}\n");
            if let Ok(rules) = parse(&text) {
                for agent in &rules.agents {
                    if let Some(hit) = agent.classify(&rows, "t ⠋") {
                        prop_assert_eq!(hit.line, 4);
                    }
                }
            }
            let _ = parse(&format!("{text}{junk}"));
            let _ = parse(&junk);
        }
    }

    #[test]
    fn the_docs_example_parses_and_reads_a_screen() {
        let readme = include_str!("../../../../docs/rules.md");
        let start = readme.find("```kdl\nagent \"toy\"").expect("docs/rules.md's example") + "```kdl\n".len();
        let end = start + readme[start..].find("```").unwrap();
        let rules = parse(&readme[start..end]).unwrap();
        let toy = rules.agent("toy").unwrap();
        assert!(toy.runs(&["python3".into(), "/x/toy_agent.py".into()]));
        let rows = |r: &[&str]| r.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let done = toy
            .classify(&rows(&["> task 1", "Answer 1", "Done in 2.0s", ">"]), "")
            .unwrap();
        assert_eq!(done.state, crate::State::Done);
        assert_eq!(done.answer.as_deref(), Some("Answer 1"), "up to the prompt");
        assert_eq!(
            toy.input_text(&rows(&["Answer 1", "> draft"])).as_deref(),
            Some("draft")
        );
        let working = toy.classify(&rows(&["⠙ thinking about task 1 (1s)"]), "").unwrap();
        assert_eq!(working.state, crate::State::Working);
        assert_eq!(toy.hook_state("end"), Some(crate::State::Done));
        let log = toy.log.as_ref().expect("its log rules");
        assert!(log.glob.names("toy-42.jsonl"));
        let mut classifier = log.classifier(0);
        crate::agent::LogClassifier::feed(
            &mut classifier,
            b"{\"type\":\"prompt\"}\n{\"type\":\"answer\",\"message\":{\"content\":[{\"text\":\"A\"}]}}\n",
        );
        let verdict = crate::agent::LogClassifier::verdict(&classifier);
        assert_eq!(
            (verdict.state, verdict.answer.as_deref()),
            (crate::State::Done, Some("A"))
        );
    }
}
