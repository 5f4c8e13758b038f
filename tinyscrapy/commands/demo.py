"""C{demo [--port N]}: serve the embedded demo site alone (L{tinyscrapy.demo})."""

HELP = "serve the embedded demo site"


def add_arguments(parser):
    parser.add_argument("--port", type=int, default=8800)


def run(command):
    from twisted.internet import reactor

    from tinyscrapy.demo import listen
    port = listen(command.args.port, reactor=reactor)
    address = port.getHost()
    print(f"demo site on http://{address.host}:{address.port}/ (Ctrl-C stops)", flush=True)
    reactor.run()
    return 0
