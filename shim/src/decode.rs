//! What zellij hands the plugin, decoded: the events the bar subscribes
//! to (a mode update only for its style), and render reports read straight
//! from zellij's encoding, each pane's rows only when the bar reads them.
//! Nothing unwraps: what does not decode is dropped (a panic removes the
//! bar). Pure, so it is tested on the host.

use std::collections::BTreeMap;
use turnstile_core::controller::PaneEntry;
use zellij_tile::prelude::*;
use zellij_tile::shim::plugin_api::event::ProtobufEventType;
use zellij_tile::shim::plugin_api::generated_api::api::event as pb;
use zellij_tile::shim::plugin_api::generated_api::api::key::Key as ProtobufKey;
use zellij_tile::shim::plugin_api::generated_api::api::style::Style as ProtobufStyle;
use zellij_tile::shim::prost::Message;

/// The events the bar and the inbox view subscribe to, from zellij's
/// encoding (`None`: another event, or one that does not decode); render
/// reports are read by [`render_report`].
pub fn event(bytes: &[u8]) -> Option<Event> {
    let (name, payload) = name_and_payload(bytes)?;
    let kind = ProtobufEventType::try_from(i32::try_from(name).ok()?).ok()?;
    // Each payload is decoded as its own type: decoding the `Event` as a
    // whole linked every event's decoder into the plugin.
    Some(match kind {
        ProtobufEventType::ModeUpdate => return mode_update(payload?),
        ProtobufEventType::Timer => Event::Timer(0.0), // the seconds asked for: unused
        ProtobufEventType::PermissionRequestResult => {
            let granted = pb::PermissionRequestResultPayload::decode(payload?).ok()?.granted;
            let status = if granted {
                PermissionStatus::Granted
            } else {
                PermissionStatus::Denied
            };
            Event::PermissionRequestResult(status)
        }
        ProtobufEventType::TabUpdate => {
            let infos = pb::TabUpdatePayload::decode(payload?).ok()?.tab_info;
            let tabs: Result<Vec<TabInfo>, _> = infos.into_iter().map(TabInfo::try_from).collect();
            Event::TabUpdate(tabs.ok()?)
        }
        ProtobufEventType::RunCommandResult => {
            let p = pb::RunCommandResultPayload::decode(payload?).ok()?;
            let context: BTreeMap<String, String> = p.context.into_iter().map(|c| (c.name, c.value)).collect();
            Event::RunCommandResult(p.exit_code, p.stdout, p.stderr, context)
        }
        ProtobufEventType::Mouse => Event::Mouse(pb::MouseEventPayload::decode(payload?).ok()?.try_into().ok()?),
        ProtobufEventType::CommandChanged => {
            let p = pb::CommandChangedPayload::decode(payload?).ok()?;
            let pane = PaneId::try_from(p.pane_id?).ok()?;
            let clients = p.focused_client_ids.into_iter().map(|id| id as u16).collect();
            Event::CommandChanged(pane, p.command, p.is_foreground, clients)
        }
        ProtobufEventType::Key => Event::Key(ProtobufKey::decode(payload?).ok()?.try_into().ok()?),
        _ => return None,
    })
}

/// A mode update, read for its style alone. Decoded whole, its keybindings
/// (every mode's, each with its actions) took 640 KiB of the plugin's
/// memory for an 8.5 KB message, in every copy of the bar that was sent one:
/// a wasm memory never shrinks.
fn mode_update(payload: &[u8]) -> Option<Event> {
    let mut style = None;
    fields(payload, |number, value| {
        if let (field::MODE_STYLE, Value::Bytes(bytes)) = (number, value) {
            style = Some(bytes);
        }
        Some(())
    })?;
    let style = ProtobufStyle::decode(style?).ok()?.try_into().ok()?;
    Some(Event::ModeUpdate(ModeInfo {
        style,
        ..ModeInfo::default()
    }))
}

/// A pane update, read straight from zellij's encoding into the bar's pane
/// entries (`None`: another event, or one that does not decode). Decoded
/// whole, each pane's 25 fields became a `PaneInfo` in a map and were then
/// copied into an entry, on every title change of every agent.
pub fn pane_update(bytes: &[u8]) -> Option<Vec<PaneEntry>> {
    let (name, payload) = name_and_payload(bytes)?;
    if name != ProtobufEventType::PaneUpdate as u64 {
        return None;
    }
    let mut entries = Vec::new();
    fields(payload?, |number, value| match (number, value) {
        (field::UPDATE_TAB, Value::Bytes(tab)) => tab_entries(tab, &mut entries),
        _ => Some(()),
    })?;
    Some(entries)
}

