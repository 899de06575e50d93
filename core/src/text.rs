//! Small text helpers shared by every module alike.

/// Longest line [`first_line`] keeps, in characters.
pub const MAX_LINE_CHARS: usize = 200;

/// The first non-empty line of `text`, trimmed, without control
/// characters, cut to [`MAX_LINE_CHARS`].
pub fn first_line(text: &str) -> String {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    line.chars().filter(|c| !c.is_control()).take(MAX_LINE_CHARS).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_line_skips_blank_lines_and_controls_and_is_cut() {
        assert_eq!(first_line("\n  \n  hello\x07 world \nmore"), "hello world");
        assert_eq!(first_line(""), "");
        assert_eq!(first_line(&"x".repeat(500)).len(), MAX_LINE_CHARS);
    }
}
