//! The plugin commands the bar sends zellij, encoded as zellij-tile encodes
//! them, one command at a time. zellij-tile's calls convert a
//! `PluginCommand` (a match over every command zellij knows) and encode it
//! through the payload's `oneof` (another such match): that links the
//! converter and encoder of every command, ~100 KB of `turnstile.wasm` for
//! the bar's dozen. Here each call encodes its own payload message only,
//! and nothing unwraps (a panic removes the bar). Host tests check each
//! encoding against zellij-tile's, byte for byte.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use zellij_tile::prelude::{EventType, FloatingPaneCoordinates, MessageToPlugin, PaneId, PermissionType};
use zellij_tile::shim::plugin_api::event::ProtobufEventType;
use zellij_tile::shim::plugin_api::plugin_command::{
    CliPipeOutputPayload, CommandName, ContextItem, CopyToClipboardPayload, EnvVariable, GetPaneScrollbackPayload,
    IdAndNewName, MessageToPluginPayload, PaneIdAndShouldFloat, ProtobufEventNameList, ProtobufNewPluginArgs,
    RequestPluginPermissionPayload, RunCommandPayload, SetTimeoutPayload, SubscribePayload, UnsubscribePayload,
    WriteCharsToPaneIdPayload,
};
use zellij_tile::shim::plugin_api::plugin_ids::ProtobufPluginIds;
use zellij_tile::shim::plugin_api::plugin_permission::ProtobufPermissionType;
use zellij_tile::shim::prost::encoding;
use zellij_tile::shim::prost::Message;

/// The field numbers of the payloads in zellij's `PluginCommand` message
/// (`plugin_command.proto`).
mod field {
    pub const SUBSCRIBE: u32 = 2;
    pub const UNSUBSCRIBE: u32 = 3;
    pub const SET_SELECTABLE: u32 = 4;
    pub const SET_TIMEOUT: u32 = 12;
    pub const CLOSE_PLUGIN_PANE: u32 = 31;
    pub const FOCUS_TERMINAL_PANE: u32 = 32;
    pub const FOCUS_PLUGIN_PANE: u32 = 33;
    pub const RENAME_PLUGIN_PANE: u32 = 35;
    pub const REPORT_CRASH: u32 = 37;
    pub const REQUEST_PERMISSION: u32 = 38;
    pub const RUN_COMMAND: u32 = 43;
    pub const CLI_PIPE_OUTPUT: u32 = 49;
    pub const MESSAGE_TO_PLUGIN: u32 = 50;
    pub const WRITE_CHARS_TO_PANE_ID: u32 = 71;
    pub const GET_PANE_SCROLLBACK: u32 = 113;
    pub const COPY_TO_CLIPBOARD: u32 = 120;
}

/// One encoded command: its name, then its payload (in field order, as
/// prost writes them; a name of 0 is prost's default, left out).
struct Command(Vec<u8>);

impl Command {
    fn named(name: CommandName) -> Command {
        let mut bytes = Vec::new();
        let name = name as i32;
        if name != 0 {
            encoding::int32::encode(1, &name, &mut bytes);
        }
        Command(bytes)
    }

    fn with(name: CommandName, tag: u32, payload: &impl Message) -> Command {
        let mut command = Command::named(name);
        // Sized once: a doubling vector holds up to twice a long payload.
        command.0.reserve_exact(payload.encoded_len() + 8);
        encoding::message::encode(tag, payload, &mut command.0);
        command
    }

    fn with_bool(name: CommandName, tag: u32, value: bool) -> Command {
        let mut command = Command::named(name);
        encoding::bool::encode(tag, &value, &mut command.0);
        command
    }

    fn with_string(name: CommandName, tag: u32, value: &str) -> Command {
        let mut command = Command::named(name);
        encoding::string::encode(tag, &value.to_owned(), &mut command.0);
        command
    }

    fn with_u32(name: CommandName, tag: u32, value: u32) -> Command {
        let mut command = Command::named(name);
        encoding::uint32::encode(tag, &value, &mut command.0);
        command
    }

    /// Writes the command to stdout, as zellij reads it: a JSON array of
    /// its bytes on one line (a failed write is dropped, not a panic).
    fn run(self) {
        let mut stdout = std::io::stdout().lock();
        if write_json_array(&mut stdout, &self.0)
            .and_then(|()| stdout.flush())
            .is_ok()
        {
            crate::run_plugin_command();
        }
    }
}

