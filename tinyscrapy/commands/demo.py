"""C{demo [--port N]}: serve the embedded demo site alone (L{tinyscrapy.demo})."""

from tinyscrapy.commands import port_number

HELP = "serve the embedded demo site"
DESCRIPTION = """\
Serve the embedded demo site (a book catalogue and a quotes section, a few hundred pages)
on 127.0.0.1, to write and try spiders against, until Ctrl-C. A port that is taken or out
of range is a usage error (exit 2)."""


def add_arguments(parser):
    parser.add_argument("--port", type=port_number, default=8800,
                        help="the TCP port on 127.0.0.1 (default 8800; 0: any free port)")


def run(command):
    from twisted.internet import reactor
    from twisted.internet.error import CannotListenError

    from tinyscrapy.demo import listen
    from tinyscrapy.exceptions import UsageError
    try:
        port = listen(command.args.port, reactor=reactor)
    except CannotListenError as e:
        reason = getattr(e.socketError, "strerror", None) or e.socketError
        raise UsageError(f"demo: cannot listen on 127.0.0.1:{command.args.port}: {reason} "
                         f"(another demo running? try --port 0 for any free port)") from None
    address = port.getHost()
    print(f"demo site on http://{address.host}:{address.port}/ (Ctrl-C stops)", flush=True)
    reactor.run()
    return 0
