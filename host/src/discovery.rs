//! Agent discovery through /proc: for one zellij session, the agent process
//! of each pane (its environment holds `ZELLIJ_PANE_ID` and
//! `ZELLIJ_SESSION_NAME`), with its kind, working directory and home; and
//! the `ssh` sessions the panes run ([`find_ssh_sessions`]), which the
//! watcher follows through relays.
//!
//! An agent that came in over `ssh` (its `SSH_CONNECTION` is not this
//! process's) runs in a pane of another machine's session, whose relay
//! reports it: the session's own watcher leaves it alone ([`Origin::Here`]).

use super::home::demo_home;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use turnstile_core::agent::{AgentKind, SessionStatus};
use turnstile_core::protocol::AgentBinding;
use turnstile_core::ssh::SshCommand;

/// The environment variable that marks a relay link's own `ssh` (the
/// watcher's, not a pane's).
pub const LINK_MARK: &str = "TURNSTILE_RELAY_LINK";

/// Which agents a look at /proc keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Those started on this machine's panes: not those that came in over
    /// `ssh` (another machine's relay reports them).
    Here,
    /// All, wherever their pane is (a relay: its agents all came over `ssh`).
    Anywhere,
}

/// An agent process found in /proc.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentProcess {
    /// Its process id.
    pub pid: u32,
    /// The zellij pane it runs in.
    pub pane: u32,
    /// Its working directory.
    pub cwd: Option<PathBuf>,
    /// Which agent it is.
    pub kind: AgentKind,
    /// Its home (`~/.claude`, `$CLAUDE_CONFIG_DIR`, `~/.codex`, a
    /// simulated agent's `--home`, …).
    pub home: PathBuf,
}

impl AgentProcess {
    /// Its session status file (Claude Code writes one per process).
    pub fn status_file(&self) -> Option<PathBuf> {
        self.kind.log().status_file(&self.home, self.pid)
    }

    /// The project folder its logs are grouped by ([`turnstile_core::agent::AgentLog::project_folder`]).
    pub fn project_folder(&self) -> Option<PathBuf> {
        Some(self.kind.log().project_folder(&self.home, self.cwd.as_deref()?))
    }

    /// Where its status file and logs appear around `now` (the watcher
    /// watches them, or their nearest existing ancestor).
    pub fn transcript_folders(&self, now: u64) -> Vec<PathBuf> {
        self.kind.log().watched_folders(&self.home, self.cwd.as_deref(), now)
    }

    /// Its session status, when the file exists and parses.
    pub fn status(&self) -> Option<SessionStatus> {
        super::files::read_capped(&self.status_file()?, 1 << 20)
            .ok()
            .and_then(|b| self.kind.log().read_status(&b))
    }

    /// The binding reported to the plugin.
    pub fn binding(&self, session_id: Option<String>, transcript: Option<&Path>) -> AgentBinding {
        AgentBinding {
            pid: self.pid,
            kind: self.kind,
            cwd: self.cwd.as_ref().map(|c| c.display().to_string()),
            session_id,
            transcript: transcript.map(|t| t.display().to_string()),
            remote: None,
        }
    }
}

/// One agent process per pane: the oldest (lowest pid) agent in that pane,
/// or the newest for a kind whose innermost process is the agent
/// ([`turnstile_core::agent::AgentLog::innermost_process_is_the_agent`]).
pub fn find_agents(session: &str, origin: Origin) -> BTreeMap<u32, AgentProcess> {
    let mut found: BTreeMap<u32, AgentProcess> = BTreeMap::new();
    let Ok(entries) = fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if let Some(agent) = agent_process(pid, session, origin) {
            let keep_old = found.get(&agent.pane).is_some_and(|old| {
                let innermost = old.kind == agent.kind && old.kind.log().innermost_process_is_the_agent();
                (old.pid < pid) != innermost
            });
            if !keep_old {
                found.insert(agent.pane, agent);
            }
        }
    }
    found
}

fn agent_process(pid: u32, session: &str, origin: Origin) -> Option<AgentProcess> {
    let proc_dir = PathBuf::from(format!("/proc/{pid}"));
    let argv = split_nul(&fs::read(proc_dir.join("cmdline")).ok()?);
    let kind = AgentKind::of_argv(&argv)?;
    let env = environment(pid)?;
    let pane = match origin {
        Origin::Here if came_over_ssh(&env) => return None,
        Origin::Here => pane_of(&env, session)?,
        Origin::Anywhere => pane_of(&env, session).or_else(|| client_of(&env))?,
    };
    let var = |name: &str| env.get(name).cloned();
    let home = match simulated_home(&argv, &env, kind) {
        Some(home) => home,
        None => kind.log().home(&var)?,
    };
    Some(AgentProcess {
        pid,
        pane,
        cwd: fs::read_link(proc_dir.join("cwd")).ok(),
        kind,
        home,
    })
}

