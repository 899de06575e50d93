//! A user-defined agent's log: where its JSONL logs are (a glob) and what
//! their lines mean (field rules), and the incremental classifier those
//! rules make. Pure: the host finds, binds and reads the files.
//!
//! ```kdl
//! log "~/.toy/logs/*.jsonl" {
//!     start "type" "^prompt$"                  // a turn starts: working
//!     answer "type" "^answer$" text="text"     // its final answer: done
//!     error "type" "^error$"                   // failed
//!     interrupt "type" "^cancelled$"           // interrupted
//! }
//! ```
//!
//! A rule reads one field of a line (a dotted path, `message.content.0`,
//! or a JSON pointer) and matches a pattern against its value (a string as
//! it is, anything else as JSON); the first rule that matches decides what
//! the line says, a line no rule matches says nothing. A log's done is as
//! authoritative as the rule that wrote it: the user's own word.

use super::pattern::{BadPattern, Pattern};
use crate::transcript::lines::{parse_line, LineClassifier, LineRules};
use crate::transcript::{TranscriptVerdict, Turn};
use crate::State;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Bytes a cold read takes from the end of a log.
pub const TAIL_BYTES: u64 = 16 << 20;

/// Where an agent's logs are, and what their lines say.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LogRules {
    /// The files.
    pub glob: LogGlob,
    /// What a line says, tried in order.
    pub lines: Vec<LineRule>,
}

/// What a log glob's folder is relative to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Base {
    /// The agent process's home (`~/…`).
    #[default]
    Home,
    /// Its working directory (`./…`).
    WorkingDirectory,
    /// The root (`/…`).
    Root,
}

/// A log glob: a literal folder under a base, and a file-name pattern
/// (`*` and `?`, in the file name only).
#[derive(Debug, Clone, Default)]
pub struct LogGlob {
    written: String,
    line: usize,
    base: Base,
    folder: PathBuf,
    file: Option<Pattern>,
}

/// One line rule: a field's value matched by a pattern says a state.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LineRule {
    /// The state a match says.
    pub state: State,
    /// The field read, as written.
    pub field: String,
    /// What its value must match.
    pub pattern: Pattern,
    /// For a done: the field holding the answer's text.
    pub text: Option<String>,
}

/// A glob travels as it was written, and is read again where it arrives.
#[derive(Serialize, Deserialize)]
struct GlobText {
    glob: String,
    line: usize,
}

impl Serialize for LogGlob {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let text = GlobText {
            glob: self.written.clone(),
            line: self.line,
        };
        text.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for LogGlob {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = GlobText::deserialize(deserializer)?;
        LogGlob::new(&text.glob, text.line)
            .map_err(|why| serde::de::Error::custom(format!("line {}: {why}", text.line)))
    }
}

/// Why a log glob is refused (each names the glob as written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadGlob {
    /// Not under the home, the working directory or the root.
    NoBase(String),
    /// Wildcards or `..` in its folder.
    WildFolder(String),
    /// No file name, or `[`, `]`, `{`, `}` in it.
    NoName(String),
    /// Its name's pattern does not compile.
    Pattern(String, BadPattern),
}

impl std::fmt::Display for BadGlob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadGlob::NoBase(g) => write!(f, "{g:?}: start it with ~/ (the home), ./ (the working directory) or /"),
            BadGlob::WildFolder(g) => write!(
                f,
                "{g:?}: the folder is written out (wildcards in the file name only, no ..)"
            ),
            BadGlob::NoName(g) => write!(f, "{g:?}: name the files (`*` and `?` only)"),
            BadGlob::Pattern(g, why) => write!(f, "{g:?}: {why}"),
        }
    }
}

impl std::error::Error for BadGlob {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BadGlob::Pattern(_, why) => Some(why),
            _ => None,
        }
    }
}

