//! turnstile.wasm — zellij-tile glue over turnstile-core. For now it renders
//! the screen verdict of every reported pane; the full bar comes next.

use std::collections::BTreeMap;
use turnstile_core::screen;
use zellij_tile::prelude::*;

#[derive(Default)]
struct Plugin {
    states: BTreeMap<u32, turnstile_core::State>,
}

impl ZellijPlugin for Plugin {
    fn load(&mut self, _configuration: BTreeMap<String, String>) {
        request_permission(&[PermissionType::ReadPaneContents]);
        subscribe(&[EventType::PaneRenderReport]);
    }

    fn update(&mut self, event: Event) -> bool {
        let Event::PaneRenderReport(report) = event else {
            return false;
        };
        let mut changed = false;
        for (pane, contents) in report {
            if let PaneId::Terminal(id) = pane {
                let state = screen::classify(&contents.viewport).state;
                changed |= self.states.insert(id, state) != Some(state);
            }
        }
        changed
    }

    fn render(&mut self, _rows: usize, _cols: usize) {
        let line: Vec<String> = self.states.iter().map(|(id, s)| format!("{id} {s}")).collect();
        print!("{}", line.join(" │ "));
    }
}

#[cfg(not(test))]
register_plugin!(Plugin);

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn a_banner_in_a_render_report_flips_the_pane_to_done() {
        let mut plugin = Plugin::default();
        let contents = PaneContents {
            viewport: vec!["● ok".into(), "✻ Brewed for 4s".into()],
            ..PaneContents::default()
        };
        let report = HashMap::from([(PaneId::Terminal(3), contents)]);
        assert!(plugin.update(Event::PaneRenderReport(report)));
        assert_eq!(plugin.states.get(&3), Some(&turnstile_core::State::Done));
    }
}
