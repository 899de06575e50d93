//! Which copy of the bar does the work, and the panes zellij lists.
//!
//! Every tab has its own copy of the plugin and every copy gets every event.
//! The copy with the lowest plugin id among those with this plugin's URL in
//! the latest pane list is the leader: it alone reads screens, runs the host
//! command, routes and answers pipes. The others draw what it sends them.

use super::{PaneEntry, TabView};
use crate::panes::PaneMeta;
use std::collections::BTreeSet;

/// This copy's part.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Role {
    /// Not seen in a pane list yet: draws, acts on nothing.
    #[default]
    Undecided,
    /// Does the work; sends rows to these copies.
    Leader(Vec<Follower>),
    /// Draws the rows the leader (this plugin id) sends.
    Follower(u32),
}

/// Another copy of the bar: its plugin id and the tab it is drawn in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Follower {
    /// Its plugin id.
    pub id: u32,
    /// The position of its tab.
    pub tab: usize,
}

impl Role {
    /// True for the copy that does the work.
    pub fn is_leader(&self) -> bool {
        matches!(self, Role::Leader(_))
    }

    /// The leader's plugin id, for a follower.
    pub fn leader(&self) -> Option<u32> {
        match self {
            Role::Follower(id) => Some(*id),
            _ => None,
        }
    }

    /// The other copies, for the leader.
    pub fn followers(&self) -> &[Follower] {
        match self {
            Role::Leader(ids) => ids,
            _ => &[],
        }
    }
}

/// Elects the leader among the copies of the plugin `me` belongs to;
/// `my_url` is this copy's URL as an earlier list showed it.
///
/// A list that shows this copy decides its role. A list that does not
/// (zellij sends such lists now and then, e.g. around a tab switch) keeps the
/// role, except that a leader steps down when the list shows another copy of
/// its URL (that copy now takes the lead): within one list there is never
/// more than one leader. A copy never seen in a list stays undecided.
pub fn elect(me: u32, my_url: Option<&str>, panes: &[PaneEntry], previous: &Role) -> Role {
    let Some(url) = own_url(me, panes) else {
        let others_lead = my_url.is_some_and(|url| copies_of(panes, url).next().is_some());
        return match previous {
            Role::Leader(_) if others_lead => Role::Undecided,
            kept => kept.clone(),
        };
    };
    let mut copies: Vec<(u32, usize)> = copies_of(panes, url).collect();
    crate::order::sort_by_rank(&mut copies, |&(id, tab)| crate::order::rank2(u64::from(id), tab as u64));
    copies.dedup();
    match copies.first() {
        Some((first, _)) if *first != me => Role::Follower(*first),
        _ => {
            let followers = copies.into_iter().filter(|(id, _)| *id != me);
            Role::Leader(followers.map(|(id, tab)| Follower { id, tab }).collect())
        }
    }
}

/// The URL of plugin `me` in this list, if the list shows it.
pub fn own_url(me: u32, panes: &[PaneEntry]) -> Option<&str> {
    panes
        .iter()
        .find(|p| p.id == me && p.plugin_url.is_some() && !p.floating)
        .and_then(|p| p.plugin_url.as_deref())
}

/// The bar copies of this URL: floating panes of it are inbox views, never copies.
fn copies_of<'a>(panes: &'a [PaneEntry], url: &'a str) -> impl Iterator<Item = (u32, usize)> + 'a {
    panes
        .iter()
        .filter(move |p| p.plugin_url.as_deref() == Some(url) && !p.floating)
        .map(|p| (p.id, p.tab))
}

/// The terminal panes of the session, with focus only in viewed tabs.
pub fn terminal_panes(panes: &[PaneEntry], viewed_tabs: &BTreeSet<usize>) -> Vec<PaneMeta> {
    panes
        .iter()
        .filter(|p| p.plugin_url.is_none())
        .map(|p| PaneMeta {
            id: p.id,
            title: p.title.clone(),
            tab: p.tab,
            focused: p.focused && viewed_tabs.contains(&p.tab),
            command: p.command.clone(),
        })
        .collect()
}

/// Tabs some client looks at.
pub fn viewed_tabs(tabs: &[TabView]) -> BTreeSet<usize> {
    tabs.iter().filter(|t| t.viewed).map(|t| t.position).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "file:/t.wasm";

    fn plugin(id: u32, tab: usize, url: &str) -> PaneEntry {
        PaneEntry {
            id,
            tab,
            plugin_url: Some(url.into()),
            ..PaneEntry::default()
        }
    }

    fn terminal(id: u32, tab: usize, title: &str, focused: bool) -> PaneEntry {
        PaneEntry {
            id,
            tab,
            title: title.into(),
            focused,
            ..PaneEntry::default()
        }
    }

    fn panes() -> Vec<PaneEntry> {
        vec![
            plugin(7, 0, "file:/t.wasm"),
            terminal(0, 0, "api", true),
            plugin(3, 1, "file:/t.wasm"),
            plugin(1, 1, "zellij:tab-bar"),
            terminal(1, 1, "docs", true),
        ]
    }

    #[test]
    fn lowest_copy_of_our_url_leads() {
        let none = Role::Undecided;
        assert_eq!(
            elect(3, None, &panes(), &none),
            Role::Leader(vec![Follower { id: 7, tab: 0 }])
        );
        assert_eq!(elect(7, None, &panes(), &none), Role::Follower(3));
    }

    #[test]
    fn a_copy_never_listed_does_not_lead() {
        assert_eq!(elect(99, None, &panes(), &Role::Undecided), Role::Undecided);
    }

    #[test]
    fn a_pane_list_without_this_copy_keeps_a_follower() {
        let follower = Role::Follower(3);
        assert_eq!(
            elect(99, Some(URL), &panes(), &follower),
            follower,
            "never a second leader"
        );
    }

    #[test]
    fn a_leader_missing_from_a_list_that_shows_another_copy_steps_down() {
        let leader = elect(3, None, &panes(), &Role::Undecided);
        let without_me: Vec<PaneEntry> = panes().into_iter().filter(|p| p.id != 3).collect();
        assert_eq!(
            elect(7, Some(URL), &without_me, &Role::Follower(3)),
            Role::Leader(vec![])
        );
        assert_eq!(elect(3, Some(URL), &without_me, &leader), Role::Undecided);
        let no_copies: Vec<PaneEntry> = panes().into_iter().filter(|p| p.plugin_url.is_none()).collect();
        assert_eq!(
            elect(3, Some(URL), &no_copies, &leader),
            leader,
            "nobody else claims the lead"
        );
    }

    #[test]
    fn focus_counts_only_in_viewed_tabs() {
        let mut focused: Vec<(u32, bool)> = terminal_panes(&panes(), &BTreeSet::from([0]))
            .iter()
            .map(|p| (p.id, p.focused))
            .collect();
        focused.sort();
        assert_eq!(focused, vec![(0, true), (1, false)]);
    }
}