/// Writes `bytes` as a JSON array of numbers and a newline, a bounded chunk
/// at a time: the line is about four times the command, and a copy's wasm
/// memory never shrinks, so building it whole (a pane list forwarded to the
/// leader, 15 KB at 64 agents) grew every copy a tab switch made viewed by
/// 128 KiB for good.
fn write_json_array(out: &mut impl Write, bytes: &[u8]) -> std::io::Result<()> {
    const CHUNK: usize = 1024;
    let mut chunk = String::with_capacity(CHUNK + 8);
    chunk.push('[');
    for (i, byte) in bytes.iter().enumerate() {
        if i > 0 {
            chunk.push(',');
        }
        push_decimal(&mut chunk, *byte);
        if chunk.len() >= CHUNK {
            out.write_all(chunk.as_bytes())?;
            chunk.clear();
        }
    }
    chunk.push_str("]\n");
    out.write_all(chunk.as_bytes())
}

fn push_decimal(line: &mut String, byte: u8) {
    if byte >= 100 {
        line.push(char::from(b'0' + byte / 100));
    }
    if byte >= 10 {
        line.push(char::from(b'0' + byte / 10 % 10));
    }
    line.push(char::from(b'0' + byte % 10));
}

fn event_names(events: &[EventType]) -> ProtobufEventNameList {
    ProtobufEventNameList {
        event_types: events
            .iter()
            .filter_map(|e| ProtobufEventType::try_from(*e).ok())
            .map(|e| e as i32)
            .collect(),
    }
}

fn context_items(map: BTreeMap<String, String>) -> Vec<ContextItem> {
    map.into_iter()
        .map(|(name, value)| ContextItem { name, value })
        .collect()
}

fn subscribe_command(events: &[EventType]) -> Command {
    let payload = SubscribePayload {
        subscriptions: Some(event_names(events)),
    };
    Command::with(CommandName::Subscribe, field::SUBSCRIBE, &payload)
}

fn unsubscribe_command(events: &[EventType]) -> Command {
    let payload = UnsubscribePayload {
        subscriptions: Some(event_names(events)),
    };
    Command::with(CommandName::Unsubscribe, field::UNSUBSCRIBE, &payload)
}

fn permission_command(permissions: &[PermissionType]) -> Command {
    let payload = RequestPluginPermissionPayload {
        permissions: permissions
            .iter()
            .filter_map(|p| ProtobufPermissionType::try_from(*p).ok())
            .map(|p| p as i32)
            .collect(),
    };
    Command::with(
        CommandName::RequestPluginPermissions,
        field::REQUEST_PERMISSION,
        &payload,
    )
}

fn run_command_command(
    argv: &[&str],
    env: BTreeMap<String, String>,
    cwd: &Path,
    context: BTreeMap<String, String>,
) -> Command {
    let payload = RunCommandPayload {
        command_line: argv.iter().map(|a| a.to_string()).collect(),
        env_variables: env
            .into_iter()
            .map(|(name, value)| EnvVariable { name, value })
            .collect(),
        cwd: cwd.display().to_string(),
        context: context_items(context),
    };
    Command::with(CommandName::RunCommand, field::RUN_COMMAND, &payload)
}

fn message_command(message: MessageToPlugin) -> Command {
    let new_plugin_args = message.new_plugin_args.map(|args| ProtobufNewPluginArgs {
        should_float: args.should_float,
        pane_id_to_replace: args.pane_id_to_replace.and_then(|p| p.try_into().ok()),
        pane_title: args.pane_title,
        cwd: args.cwd.map(|cwd| cwd.display().to_string()),
        skip_cache: args.skip_cache,
        should_focus: args.should_focus,
    });
    let payload = MessageToPluginPayload {
        plugin_url: message.plugin_url,
        plugin_config: context_items(message.plugin_config),
        message_name: message.message_name,
        message_payload: message.message_payload,
        message_args: context_items(message.message_args),
        new_plugin_args,
        destination_plugin_id: message.destination_plugin_id,
        floating_pane_coordinates: message.floating_pane_coordinates.map(Into::into),
    };
    Command::with(CommandName::MessageToPlugin, field::MESSAGE_TO_PLUGIN, &payload)
}

fn focus_command(name: CommandName, tag: u32, pane_id: u32, should_float: bool) -> Command {
    let payload = PaneIdAndShouldFloat {
        pane_id,
        should_float,
        should_be_in_place: false,
    };
    Command::with(name, tag, &payload)
}

