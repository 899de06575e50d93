//! What goes in and out of the machine: zellij-independent [`Event`]s, the
//! [`Effect`]s the plugin carries out, and [`Screens`], the viewports it
//! reads on demand.

use super::inbox_view::Key;
use crate::bar::Palette;
use crate::Millis;
use std::collections::BTreeMap;

/// One pane of zellij's pane list.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct PaneEntry {
    /// Pane id (terminal and plugin panes have separate id spaces).
    pub id: u32,
    /// Position of its tab.
    pub tab: usize,
    /// The plugin's URL, for a plugin pane (`None`: a terminal pane).
    pub plugin_url: Option<String>,
    /// Title.
    pub title: String,
    /// Focused in its tab.
    pub focused: bool,
    /// The command the pane runs, when zellij knows it.
    pub command: Option<String>,
    /// A floating pane (the inbox view is one; a bar copy never is).
    pub floating: bool,
}

/// One tab of zellij's tab list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TabView {
    /// Its position.
    pub position: usize,
    /// Some client looks at it.
    pub viewed: bool,
}

/// Where a pipe message comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PipeFrom {
    /// `zellij pipe` from a shell: it can be answered.
    Cli(String),
    /// Another plugin (another copy of the bar).
    Plugin(u32),
    /// A keybinding or anything else.
    Other,
}

/// What happens to the bar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The permissions were granted (true) or denied.
    Permission(bool),
    /// zellij's pane list.
    Panes(Vec<PaneEntry>),
    /// zellij's tab list.
    Tabs(Vec<TabView>),
    /// The zellij theme's colours.
    Theme(Palette),
    /// Terminal panes whose screen changed, with their viewports.
    Screens(Vec<(u32, Vec<String>)>),
    /// A host command run ended.
    HostResult {
        /// Its exit code.
        code: Option<i32>,
        /// Its output.
        stdout: Vec<u8>,
        /// Its error output.
        stderr: Vec<u8>,
        /// The context given with [`Effect::RunHost`].
        context: BTreeMap<String, String>,
    },
    /// A timer armed with [`Effect::ArmTimer`] fired.
    Timer,
    /// A terminal pane's command changed.
    CommandChanged,
    /// A pipe message (the empty payload that follows each real one is `None`).
    Pipe {
        /// The pipe's name.
        name: String,
        /// Who sent it.
        from: PipeFrom,
        /// Its payload.
        payload: Option<String>,
    },
    /// A left click on the bar at this column.
    Click(usize),
    /// A key pressed in the inbox view.
    Key(Key),
}

/// Optional event subscriptions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subscription {
    /// Viewports of panes whose screen changed.
    RenderReports,
    /// Commands of terminal panes changing.
    CommandChanges,
    /// The keybindings, sent once (the bar drops them): zellij then leaves
    /// them out of every mode update, which otherwise builds, encodes and
    /// hands every copy in a tab the whole keymap on each tab switch and
    /// mode change (the bar reads only the theme).
    KeybindingsOnce,
}

/// What the plugin should do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Ask zellij to draw the bar again: what it shows changed.
    Redraw,
    /// Ask for the plugin's permissions.
    RequestPermissions,
    /// Make the bar pane unselectable.
    SetUnselectable,
    /// Give this plugin's pane a title. zellij sends pane lists only when
    /// something changes and drops the ones sent before a copy's grant: a
    /// copy that loads last (often in a hidden tab) would wait for the next
    /// change of any pane; renaming itself is that change.
    RenameSelf(String),
    /// Start receiving these events.
    Subscribe(Subscription),
    /// Stop receiving these events.
    Unsubscribe(Subscription),
    /// Send [`Event::Timer`] after this many ms.
    ArmTimer(Millis),
    /// Run the host command with these arguments and context.
    RunHost {
        /// The command line.
        argv: Vec<String>,
        /// Given back in [`Event::HostResult`].
        context: BTreeMap<String, String>,
    },
    /// Write these characters into a terminal pane.
    WriteToPane {
        /// Terminal pane id.
        pane: u32,
        /// What to write.
        text: String,
    },
    /// Paste this text into a terminal pane as zellij pastes: the bracketed
    /// paste's start, the text and its end, three writes (zellij drops the
    /// markers for a program that never turned bracketed paste on).
    PasteToPane {
        /// Terminal pane id.
        pane: u32,
        /// The text pasted.
        text: String,
    },
    /// Send a pipe message to another copy of the bar.
    SendToCopy {
        /// Its plugin id.
        copy: u32,
        /// The pipe's name.
        name: &'static str,
        /// The payload.
        payload: String,
    },
    /// Answer a `zellij pipe` from a shell.
    AnswerPipe {
        /// The pipe's id.
        pipe: String,
        /// The answer.
        text: String,
    },
    /// Focus a terminal pane, switching to its tab (a click on its
    /// segment, the attention jump, Enter in the inbox).
    FocusPane(u32),
    /// Run the notifier (see `controller::notify`) with this environment.
    RunNotifier {
        /// The command line.
        argv: Vec<String>,
        /// Its environment variables.
        env: BTreeMap<String, String>,
        /// Given back in [`Event::HostResult`].
        context: BTreeMap<String, String>,
    },
    /// Put text on the clipboard (zellij's `copy_to_clipboard`).
    CopyToClipboard(String),
    /// Send a pipe message to every plugin.
    Broadcast {
        /// The pipe's name.
        name: &'static str,
        /// The payload.
        payload: String,
    },
    /// Open the inbox view: this plugin, floating, with this configuration
    /// (a message to that URL and configuration: zellij launches it unless
    /// it runs).
    OpenInbox {
        /// The plugin's URL.
        url: String,
        /// Its configuration (the bar's, with `view "inbox"`).
        config: BTreeMap<String, String>,
    },
    /// Show and focus a plugin pane (the open inbox view).
    FocusPlugin(u32),
    /// Close this plugin's pane (the inbox view).
    CloseSelf,
}

/// What a copy reads on demand: viewports (panes that send no render
/// reports, a check of the scroll position), and the watcher's mailbox
/// where the copy reaches it.
pub trait Screens {
    /// The visible rows of a terminal pane.
    fn viewport(&mut self, pane: u32) -> Option<Vec<String>>;
    /// True when the pane is scrolled back into its history.
    fn scrolled_back(&mut self, pane: u32) -> bool;
    /// The watcher's mailbox, where this copy reads it itself (`None`: only
    /// `turnstile pull` reads it).
    fn mailbox(&mut self) -> Option<&mut dyn crate::mailbox::Folder> {
        None
    }
    /// The lock copies take turns under to ask for permissions (`None`:
    /// none, this copy asks at once).
    fn ask_lock(&mut self) -> Option<&mut dyn super::permits::AskLock> {
        None
    }
}