/// The home of `turnstile demo-agent` / `turnstile replay`: its
/// `--home` argument, else the demo agent's default under its TMPDIR.
fn simulated_home(argv: &[String], env: &BTreeMap<String, String>, kind: AgentKind) -> Option<PathBuf> {
    let program = argv.first()?.rsplit('/').next()?;
    if program != "turnstile" {
        return None;
    }
    let home = argv.windows(2).find(|w| w[0] == "--home").map(|w| PathBuf::from(&w[1]));
    match (home, argv.get(1).map(String::as_str)) {
        (Some(home), _) => Some(home),
        (None, Some("demo-agent")) => {
            let tmp = env.get("TMPDIR").map(PathBuf::from);
            Some(demo_home(kind, tmp.as_deref()))
        }
        _ => None,
    }
}

/// A process's environment.
fn environment(pid: u32) -> Option<BTreeMap<String, String>> {
    let env = split_nul(&fs::read(format!("/proc/{pid}/environ")).ok()?)
        .into_iter()
        .filter_map(|kv| kv.split_once('=').map(|(k, v)| (k.to_owned(), v.to_owned())))
        .collect();
    Some(env)
}

/// The pane of session `session` an environment names.
fn pane_of(env: &BTreeMap<String, String>, session: &str) -> Option<u32> {
    if env.get("ZELLIJ_SESSION_NAME").map(String::as_str) != Some(session) {
        return None;
    }
    env.get("ZELLIJ_PANE_ID")?.trim().parse().ok()
}

/// The made-up pane of an agent whose environment names no zellij session
/// (its sshd dropped `ZELLIJ_*`) but the `ssh` client it came in from
/// (`SSH_CLIENT`): the session's watcher finds the pane whose `ssh` has
/// that source ([`turnstile_core::relay::client_pane`]).
fn client_of(env: &BTreeMap<String, String>) -> Option<u32> {
    if env.contains_key("ZELLIJ_SESSION_NAME") {
        return None; // another session's
    }
    let mut words = env.get("SSH_CLIENT")?.split_whitespace();
    turnstile_core::relay::client_pane(words.next()?, words.next()?)
}

/// True when a process came in over an `ssh` connection this one did not.
fn came_over_ssh(env: &BTreeMap<String, String>) -> bool {
    let ours = std::env::var("SSH_CONNECTION").ok();
    env.get("SSH_CONNECTION")
        .is_some_and(|theirs| Some(theirs) != ours.as_ref())
}

/// The `ssh` sessions to one machine that a session's panes run.
#[derive(Debug, Clone)]
pub struct SshSessions {
    /// The first pane's command.
    pub command: SshCommand,
    /// The panes that run it.
    pub panes: BTreeSet<u32>,
    /// The made-up pane id of each of their own TCP connections' source
    /// ([`turnstile_core::relay::client_pane`]), to the pane; none when a
    /// pane of the link holds no connection (a ControlMaster's client: the
    /// connection its agents name is shared, so it names no pane).
    pub clients: BTreeMap<u32, u32>,
}

/// The `ssh` sessions session `session`'s panes run, by link
/// ([`SshCommand::link_key`]). `processes` are the ones to look at, with
/// their command lines (the `ssh` ones a scan found).
pub fn find_ssh_sessions<'a>(
    session: &str,
    processes: impl IntoIterator<Item = (u32, &'a [u8])>,
) -> BTreeMap<String, SshSessions> {
    let mut found: BTreeMap<String, SshSessions> = BTreeMap::new();
    // Links some of whose panes hold no connection of their own.
    let mut shared: BTreeSet<String> = BTreeSet::new();
    let mut sockets: Vec<(u32, String, BTreeSet<String>)> = Vec::new();
    for (pid, cmdline) in processes {
        let Some(ssh) = SshCommand::parse(&split_nul(cmdline)) else {
            continue;
        };
        let Some(env) = environment(pid).filter(|env| !env.contains_key(LINK_MARK)) else {
            continue;
        };
        let Some(pane) = pane_of(&env, session) else {
            continue;
        };
        let key = ssh.link_key();
        let entry = found.entry(key.clone()).or_insert_with(|| SshSessions {
            command: ssh,
            panes: BTreeSet::new(),
            clients: BTreeMap::new(),
        });
        entry.panes.insert(pane);
        sockets.push((pane, key, socket_inodes(pid)));
    }
    let sources = tcp_sources(sockets.iter().flat_map(|(_, _, inodes)| inodes));
    for (pane, key, inodes) in sockets {
        let mine: Vec<_> = inodes.iter().filter_map(|inode| sources.get(inode)).collect();
        if mine.is_empty() {
            // A pane's ssh with no connection of its own is a ControlMaster's
            // client (or still connecting): the connection its agents name
            // may be another pane's.
            shared.insert(key);
            continue;
        }
        let Some(entry) = found.get_mut(&key) else { continue };
        for (address, port) in mine {
            if let Some(client) = turnstile_core::relay::client_pane(&address.to_string(), &port.to_string()) {
                entry.clients.insert(client, pane);
            }
        }
    }
    for key in shared {
        if let Some(entry) = found.get_mut(&key) {
            entry.clients.clear();
        }
    }
    found
}