/// The panes of one tab of a pane update (a `PaneManifest`).
fn tab_entries(tab: &[u8], entries: &mut Vec<PaneEntry>) -> Option<()> {
    let (mut index, mut panes) = (0, Vec::new());
    fields(tab, |number, value| {
        match (number, value) {
            (field::TAB_INDEX, Value::Number(n)) => index = usize::try_from(n).ok()?,
            (field::TAB_PANE, Value::Bytes(pane)) => panes.push(pane),
            _ => {}
        }
        Some(())
    })?;
    for pane in panes {
        entries.push(pane_entry(pane, index)?);
    }
    Some(())
}

/// One pane of a tab (a `PaneInfo`), as the bar's entry.
fn pane_entry(pane: &[u8], tab: usize) -> Option<PaneEntry> {
    let text = |bytes: &[u8]| String::from_utf8(bytes.to_vec()).ok();
    let mut entry = PaneEntry {
        tab,
        ..PaneEntry::default()
    };
    let (mut is_plugin, mut url) = (false, None);
    fields(pane, |number, value| {
        match (number, value) {
            (field::PANE_INFO_ID, Value::Number(n)) => entry.id = u32::try_from(n).ok()?,
            (field::PANE_IS_PLUGIN, Value::Number(n)) => is_plugin = n != 0,
            (field::PANE_IS_FOCUSED, Value::Number(n)) => entry.focused = n != 0,
            (field::PANE_IS_FLOATING, Value::Number(n)) => entry.floating = n != 0,
            (field::PANE_TITLE, Value::Bytes(b)) => entry.title = text(b)?,
            (field::PANE_COMMAND, Value::Bytes(b)) => entry.command = Some(text(b)?),
            (field::PANE_PLUGIN_URL, Value::Bytes(b)) => url = Some(text(b)?),
            _ => {}
        }
        Some(())
    })?;
    entry.plugin_url = is_plugin.then(|| url.unwrap_or_default());
    Some(entry)
}

/// An event's name and the bytes of its payload, undecoded (`None`: the
/// bytes are no event; no payload bytes: a number, or none).
fn name_and_payload(bytes: &[u8]) -> Option<(u64, Option<&[u8]>)> {
    let (mut name, mut payload) = (0, None);
    fields(bytes, |number, value| {
        match (number, value) {
            (field::EVENT_NAME, Value::Number(n)) => name = n,
            (_, Value::Bytes(bytes)) => payload = Some(bytes),
            _ => {}
        }
        Some(())
    })?;
    Some((name, payload))
}

/// The protobuf field numbers events are read by.
mod field {
    /// `Event.name` (the payload is the event's one other field).
    pub const EVENT_NAME: u32 = 1;
    /// `ModeUpdatePayload.style`.
    pub const MODE_STYLE: u32 = 3;
    /// `PaneUpdatePayload.pane_manifest` (a tab each).
    pub const UPDATE_TAB: u32 = 1;
    /// `PaneManifest.tab_index`, `.panes`.
    pub const TAB_INDEX: u32 = 1;
    pub const TAB_PANE: u32 = 2;
    /// `PaneInfo` fields the bar reads.
    pub const PANE_INFO_ID: u32 = 1;
    pub const PANE_IS_PLUGIN: u32 = 2;
    pub const PANE_IS_FOCUSED: u32 = 3;
    pub const PANE_IS_FLOATING: u32 = 5;
    pub const PANE_TITLE: u32 = 7;
    pub const PANE_COMMAND: u32 = 20;
    pub const PANE_PLUGIN_URL: u32 = 21;
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
    /// `PaneContents.lines_below_viewport`.
    pub const CONTENTS_BELOW: u64 = 4;
    /// `PaneScrollbackResponse.ok` (a `PaneContents`).
    pub const SCROLLBACK_OK: u64 = 1;
}

/// Whether a pane's whole scrollback (a `PaneScrollbackResponse`) holds
/// rows below its viewport, that is whether the pane is scrolled back into
/// its history: learnt as the bytes stream in, keeping none of the rows (a
/// long history is megabytes, and a wasm memory never shrinks).
#[derive(Debug, Default)]
pub struct RowsBelowViewport {
    scan: Scan,
    /// The varint being read, and how far.
    varint: u64,
    shift: u32,
    found: bool,
}

