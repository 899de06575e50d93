//! What an `ssh` command line in a pane says: which machine it reaches and
//! how ([`SshCommand`]), and the command line of the relay link the watcher
//! opens beside it ([`SshCommand::link_argv`]): the same connection options
//! (`-p`, `-l`, `-F`, `-J`, `-i`, `-o`, a ControlMaster's `-S`), none of the
//! pane's own (a tty, forwardings, a remote command), then `BatchMode` and a
//! keepalive, so a link never asks for a password and a dead one is seen
//! within seconds.
//!
//! Pure: argv in, argv out. The host finds the pane's `ssh` processes in
//! /proc and runs the link.

/// Options of `ssh` that take an argument (OpenSSH 9).
const WITH_ARGUMENT: &str = "BbcDEeFIiJLlmOoPpQRSWw";

/// Options with an argument that shape the connection: the link keeps them.
const CONNECTION: &str = "BbcFIiJlmoPpS";

/// Flags (no argument) that shape the connection: the link keeps them.
const CONNECTION_FLAGS: &str = "46Cq";

/// Flags that make `ssh` do something other than connect and run a command
/// (`-G` prints its config, `-V` its version, `-O` talks to a master,
/// `-Q` queries, `-W` forwards stdio, `-N` runs nothing): no link follows
/// such a process.
const NOT_A_SESSION: &str = "GVOQWN";

/// Keepalive every 2 s, two missed: a dead link is seen within ~6 s.
pub const KEEPALIVE: [&str; 6] = [
    "-o",
    "ServerAliveInterval=2",
    "-o",
    "ServerAliveCountMax=2",
    "-o",
    "BatchMode=yes",
];

/// One `ssh` invocation, taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshCommand {
    /// Where it connects: `host`, `user@host` or `ssh://user@host:port`.
    pub destination: String,
    /// The options that shape the connection, in order (`-p 2222`, …).
    pub connection: Vec<String>,
    /// The remote command, when one follows the destination.
    pub command: Vec<String>,
}

impl SshCommand {
    /// Reads `argv` (`ssh` first, a path or not); `None` for a process that
    /// is no `ssh` session (another program, `ssh -V`, `ssh -O check`, no
    /// destination).
    pub fn parse(argv: &[String]) -> Option<SshCommand> {
        let program = argv.first()?.rsplit('/').next()?;
        if program != "ssh" {
            return None;
        }
        let mut connection = Vec::new();
        let mut args = argv[1..].iter();
        while let Some(arg) = args.next() {
            if arg == "--" {
                let destination = args.next()?.clone();
                return Some(SshCommand::new(destination, connection, args));
            }
            let Some(letters) = arg.strip_prefix('-').filter(|l| !l.is_empty()) else {
                return Some(SshCommand::new(arg.clone(), connection, args));
            };
            for (i, letter) in letters.char_indices() {
                if NOT_A_SESSION.contains(letter) {
                    return None;
                }
                if CONNECTION_FLAGS.contains(letter) {
                    connection.push(format!("-{letter}"));
                }
                if WITH_ARGUMENT.contains(letter) {
                    let rest = &letters[i + letter.len_utf8()..];
                    let value = if rest.is_empty() {
                        args.next()?.clone()
                    } else {
                        rest.to_owned()
                    };
                    if CONNECTION.contains(letter) {
                        connection.push(format!("-{letter}"));
                        connection.push(value);
                    }
                    break;
                }
            }
        }
        None
    }

