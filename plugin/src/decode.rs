//! What zellij hands the plugin, decoded: the events the bar subscribes
//! to (a mode update only for its style), and render reports read straight
//! from zellij's encoding, each pane's rows only when the bar reads them.
//! Nothing unwraps: what does not decode is dropped (a panic removes the
//! bar). Pure, so it is tested on the host.

use std::collections::{BTreeMap, HashMap};
use zellij_tile::prelude::*;
use zellij_tile::shim::plugin_api::event::{ProtobufEvent, ProtobufEventPayload as Payload, ProtobufEventType};
use zellij_tile::shim::prost::Message;

/// The events the bar and the inbox view subscribe to, from zellij's
/// encoding (`None`: another event, or one that does not decode); render
/// reports are read by [`render_report`].
pub fn event(bytes: &[u8]) -> Option<Event> {
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

/// The protobuf field numbers a render report is read by.
mod field {
    /// `Event.name`, and the render report in `Event.payload`.
    pub const EVENT_NAME: u32 = 1;
    pub const EVENT_RENDER_REPORT: u32 = 30;
    /// `PaneRenderReportPayload.pane_contents` (each a `PaneContentsEntry`).
    pub const REPORT_ENTRY: u32 = 1;
    /// `PaneContentsEntry.pane_id`, `.pane_contents`.
    pub const ENTRY_PANE: u32 = 1;
    pub const ENTRY_CONTENTS: u32 = 2;
    /// `PaneId.pane_type` (0: terminal), `.id`.
    pub const PANE_TYPE: u32 = 1;
    pub const PANE_ID: u32 = 2;
    /// `PaneContents.viewport` (each row a string).
    pub const CONTENTS_ROW: u32 = 1;
}

/// One field of a protobuf message: a number, or the bytes of a string or
/// message.
enum Value<'a> {
    Number(u64),
    Bytes(&'a [u8]),
}

/// Calls `each` with every field of the message `bytes`, in order; `None`
/// when they do not decode, or as soon as `each` refuses one.
fn fields<'a>(mut bytes: &'a [u8], mut each: impl FnMut(u32, Value<'a>) -> Option<()>) -> Option<()> {
    use zellij_tile::shim::prost::encoding::{decode_key, decode_varint, skip_field, DecodeContext, WireType};
    while !bytes.is_empty() {
        let (number, wire) = decode_key(&mut bytes).ok()?;
        match wire {
            WireType::Varint => each(number, Value::Number(decode_varint(&mut bytes).ok()?))?,
            WireType::LengthDelimited => {
                let len = usize::try_from(decode_varint(&mut bytes).ok()?).ok()?;
                let (value, rest) = (bytes.get(..len)?, bytes.get(len..)?);
                bytes = rest;
                each(number, Value::Bytes(value))?;
            }
            wire => skip_field(wire, number, &mut bytes, DecodeContext::default()).ok()?,
        }
    }
    Some(())
}

/// A render report, read straight from zellij's encoding rather than
/// decoded whole: every terminal pane it names, with its rows only when
/// `wanted` (a pane whose state the watcher pushes has its rows skipped
/// unread: at 64 agents they were most of the bytes, decoded and copied
/// twice, for nothing). `None`: another event, or one that does not decode.
pub fn render_report(bytes: &[u8], wanted: impl Fn(u32) -> bool) -> Option<Vec<(u32, Vec<String>)>> {
    let (mut name, mut report) = (None, None);
    fields(bytes, |number, value| {
        match (number, value) {
            (field::EVENT_NAME, Value::Number(n)) => name = Some(n),
            (field::EVENT_RENDER_REPORT, Value::Bytes(b)) => report = Some(b),
            _ => {}
        }
        Some(())
    })?;
    if name != Some(ProtobufEventType::PaneRenderReport as u64) {
        return None;
    }
    let mut panes = Vec::new();
    fields(report?, |number, value| {
        if let (field::REPORT_ENTRY, Value::Bytes(entry)) = (number, value) {
            panes.extend(report_entry(entry, &wanted)?);
        }
        Some(())
    })?;
    Some(panes)
}

/// One pane of a render report: `Some(None)` for a plugin pane.
fn report_entry(entry: &[u8], wanted: &impl Fn(u32) -> bool) -> Option<Option<(u32, Vec<String>)>> {
    let (mut pane, mut contents) = (None, None);
    fields(entry, |number, value| {
        match (number, value) {
            (field::ENTRY_PANE, Value::Bytes(b)) => pane = Some(b),
            (field::ENTRY_CONTENTS, Value::Bytes(b)) => contents = Some(b),
            _ => {}
        }
        Some(())
    })?;
    let (mut terminal, mut id) = (true, 0u32);
    fields(pane?, |number, value| {
        match (number, value) {
            (field::PANE_TYPE, Value::Number(kind)) => terminal = kind == 0,
            (field::PANE_ID, Value::Number(n)) => id = n as u32,
            _ => {}
        }
        Some(())
    })?;
    if !terminal {
        return Some(None);
    }
    let mut rows = Vec::new();
    if wanted(id) {
        fields(contents.unwrap_or_default(), |number, value| {
            if let (field::CONTENTS_ROW, Value::Bytes(row)) = (number, value) {
                rows.push(std::str::from_utf8(row).ok()?.to_owned());
            }
            Some(())
        })?;
    }
    Some(Some((id, rows)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use zellij_tile::shim::plugin_api::event::ProtobufPaneRenderReportPayload;

    fn contents(rows: &[&str]) -> PaneContents {
        PaneContents {
            viewport: rows.iter().map(|r| r.to_string()).collect(),
            lines_above_viewport: vec!["above".into()],
            ..PaneContents::default()
        }
    }

    /// A render report as zellij encodes it.
    fn encoded(panes: Vec<(PaneId, PaneContents)>) -> Vec<u8> {
        let report: HashMap<PaneId, PaneContents> = panes.into_iter().collect();
        let payload = ProtobufPaneRenderReportPayload::try_from(report).unwrap();
        ProtobufEvent {
            name: ProtobufEventType::PaneRenderReport as i32,
            payload: Some(Payload::PaneRenderReportPayload(payload)),
        }
        .encode_to_vec()
    }

    #[test]
    fn a_render_report_reads_every_terminal_pane_and_only_the_wanted_rows() {
        let bytes = encoded(vec![
            (PaneId::Terminal(3), contents(&["⠋ thinking", "> "])),
            (PaneId::Terminal(0), contents(&["covered"])),
            (PaneId::Plugin(3), contents(&["a plugin"])),
        ]);
        let mut panes = render_report(&bytes, |id| id != 0).unwrap();
        panes.sort();
        assert_eq!(
            panes,
            vec![(0, vec![]), (3, vec!["⠋ thinking".to_owned(), "> ".to_owned()])]
        );
    }

    #[test]
    fn another_event_or_broken_bytes_are_not_a_render_report() {
        let timer = ProtobufEvent {
            name: ProtobufEventType::Timer as i32,
            payload: Some(Payload::TimerPayload(1.0)),
        }
        .encode_to_vec();
        assert_eq!(render_report(&timer, |_| true), None);
        let bytes = encoded(vec![(PaneId::Terminal(3), contents(&["row"]))]);
        for cut in 1..bytes.len() {
            let _ = render_report(&bytes[..cut], |_| true); // never panics
        }
        let mut bad = bytes.clone();
        let at = bad.iter().rposition(|b| *b == b'r').unwrap();
        bad[at] = 0xff;
        assert_eq!(render_report(&bad, |_| true), None, "a row that is not UTF-8");
        assert_eq!(render_report(&bad, |_| false).map(|p| p.len()), Some(1), "unread");
    }
}
