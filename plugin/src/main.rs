//! turnstile.wasm — the zellij status bar, and (loaded with `view "inbox"`)
//! its floating inbox view. A small interpreter around the brains in
//! `turnstile_core::controller` (`Controller` for the bar, `InboxView` for
//! the view): zellij events become controller events, controller effects
//! become zellij calls. Nothing is decided here, and nothing here may panic:
//! a panic removes the bar.

// In host test builds the exports (`turnstile_shim::register!`) are compiled out, leaving the glue unused.
#![cfg_attr(test, allow(dead_code))]

use std::collections::BTreeMap;
use std::io::{self, Read, Seek};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};
use turnstile_core::bar::{Color, Palette};
use turnstile_core::config::{Config, View};
use turnstile_core::controller::permits::AskLock;
use turnstile_core::controller::{
    Controller, Effect, Event as In, InboxView, Key, PaneEntry, PipeFrom, Screens, Subscription, TabView,
};
use turnstile_core::flow::{PASTE_BEGIN, PASTE_END};
use turnstile_core::{mailbox, Millis};
use turnstile_shim::{command, decode, stdin};
use zellij_tile::prelude::*;
use zellij_tile::shim::plugin_api::event::pane_scrollback_response::Response;
use zellij_tile::shim::plugin_api::event::ProtobufPaneScrollbackResponse;
use zellij_tile::shim::prost::Message;

/// What this instance runs.
enum Brain {
    Bar(Box<Controller>),
    Inbox(InboxView),
}

#[derive(Default)]
struct Plugin {
    brain: Option<Brain>,
    screens: ZellijScreens,
}

/// Viewports read through zellij's scrollback API; the watcher's mailbox
/// through zellij's `/tmp`.
#[derive(Default)]
struct ZellijScreens {
    mailbox: Option<TmpFolder>,
    ask_lock: ask_lock::FileLock,
}

/// The session's mailbox folder as this plugin sees it. The head (which
/// the watcher rewrites in place) and the journal (which it appends to)
/// stay open between looks: a look is then a seek and a read, not a file
/// status, an open, two reads and a close. Each is opened again every
/// [`READS_PER_OPEN`] reads, after a failed read, and (the journal) for
/// another generation: a new watcher's mailbox is all new files.
struct TmpFolder {
    path: PathBuf,
    head: Option<Kept>,
    journal: Option<Kept>,
}

/// A file kept open: its name, and the reads left before it is opened again.
struct Kept {
    name: String,
    file: std::fs::File,
    reads_left: u32,
}

/// Reads of a kept file before it is opened again (a second of looks).
const READS_PER_OPEN: u32 = 40;

impl TmpFolder {
    /// The folder of the session this zellij serves (its name is in the
    /// environment zellij hands its plugins and its commands alike).
    fn of_this_session() -> Option<TmpFolder> {
        let session = std::env::var("ZELLIJ_SESSION_NAME").ok()?;
        Some(TmpFolder {
            path: mailbox::folder_in(Path::new("/tmp"), &session),
            head: None,
            journal: None,
        })
    }

    /// `len` bytes from `from` of the file `name`, through `kept` while it
    /// lasts and names it.
    fn read_kept(&self, kept: &mut Option<Kept>, name: &str, from: u64, len: u64) -> io::Result<Vec<u8>> {
        let mut file = match kept.take() {
            Some(k) if k.reads_left > 0 && k.name == name => k,
            _ => Kept {
                name: name.to_owned(),
                file: self.open(name, u64::MAX)?.0,
                reads_left: READS_PER_OPEN,
            },
        };
        file.file.seek(io::SeekFrom::Start(from))?;
        let bytes = read_up_to(&mut file.file, len)?;
        file.reads_left -= 1;
        *kept = Some(file);
        Ok(bytes)
    }

    /// Opens a regular file only (a FIFO would block zellij's plugin thread)
    /// of at most `max` bytes; its size.
    fn open(&self, name: &str, max: u64) -> io::Result<(std::fs::File, u64)> {
        open_small_regular(&self.path.join(name), name, max)
    }
}

