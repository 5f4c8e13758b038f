"""C{demo [--port N]}: serve the embedded demo site alone (L{tinyscrapy.demo})."""

from tinyscrapy.commands import ScrapyCommand, port_number


class Command(ScrapyCommand):
    """tinyscrapy's own: the demo site, to write spiders against."""

    requires_crawler_process = False

    def syntax(self):
        return "[--port N]"

    def short_desc(self):
        return "Serve the embedded demo site"

    def long_desc(self):
        return ("Serve the embedded demo site (a book catalogue and a quotes section, a few "
                "hundred pages) on 127.0.0.1, to write and try spiders against, until "
                "Ctrl-C. A port that is taken or out of range is a usage error (exit 2).")

    def add_options(self, parser):
        super().add_options(parser)
        parser.add_argument("--port", type=port_number, default=8800,
                            help="the TCP port on 127.0.0.1 (default 8800; 0: any free port)")

    def run(self, args, opts):
        from twisted.internet import reactor
        from twisted.internet.error import CannotListenError

        from tinyscrapy.demo import listen
        from tinyscrapy.exceptions import UsageError
        try:
            port = listen(opts.port, reactor=reactor)
        except CannotListenError as e:
            reason = getattr(e.socketError, "strerror", None) or e.socketError
            raise UsageError(f"demo: cannot listen on 127.0.0.1:{opts.port}: {reason} "
                             f"(another demo running? try --port 0 for any free "
                             f"port)") from None
        address = port.getHost()
        print(f"demo site on http://{address.host}:{address.port}/ (Ctrl-C stops)", flush=True)
        reactor.run()