fn scrollback_command(pane: PaneId, whole: bool) -> Option<Command> {
    let payload = GetPaneScrollbackPayload {
        pane_id: Some(pane.try_into().ok()?),
        get_full_scrollback: whole,
    };
    Some(Command::with(
        CommandName::GetPaneScrollback,
        field::GET_PANE_SCROLLBACK,
        &payload,
    ))
}

fn write_chars_command(text: &str, pane: PaneId) -> Option<Command> {
    let payload = WriteCharsToPaneIdPayload {
        chars_to_write: text.to_owned(),
        pane_id: Some(pane.try_into().ok()?),
    };
    Some(Command::with(
        CommandName::WriteCharsToPaneId,
        field::WRITE_CHARS_TO_PANE_ID,
        &payload,
    ))
}

/// Subscribes to these events.
pub fn subscribe(events: &[EventType]) {
    subscribe_command(events).run();
}

/// Unsubscribes from these events.
pub fn unsubscribe(events: &[EventType]) {
    unsubscribe_command(events).run();
}

/// Asks the person for these permissions.
pub fn request_permission(permissions: &[PermissionType]) {
    permission_command(permissions).run();
}

/// Makes this plugin's pane selectable or not.
pub fn set_selectable(selectable: bool) {
    Command::with_bool(CommandName::SetSelectable, field::SET_SELECTABLE, selectable).run();
}

/// A timer event in `seconds`.
pub fn set_timeout(seconds: f64) {
    let payload = SetTimeoutPayload { seconds };
    Command::with(CommandName::SetTimeout, field::SET_TIMEOUT, &payload).run();
}

/// Runs a host command (its answer comes as a `RunCommandResult`).
pub fn run_command(argv: &[&str], env: BTreeMap<String, String>, cwd: &Path, context: BTreeMap<String, String>) {
    run_command_command(argv, env, cwd, context).run();
}

/// Types `text` into a pane.
pub fn write_chars_to_pane(text: &str, pane: PaneId) {
    if let Some(command) = write_chars_command(text, pane) {
        command.run();
    }
}

/// A message `name` to the plugin at `url` that launches it with `config`
/// unless it runs: floating (5 % from the left, 10 % from the top, 90 % ×
/// 70 % of the screen), focused, its pane titled `title`.
pub fn floating_plugin_message(
    name: &str,
    url: String,
    config: BTreeMap<String, String>,
    title: &str,
) -> MessageToPlugin {
    let message = MessageToPlugin::new(name)
        .with_plugin_url(url)
        .with_plugin_config(config)
        .new_plugin_instance_should_float(true)
        .new_plugin_instance_should_have_pane_title(title)
        .new_plugin_instance_should_be_focused();
    let place = FloatingPaneCoordinates::new(
        Some("5%".into()),
        Some("10%".into()),
        Some("90%".into()),
        Some("70%".into()),
        None,
        None,
    );
    match place {
        Some(place) => message.with_floating_pane_coordinates(place),
        None => message,
    }
}

/// Sends a pipe message to plugins (or launches the one it names).
pub fn pipe_message_to_plugin(message: MessageToPlugin) {
    message_command(message).run();
}

/// Writes `output` to the CLI pipe `pipe`.
pub fn cli_pipe_output(pipe: &str, output: &str) {
    let payload = CliPipeOutputPayload {
        pipe_name: pipe.to_owned(),
        output: output.to_owned(),
    };
    Command::with(CommandName::CliPipeOutput, field::CLI_PIPE_OUTPUT, &payload).run();
}

/// Focuses a terminal pane.
pub fn focus_terminal_pane(pane: u32, should_float: bool) {
    focus_command(
        CommandName::FocusTerminalPane,
        field::FOCUS_TERMINAL_PANE,
        pane,
        should_float,
    )
    .run();
}

/// Focuses a plugin pane.
pub fn focus_plugin_pane(plugin: u32, should_float: bool) {
    focus_command(
        CommandName::FocusPluginPane,
        field::FOCUS_PLUGIN_PANE,
        plugin,
        should_float,
    )
    .run();
}

/// Renames a plugin pane.
pub fn rename_plugin_pane(plugin: u32, name: &str) {
    let payload = IdAndNewName {
        id: plugin,
        new_name: name.to_owned(),
    };
    Command::with(CommandName::RenamePluginPane, field::RENAME_PLUGIN_PANE, &payload).run();
}

/// Closes a plugin pane.
pub fn close_plugin_pane(plugin: u32) {
    Command::with_u32(CommandName::ClosePluginPane, field::CLOSE_PLUGIN_PANE, plugin).run();
}

