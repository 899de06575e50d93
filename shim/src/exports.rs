//! The exports zellij calls (`load`, `update`, `pipe`, `render`,
//! `plugin_version`), as `register_plugin!` writes them, with two
//! differences:
//!
//! - an event is decoded (`decode.rs`) only when it is one the bar
//!   subscribes to, a mode update only for its style, a pane update straight
//!   into the bar's entries, and a render report's rows only for the panes
//!   the bar reads; stdin is parsed as it streams (`stdin.rs`). zellij-tile's
//!   decoder converts every event of every kind, keybindings and their
//!   actions (plugin URLs, host names) included: 227 KB of `turnstile.wasm`
//!   for events the bar never reads;
//! - nothing unwraps: an event or message that does not decode is dropped
//!   (a panic removes the bar).
//!
//! [`register!`](crate::register) writes the exports for a [`Plugin`]; the
//! functions here are their bodies.

use crate::{decode, stdin};
use std::cell::RefCell;
use std::collections::BTreeMap;
use turnstile_core::controller::PaneEntry;
use zellij_tile::prelude::{Event, PipeMessage};
use zellij_tile::shim::plugin_api::action::ProtobufPluginConfiguration;
use zellij_tile::shim::plugin_api::pipe_message::ProtobufPipeMessage;
use zellij_tile::shim::prost::Message;

/// What a plugin does with what zellij hands it. Each `bool` says whether
/// the plugin wants to be rendered again.
pub trait Plugin: Default {
    /// The plugin's configuration, once, when zellij loads it.
    fn load(&mut self, configuration: BTreeMap<String, String>);
    /// An event it subscribed to (other than the two below).
    fn update(&mut self, event: Event) -> bool;
    /// The panes of every tab (a pane update), decoded straight into entries.
    fn panes(&mut self, panes: Vec<PaneEntry>) -> bool;
    /// True when the rows of terminal pane `pane` are wanted from a render report.
    fn wants_screen(&self, pane: u32) -> bool;
    /// The rows of the wanted panes of a render report.
    fn screens(&mut self, screens: Vec<(u32, Vec<String>)>) -> bool;
    /// A pipe message (`zellij pipe`, another plugin).
    fn pipe(&mut self, message: PipeMessage) -> bool;
    /// Draws the plugin in `rows` × `cols` cells (to stdout).
    fn render(&mut self, rows: usize, cols: usize);
}

/// `load`: the configuration from stdin, handed to the plugin.
pub fn load<P: Plugin>(state: &RefCell<P>) {
    let configuration = stdin::bytes()
        .and_then(|bytes| ProtobufPluginConfiguration::decode(bytes.as_slice()).ok())
        .and_then(|p| BTreeMap::try_from(&p).ok())
        .unwrap_or_default();
    state.borrow_mut().load(configuration);
}

/// `update`: the event on stdin, decoded only as far as the plugin reads it.
pub fn update<P: Plugin>(state: &RefCell<P>) -> bool {
    let Some(bytes) = stdin::bytes() else {
        return false;
    };
    let mut state = state.borrow_mut();
    if let Some(screens) = decode::render_report(&bytes, |pane| state.wants_screen(pane)) {
        return state.screens(screens);
    }
    if let Some(panes) = decode::pane_update(&bytes) {
        return state.panes(panes);
    }
    decode::event(&bytes).is_some_and(|event| state.update(event))
}

/// `pipe`: the pipe message on stdin.
pub fn pipe<P: Plugin>(state: &RefCell<P>) -> bool {
    let Some(message) = stdin::bytes()
        .and_then(|bytes| ProtobufPipeMessage::decode(bytes.as_slice()).ok())
        .and_then(|p| PipeMessage::try_from(p).ok())
    else {
        return false;
    };
    state.borrow_mut().pipe(message)
}

/// `render`: negative sizes are drawn as none.
pub fn render<P: Plugin>(state: &RefCell<P>, rows: i32, cols: i32) {
    state.borrow_mut().render(rows.max(0) as usize, cols.max(0) as usize);
}

/// `plugin_version`: the zellij-tile release the plugin speaks.
pub fn plugin_version() {
    println!("{}", zellij_tile::prelude::VERSION);
}

/// Writes zellij's exports for the plugin type `$plugin` (one instance per
/// copy, kept in a thread-local), and `main`, which sets the panic hook
/// that reports a panic to zellij as zellij-tile's does.
#[macro_export]
macro_rules! register {
    ($plugin:ty) => {
        thread_local! {
            static STATE: ::std::cell::RefCell<$plugin> = ::std::cell::RefCell::new(<$plugin>::default());
        }

        fn main() {
            ::std::panic::set_hook(Box::new($crate::command::report_panic));
        }

        #[no_mangle]
        fn load() {
            STATE.with($crate::exports::load);
        }

        #[no_mangle]
        pub fn update() -> bool {
            STATE.with($crate::exports::update)
        }

        #[no_mangle]
        pub fn pipe() -> bool {
            STATE.with($crate::exports::pipe)
        }

        #[no_mangle]
        pub fn render(rows: i32, cols: i32) {
            STATE.with(|state| $crate::exports::render(state, rows, cols));
        }

        #[no_mangle]
        pub fn plugin_version() {
            $crate::exports::plugin_version();
        }
    };
}
