"""A real OpenSSH server on 127.0.0.1 for the tests of agents over ssh: its
own host key, port, `authorized_keys` and client key, and a separate remote
HOME (sshd's `SetEnv`), with `turnstile` where `turnstile setup --remote`
puts it (`~/.local/bin`). `AcceptEnv ZELLIJ_*` on the server and `SendEnv`
in the client config (`-F`) carry the pane's ids to the remote agent."""
import os, signal, socket, subprocess, time

from harness import turnstile_bin, wait_for

SSHD = os.environ.get("TURNSTILE_SSHD", "/usr/sbin/sshd")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Sshd:
    """Starts on construction; `config` is the client's `-F` file, `host`
    the name it knows the server by."""

    host = "devbox"

    def __init__(self, folder, control_master=False, install=True, config=None, accept_env=True):
        self.dir = os.path.join(folder, "sshd")
        self.remote_home = os.path.join(self.dir, "remote-home")
        self.remote_tmp = os.path.join(self.dir, "remote-tmp")
        for d in (self.dir, os.path.join(self.remote_home, ".local", "bin"), self.remote_tmp):
            os.makedirs(d, exist_ok=True)
        os.chmod(self.dir, 0o700)
        if install:
            os.symlink(turnstile_bin(), os.path.join(self.remote_home, ".local", "bin", "turnstile"))
        self.port = free_port()
        key = os.path.join(self.dir, "id")
        for path in (os.path.join(self.dir, "host_key"), key):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", path], check=True)
        with open(key + ".pub") as f, open(os.path.join(self.dir, "authorized_keys"), "w") as out:
            out.write(f.read())
        path = f"{self.remote_home}/.local/bin:/usr/local/bin:/usr/bin:/bin"
        with open(os.path.join(self.dir, "sshd_config"), "w") as f:
            f.write(f"Port {self.port}\nListenAddress 127.0.0.1\nHostKey {self.dir}/host_key\n"
                    f"PidFile {self.dir}/sshd.pid\nAuthorizedKeysFile {self.dir}/authorized_keys\n"
                    "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
                    "PermitRootLogin prohibit-password\nPrintMotd no\nLogLevel VERBOSE\n"
                    + ("AcceptEnv ZELLIJ_*\n" if accept_env else "")
                    + f"SetEnv HOME={self.remote_home} TMPDIR={self.remote_tmp} PATH={path}\n")
        self.config = config or os.path.join(self.dir, "ssh_config")
        os.makedirs(os.path.dirname(self.config), mode=0o700, exist_ok=True)
        master = (f"  ControlMaster auto\n  ControlPath {self.dir}/cm-%C\n  ControlPersist 60\n"
                  if control_master else "")
        with open(self.config, "w") as f:
            f.write(f"Host {self.host}\n  HostName 127.0.0.1\n  Port {self.port}\n  User {os.environ.get('USER', 'root')}\n"
                    f"  IdentityFile {key}\n  IdentitiesOnly yes\n  UserKnownHostsFile {self.dir}/known_hosts\n"
                    "  StrictHostKeyChecking accept-new\n  SendEnv ZELLIJ_PANE_ID ZELLIJ_SESSION_NAME\n"
                    "  LogLevel ERROR\n" + master)
        os.makedirs("/run/sshd", exist_ok=True)
        self.start()

    def start(self):
        self.log = open(os.path.join(self.dir, "sshd.log"), "a")
        self.listener = subprocess.Popen([SSHD, "-D", "-e", "-f", os.path.join(self.dir, "sshd_config")],
                                         stdout=self.log, stderr=self.log, stdin=subprocess.DEVNULL)
        wait_for("sshd listening", self.listening, timeout=15)

    def listening(self):
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
            return True
        except OSError:
            return False

    def ssh(self, *args):
        """argv of an ssh to the server (a pane's command)."""
        return ["ssh", "-F", self.config, *args]

    def stop_listening(self):
        self.listener.terminate()
        self.listener.wait(timeout=10)
        self.log.close()

    def cut_relay_links(self):
        """Kills the server side of every relay link (the sshd processes
        above each `turnstile relay`): the link's ssh sees its connection
        end; the panes' own connections stay."""
        relays = subprocess.run(["pgrep", "-f", "turnstile relay --session"], capture_output=True,
                                text=True).stdout.split()
        for pid in relays:
            for ancestor in ancestors(int(pid)):
                if comm(ancestor) == "sshd" and ancestor != self.listener.pid:
                    try:
                        os.kill(ancestor, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
        return relays

    def relays(self):
        return subprocess.run(["pgrep", "-f", "turnstile relay --session"], capture_output=True,
                              text=True).stdout.split()

    def close(self):
        subprocess.run(["ssh", "-F", self.config, "-O", "exit", self.host], capture_output=True, timeout=10)
        if self.listener.poll() is None:
            self.stop_listening()
        # Every process of a connection to this server (their command lines
        # name its folder, or they run under its remote HOME).
        subprocess.run(["pkill", "-f", self.dir], capture_output=True)
        for pid in self.relays():
            try:
                os.kill(int(pid), signal.SIGTERM)
            except ProcessLookupError:
                pass
        self.log.close()


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def ancestors(pid):
    out = []
    while pid > 1:
        try:
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
        out.append(pid)
    return out
