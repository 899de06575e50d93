//! The watcher's links to relays on other machines: for each machine the
//! session's panes reach over `ssh` ([`super::discovery::find_ssh_sessions`]),
//! one `ssh … turnstile relay --session S` ([`SshCommand::link_argv`]: the
//! pane's connection options, `BatchMode`, a keepalive), read on a thread of
//! its own so a hung remote never holds the watcher up. What it says goes
//! through [`RemotePanes`], which takes a report only for a pane whose `ssh`
//! reaches that machine.
//!
//! A link is lost when its `ssh` exits (255: the connection), or when its
//! relay, which beats each second, is silent for [`SILENT_FOR`]: its panes
//! are reported lost (the bar falls back to their screens and says `link
//! lost`) and it is opened again after a backoff (1 s, doubling to 30 s).
//! The links' states are written to `links.json` in the session's private
//! folder, for `turnstile doctor`.

use super::discovery::{SshSessions, LINK_MARK};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use turnstile_core::protocol::PaneReport;
use turnstile_core::relay::{RelayReader, RemotePanes};
use turnstile_core::ssh::SshCommand;

/// A relay silent this long (it beats each second) is taken for lost.
pub const SILENT_FOR: Duration = Duration::from_secs(6);

/// The first wait before a lost link is opened again; it doubles up to
/// [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// The most bytes a relay's stderr keeps (its last line says why it ended).
const MAX_SAID: usize = 512;

/// What a link's threads hand the watcher's loop.
pub enum Heard {
    /// Bytes its relay wrote.
    Bytes(Vec<u8>),
    /// A line its `ssh` wrote on stderr.
    Said(String),
    /// Its stdout closed.
    Closed,
}

/// One link's news, named by the link's number (a link opened again is a
/// new number: what an old one's threads still say is dropped).
pub struct LinkNews {
    /// The link's number.
    pub link: u64,
    /// What it heard.
    pub heard: Heard,
}

/// A link's state, for people (`turnstile doctor`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkState {
    /// Its `ssh` runs; the relay has not said hello yet.
    Connecting,
    /// Its relay speaks.
    Up,
    /// Lost (why); opened again later.
    Lost(String),
}

struct Link {
    ssh: SshCommand,
    panes: RemotePanes,
    child: Option<(u64, Child)>,
    reader: RelayReader,
    state: LinkState,
    heard_at: Instant,
    retry_at: Instant,
    backoff: Duration,
    said: String,
}

/// Where a link's threads hand their news (false: the watcher is gone).
pub type NewsOut = Arc<dyn Fn(LinkNews) -> bool + Send + Sync>;

/// The session's links, by [`SshCommand::link_key`].
pub struct Links {
    session: String,
    news: NewsOut,
    links: BTreeMap<String, Link>,
    opened: u64,
    /// `links.json` in the session's private folder.
    record: PathBuf,
    /// What it says now.
    recorded: Vec<u8>,
}

/// What the links ask the watcher to post: reports, each with whether a
/// hook made it.
pub type Posts = Vec<(PaneReport, bool)>;

impl Links {
    /// No links yet; their threads' news goes to `news`.
    pub fn new(session: &str, news: NewsOut, state_folder: &std::path::Path) -> Links {
        Links {
            session: session.to_owned(),
            news,
            links: BTreeMap::new(),
            opened: 0,
            record: state_folder.join("links.json"),
            recorded: Vec::new(),
        }
    }

    /// Follows the `ssh` sessions the panes run now: a link for a new
    /// machine opens at the next [`Links::tick`], one no pane reaches any
    /// more closes (each second while there are links: a pane's connection
    /// is made after its `ssh` starts).
    pub fn follow(&mut self, sessions: BTreeMap<String, SshSessions>) -> Posts {
        let mut posts = Posts::new();
        let gone: Vec<String> = self
            .links
            .keys()
            .filter(|k| !sessions.contains_key(*k))
            .cloned()
            .collect();
        for key in gone {
            if let Some(mut link) = self.links.remove(&key) {
                posts.extend(link.panes.trust(BTreeSet::new()).into_iter().map(|r| (r, false)));
                link.stop();
            }
        }
        for (key, found) in sessions {
            let link = self.links.entry(key).or_insert_with(|| Link::new(found.command));
            let gone = link.panes.trust_clients(found.panes, found.clients);
            posts.extend(gone.into_iter().map(|r| (r, false)));
        }
        posts
    }