/// Opens `path` if it is a regular file (a FIFO would block zellij's
/// plugin thread) of at most `max` bytes, named `what` in the error; its
/// size.
fn open_small_regular(path: &Path, what: &str, max: u64) -> io::Result<(std::fs::File, u64)> {
    let meta = std::fs::symlink_metadata(path)?;
    if !is_small_regular(&meta, max) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{what}: not a small regular file"),
        ));
    }
    Ok((std::fs::File::open(path)?, meta.len()))
}

/// True for a regular file (not a link, FIFO, device or folder) of at most
/// `max` bytes: what the plugin reads.
fn is_small_regular(meta: &std::fs::Metadata, max: u64) -> bool {
    meta.is_file() && meta.len() <= max
}

/// Reads up to `len` bytes from where the file stands (one read, mostly),
/// the buffer grown as bytes come: a length read from a file is no promise.
fn read_up_to(file: &mut std::fs::File, len: u64) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::with_capacity(len.min(64 << 10) as usize);
    file.take(len).read_to_end(&mut bytes)?;
    Ok(bytes)
}

impl mailbox::Folder for TmpFolder {
    fn read(&mut self, name: &str, max: u64) -> io::Result<Vec<u8>> {
        if name == mailbox::HEAD {
            let mut head = self.head.take();
            let bytes = self.read_kept(&mut head, name, 0, max);
            self.head = head;
            return bytes;
        }
        let (mut file, size) = self.open(name, max)?;
        read_up_to(&mut file, size)
    }

    fn read_range(&mut self, name: &str, from: u64, len: u64) -> io::Result<Vec<u8>> {
        let mut journal = self.journal.take();
        let bytes = self.read_kept(&mut journal, name, from, len);
        self.journal = journal;
        bytes
    }
}

impl Screens for ZellijScreens {
    fn ask_lock(&mut self) -> Option<&mut dyn AskLock> {
        Some(&mut self.ask_lock)
    }

    fn mailbox(&mut self) -> Option<&mut dyn mailbox::Folder> {
        self.mailbox.as_mut().map(|m| m as &mut dyn mailbox::Folder)
    }

    fn viewport(&mut self, pane: u32) -> Option<Vec<String>> {
        let mut bytes = Vec::new();
        if !scrollback(pane, false, &mut bytes) {
            return None;
        }
        match ProtobufPaneScrollbackResponse::decode(bytes.as_slice())
            .ok()?
            .response?
        {
            Response::Ok(contents) => Some(contents.viewport),
            Response::Err(_) => None,
        }
    }

    /// Asks for the whole scrollback (the only way zellij tells), scanned
    /// as it streams in for a row below the viewport, none of it kept.
    fn scrolled_back(&mut self, pane: u32) -> bool {
        let mut scan = decode::RowsBelowViewport::default();
        scrollback(pane, true, &mut scan) && scan.found()
    }
}

/// Asks zellij for a terminal pane's contents (`whole`: with its history),
/// the answer's bytes handed to `sink` as they are read from stdin rather
/// than read whole, as `get_pane_scrollback` reads them; false when it
/// cannot be asked or does not answer.
fn scrollback(pane: u32, whole: bool, sink: &mut impl stdin::Sink) -> bool {
    command::get_pane_scrollback(pane, whole) && stdin::read_into(sink)
}

/// This plugin's id (0 when zellij does not say: the bar then runs as
/// the copy of an unknown pane rather than not at all).
fn own_id() -> u32 {
    command::own_plugin_id().unwrap_or(0)
}

fn now_ms() -> Millis {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as Millis)
}

impl turnstile_shim::exports::Plugin for Plugin {
    fn load(&mut self, configuration: BTreeMap<String, String>) {
        let (brain, effects) = match Config::parse(&configuration).0.view {
            View::Inbox => {
                command::subscribe(&[
                    EventType::PermissionRequestResult,
                    EventType::PaneUpdate,
                    EventType::Timer,
                    EventType::Key,
                ]);
                let (view, effects) = InboxView::new();
                (Brain::Inbox(view), effects)
            }
            View::Bar => {
                command::subscribe(&[
                    EventType::PermissionRequestResult,
                    EventType::PaneUpdate,
                    EventType::TabUpdate,
                    EventType::ModeUpdate,
                    EventType::RunCommandResult,
                    EventType::Timer,
                    EventType::Mouse,
                ]);
                let (bar, effects) = Controller::new(&configuration, own_id(), now_ms());
                self.screens.mailbox = TmpFolder::of_this_session();
                (Brain::Bar(Box::new(bar)), effects)
            }
        };
        self.brain = Some(brain);
        carry_out(effects);
    }

