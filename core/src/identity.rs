//! Which build of turnstile this is: the crate's version and a hash of its
//! sources (`build.rs`). The plugin and the host each carry it; the bar
//! compares the host's with its own, so a plugin and a host from different
//! builds never meet silently.

/// The crate's version (`0.1.0`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A hash of the crate's sources: two builds with the same one were made
/// from the same code.
pub const BUILD: &str = env!("TURNSTILE_BUILD");

/// The version and the build together, as shown to users (`0.1.0+1a2b3c4d`).
pub const LABEL: &str = concat!(env!("CARGO_PKG_VERSION"), "+", env!("TURNSTILE_BUILD"));

/// What a bar built as [`LABEL`] says of a host that answered with
/// `theirs` (`None`: a host too old to say): `None` when they match.
pub fn mismatch(theirs: Option<&str>, host_command: &str) -> Option<String> {
    let ours = LABEL;
    match theirs {
        Some(theirs) if theirs == ours => None,
        Some(theirs) => Some(format!(
            "turnstile bar {ours} runs host `{host_command}` {theirs}: run `turnstile setup` (then reopen zellij)"
        )),
        None => Some(format!(
            "turnstile bar {ours} runs an older host `{host_command}`: install turnstile again, then run `turnstile setup`"
        )),
    }
}

/// The zellij releases turnstile is tested with (major.minor).
pub const ZELLIJ_SUPPORTED: [(u32, u32); 2] = [(0, 44), (0, 45)];

/// True for a release of a supported major.minor (`0.44.3`, `0.45.1`).
pub fn zellij_supported(version: &str) -> bool {
    let mut parts = version.split('.').map(|p| p.parse::<u32>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(major), Some(minor)) => ZELLIJ_SUPPORTED.contains(&(major, minor)),
        _ => false,
    }
}

/// What the bar says of the zellij it runs in, as the host saw it
/// (`None`: supported, or not known).
pub fn zellij_note(version: Option<&str>) -> Option<String> {
    let version = version?;
    let tested: Vec<String> = ZELLIJ_SUPPORTED.iter().map(|(a, b)| format!("{a}.{b}")).collect();
    (!zellij_supported(version)).then(|| {
        format!(
            "zellij {version} is not a release turnstile is tested with ({}): the bar may be wrong; `turnstile doctor`",
            tested.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_label_is_the_version_and_an_eight_digit_hash() {
        let label = LABEL;
        let (version, build) = label.split_once('+').expect("a + in the label");
        assert_eq!(version, VERSION);
        assert_eq!(build.len(), 8);
        assert!(build.chars().all(|c| c.is_ascii_hexdigit()), "{build}");
    }

    #[test]
    fn an_untested_zellij_is_named_and_a_tested_one_is_not() {
        assert!(zellij_supported("0.44.3") && zellij_supported("0.45.1"));
        assert!(!zellij_supported("0.43.1") && !zellij_supported("0.46.0") && !zellij_supported("x"));
        assert_eq!(zellij_note(Some("0.45.1")), None);
        assert_eq!(zellij_note(None), None);
        let note = zellij_note(Some("0.46.0")).expect("a note");
        assert!(note.contains("zellij 0.46.0") && note.contains("0.44, 0.45"), "{note}");
    }

    #[test]
    fn a_host_of_another_build_or_none_is_named_with_the_fix() {
        assert_eq!(mismatch(Some(LABEL), "turnstile"), None);
        let other = mismatch(Some("0.0.9+00000000"), "turnstile").expect("a mismatch");
        assert!(other.contains("0.0.9+00000000") && other.contains(LABEL), "{other}");
        assert!(other.contains("turnstile setup"), "{other}");
        let old = mismatch(None, "/opt/turnstile").expect("a mismatch");
        assert!(old.contains("older host `/opt/turnstile`"), "{old}");
    }
}