impl LogGlob {
    /// Reads `written` (on `line`): `~/folder/name*.jsonl` under the home,
    /// `./…` under the working directory, or an absolute path; wildcards
    /// in the file name only, no `..`.
    pub fn new(written: &str, line: usize) -> Result<LogGlob, BadGlob> {
        let (base, rest) = if let Some(rest) = written.strip_prefix("~/") {
            (Base::Home, rest)
        } else if let Some(rest) = written.strip_prefix("./") {
            (Base::WorkingDirectory, rest)
        } else if let Some(rest) = written.strip_prefix('/') {
            (Base::Root, rest)
        } else {
            return Err(BadGlob::NoBase(written.to_owned()));
        };
        let (folder, name) = rest.rsplit_once('/').unwrap_or(("", rest));
        let wild = |part: &str| part.contains(['*', '?', '[', ']', '{', '}']);
        if folder.split('/').any(|part| part == ".." || wild(part)) {
            return Err(BadGlob::WildFolder(written.to_owned()));
        }
        if name.is_empty() || name == "." || name == ".." || name.contains(['[', ']', '{', '}']) {
            return Err(BadGlob::NoName(written.to_owned()));
        }
        let file = Pattern::new(&glob_to_regex(name), line).map_err(|why| BadGlob::Pattern(written.to_owned(), why))?;
        Ok(LogGlob {
            written: written.to_owned(),
            line,
            base,
            folder: PathBuf::from(folder),
            file: Some(file),
        })
    }

    /// The glob as written.
    pub fn as_str(&self) -> &str {
        &self.written
    }

    /// The folder its logs are in, for an agent with this home and working
    /// directory.
    pub fn folder(&self, home: &Path, cwd: &Path) -> PathBuf {
        let base = match self.base {
            Base::Home => home,
            Base::WorkingDirectory => cwd,
            Base::Root => Path::new("/"),
        };
        base.join(&self.folder)
    }

    /// True when its folder is under each agent's working directory
    /// (`./…`): no one folder to look in ahead of a run.
    pub fn is_per_working_directory(&self) -> bool {
        self.base == Base::WorkingDirectory
    }

    /// The name of the folder its logs are in (`None`: the base itself).
    pub fn folder_name(&self) -> Option<&str> {
        self.folder.file_name()?.to_str()
    }

    /// True when a file of that name is one of its logs.
    pub fn names(&self, file_name: &str) -> bool {
        self.file.as_ref().is_some_and(|p| p.is_match(file_name))
    }
}

/// `*` any run of characters but `/`, `?` one; everything else literal.
fn glob_to_regex(name: &str) -> String {
    let mut regex = String::from("^");
    for c in name.chars() {
        match c {
            '*' => regex.push_str("[^/]*"),
            '?' => regex.push_str("[^/]"),
            c => regex.push_str(&regex_lite::escape(c.encode_utf8(&mut [0; 4]))),
        }
    }
    regex.push('$');
    regex
}

/// A field of a line: a JSON pointer (`/a/0`), or a dotted path (`a.0`).
fn field<'v>(line: &'v Value, path: &str) -> Option<&'v Value> {
    match path.starts_with('/') {
        true => line.pointer(path),
        false => path.split('.').try_fold(line, |value, key| match value {
            Value::Array(items) => items.get(key.parse::<usize>().ok()?),
            value => value.get(key),
        }),
    }
}

/// A value as a rule's pattern reads it (`None`: missing or null).
fn as_text(value: &Value) -> Option<std::borrow::Cow<'_, str>> {
    match value {
        Value::Null => None,
        Value::String(s) => Some(s.as_str().into()),
        other => Some(other.to_string().into()),
    }
}

/// An answer's text: a string, or the strings (or `text` fields) of a list.
fn answer_text(value: &Value) -> Option<String> {
    Some(match value {
        Value::Array(items) => {
            let part = |item: &Value| match item {
                Value::String(s) => Some(s.clone()),
                item => item.get("text")?.as_str().map(str::to_owned),
            };
            items.iter().filter_map(part).collect::<Vec<_>>().join("\n")
        }
        value => as_text(value)?.into_owned(),
    })
}

impl LogRules {
    /// What a line says: the first rule that matches it, and the answer
    /// it names.
    fn read(&self, line: &Value) -> Option<(&LineRule, Option<String>)> {
        let rule = self.lines.iter().find(|rule| {
            field(line, &rule.field)
                .and_then(as_text)
                .is_some_and(|text| rule.pattern.is_match(&text))
        })?;
        let answer = rule
            .text
            .as_deref()
            .and_then(|path| field(line, path))
            .and_then(answer_text);
        Some((rule, answer))
    }