    /// Takes one piece of a link's news.
    pub fn hear(&mut self, news: LinkNews) -> Posts {
        let Some(link) = self
            .links
            .values_mut()
            .find(|l| l.child.as_ref().is_some_and(|(n, _)| *n == news.link))
        else {
            return Posts::new();
        };
        let (posts, changed) = link.hear(news.heard);
        if changed {
            self.write_record();
        }
        posts
    }

    /// Once a second: silent links are lost, new and lost ones opened when
    /// due, and `links.json` says what changed.
    pub fn tick(&mut self) -> Posts {
        let mut posts = Posts::new();
        for link in self.links.values_mut() {
            if link.child.is_some() && link.heard_at.elapsed() >= SILENT_FOR {
                let why = format!("its relay was silent for {} s", SILENT_FOR.as_secs());
                posts.extend(link.lose(why));
            }
        }
        self.open_due();
        self.write_record();
        posts
    }

    /// True when some link runs or waits to (the loop then wakes each second).
    pub fn any(&self) -> bool {
        !self.links.is_empty()
    }

    fn open_due(&mut self) {
        for link in self.links.values_mut() {
            if link.child.is_none() && Instant::now() >= link.retry_at {
                self.opened += 1;
                link.open(self.opened, &self.session, &self.news);
            }
        }
    }

    /// Writes `links.json` when what it says changed.
    fn write_record(&mut self) {
        let records: Vec<LinkRecord> = self.links.values().map(Link::record).collect();
        let Ok(json) = serde_json::to_vec_pretty(&records) else {
            return;
        };
        if json != self.recorded && super::files::write_atomic(&self.record, &json, 0o600).is_ok() {
            self.recorded = json;
        }
    }
}

impl Drop for Links {
    fn drop(&mut self) {
        for link in self.links.values_mut() {
            link.stop();
        }
        let _ = std::fs::remove_file(&self.record);
    }
}

/// One link as `links.json` says it.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct LinkRecord {
    /// The machine.
    pub host: String,
    /// The `ssh` destination and options.
    pub link: String,
    /// `connecting`, `up`, or `lost`.
    pub state: String,
    /// Why it is lost, or the last thing its `ssh` said.
    #[serde(default)]
    pub why: String,
}

impl Link {
    fn new(ssh: SshCommand) -> Link {
        Link {
            panes: RemotePanes::new(ssh.host()),
            ssh,
            child: None,
            reader: RelayReader::new(),
            state: LinkState::Connecting,
            heard_at: Instant::now(),
            retry_at: Instant::now(),
            backoff: FIRST_BACKOFF,
            said: String::new(),
        }
    }

    /// Runs its `ssh`, with a thread reading its stdout and one its stderr.
    fn open(&mut self, number: u64, session: &str, news: &NewsOut) {
        self.reader = RelayReader::new();
        self.said.clear();
        self.state = LinkState::Connecting;
        self.heard_at = Instant::now();
        let argv = self.ssh.link_argv(&relay_command(session));
        let spawned = Command::new(&argv[0])
            .args(&argv[1..])
            .env(LINK_MARK, "1")
            .env_remove("ZELLIJ_PANE_ID")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn();
        let mut child = match spawned {
            Ok(child) => child,
            Err(e) => {
                self.state = LinkState::Lost(format!("cannot run ssh: {e}"));
                self.retry_at = Instant::now() + self.next_backoff();
                return;
            }
        };
        if let Some(stdout) = child.stdout.take() {
            let news = news.clone();
            std::thread::spawn(move || read_stdout(number, stdout, &news));
        }
        if let Some(stderr) = child.stderr.take() {
            let news = news.clone();
            std::thread::spawn(move || read_stderr(number, stderr, &news));
        }
        self.child = Some((number, child));
    }

