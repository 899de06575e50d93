//! The exports zellij calls (`load`, `update`, `pipe`, `render`,
//! `plugin_version`; `main` sets the panic hook), as `register_plugin!`
//! writes them, with two differences:
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

use super::{decode, stdin, Plugin};
use std::cell::RefCell;
use std::collections::BTreeMap;
use zellij_tile::prelude::*;
use zellij_tile::shim::plugin_api::action::ProtobufPluginConfiguration;
use zellij_tile::shim::plugin_api::pipe_message::ProtobufPipeMessage;
use zellij_tile::shim::prost::Message;

thread_local! {
    static STATE: RefCell<Plugin> = RefCell::new(Plugin::default());
}

#[no_mangle]
fn load() {
    let configuration = stdin::bytes()
        .and_then(|bytes| ProtobufPluginConfiguration::decode(bytes.as_slice()).ok())
        .and_then(|p| BTreeMap::try_from(&p).ok())
        .unwrap_or_default();
    STATE.with(|state| state.borrow_mut().load(configuration));
}

#[no_mangle]
pub fn update() -> bool {
    let Some(bytes) = stdin::bytes() else {
        return false;
    };
    STATE.with(|state| {
        let mut state = state.borrow_mut();
        if let Some(screens) = decode::render_report(&bytes, |pane| state.wants_screen(pane)) {
            return state.screens(screens);
        }
        if let Some(panes) = decode::pane_update(&bytes) {
            return state.panes(panes);
        }
        decode::event(&bytes).is_some_and(|event| state.update(event))
    })
}

#[no_mangle]
pub fn pipe() -> bool {
    let Some(message) = stdin::bytes()
        .and_then(|bytes| ProtobufPipeMessage::decode(bytes.as_slice()).ok())
        .and_then(|p| PipeMessage::try_from(p).ok())
    else {
        return false;
    };
    STATE.with(|state| state.borrow_mut().pipe(message))
}

#[no_mangle]
pub fn render(rows: i32, cols: i32) {
    STATE.with(|state| state.borrow_mut().render(rows.max(0) as usize, cols.max(0) as usize));
}

#[no_mangle]
pub fn plugin_version() {
    println!("{}", VERSION);
}
