//! Which copy of the bar does the work, and the panes zellij reports.
//!
//! Every tab has its own copy of the plugin and every copy gets every event.
//! The copy with the lowest plugin id among those with this plugin's URL is
//! the leader: it alone matches screens, runs the host command and answers
//! pipes. The others draw what it sends them.

use std::collections::BTreeSet;
use turnstile_core::panes::PaneMeta;
use zellij_tile::prelude::{PaneInfo, PaneManifest, TabInfo};

/// This copy's part.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Role {
    /// No pane list seen yet.
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
    pub id: u32,
    pub tab: usize,
}

impl Role {
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

    pub fn followers(&self) -> &[Follower] {
        match self {
            Role::Leader(ids) => ids,
            _ => &[],
        }
    }
}

fn all_panes(manifest: &PaneManifest) -> impl Iterator<Item = (usize, &PaneInfo)> {
    manifest
        .panes
        .iter()
        .flat_map(|(tab, panes)| panes.iter().map(move |p| (*tab, p)))
}

/// Elects the leader among the copies of the plugin `me` belongs to.
/// `previous` is this copy's role so far: a pane list that does not show
/// this copy (zellij sends such lists now and then, e.g. around a tab
/// switch) keeps it, so a follower never turns into a second leader. A copy
/// that never saw itself drawn (a background copy) works alone.
pub fn elect(me: u32, manifest: &PaneManifest, previous: &Role) -> Role {
    let my_url = all_panes(manifest)
        .find(|(_, p)| p.is_plugin && p.id == me)
        .and_then(|(_, p)| p.plugin_url.clone());
    let Some(url) = my_url else {
        return match previous {
            Role::Undecided => Role::Leader(Vec::new()),
            decided => decided.clone(),
        };
    };
    let copies: BTreeSet<(u32, usize)> = all_panes(manifest)
        .filter(|(_, p)| p.is_plugin && p.plugin_url.as_deref() == Some(url.as_str()))
        .map(|(tab, p)| (p.id, tab))
        .collect();
    match copies.first() {
        Some((first, _)) if *first != me => Role::Follower(*first),
        _ => {
            let followers = copies.into_iter().filter(|(id, _)| *id != me);
            Role::Leader(followers.map(|(id, tab)| Follower { id, tab }).collect())
        }
    }
}

/// The terminal panes of the session, with focus only in viewed tabs.
pub fn terminal_panes(manifest: &PaneManifest, viewed_tabs: &BTreeSet<usize>) -> Vec<PaneMeta> {
    all_panes(manifest)
        .filter(|(_, p)| !p.is_plugin)
        .map(|(tab, p)| PaneMeta {
            id: p.id,
            title: p.title.clone(),
            tab,
            focused: p.is_focused && viewed_tabs.contains(&tab),
            command: p.terminal_command.clone(),
        })
        .collect()
}

/// Tabs some client looks at.
pub fn viewed_tabs(tabs: &[TabInfo]) -> BTreeSet<usize> {
    tabs.iter()
        .filter(|t| t.active || !t.other_focused_clients.is_empty())
        .map(|t| t.position)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn plugin(id: u32, url: &str) -> PaneInfo {
        PaneInfo {
            id,
            is_plugin: true,
            plugin_url: Some(url.into()),
            ..PaneInfo::default()
        }
    }

    fn terminal(id: u32, title: &str, focused: bool) -> PaneInfo {
        PaneInfo {
            id,
            title: title.into(),
            is_focused: focused,
            ..PaneInfo::default()
        }
    }

    fn manifest() -> PaneManifest {
        PaneManifest {
            panes: HashMap::from([
                (0, vec![plugin(7, "file:/t.wasm"), terminal(0, "api", true)]),
                (
                    1,
                    vec![
                        plugin(3, "file:/t.wasm"),
                        plugin(1, "zellij:tab-bar"),
                        terminal(1, "docs", true),
                    ],
                ),
            ]),
        }
    }

    #[test]
    fn lowest_copy_of_our_url_leads() {
        let none = Role::Undecided;
        assert_eq!(
            elect(3, &manifest(), &none),
            Role::Leader(vec![Follower { id: 7, tab: 0 }])
        );
        assert_eq!(elect(7, &manifest(), &none), Role::Follower(3));
        assert_eq!(elect(99, &manifest(), &none), Role::Leader(vec![]));
    }

    #[test]
    fn a_pane_list_without_this_copy_keeps_its_role() {
        let follower = Role::Follower(3);
        assert_eq!(elect(99, &manifest(), &follower), follower, "never a second leader");
    }

    #[test]
    fn focus_counts_only_in_viewed_tabs() {
        let panes = terminal_panes(&manifest(), &BTreeSet::from([0]));
        let focused: Vec<(u32, bool)> = {
            let mut v: Vec<(u32, bool)> = panes.iter().map(|p| (p.id, p.focused)).collect();
            v.sort();
            v
        };
        assert_eq!(focused, vec![(0, true), (1, false)]);
    }
}