/// The inodes of the sockets process `pid` holds.
fn socket_inodes(pid: u32) -> BTreeSet<String> {
    let Ok(fds) = fs::read_dir(format!("/proc/{pid}/fd")) else {
        return BTreeSet::new();
    };
    fds.flatten()
        .filter_map(|fd| fs::read_link(fd.path()).ok())
        .filter_map(|link| {
            let link = link.to_str()?;
            Some(link.strip_prefix("socket:[")?.strip_suffix(']')?.to_owned())
        })
        .collect()
}

/// The source address and port of the TCP sockets among `inodes`, by
/// inode: this network namespace's tables read once, whatever the count.
fn tcp_sources<'a>(inodes: impl IntoIterator<Item = &'a String>) -> BTreeMap<String, (std::net::IpAddr, u16)> {
    let wanted: BTreeSet<&str> = inodes.into_iter().map(String::as_str).collect();
    let mut sources = BTreeMap::new();
    if wanted.is_empty() {
        return sources;
    }
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let Some(inode) = fields.get(9).filter(|inode| wanted.contains(**inode)) else {
                continue;
            };
            if let Some(source) = parse_socket_address(fields[1]) {
                sources.insert((*inode).to_owned(), source);
            }
        }
    }
    sources
}

/// `0100007F:D431` (/proc/net/tcp: the address in the kernel's byte order,
/// the port in hex) as an address and port.
fn parse_socket_address(text: &str) -> Option<(std::net::IpAddr, u16)> {
    let (address, port) = text.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let words: Vec<u32> = (0..address.len() / 8)
        .map(|i| u32::from_str_radix(address.get(i * 8..i * 8 + 8)?, 16).ok())
        .collect::<Option<_>>()?;
    let address = match words.as_slice() {
        [v4] => std::net::IpAddr::from(v4.to_le_bytes()),
        [a, b, c, d] => {
            let bytes: Vec<u8> = [a, b, c, d].iter().flat_map(|w| w.to_le_bytes()).collect();
            let v6 = std::net::Ipv6Addr::from(<[u8; 16]>::try_from(bytes).ok()?);
            v6.to_ipv4_mapped()
                .map_or(std::net::IpAddr::V6(v6), std::net::IpAddr::V4)
        }
        _ => return None,
    };
    Some((address, port))
}

/// True when a command line (NUL-separated) runs an `ssh` session.
pub fn is_ssh_cmdline(cmdline: &[u8]) -> bool {
    let program = cmdline.split(|&b| b == 0).next().unwrap_or_default();
    program.rsplit(|&b| b == b'/').next() == Some(b"ssh") && SshCommand::parse(&split_nul(cmdline)).is_some()
}

fn split_nul(bytes: &[u8]) -> Vec<String> {
    bytes
        .split(|&b| b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_addresses_read_as_the_kernel_writes_them() {
        let v4 = parse_socket_address("0100007F:D431").unwrap();
        assert_eq!((v4.0.to_string(), v4.1), ("127.0.0.1".to_owned(), 54321));
        let mapped = parse_socket_address("0000000000000000FFFF00000100007F:0016").unwrap();
        assert_eq!(mapped.0.to_string(), "127.0.0.1", "an IPv4 address on an IPv6 socket");
        let v6 = parse_socket_address("00000000000000000000000001000000:0016").unwrap();
        assert_eq!(v6.0.to_string(), "::1");
        assert_eq!(parse_socket_address("zz:1"), None);
    }

    #[test]
    fn this_process_own_connection_is_found_by_its_source() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let stream = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let source = stream.local_addr().unwrap();
        let inodes = socket_inodes(std::process::id());
        let found: Vec<_> = tcp_sources(&inodes).into_values().collect();
        assert!(
            found.contains(&(source.ip(), source.port())),
            "{found:?} lacks {source}"
        );
    }
}
