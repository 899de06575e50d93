//! Whose turn it is to ask zellij for permissions.
//!
//! zellij 0.45.1 gives a plugin no permission at load: every copy of the bar
//! asks. On every answered request zellij rewrites its permission cache
//! (truncate, then write), even one its cache granted. A copy whose request
//! reads the cache meanwhile finds it empty and shows a permission prompt;
//! in a hidden tab nobody answers it, and zellij keeps every event for that
//! copy until then (the server grew ~1 MiB/s at 64 agents).
//!
//! So copies ask one at a time, whatever the layout puts between them and
//! however slowly they load: a copy asks while it holds a lock file (the
//! plugin's is in zellij's `/tmp`, private to the user, shared by every
//! session and install), and lets it go once answered: zellij has rewritten
//! its cache before it answers. A lock whose holder's stamp is older than
//! [`STALE_LOCK_MS`], or that stays the same that long, is taken over (a
//! copy closed while asking, a prompt waiting for a person, a killed zellij).

use crate::Millis;
use std::io;
use std::path::{Path, PathBuf};

/// How often a copy tries again while another copy holds the lock (ms).
pub const ASK_RETRY_MS: Millis = 50;
/// How long a lock may be held before another copy takes it over (ms).
pub const STALE_LOCK_MS: Millis = 5_000;

/// The lock file under zellij's temporary folder `root` (`/tmp` inside a
/// plugin): one per user, whatever the session or the install.
pub fn lock_in(root: &Path) -> PathBuf {
    root.join("turnstile").join("permissions.lock")
}

/// The lock a copy holds while it asks.
pub trait AskLock {
    /// Creates the lock holding `stamp` unless one exists: `Ok(None)` when
    /// taken, `Ok(Some(held))` with the holder's stamp when not (empty while
    /// the holder is writing it).
    fn take(&mut self, stamp: &str) -> io::Result<Option<String>>;
    /// Removes the lock if it still holds `stamp`.
    fn release(&mut self, stamp: &str);
}

/// One copy's side of the lock: the stamp it holds, and the holder it
/// waits for since when.
#[derive(Debug, Default)]
pub(super) struct AskTurn {
    held: Option<String>,
    waiting_on: Option<(String, Millis)>,
}

impl AskTurn {
    /// Tries to take the turn; true when this copy may ask now (also when
    /// there is no lock to take, or it cannot be read: asking late is worse
    /// than a rare prompt).
    pub fn take(&mut self, lock: Option<&mut dyn AskLock>, me: u32, now: Millis) -> bool {
        let Some(lock) = lock else { return true };
        let stamp = format!("{now} {me}");
        for _ in 0..2 {
            match lock.take(&stamp) {
                Ok(None) => {
                    self.held = Some(stamp);
                    return true;
                }
                Ok(Some(held)) if self.is_stale(&held, now) => {
                    lock.release(&held);
                    self.waiting_on = None;
                }
                Ok(Some(_)) => return false,
                Err(_) => return true,
            }
        }
        false
    }

    /// This copy was answered: zellij's cache is whole again, the next
    /// copy may ask.
    pub fn release(&mut self, lock: Option<&mut dyn AskLock>) {
        if let (Some(stamp), Some(lock)) = (self.held.take(), lock) {
            lock.release(&stamp);
        }
    }

    /// True when the holder's stamp is older than [`STALE_LOCK_MS`] (or
    /// from the future), or this copy has seen it unchanged that long.
    fn is_stale(&mut self, held: &str, now: Millis) -> bool {
        let stamped = held.split(' ').next().and_then(|t| t.parse::<Millis>().ok());
        if stamped.is_some_and(|t| now.saturating_sub(t) >= STALE_LOCK_MS || t > now + STALE_LOCK_MS) {
            return true;
        }
        match &self.waiting_on {
            Some((seen, since)) if seen == held => now.saturating_sub(*since) >= STALE_LOCK_MS,
            _ => {
                self.waiting_on = Some((held.to_owned(), now));
                false
            }
        }
    }
}

/// A lock in memory: the stamp it holds.
#[cfg(test)]
#[derive(Debug, Default)]
pub(super) struct MemoryLock(pub Option<String>);

#[cfg(test)]
impl AskLock for MemoryLock {
    fn take(&mut self, stamp: &str) -> io::Result<Option<String>> {
        match &self.0 {
            Some(held) => Ok(Some(held.clone())),
            None => {
                self.0 = Some(stamp.to_owned());
                Ok(None)
            }
        }
    }
    fn release(&mut self, stamp: &str) {
        if self.0.as_deref() == Some(stamp) {
            self.0 = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_copy_asks_at_a_time_and_the_next_once_it_was_answered() {
        let mut lock = MemoryLock::default();
        let (mut first, mut second) = (AskTurn::default(), AskTurn::default());
        assert!(first.take(Some(&mut lock), 1, 1_000));
        assert!(!second.take(Some(&mut lock), 2, 1_010));
        assert!(!second.take(Some(&mut lock), 2, 1_060));
        first.release(Some(&mut lock));
        assert!(second.take(Some(&mut lock), 2, 1_110));
        assert_eq!(lock.0.as_deref(), Some("1110 2"));
    }

    #[test]
    fn a_lock_held_too_long_is_taken_over() {
        // Stamped long ago (a killed zellij): taken over at once.
        let mut lock = MemoryLock(Some("1000 7".into()));
        assert!(AskTurn::default().take(Some(&mut lock), 2, 1_000 + STALE_LOCK_MS));
        // Unreadable (a holder that died writing it): after waiting that long.
        let mut lock = MemoryLock(Some(String::new()));
        let mut waiting = AskTurn::default();
        assert!(!waiting.take(Some(&mut lock), 2, 50_000));
        assert!(!waiting.take(Some(&mut lock), 2, 50_000 + STALE_LOCK_MS - 1));
        assert!(waiting.take(Some(&mut lock), 2, 50_000 + STALE_LOCK_MS));
    }

    #[test]
    fn a_taken_over_copy_leaves_its_successors_lock_alone() {
        let mut lock = MemoryLock::default();
        let mut slow = AskTurn::default();
        assert!(slow.take(Some(&mut lock), 1, 1_000));
        let mut next = AskTurn::default();
        assert!(next.take(Some(&mut lock), 2, 1_000 + STALE_LOCK_MS));
        slow.release(Some(&mut lock));
        assert_eq!(lock.0.as_deref(), Some("6000 2"), "still the successor's");
    }

    #[test]
    fn no_lock_or_an_unreadable_one_means_asking_now() {
        struct Broken;
        impl AskLock for Broken {
            fn take(&mut self, _: &str) -> io::Result<Option<String>> {
                Err(io::ErrorKind::InvalidData.into())
            }
            fn release(&mut self, _: &str) {}
        }
        assert!(AskTurn::default().take(None, 1, 0));
        assert!(AskTurn::default().take(Some(&mut Broken), 1, 0));
    }
}
