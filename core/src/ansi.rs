//! Removal of terminal escape sequences and control characters.
//!
//! The plugin gets ANSI-free viewports from zellij, but `tmux capture-pane -e`
//! dumps, `zellij action dump-screen` files and routed payloads carry escapes.
//! [`strip`] turns any of them into plain text, keeping newlines and tabs.

const ESC: char = '\u{1b}';
const BEL: char = '\u{7}';

/// Returns `text` without CSI / OSC / DCS / two-byte escape sequences and
/// without control characters other than `\n` and `\t`. A `\r` directly
/// before `\n` is dropped; a lone `\r` is dropped too.
pub fn strip(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ESC => skip_escape(&mut chars),
            // C1 CSI written as one code point.
            '\u{9b}' => skip_csi_body(&mut chars),
            '\n' | '\t' => out.push(c),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.next() {
        Some('[') => skip_csi_body(chars),
        // OSC, DCS, SOS, PM, APC: a string terminated by BEL or ESC '\'.
        // A broken one (no terminator before the line or text ends) drops
        // only its introducer: the text after it is kept.
        Some(']') | Some('P') | Some('X') | Some('^') | Some('_') => {
            let mut probe = chars.clone();
            if skip_string_body(&mut probe) {
                *chars = probe;
            }
        }
        // Character-set designations take one more byte: ESC ( B.
        Some('(') | Some(')') | Some('*') | Some('+') => {
            chars.next();
        }
        _ => {}
    }
}

fn skip_csi_body(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    // Parameters and intermediates are 0x20..=0x3f; the final byte is 0x40..=0x7e.
    for c in chars.by_ref() {
        if ('\u{40}'..='\u{7e}').contains(&c) {
            return;
        }
        if !('\u{20}'..='\u{3f}').contains(&c) {
            return;
        }
    }
}

/// Skips a control string up to its terminator; false when there is none
/// before a newline or the end of the text.
fn skip_string_body(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> bool {
    while let Some(c) = chars.next() {
        match c {
            BEL => return true,
            '\n' => return false,
            ESC => {
                if chars.peek() == Some(&'\\') {
                    chars.next();
                }
                return true;
            }
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::strip;

    #[test]
    fn removes_colours_and_cursor_moves() {
        assert_eq!(strip("\x1b[38;5;174m✻\x1b[39m Cooked\x1b[0m"), "✻ Cooked");
        assert_eq!(strip("a\x1b[2Kb\x1b[?25lc"), "abc");
    }

    #[test]
    fn removes_osc_titles_and_hyperlinks() {
        assert_eq!(strip("\x1b]0;title\x07x"), "x");
        assert_eq!(strip("\x1b]8;;http://a\x1b\\link\x1b]8;;\x1b\\"), "link");
    }

    #[test]
    fn keeps_newlines_and_tabs_drops_other_controls() {
        assert_eq!(strip("a\r\nb\tc\x08\x00d"), "a\nb\tcd");
    }

    #[test]
    fn unterminated_sequences_do_not_panic() {
        assert_eq!(strip("x\x1b["), "x");
        assert_eq!(
            strip("x\x1b]never ends"),
            "xnever ends",
            "the text after a broken OSC stays"
        );
        assert_eq!(strip("\x1b]0;t\nrest"), "0;t\nrest");
        assert_eq!(strip("\x1b"), "");
    }
}
