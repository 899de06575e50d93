//! Attention: which agent panes need the person, in the order to visit them,
//! and the cycle that repeated `attention` commands walk.
//!
//! A pane needs you when its agent waits for you (always: looking at it does
//! not answer it), or when its turn ended (failed, done, interrupted) while
//! nobody was looking and nobody has looked since (`unseen`). The order:
//! waiting (longest waiting first), failed, done (oldest first), interrupted;
//! within a rank the older state comes first.

use crate::verdict::{Millis, State};

/// Presses further apart than this start again at the most urgent pane.
pub const CYCLE_RESET_MS: Millis = 30_000;

/// How urgent a pane's state is (lower is more urgent), if it needs you.
pub fn rank(state: State, unseen: bool) -> Option<u8> {
    match state {
        State::Waiting => Some(0),
        State::Failed if unseen => Some(1),
        State::Done if unseen => Some(2),
        State::Interrupted if unseen => Some(3),
        _ => None,
    }
}

/// Where a pane stands in the visiting order (smaller first), if it needs
/// you: its rank, then the older state, then the pane id.
pub fn order(state: State, unseen: bool, since: Millis, pane: u32) -> Option<(u8, Millis, u32)> {
    rank(state, unseen).map(|r| (r, since, pane))
}

/// Where one pane stands, as far as attention goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Standing {
    /// Terminal pane id.
    pub pane: u32,
    /// Fused state.
    pub state: State,
    /// Finished while unfocused, not seen since.
    pub unseen: bool,
    /// When the state began.
    pub since: Millis,
}

/// How many panes need you.
pub fn count(panes: impl IntoIterator<Item = Standing>) -> usize {
    panes.into_iter().filter(|s| rank(s.state, s.unseen).is_some()).count()
}

/// The panes that need you, most urgent first.
pub fn queue(panes: impl IntoIterator<Item = Standing>) -> Vec<u32> {
    let mut needing: Vec<(u8, Millis, u32)> = panes
        .into_iter()
        .filter_map(|s| order(s.state, s.unseen, s.since, s.pane))
        .collect();
    crate::order::sort_by_rank(&mut needing, |&(rank, since, pane)| {
        crate::order::rank3(rank, since, pane)
    });
    needing.into_iter().map(|(_, _, pane)| pane).collect()
}

/// Where repeated `attention` commands have been.
#[derive(Debug, Default, Clone)]
pub struct Cycle {
    last: Option<(u32, Millis)>,
}

impl Cycle {
    /// The pane to go to now: the one after the last visited pane in
    /// `queue`, or the most urgent one (first press, the last one no longer
    /// needs you, or the last press is old). `None` when nothing needs you.
    pub fn next(&mut self, queue: &[u32], now: Millis) -> Option<u32> {
        let recent = self
            .last
            .filter(|(_, at)| now.saturating_sub(*at) < CYCLE_RESET_MS)
            .and_then(|(pane, _)| queue.iter().position(|p| *p == pane));
        let next = match recent {
            Some(at) => queue.get((at + 1) % queue.len()),
            None => queue.first(),
        }
        .copied();
        self.last = next.map(|pane| (pane, now));
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(pane: u32, state: State, unseen: bool, since: Millis) -> Standing {
        Standing {
            pane,
            state,
            unseen,
            since,
        }
    }

    #[test]
    fn waiting_first_then_failed_done_interrupted_oldest_first() {
        let segments = [
            seg(1, State::Done, true, 10),
            seg(2, State::Interrupted, true, 1),
            seg(3, State::Waiting, false, 50),
            seg(4, State::Failed, true, 90),
            seg(5, State::Done, true, 5),
            seg(6, State::Waiting, true, 20),
            seg(7, State::Working, false, 0),
        ];
        assert_eq!(queue(segments), [6, 3, 4, 5, 1, 2]);
    }

    #[test]
    fn seen_turn_ends_need_nobody() {
        let segments = [
            seg(1, State::Done, false, 1),
            seg(2, State::Failed, false, 1),
            seg(3, State::Interrupted, false, 1),
            seg(4, State::Idle, true, 1),
        ];
        assert!(queue(segments).is_empty());
    }

    #[test]
    fn presses_cycle_and_skip_panes_that_no_longer_need_you() {
        let mut cycle = Cycle::default();
        assert_eq!(cycle.next(&[6, 3, 4], 0), Some(6));
        assert_eq!(cycle.next(&[6, 3, 4], 1), Some(3));
        assert_eq!(cycle.next(&[6, 3, 4], 2), Some(4));
        assert_eq!(cycle.next(&[6, 3, 4], 3), Some(6), "wraps around");
        // 6 was answered meanwhile: the most urgent of the rest.
        assert_eq!(cycle.next(&[3, 4], 4), Some(3));
        assert_eq!(cycle.next(&[], 5), None);
        assert_eq!(cycle.next(&[3, 4], 6), Some(3));
    }

    #[test]
    fn an_old_press_starts_again_at_the_most_urgent() {
        let mut cycle = Cycle::default();
        assert_eq!(cycle.next(&[1, 2], 0), Some(1));
        assert_eq!(cycle.next(&[1, 2], CYCLE_RESET_MS), Some(1));
    }
}
