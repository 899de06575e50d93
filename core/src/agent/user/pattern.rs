//! A pattern of a rules file: a regular expression (`regex-lite`, bounded
//! in size and nesting) and the line it was written on, travelling as its
//! source and line and compiled again where it arrives.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A compiled regular expression and where it was written.
#[derive(Debug, Clone)]
pub struct Pattern {
    source: String,
    regex: regex_lite::Regex,
    line: usize,
}

/// A pattern travels as its source and line, and is compiled again where
/// it arrives.
#[derive(Serialize, Deserialize)]
struct PatternText {
    source: String,
    line: usize,
}

impl Serialize for Pattern {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let text = PatternText {
            source: self.source.clone(),
            line: self.line,
        };
        text.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Pattern {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = PatternText::deserialize(deserializer)?;
        Pattern::new(&text.source, text.line)
            .map_err(|why| serde::de::Error::custom(format!("line {}: {why}", text.line)))
    }
}

/// A pattern that does not compile: the engine's reason, in one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadPattern(pub String);

impl std::fmt::Display for BadPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadPattern {}

impl Pattern {
    /// Compiles `source`, written on `line`; the engine's reason when it
    /// does not compile.
    pub fn new(source: &str, line: usize) -> Result<Pattern, BadPattern> {
        let regex = regex_lite::RegexBuilder::new(source)
            .size_limit(1 << 20)
            .nest_limit(64)
            .build()
            .map_err(|e| BadPattern(crate::text::first_line(&e.to_string())))?;
        Ok(Pattern {
            source: source.to_owned(),
            regex,
            line,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Its line in its file.
    pub fn line(&self) -> usize {
        self.line
    }

    /// True when it matches somewhere in `text`.
    pub fn is_match(&self, text: &str) -> bool {
        self.regex.is_match(text)
    }

    /// What its first capture group matched in `text` (`None`: no match,
    /// or no such group).
    pub fn group(&self, text: &str) -> Option<String> {
        let captures = self.regex.captures(text)?;
        captures.get(1).map(|m| m.as_str().to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_that_does_not_compile_says_why_in_one_line() {
        let why: Box<dyn std::error::Error> = Box::new(Pattern::new("(unclosed", 3).unwrap_err());
        let why = why.to_string();
        assert!(!why.is_empty() && !why.contains('\n'), "{why}");
        assert!(Pattern::new(&"(".repeat(200), 1).is_err(), "nesting is bounded");
    }
}