    /// Classifies a log cold from its last [`TAIL_BYTES`].
    pub fn classify_tail(&self, mut file: &mut dyn crate::agent::LogFile) -> std::io::Result<LineClassifier<UserLog>> {
        LineClassifier::from_tail_with(&mut file, TAIL_BYTES, self.log())
    }

    fn log(&self) -> UserLog {
        UserLog {
            rules: self.clone(),
            turn: Turn::default(),
        }
    }

    /// A fresh incremental classifier of a log these rules describe.
    pub fn classifier(&self, offset: u64) -> LineClassifier<UserLog> {
        LineClassifier::with_rules(offset, self.log())
    }
}

/// A user log's line rules and what they decided: the [`LineRules`] of
/// its [`LineClassifier`].
#[derive(Debug, Clone, Default)]
pub struct UserLog {
    rules: LogRules,
    turn: Turn,
}

impl LineRules for UserLog {
    fn apply(&mut self, line: &[u8], end: u64) {
        let Some(value) = parse_line::<Value>(line, |_| true, &mut self.turn.invalid_lines) else {
            return;
        };
        let Some((rule, answer)) = self.rules.read(&value) else {
            return;
        };
        match rule.state {
            State::Working => self.turn.answer = None,
            State::Done => self.turn.answer = answer,
            _ => {}
        }
        let reason = format!(
            "log rule on line {}: {} matches {:?}",
            rule.pattern.line(),
            rule.field,
            rule.pattern.as_str()
        );
        self.turn.decide(rule.state, false, reason, end, None);
    }
    fn skip_too_long(&mut self) {
        self.turn.invalid_lines += 1;
    }
    fn verdict(&self) -> TranscriptVerdict {
        self.turn.verdict()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::LogClassifier;

    fn rule(state: State, field: &str, pattern: &str, text: Option<&str>) -> LineRule {
        LineRule {
            state,
            field: field.into(),
            pattern: Pattern::new(pattern, 7).unwrap(),
            text: text.map(str::to_owned),
        }
    }

    fn toy() -> LogRules {
        LogRules {
            glob: LogGlob::new("~/.toy/logs/*.jsonl", 2).unwrap(),
            lines: vec![
                rule(State::Working, "type", "^prompt$", None),
                rule(State::Done, "type", "^answer$", Some("message.content")),
                rule(State::Failed, "type", "^error$", None),
                rule(State::Interrupted, "/type", "^cancelled$", None),
                rule(State::Waiting, "ask.0", ".", None),
            ],
        }
    }

    const TURN: &str = concat!(
        "{\"type\":\"prompt\",\"text\":\"task 1\"}\n",
        "{\"type\":\"tool\",\"name\":\"ls\"}\n",
        "{\"type\":\"answer\",\"message\":{\"content\":[{\"text\":\"Answer 1\"},\"more\"]}}\n",
    );

    #[test]
    fn a_turn_starts_works_and_answers_as_the_rules_say() {
        let mut log = toy().classifier(0);
        log.feed(&TURN.as_bytes()[..40]);
        assert_eq!(log.verdict().state, State::Working, "the prompt line");
        log.feed(&TURN.as_bytes()[40..TURN.len() - 3]);
        assert_eq!(log.verdict().state, State::Working, "the answer is half written");
        log.feed(&TURN.as_bytes()[TURN.len() - 3..]);
        let done = log.verdict();
        assert_eq!((done.state, done.candidate), (State::Done, None));
        assert_eq!(done.answer.as_deref(), Some("Answer 1\nmore"));
        assert!(done.reason.contains("line 7"), "{}", done.reason);
        assert_eq!(LogClassifier::consumed(&log), TURN.len() as u64);
        log.feed(b"{\"type\":\"prompt\"}\n{\"ask\":[\"deploy?\"]}\n");
        assert_eq!((log.verdict().state, log.verdict().answer), (State::Waiting, None));
        log.feed(b"{\"type\":\"cancelled\"}\nnot json\n\n");
        let cancelled = log.verdict();
        assert_eq!((cancelled.state, cancelled.invalid_lines), (State::Interrupted, 1));
        log.feed(b"{\"type\":\"error\",\"code\":3}\n");
        assert_eq!(log.verdict().state, State::Failed);
    }

    #[test]
    fn a_cold_read_from_the_tail_agrees_with_the_incremental_one() {
        let log = format!("{}{TURN}", "{\"type\":\"prompt\"}\n".repeat(50));
        for cut in 0..=log.len() {
            let mut incremental = toy().classifier(0);
            incremental.feed(&log.as_bytes()[..cut]);
            let mut file = std::io::Cursor::new(log.as_bytes()[..cut].to_vec());
            let cold = LineClassifier::from_tail_with(&mut file, 256, toy().log()).unwrap();
            let (a, b) = (incremental.verdict(), cold.verdict());
            assert_eq!((a.state, a.answer), (b.state, b.answer), "cut at {cut}");
        }
    }

    #[test]
    fn globs_are_under_a_base_with_wildcards_in_the_name_only() {
        let home = Path::new("/home/u");
        let cwd = Path::new("/work/p");
        let g = LogGlob::new("~/.toy/logs/*.jsonl", 1).unwrap();
        assert_eq!(g.folder(home, cwd), PathBuf::from("/home/u/.toy/logs"));
        assert!(g.names("s-1.jsonl") && !g.names("s-1.json") && !g.names("x.jsonl.bak"));
        let here = LogGlob::new("./.toy/session-??.log", 1).unwrap();
        assert_eq!(here.folder(home, cwd), PathBuf::from("/work/p/.toy"));
        assert!(here.names("session-01.log") && !here.names("session-1.log"));
        let root = LogGlob::new("/var/log/toy.(1)+.jsonl", 1).unwrap();
        assert!(root.names("toy.(1)+.jsonl"), "regex characters are literal");
        assert_eq!(root.folder(home, cwd), PathBuf::from("/var/log"));
        for bad in ["logs/*.jsonl", "~/*/x.jsonl", "~/../x.jsonl", "~/logs/", "~/[ab].jsonl"] {
            let why: Box<dyn std::error::Error> = Box::new(LogGlob::new(bad, 1).unwrap_err());
            assert!(why.to_string().starts_with(&format!("{bad:?}: ")), "{why}");
        }
    }

    proptest::proptest! {
        /// Any lines, cut anywhere, never panic, and the cuts change
        /// nothing: the verdict is the lines', not the chunks'.
        #[test]
        fn any_log_in_any_chunks_reads_the_same(
            lines in proptest::collection::vec(
                "(\\{\"type\":\"(prompt|answer|error|cancelled|tool)\"(,\"message\":\\{\"content\":\"[a-zé]{0,6}\"\\})?\\}|\\{\"ask\":\\[[0-9]\\]\\}|[{}\\[\\]\":a-z0-9,]{0,12})",
                0..12,
            ),
            cuts in proptest::collection::vec(0usize..400, 0..6),
        ) {
            let text = lines.join("\n");
            let bytes = text.as_bytes();
            let mut whole = toy().classifier(0);
            whole.feed(bytes);
            let mut pieces = toy().classifier(0);
            let mut at = 0;
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(bytes.len())).collect();
            cuts.sort_unstable();
            for cut in cuts.into_iter().chain([bytes.len()]) {
                pieces.feed(&bytes[at..cut]);
                at = cut;
            }
            let (a, b) = (whole.verdict(), pieces.verdict());
            proptest::prop_assert_eq!((a.state, a.answer, a.invalid_lines), (b.state, b.answer, b.invalid_lines));
        }
    }

    #[test]
    fn the_rules_travel_as_json_and_read_the_same() {
        let json = serde_json::to_string(&toy()).unwrap();
        let back: LogRules = serde_json::from_str(&json).unwrap();
        assert_eq!(back.glob.as_str(), "~/.toy/logs/*.jsonl");
        let mut log = back.classifier(0);
        log.feed(TURN.as_bytes());
        assert_eq!(log.verdict().answer.as_deref(), Some("Answer 1\nmore"));
    }
}