    fn new<'a>(destination: String, connection: Vec<String>, rest: impl Iterator<Item = &'a String>) -> SshCommand {
        SshCommand {
            destination,
            connection,
            command: rest.cloned().collect(),
        }
    }

    /// What names the link this command shares with others: its connection
    /// options and destination (two panes on one host through the same
    /// options share one link).
    pub fn link_key(&self) -> String {
        let mut key = self.connection.join(" ");
        key.push(' ');
        key.push_str(&self.destination);
        key.trim_start().to_owned()
    }

    /// The relay link's command line: `ssh`, the pane's connection options,
    /// [`KEEPALIVE`], no tty, the destination, then `remote` (each word
    /// quoted for the remote shell, which runs it).
    pub fn link_argv<S: AsRef<str>>(&self, remote: &[S]) -> Vec<String> {
        let mut argv = vec!["ssh".to_owned()];
        argv.extend(self.connection.iter().cloned());
        argv.extend(KEEPALIVE.iter().map(|s| (*s).to_owned()));
        argv.push("-T".to_owned());
        argv.push("--".to_owned());
        argv.push(self.destination.clone());
        argv.push(
            remote
                .iter()
                .map(|w| shell_quote(w.as_ref()))
                .collect::<Vec<_>>()
                .join(" "),
        );
        argv
    }

    /// The machine's name, for people: the destination without its user,
    /// scheme and port.
    pub fn host(&self) -> &str {
        let rest = self.destination.strip_prefix("ssh://").unwrap_or(&self.destination);
        let rest = rest.rsplit('@').next().unwrap_or(rest);
        match rest.strip_prefix('[') {
            Some(bracketed) => bracketed.split(']').next().unwrap_or(bracketed),
            None if self.destination.starts_with("ssh://") => rest.split(':').next().unwrap_or(rest),
            None => rest,
        }
    }
}

/// `word` quoted for a POSIX shell (as is when it is plain).
pub fn shell_quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        return word.to_owned();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Option<SshCommand> {
        SshCommand::parse(&line.split(' ').map(str::to_owned).collect::<Vec<_>>())
    }

    #[test]
    fn a_plain_login_names_its_destination() {
        let ssh = parse("ssh devbox").unwrap();
        assert_eq!((ssh.destination.as_str(), ssh.command.len()), ("devbox", 0));
        assert_eq!(ssh.host(), "devbox");
        assert_eq!(parse("/usr/bin/ssh me@gpu").unwrap().host(), "gpu");
        assert_eq!(parse("ssh ssh://me@[::1]:2222").unwrap().host(), "::1");
        assert_eq!(parse("ssh ssh://me@box:2222").unwrap().host(), "box");
    }

    #[test]
    fn connection_options_are_kept_and_the_panes_own_are_not() {
        let ssh =
            parse("ssh -t -p 2222 -F /tmp/cfg -L 8080:localhost:80 -oControlPath=/tmp/cm -A me@box claude --resume")
                .unwrap();
        assert_eq!(ssh.destination, "me@box");
        assert_eq!(
            ssh.connection,
            ["-p", "2222", "-F", "/tmp/cfg", "-o", "ControlPath=/tmp/cm"]
        );
        assert_eq!(ssh.command, ["claude", "--resume"]);
        assert_eq!(ssh.link_key(), "-p 2222 -F /tmp/cfg -o ControlPath=/tmp/cm me@box");
    }

    #[test]
    fn grouped_flags_and_a_joined_argument_are_read_like_ssh_reads_them() {
        let ssh = parse("ssh -4tp2222 -Jjump box").unwrap();
        assert_eq!(ssh.connection, ["-4", "-p", "2222", "-J", "jump"]);
        assert_eq!(ssh.destination, "box");
        let ssh = parse("ssh -- -box- ls").unwrap();
        assert_eq!(
            (ssh.destination.as_str(), ssh.command.as_slice()),
            ("-box-", &["ls".to_owned()][..])
        );
    }

    #[test]
    fn what_is_no_session_is_none() {
        for line in [
            "ssh",
            "ssh -V",
            "ssh -O check box",
            "ssh -N -L 1:a:2 box",
            "ssh -p",
            "sshd -D",
            "bash",
        ] {
            assert_eq!(parse(line), None, "{line}");
        }
    }

    #[test]
    fn the_link_reuses_the_connection_and_never_asks() {
        let ssh = parse("ssh -t -i /k/id box codex").unwrap();
        let argv = ssh.link_argv(&["turnstile", "relay", "--session", "my session"]);
        assert_eq!(
            argv.join(" "),
            "ssh -i /k/id -o ServerAliveInterval=2 -o ServerAliveCountMax=2 -o BatchMode=yes -T -- box \
             turnstile relay --session 'my session'"
        );
    }

    #[test]
    fn shell_quoting_survives_quotes() {
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("a;b"), "'a;b'");
    }
}
