//! What a person (or turnstile's router) types into a simulated agent:
//! a bracketed paste or a typed line, ended by Enter, is one prompt.

use std::io::Read;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

/// What the terminal typed into a listening simulated agent.
pub enum Typed {
    /// Text standing in the input box, not submitted (a swallowed Enter).
    Draft(String),
    /// A submitted prompt.
    Prompt(String),
}

/// Turns the terminal's bracketed paste on, as every terminal UI that
/// keeps a paste's line breaks does (zellij drops the markers of a paste
/// into a program that did not, and each line break would then submit).
pub fn ask_for_bracketed_paste() -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(b"\x1b[?2004h")?;
    out.flush()
}

/// Reads the terminal on a thread. Markers written by turnstile's router
/// arrive as `ESC[200~ … ESC[201~`, then `\r` in a separate write. The
/// first `drop_enters` submissions are swallowed: their text stays as a
/// draft (drawn in the box), which the next Enter (even a bare one)
/// submits. Whatever arrives within `deaf` of the start is dropped.
pub fn listen_to_stdin(mut drop_enters: u32, deaf: Duration) -> Receiver<Typed> {
    let (tx, rx) = std::sync::mpsc::channel();
    let hearing_from = Instant::now() + deaf;
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut buf = [0u8; 4096];
        let mut pending = Vec::new();
        let mut draft = String::new();
        while let Ok(n) = stdin.read(&mut buf) {
            if n == 0 {
                return;
            }
            if Instant::now() < hearing_from {
                continue;
            }
            pending.extend_from_slice(&buf[..n]);
            while let Some(prompt) = take_prompt(&mut pending) {
                draft.push_str(&prompt);
                let typed = if drop_enters > 0 && !draft.is_empty() {
                    drop_enters -= 1;
                    Typed::Draft(draft.clone())
                } else {
                    Typed::Prompt(std::mem::take(&mut draft))
                };
                if matches!(&typed, Typed::Prompt(p) if p.is_empty()) {
                    continue;
                }
                if tx.send(typed).is_err() {
                    return;
                }
            }
        }
    });
    rx
}

/// Takes one complete prompt off the front of `pending`, if there is one.
pub fn take_prompt(pending: &mut Vec<u8>) -> Option<String> {
    const START: &[u8] = b"\x1b[200~";
    const END: &[u8] = b"\x1b[201~";
    let text = String::from_utf8_lossy(pending).into_owned();
    let (body, consumed) = if let Some(start) = text.find("\x1b[200~") {
        let end = text[start..].find("\x1b[201~")? + start;
        let after = &text[end + END.len()..];
        let enter = after.find(['\r', '\n'])?;
        (text[start + START.len()..end].to_owned(), end + END.len() + enter + 1)
    } else {
        let enter = text.find(['\r', '\n'])?;
        (text[..enter].to_owned(), enter + 1)
    };
    pending.drain(..consumed.min(pending.len()));
    Some(body.replace("\r\n", "\n").replace('\r', "\n").trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_from_pastes_and_typed_lines() {
        let mut p = b"\x1b[200~line one\nline two\x1b[201~".to_vec();
        assert_eq!(take_prompt(&mut p), None, "no Enter yet");
        p.extend_from_slice(b"\rtyped\n");
        assert_eq!(take_prompt(&mut p).as_deref(), Some("line one\nline two"));
        assert_eq!(take_prompt(&mut p).as_deref(), Some("typed"));
        assert!(p.is_empty());
    }
}