    fn update(&mut self, event: Event) -> bool {
        translate(event).is_some_and(|event| self.feed(event))
    }

    fn pipe(&mut self, message: PipeMessage) -> bool {
        let from = match message.source {
            PipeSource::Cli(id) => PipeFrom::Cli(id),
            PipeSource::Plugin(id) => PipeFrom::Plugin(id),
            PipeSource::Keybind => PipeFrom::Other,
        };
        self.feed(In::Pipe {
            name: message.name,
            from,
            payload: message.payload,
        })
    }

    fn render(&mut self, rows: usize, cols: usize) {
        match self.brain.as_mut() {
            Some(Brain::Bar(bar)) => print!("{}", bar.render(cols, now_ms())),
            Some(Brain::Inbox(view)) => print!("{}", view.render(rows, cols, now_ms())),
            None => {}
        }
    }

    /// True when the bar reads pane `id`'s rows in a render report.
    fn wants_screen(&self, id: u32) -> bool {
        matches!(&self.brain, Some(Brain::Bar(bar)) if bar.wants_screen(id))
    }

    /// zellij's pane list.
    fn panes(&mut self, panes: Vec<PaneEntry>) -> bool {
        self.feed(In::Panes(panes))
    }

    /// A render report's rows (a pane the bar does not read: none).
    fn screens(&mut self, viewports: Vec<(u32, Vec<String>)>) -> bool {
        self.feed(In::Screens(viewports))
    }
}

impl Plugin {
    /// Hands an event to the brain and carries out its effects; true when
    /// the bar must be drawn again.
    fn feed(&mut self, event: In) -> bool {
        let effects = match self.brain.as_mut() {
            Some(Brain::Bar(bar)) => bar.handle(event, now_ms(), &mut self.screens),
            Some(Brain::Inbox(view)) => view.handle(event),
            None => return false,
        };
        carry_out(effects)
    }
}

/// A zellij event as the brain sees it (`None`: not one it needs).
fn translate(event: Event) -> Option<In> {
    Some(match event {
        Event::PermissionRequestResult(status) => In::Permission(status == PermissionStatus::Granted),
        Event::TabUpdate(tabs) => In::Tabs(tab_views(&tabs)),
        Event::ModeUpdate(mode) => In::Theme(palette(&mode)),
        Event::RunCommandResult(code, stdout, stderr, context) => In::HostResult {
            code,
            stdout,
            stderr,
            context,
        },
        Event::Timer(_) => In::Timer,
        Event::Mouse(Mouse::LeftClick(_, col)) => In::Click(col),
        Event::CommandChanged(PaneId::Terminal(_), _, _, _) => In::CommandChanged,
        Event::Key(key) => In::Key(view_key(&key)?),
        _ => return None,
    })
}