/// Copies `text` to the clipboard.
pub fn copy_to_clipboard(text: String) {
    let payload = CopyToClipboardPayload { text };
    Command::with(CommandName::CopyToClipboard, field::COPY_TO_CLIPBOARD, &payload).run();
}

fn panic_text(info: &std::panic::PanicHookInfo) -> String {
    let payload = match info.payload().downcast_ref::<&str>() {
        Some(text) => text.to_string(),
        None => "<NO PAYLOAD>".to_owned(),
    };
    format!("{payload}\n\r{info:#?}").replace('\n', "\r\n")
}

/// The panic hook: tells zellij of the panic (it shows it in the pane), as
/// zellij-tile's `report_panic` does.
pub fn report_panic(info: &std::panic::PanicHookInfo) {
    Command::with_string(CommandName::ReportCrash, field::REPORT_CRASH, &panic_text(info)).run();
}

/// This plugin's id (`None` when zellij does not answer).
pub fn own_plugin_id() -> Option<u32> {
    Command::named(CommandName::GetPluginIds).run();
    let bytes = crate::stdin::bytes()?;
    let ids = ProtobufPluginIds::decode(bytes.as_slice()).ok()?;
    Some(ids.plugin_id as u32)
}

/// Asks for a terminal pane's contents (`whole`: with its history); the
/// answer is on stdin. False when it cannot be asked.
pub fn get_pane_scrollback(pane: u32, whole: bool) -> bool {
    let Some(command) = scrollback_command(PaneId::Terminal(pane), whole) else {
        return false;
    };
    command.run();
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use zellij_tile::prelude::PluginCommand;
    use zellij_tile::shim::plugin_api::plugin_command::ProtobufPluginCommand;

    /// zellij-tile's encoding of `command`.
    fn theirs(command: PluginCommand) -> Vec<u8> {
        ProtobufPluginCommand::try_from(command)
            .expect("zellij-tile converts it")
            .encode_to_vec()
    }

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn each_command_is_encoded_as_zellij_tile_encodes_it() {
        let argv = ["turnstile", "pull", "--from", "7"];
        let env = map(&[("TURNSTILE_X", "1")]);
        let context = map(&[("kind", "pull"), ("request", "3")]);
        let pairs: Vec<(Command, PluginCommand)> = vec![
            (
                subscribe_command(&[EventType::PaneUpdate]),
                PluginCommand::Subscribe([EventType::PaneUpdate].into()),
            ),
            (
                unsubscribe_command(&[EventType::PaneRenderReport]),
                PluginCommand::Unsubscribe([EventType::PaneRenderReport].into()),
            ),
            (
                permission_command(&[PermissionType::RunCommands, PermissionType::WriteToStdin]),
                PluginCommand::RequestPluginPermissions(vec![
                    PermissionType::RunCommands,
                    PermissionType::WriteToStdin,
                ]),
            ),
            (
                Command::with_bool(CommandName::SetSelectable, field::SET_SELECTABLE, false),
                PluginCommand::SetSelectable(false),
            ),
            (
                Command::with(
                    CommandName::SetTimeout,
                    field::SET_TIMEOUT,
                    &SetTimeoutPayload { seconds: 0.25 },
                ),
                PluginCommand::SetTimeout(0.25),
            ),
            (
                run_command_command(&argv, env.clone(), Path::new("."), context.clone()),
                PluginCommand::RunCommand(
                    argv.iter().map(|a| a.to_string()).collect(),
                    env,
                    ".".into(),
                    context.clone(),
                ),
            ),
            (
                run_command_command(&argv, BTreeMap::new(), Path::new(""), context.clone()),
                PluginCommand::RunCommand(
                    argv.iter().map(|a| a.to_string()).collect(),
                    BTreeMap::new(),
                    "".into(),
                    context,
                ),
            ),
            (
                write_chars_command("hé\u{1b}[200~x", PaneId::Terminal(4)).unwrap(),
                PluginCommand::WriteCharsToPaneId("hé\u{1b}[200~x".into(), PaneId::Terminal(4)),
            ),
            (
                Command::with(
                    CommandName::CliPipeOutput,
                    field::CLI_PIPE_OUTPUT,
                    &CliPipeOutputPayload {
                        pipe_name: "p1".into(),
                        output: "{\"ok\":true}\n".into(),
                    },
                ),
                PluginCommand::CliPipeOutput("p1".into(), "{\"ok\":true}\n".into()),
            ),
            (
                focus_command(CommandName::FocusTerminalPane, field::FOCUS_TERMINAL_PANE, 9, false),
                PluginCommand::FocusTerminalPane(9, false, false),
            ),
            (
                focus_command(CommandName::FocusPluginPane, field::FOCUS_PLUGIN_PANE, 3, true),
                PluginCommand::FocusPluginPane(3, true, false),
            ),
            (
                Command::with(
                    CommandName::RenamePluginPane,
                    field::RENAME_PLUGIN_PANE,
                    &IdAndNewName {
                        id: 2,
                        new_name: "turnstile 1/8".into(),
                    },
                ),
                PluginCommand::RenamePluginPane(2, "turnstile 1/8".into()),
            ),
            (
                Command::with_u32(CommandName::ClosePluginPane, field::CLOSE_PLUGIN_PANE, 5),
                PluginCommand::ClosePluginPane(5),
            ),
            (
                Command::with(
                    CommandName::CopyToClipboard,
                    field::COPY_TO_CLIPBOARD,
                    &CopyToClipboardPayload { text: "answer".into() },
                ),
                PluginCommand::CopyToClipboard("answer".into()),
            ),
            (Command::named(CommandName::GetPluginIds), PluginCommand::GetPluginIds),
            (
                Command::with_string(CommandName::ReportCrash, field::REPORT_CRASH, "boom\r\n at x"),
                PluginCommand::ReportPanic("boom\r\n at x".into()),
            ),
            (
                scrollback_command(PaneId::Terminal(12), true).unwrap(),
                PluginCommand::GetPaneScrollback {
                    pane_id: PaneId::Terminal(12),
                    get_full_scrollback: true,
                },
            ),
            (
                scrollback_command(PaneId::Terminal(0), false).unwrap(),
                PluginCommand::GetPaneScrollback {
                    pane_id: PaneId::Terminal(0),
                    get_full_scrollback: false,
                },
            ),
        ];
        for (ours, command) in pairs {
            let name = format!("{command:?}");
            assert_eq!(ours.0, theirs(command), "{name}");
        }
    }

    #[test]
    fn messages_to_plugins_are_encoded_as_zellij_tile_encodes_them() {
        let to_copy = || {
            MessageToPlugin::new("turnstile-rows")
                .with_destination_plugin_id(3)
                .with_payload("{\"rows\":[]}")
        };
        let broadcast = || MessageToPlugin::new("turnstile-log").with_payload("x");
        let launch = || {
            floating_plugin_message(
                "inbox",
                "file:/x/turnstile.wasm".into(),
                map(&[("view", "inbox")]),
                "turnstile inbox",
            )
        };
        for message in [to_copy as fn() -> MessageToPlugin, broadcast, launch] {
            let ours = message_command(message()).0;
            assert_eq!(
                ours,
                theirs(PluginCommand::MessageToPlugin(message())),
                "{:?}",
                message()
            );
        }
    }

    #[test]
    fn a_subscription_to_several_events_names_each_once() {
        use zellij_tile::shim::plugin_api::generated_api::api::plugin_command::plugin_command::Payload;
        let events = [EventType::PaneUpdate, EventType::Timer, EventType::Mouse];
        let named = |bytes: Vec<u8>| {
            let command = ProtobufPluginCommand::decode(bytes.as_slice()).unwrap();
            let Some(Payload::SubscribePayload(payload)) = command.payload else {
                panic!("not a subscription: {command:?}");
            };
            let mut names = payload.subscriptions.unwrap().event_types;
            names.sort_unstable();
            (command.name, names)
        };
        let ours = named(subscribe_command(&events).0);
        assert_eq!(ours.1.len(), 3);
        assert_eq!(ours, named(theirs(PluginCommand::Subscribe(events.into()))));
    }

    #[test]
    fn bytes_are_written_as_a_json_array() {
        let mut line = String::new();
        for byte in [0u8, 7, 10, 99, 100, 255] {
            push_decimal(&mut line, byte);
            line.push(',');
        }
        assert_eq!(line, "0,7,10,99,100,255,");
    }

    #[test]
    fn a_long_command_is_written_in_chunks_as_one_json_line() {
        for len in [0usize, 1, 300, 1024, 5000] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 37 % 256) as u8).collect();
            let mut out = Vec::new();
            write_json_array(&mut out, &bytes).unwrap();
            let line = String::from_utf8(out).unwrap();
            assert!(line.ends_with("]\n") && line.matches('\n').count() == 1, "{len}");
            let parsed: Vec<u8> = serde_json::from_str(line.trim_end()).unwrap();
            assert_eq!(parsed, bytes, "{len}");
        }
    }
}
