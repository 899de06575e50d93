//! The wall clock of the host side: the one place it is read.

use std::time::SystemTime;
use turnstile_core::Millis;

/// Milliseconds since the epoch, now.
pub fn now_ms() -> Millis {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as Millis)
}
