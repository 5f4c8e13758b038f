"""
A redis-server of a test's own, on a free 127.0.0.1 port (started and stopped by PID), with
a tiny blocking client for checks. Tests skip when redis-server is not installed.
"""

import shutil
import signal
import socket
import subprocess
import time

REDIS_SERVER = shutil.which("redis-server")
NO_REDIS = None if REDIS_SERVER else "redis-server is not installed (apt-get install redis-server)"


class RedisServer:
    """A redis-server of its own on a free port, with a tiny blocking client for checks."""

    def __init__(self, *options, tls=None):
        """@param tls: C{(certificate path, key path)}: serve TLS only (C{rediss://}),
        with that certificate."""
        self.options = [str(option) for option in options]  # e.g. "--requirepass", "pw"
        self.tls = tls
        self.port = None

    def start(self):
        """Start on a free port (the first time) or on the same port (a restart: without
        the data, as it saves nothing). @return: self, once it answers PING."""
        from .helpers import needs_processes
        needs_processes("redis-server")
        if self.port is None:
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                self.port = probe.getsockname()[1]
        ports = ["--port", str(self.port)]
        if self.tls:
            cert, key = self.tls
            ports = ["--port", "0", "--tls-port", str(self.port), "--tls-cert-file", cert,
                     "--tls-key-file", key, "--tls-ca-cert-file", cert,
                     "--tls-auth-clients", "no"]
        self.process = subprocess.Popen(
            [REDIS_SERVER, *ports, "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", *self.options],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while True:
            try:
                if self.call("PING") == b"PONG":
                    return self
            except OSError:
                pass
            except RuntimeError as e:  # an error reply: a Redis loading its data answers
                if not str(e).startswith("LOADING"):  # "LOADING ..." until it is ready
                    raise
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.stop()
                raise RuntimeError(f"redis-server did not answer on port {self.port}")
            time.sleep(0.02)

    @property
    def url(self):
        return f"{'rediss' if self.tls else 'redis'}://127.0.0.1:{self.port}/0"

    def pause(self):
        """SIGSTOP: Redis stalls (connections stay open, nothing answers)."""
        self.process.send_signal(signal.SIGSTOP)
        self.paused = True

    def resume(self):
        """SIGCONT: Redis answers again."""
        self.process.send_signal(signal.SIGCONT)
        self.paused = False

    def stop(self):
        if getattr(self, "paused", False):
            self.resume()
        from .helpers import stop_process
        stop_process(self.process)

    def call(self, *args):
        """One command; the reply as Python values (blocking, a few ms on 127.0.0.1).
        With a password set (C{--requirepass}), it authenticates first."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as plain:
            sock = plain
            if self.tls:
                import ssl
                context = ssl.create_default_context(cafile=self.tls[0])
                sock = context.wrap_socket(plain, server_hostname="127.0.0.1")
            replies = sock.makefile("rb")
            if "--requirepass" in self.options:
                password = self.options[self.options.index("--requirepass") + 1]
                sock.sendall(_encode(("AUTH", password)))
                _read_reply(replies)
            sock.sendall(_encode(args))
            return _read_reply(replies)


def _encode(args):
    command = b"*%d\r\n" % len(args)
    for arg in args:
        arg = arg if isinstance(arg, bytes) else str(arg).encode()
        command += b"$%d\r\n%s\r\n" % (len(arg), arg)
    return command


def _read_reply(f):
    line = f.readline()[:-2]
    kind, rest = line[:1], line[1:]
    if kind == b"+":
        return rest
    if kind == b"-":
        raise RuntimeError(rest.decode())
    if kind == b":":
        return int(rest)
    if kind == b"$":
        return None if rest == b"-1" else f.read(int(rest) + 2)[:-2]
    return [_read_reply(f) for _ in range(int(rest))]


def wait_for(name, predicate, timeout=30.0, interval=0.02):
    """
    Wait for an event of the test (C{predicate()} turning true), polled on the reactor.

    @param name: what is waited for, shown when it does not come.
    @return: a Deferred firing once it came; it errbacks with an AssertionError naming
        C{name} after C{timeout} seconds (generous: a loaded machine is slow, and the
        wait ends as soon as the event comes).
    """
    from twisted.internet import reactor, task

    deadline = reactor.seconds() + timeout

    def check():
        if predicate():
            return None
        if reactor.seconds() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for: {name}")
        return task.deferLater(reactor, interval, check)
    return task.deferLater(reactor, 0, check)