/// Where the scan stands.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Scan {
    /// The response's key: its `ok` contents, or an error.
    #[default]
    ResponseKey,
    /// The contents' length (they run to the end).
    ContentsLength,
    /// A key of a field of the contents.
    FieldKey,
    /// A field's length.
    FieldLength,
    /// Bytes of a field skipped.
    Skip(u64),
    /// A varint field skipped.
    SkipVarint,
    /// Answered (or not a scrollback): the rest is ignored.
    Done,
}

impl RowsBelowViewport {
    /// True when the contents held a row below the viewport.
    pub fn found(&self) -> bool {
        self.found
    }

    /// The next step once a varint of the stage `scan` reads `value`.
    fn after_varint(&mut self, value: u64) -> Scan {
        match self.scan {
            Scan::ResponseKey if value == field::SCROLLBACK_OK << 3 | 2 => Scan::ContentsLength,
            Scan::ContentsLength => Scan::FieldKey,
            Scan::FieldKey if value >> 3 == field::CONTENTS_BELOW => {
                self.found = true;
                Scan::Done
            }
            Scan::FieldKey => match value & 7 {
                0 => Scan::SkipVarint,
                1 => Scan::Skip(8),
                2 => Scan::FieldLength,
                5 => Scan::Skip(4),
                _ => Scan::Done,
            },
            Scan::FieldLength if value == 0 => Scan::FieldKey,
            Scan::FieldLength => Scan::Skip(value),
            _ => Scan::Done, // an error answer
        }
    }
}

