//! What zellij hands the plugin, decoded: the exports zellij calls (`load`,
//! `update`, `pipe`, `render`, `plugin_version`; `main` sets the panic
//! hook), as `register_plugin!` writes them, with two differences:
//!
//! - an event is decoded only when it is one the bar subscribes to, and a
//!   mode update only for its style (the bar's colours). zellij-tile's
//!   decoder converts every event of every kind, keybindings and their
//!   actions (plugin URLs, host names) included: 227 KB of
//!   `turnstile.wasm` for events the bar never reads;
//! - nothing unwraps: an event or message that does not decode is dropped
//!   (a panic removes the bar).

use super::Plugin;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use zellij_tile::prelude::*;
use zellij_tile::shim::plugin_api::action::ProtobufPluginConfiguration;
use zellij_tile::shim::plugin_api::event::{ProtobufEvent, ProtobufEventPayload as Payload, ProtobufEventType};
use zellij_tile::shim::plugin_api::pipe_message::ProtobufPipeMessage;
use zellij_tile::shim::prost::Message;

thread_local! {
    static STATE: RefCell<Plugin> = RefCell::new(Plugin::default());
}

/// The events the bar and the inbox view subscribe to, from zellij's
/// encoding (`None`: another event, or one that does not decode).
pub fn decode(bytes: &[u8]) -> Option<Event> {
    let event = ProtobufEvent::decode(bytes).ok()?;
    let kind = ProtobufEventType::try_from(event.name).ok()?;
    Some(match (kind, event.payload?) {
        (ProtobufEventType::PermissionRequestResult, Payload::PermissionRequestResultPayload(p)) => {
            let status = if p.granted {
                PermissionStatus::Granted
            } else {
                PermissionStatus::Denied
            };
            Event::PermissionRequestResult(status)
        }
        (ProtobufEventType::PaneUpdate, Payload::PaneUpdatePayload(p)) => {
            let mut panes = HashMap::new();
            for tab in p.pane_manifest {
                let infos: Result<Vec<PaneInfo>, _> = tab.panes.into_iter().map(PaneInfo::try_from).collect();
                panes.insert(tab.tab_index as usize, infos.ok()?);
            }
            Event::PaneUpdate(PaneManifest { panes })
        }
        (ProtobufEventType::TabUpdate, Payload::TabUpdatePayload(p)) => {
            let tabs: Result<Vec<TabInfo>, _> = p.tab_info.into_iter().map(TabInfo::try_from).collect();
            Event::TabUpdate(tabs.ok()?)
        }
        (ProtobufEventType::ModeUpdate, Payload::ModeUpdatePayload(p)) => Event::ModeUpdate(ModeInfo {
            style: p.style?.try_into().ok()?,
            ..ModeInfo::default()
        }),
        (ProtobufEventType::PaneRenderReport, Payload::PaneRenderReportPayload(p)) => {
            Event::PaneRenderReport(p.try_into().ok()?)
        }
        (ProtobufEventType::RunCommandResult, Payload::RunCommandResultPayload(p)) => {
            let context: BTreeMap<String, String> = p.context.into_iter().map(|c| (c.name, c.value)).collect();
            Event::RunCommandResult(p.exit_code, p.stdout, p.stderr, context)
        }
        (ProtobufEventType::Timer, Payload::TimerPayload(seconds)) => Event::Timer(seconds as f64),
        (ProtobufEventType::Mouse, Payload::MouseEventPayload(p)) => Event::Mouse(p.try_into().ok()?),
        (ProtobufEventType::CommandChanged, Payload::CommandChangedPayload(p)) => {
            let pane = PaneId::try_from(p.pane_id?).ok()?;
            let clients = p.focused_client_ids.into_iter().map(|id| id as u16).collect();
            Event::CommandChanged(pane, p.command, p.is_foreground, clients)
        }
        (ProtobufEventType::Key, Payload::KeyPayload(key)) => Event::Key(key.try_into().ok()?),
        _ => return None,
    })
}

#[no_mangle]
fn load() {
    let configuration = zellij_tile::shim::object_from_stdin::<Vec<u8>>()
        .ok()
        .and_then(|bytes| ProtobufPluginConfiguration::decode(bytes.as_slice()).ok())
        .and_then(|p| BTreeMap::try_from(&p).ok())
        .unwrap_or_default();
    STATE.with(|state| state.borrow_mut().load(configuration));
}

#[no_mangle]
pub fn update() -> bool {
    let Some(event) = zellij_tile::shim::object_from_stdin::<Vec<u8>>()
        .ok()
        .and_then(|bytes| decode(&bytes))
    else {
        return false;
    };
    STATE.with(|state| state.borrow_mut().update(event))
}

#[no_mangle]
pub fn pipe() -> bool {
    let Some(message) = zellij_tile::shim::object_from_stdin::<Vec<u8>>()
        .ok()
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