    /// Takes what a thread heard; the posts, and whether its state changed.
    fn hear(&mut self, heard: Heard) -> (Posts, bool) {
        match heard {
            Heard::Said(line) => {
                self.said = line.chars().filter(|c| !c.is_control()).take(MAX_SAID).collect();
                (Posts::new(), false)
            }
            Heard::Closed => {
                let why = match self.said.is_empty() {
                    true => "its ssh ended".to_owned(),
                    false => format!("its ssh ended: {}", self.said),
                };
                (self.lose(why), true)
            }
            Heard::Bytes(bytes) => self.read(&bytes),
        }
    }

    fn read(&mut self, bytes: &[u8]) -> (Posts, bool) {
        self.heard_at = Instant::now();
        let mut posts = Posts::new();
        let mut changed = false;
        for message in self.reader.feed(bytes) {
            let Ok(message) = message else {
                continue; // a line that is no message: the stream goes on
            };
            match self.panes.hear(message) {
                Ok(taken) => posts.extend(taken),
                Err(why) => {
                    posts.extend(self.lose(format!("its relay is refused: {why}")));
                    return (posts, true);
                }
            }
            if self.panes.greeted() && self.state != LinkState::Up {
                self.state = LinkState::Up;
                self.backoff = FIRST_BACKOFF;
                changed = true;
            }
        }
        (posts, changed)
    }

    /// Ends its `ssh`; its panes are reported lost; it is opened again later.
    fn lose(&mut self, why: String) -> Posts {
        self.stop();
        self.state = LinkState::Lost(why);
        self.retry_at = Instant::now() + self.next_backoff();
        self.panes.lost().into_iter().map(|r| (r, false)).collect()
    }

    fn next_backoff(&mut self) -> Duration {
        let wait = self.backoff;
        self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
        wait
    }

    fn stop(&mut self) {
        if let Some((_, mut child)) = self.child.take() {
            let _ = child.kill();
            // Reaped on a thread: an ssh stuck in the kernel never holds the loop.
            std::thread::spawn(move || child.wait());
        }
    }

    fn record(&self) -> LinkRecord {
        let (state, why) = match &self.state {
            LinkState::Connecting => ("connecting", self.said.clone()),
            LinkState::Up => ("up", String::new()),
            LinkState::Lost(why) => ("lost", why.clone()),
        };
        LinkRecord {
            host: self.ssh.host().to_owned(),
            link: self.ssh.link_key(),
            state: state.to_owned(),
            why,
        }
    }
}

/// What the link runs on the other machine (its words, quoted for the
/// remote shell by [`SshCommand::link_argv`]): its `turnstile relay`, found
/// on the PATH or where `turnstile setup --remote` puts it.
pub fn relay_command(session: &str) -> Vec<String> {
    let script = r#"PATH="$HOME/.local/bin:$PATH" exec turnstile relay --session "$1""#;
    ["sh", "-c", script, "turnstile-relay", session]
        .map(str::to_owned)
        .to_vec()
}

fn read_stdout(link: u64, mut stdout: impl Read, news: &NewsOut) {
    let mut buffer = vec![0u8; 64 << 10];
    loop {
        let heard = match stdout.read(&mut buffer) {
            Ok(0) | Err(_) => Heard::Closed,
            Ok(n) => Heard::Bytes(buffer[..n].to_vec()),
        };
        let closed = matches!(heard, Heard::Closed);
        if !news(LinkNews { link, heard }) || closed {
            return;
        }
    }
}

fn read_stderr(link: u64, stderr: impl Read, news: &NewsOut) {
    let lines = BufReader::new(stderr.take(1 << 20)).split(b'\n');
    for line in lines.map_while(std::result::Result::ok) {
        let line = String::from_utf8_lossy(&line).trim().to_owned();
        if !line.is_empty()
            && !news(LinkNews {
                link,
                heard: Heard::Said(line),
            })
        {
            return;
        }
    }
}

/// The links `links.json` in session `session`'s folder records (empty
/// when no watcher follows any).
pub fn recorded(state_folder: &std::path::Path) -> Vec<LinkRecord> {
    super::files::read_capped(&state_folder.join("links.json"), 1 << 20)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}