impl crate::stdin::Sink for RowsBelowViewport {
    fn take(&mut self, byte: u8) {
        self.scan = match self.scan {
            Scan::Done => Scan::Done,
            Scan::Skip(1) => Scan::FieldKey,
            Scan::Skip(n) => Scan::Skip(n - 1),
            Scan::SkipVarint if byte & 0x80 == 0 => Scan::FieldKey,
            Scan::SkipVarint => Scan::SkipVarint,
            _ if self.shift > 63 => Scan::Done, // not a varint
            _ => {
                self.varint |= u64::from(byte & 0x7f) << self.shift;
                self.shift += 7;
                if byte & 0x80 != 0 {
                    return;
                }
                let value = std::mem::take(&mut self.varint);
                self.shift = 0;
                self.after_varint(value)
            }
        };
    }
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
    let (name, report) = name_and_payload(bytes)?;
    if name != ProtobufEventType::PaneRenderReport as u64 {
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
    use std::collections::HashMap;
    use zellij_tile::shim::plugin_api::event::{ProtobufEvent, ProtobufEventPayload as Payload};

    /// `event` as zellij encodes it.
    fn zellij_bytes(event: Event) -> Vec<u8> {
        ProtobufEvent::try_from(event).unwrap().encode_to_vec()
    }

    #[test]
    fn every_subscribed_event_reads_as_zellij_wrote_it() {
        let tab = TabInfo {
            position: 2,
            name: "agents".into(),
            active: true,
            other_focused_clients: vec![3],
            ..TabInfo::default()
        };
        let context = BTreeMap::from([("kind".to_owned(), "status".to_owned())]);
        let events = vec![
            Event::PermissionRequestResult(PermissionStatus::Granted),
            Event::PermissionRequestResult(PermissionStatus::Denied),
            Event::TabUpdate(vec![tab, TabInfo::default()]),
            Event::RunCommandResult(Some(0), b"{}".to_vec(), b"oops".to_vec(), context),
            Event::RunCommandResult(None, Vec::new(), Vec::new(), BTreeMap::new()),
            Event::Mouse(Mouse::LeftClick(0, 17)),
            Event::CommandChanged(PaneId::Terminal(4), vec!["claude".into()], true, vec![1]),
            Event::Key(KeyWithModifier::new(BareKey::Char('j'))),
        ];
        for sent in events {
            assert_eq!(event(&zellij_bytes(sent.clone())), Some(sent.clone()), "{sent:?}");
        }
        assert_eq!(event(&zellij_bytes(Event::Timer(0.25))), Some(Event::Timer(0.0)));
        assert_eq!(event(&zellij_bytes(Event::Visible(true))), None, "not subscribed");
    }
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

    /// Scans zellij's encoding of a scrollback answer.
    fn rows_below(response: zellij_tile::shim::plugin_api::event::ProtobufPaneScrollbackResponse) -> bool {
        use crate::stdin::Sink;
        let mut scan = RowsBelowViewport::default();
        response.encode_to_vec().into_iter().for_each(|b| scan.take(b));
        scan.found()
    }

    #[test]
    fn a_scrollback_is_scrolled_back_only_with_rows_below_its_viewport() {
        use zellij_tile::shim::plugin_api::event::ProtobufPaneScrollbackResponse;
        let long_history = PaneContents {
            viewport: vec!["x".repeat(300); 45],
            lines_above_viewport: vec!["y".repeat(200); 3000],
            ..PaneContents::default()
        };
        let answer = |contents: PaneContents| {
            let response = PaneScrollbackResponse::Ok(contents);
            ProtobufPaneScrollbackResponse::try_from(response).unwrap()
        };
        assert!(!rows_below(answer(long_history.clone())), "at the bottom");
        let scrolled = PaneContents {
            lines_below_viewport: vec![String::new()],
            cursor: Some(Default::default()),
            ..long_history
        };
        assert!(rows_below(answer(scrolled)), "scrolled back");
        let error = ProtobufPaneScrollbackResponse::try_from(PaneScrollbackResponse::Err("no pane".into())).unwrap();
        assert!(!rows_below(error));
        assert!(!rows_below(ProtobufPaneScrollbackResponse::default()));
    }

    fn pane_info(id: u32, title: &str) -> PaneInfo {
        PaneInfo {
            id,
            title: title.into(),
            pane_rows: 40,
            cursor_coordinates_in_pane: Some((3, 4)),
            ..PaneInfo::default()
        }
    }

    #[test]
    fn a_pane_update_reads_each_pane_s_entry_and_nothing_else() {
        let agent = PaneInfo {
            is_focused: true,
            terminal_command: Some("claude --resume".into()),
            ..pane_info(3, "✳ fix the bug")
        };
        let bar = PaneInfo {
            is_plugin: true,
            plugin_url: Some("file:/x/turnstile.wasm".into()),
            ..pane_info(1, "turnstile")
        };
        let inbox = PaneInfo {
            is_plugin: true,
            is_floating: true,
            ..pane_info(2, "inbox")
        };
        let manifest = PaneManifest {
            panes: HashMap::from([(0, vec![agent, bar]), (2, vec![inbox])]),
        };
        let bytes = ProtobufEvent::try_from(Event::PaneUpdate(manifest))
            .unwrap()
            .encode_to_vec();
        let mut entries = pane_update(&bytes).unwrap();
        entries.sort_by_key(|e| (e.tab, e.id));
        let entry = |id, tab, title: &str| PaneEntry {
            id,
            tab,
            title: title.into(),
            ..PaneEntry::default()
        };
        let expected = vec![
            PaneEntry {
                plugin_url: Some("file:/x/turnstile.wasm".into()),
                ..entry(1, 0, "turnstile")
            },
            PaneEntry {
                focused: true,
                command: Some("claude --resume".into()),
                ..entry(3, 0, "✳ fix the bug")
            },
            PaneEntry {
                plugin_url: Some(String::new()),
                floating: true,
                ..entry(2, 2, "inbox")
            },
        ];
        assert_eq!(entries, expected);
        assert_eq!(event(&bytes).map(|_| ()), None, "not decoded as a zellij event");
        assert_eq!(render_report(&bytes, |_| true), None);
        for cut in 1..bytes.len() {
            let _ = pane_update(&bytes[..cut]); // never panics
        }
    }

    #[test]
    fn a_mode_update_is_read_for_its_style_alone() {
        use zellij_tile::shim::plugin_api::event::ProtobufModeUpdatePayload;
        let mut style = Style::default();
        style.colors.text_unselected.base = PaletteColor::Rgb((1, 2, 3));
        let mode = ModeInfo {
            style,
            keybinds: vec![(
                InputMode::Normal,
                vec![(KeyWithModifier::new(BareKey::Char('a')), vec![])],
            )],
            session_name: Some("s".into()),
            ..ModeInfo::default()
        };
        let bytes = ProtobufEvent {
            name: ProtobufEventType::ModeUpdate as i32,
            payload: Some(Payload::ModeUpdatePayload(
                ProtobufModeUpdatePayload::try_from(mode).unwrap(),
            )),
        }
        .encode_to_vec();
        match event(&bytes) {
            Some(Event::ModeUpdate(read)) => {
                assert_eq!(read.style, style);
                assert!(read.keybinds.is_empty(), "keybindings are not decoded");
            }
            other => panic!("{other:?}"),
        }
        for cut in 1..bytes.len() {
            let _ = event(&bytes[..cut]); // never panics
        }
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