/// Carries out the brain's effects; true when one asks for a redraw.
fn carry_out(effects: Vec<Effect>) -> bool {
    let mut redraw = false;
    for effect in effects {
        match effect {
            Effect::Redraw => redraw = true,
            Effect::RequestPermissions => command::request_permission(&[
                PermissionType::ReadApplicationState,
                PermissionType::ReadPaneContents,
                PermissionType::RunCommands,
                PermissionType::WriteToStdin,
                PermissionType::ChangeApplicationState,
                PermissionType::ReadCliPipes,
                PermissionType::MessageAndLaunchOtherPlugins,
                PermissionType::WriteToClipboard,
            ]),
            Effect::SetUnselectable => command::set_selectable(false),
            Effect::RenameSelf(title) => command::rename_plugin_pane(own_id(), &title),
            Effect::Subscribe(s) => command::subscribe(&[event_type(s)]),
            Effect::Unsubscribe(s) => command::unsubscribe(&[event_type(s)]),
            Effect::ArmTimer(ms) => command::set_timeout(ms as f64 / 1000.0),
            Effect::RunHost { argv, context } => {
                let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
                command::run_command(&argv, BTreeMap::new(), Path::new("."), context);
            }
            Effect::WriteToPane { pane, text } => command::write_chars_to_pane(&text, PaneId::Terminal(pane)),
            Effect::PasteToPane { pane, text } => {
                for part in [PASTE_BEGIN, text.as_str(), PASTE_END] {
                    command::write_chars_to_pane(part, PaneId::Terminal(pane));
                }
            }
            Effect::SendToCopy { copy, name, payload } => command::pipe_message_to_plugin(
                MessageToPlugin::new(name)
                    .with_destination_plugin_id(copy)
                    .with_payload(payload),
            ),
            Effect::AnswerPipe { pipe, text } => command::cli_pipe_output(&pipe, &text),
            Effect::FocusPane(pane) => command::focus_terminal_pane(pane, false),
            Effect::RunNotifier { argv, env, context } => {
                let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
                command::run_command(&argv, env, Path::new("."), context);
            }
            Effect::CopyToClipboard(text) => command::copy_to_clipboard(text),
            Effect::Broadcast { name, payload } => {
                command::pipe_message_to_plugin(MessageToPlugin::new(name).with_payload(payload))
            }
            Effect::OpenInbox { url, config } => command::pipe_message_to_plugin(inbox_message(url, config)),
            Effect::FocusPlugin(id) => command::focus_plugin_pane(id, true),
            Effect::CloseSelf => command::close_plugin_pane(own_id()),
        }
    }
    redraw
}

/// The message that opens the inbox view: sent to the view's URL with its
/// configuration, it launches the view, floating, unless one runs (no
/// answer is awaited: nothing blocks).
fn inbox_message(url: String, config: BTreeMap<String, String>) -> MessageToPlugin {
    command::floating_plugin_message("inbox", url, config, "turnstile inbox")
}

fn event_type(subscription: Subscription) -> EventType {
    match subscription {
        Subscription::RenderReports => EventType::PaneRenderReport,
        Subscription::CommandChanges => EventType::CommandChanged,
        Subscription::KeybindingsOnce => EventType::InitialKeybinds,
    }
}

/// A key the inbox view knows (`None`: one it ignores).
fn view_key(key: &KeyWithModifier) -> Option<Key> {
    // Shift only makes capitals (typed pane names).
    if key.key_modifiers.iter().any(|m| *m != KeyModifier::Shift) {
        return None;
    }
    Some(match key.bare_key {
        BareKey::Up => Key::Up,
        BareKey::Down => Key::Down,
        BareKey::Enter => Key::Enter,
        BareKey::Esc => Key::Esc,
        BareKey::Backspace => Key::Backspace,
        BareKey::Char(c) => Key::Char(c),
        _ => return None,
    })
}

fn tab_views(tabs: &[TabInfo]) -> Vec<TabView> {
    let viewed = |t: &TabInfo| t.active || !t.other_focused_clients.is_empty();
    tabs.iter()
        .map(|t| TabView {
            position: t.position,
            viewed: viewed(t),
        })
        .collect()
}

fn palette(mode: &ModeInfo) -> Palette {
    let colors = &mode.style.colors;
    Palette {
        text: color(colors.text_unselected.base),
        background: color(colors.text_unselected.background),
        working: color(colors.text_unselected.emphasis_0),
        done: color(colors.exit_code_success.base),
        failed: color(colors.exit_code_error.base),
        waiting: color(colors.text_unselected.emphasis_3),
        muted: Palette::default().muted,
    }
}

fn color(c: PaletteColor) -> Color {
    match c {
        PaletteColor::Rgb((r, g, b)) => Color::Rgb(r, g, b),
        PaletteColor::EightBit(i) => Color::Indexed(i),
    }
}

mod ask_lock;

#[cfg(not(test))]
turnstile_shim::register!(Plugin);
