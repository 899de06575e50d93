//! Small text helpers shared by every module alike.

/// Longest line [`first_line`] keeps, in characters.
pub const MAX_LINE_CHARS: usize = 200;

/// The first non-empty line of `text`, trimmed, without control
/// characters, cut to [`MAX_LINE_CHARS`].
pub fn first_line(text: &str) -> String {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    line.chars().filter(|c| !c.is_control()).take(MAX_LINE_CHARS).collect()
}

/// FNV-1a over `bytes`: a cheap key for "has this changed" comparisons.
pub fn fnv1a(bytes: impl IntoIterator<Item = u8>) -> u64 {
    bytes.into_iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
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
