"""
C{shell [URL]}: an interactive Python prompt to try selectors on a page, as C{scrapy shell}.

The prompt (C{code.interact}) blocks its thread while it waits for a line, and the reactor
must not be blocked, so the two run in different threads: the reactor in a thread of its
own (C{installSignalHandlers=False}: only the main thread may install signal handlers), the
prompt in the main thread. Everything the prompt asks of Twisted goes through
C{blockingCallFromThread}, which runs a function in the reactor thread and blocks the
prompt until the Deferred it returns has fired (docs/twisted/threads.md).

In the prompt, as in Scrapy's: C{scrapy} (the tinyscrapy package), C{response},
C{request}, C{item} (an empty L{Item}), C{spider}, C{crawler}, C{settings};
C{fetch(url_or_request)} downloads and replaces C{response}, C{request} and C{item} (a
failed download leaves C{response} None and C{request} the one that failed);
C{view(response)} opens a response in a browser; C{shelp()} lists all that.
"""

import sys

import tinyscrapy
from tinyscrapy.commands.fetch import add_log_options, check_url, command_settings

HELP = "an interactive prompt to try selectors on a page"
DESCRIPTION = """\
An interactive Python prompt to try selectors on a page, as Scrapy's shell: response,
request, item, scrapy, fetch(url_or_request), view(response) and shelp(). The reactor
runs in a thread of its own while the prompt waits for input (docs/twisted/threads.md)."""


def add_arguments(parser):
    parser.add_argument("url", nargs="?", metavar="URL",
                        help="a page to download first (http or https)")
    parser.add_argument("--no-redirect", action="store_true",
                        help="do not follow redirects when fetching URL")
    parser.add_argument("-s", dest="settings", action="append", default=[],
                        metavar="NAME=VALUE", help="set a setting (repeatable)")
    parser.add_argument("-L", dest="loglevel", metavar="LEVEL", help="log level")
    parser.add_argument("-c", dest="code", metavar="CODE",
                        help="evaluate CODE with the page fetched, print the result, exit")
    add_log_options(parser)


def run(command):
    if command.args.url:
        check_url(command.args.url)
    settings = command_settings(command)
    shell = Shell(settings)
    shell.start()
    try:
        if command.args.url:
            shell.fetch(command.args.url, redirect=not command.args.no_redirect)
        if command.args.code is not None:
            print(eval(command.args.code, shell.namespace))  # noqa: S307 (the user's own)
        else:
            import code  # the prompt: only when there is no -c
            code.interact(banner=shell.banner(), local=shell.namespace, exitmsg="")
    finally:
        shell.stop()
    return 0


class Shell:
    """
    The prompt's namespace, and the reactor thread it downloads through.

    @ivar namespace: what the prompt sees (C{response}, C{request}, C{fetch}, ...).
    """

    def __init__(self, settings):
        self.settings = settings
        self.namespace = {}
        self.fetcher = None
        self._thread = None
        self._reactor = None

    def start(self):
        """Run the reactor in its own thread, and make the fetcher there."""
        import threading

        from twisted.internet import reactor
        from twisted.internet.threads import blockingCallFromThread
        self._reactor = reactor
        self._thread = threading.Thread(target=reactor.run, name="reactor", daemon=True,
                                        kwargs={"installSignalHandlers": False})
        self._thread.start()
        self.fetcher = blockingCallFromThread(reactor, self._make_fetcher)
        self.namespace.update(
            scrapy=tinyscrapy, fetch=self.fetch, view=self.view, shelp=self.shelp,
            response=None, request=None, item=self._new_item(), spider=self.fetcher.spider,
            crawler=self.fetcher.crawler, settings=self.settings)

    @staticmethod
    def _new_item():
        """An empty item for the prompt (Scrapy's C{item}: its default item class)."""
        from tinyscrapy.item import Item
        return Item()

    def _make_fetcher(self):
        from tinyscrapy.commands.fetch import PageFetcher
        return PageFetcher(self.settings, self._reactor)

    def fetch(self, url_or_request, redirect=True):
        """
        Download a URL or a L{Request} in the reactor thread, wait for it here, and make
        it the prompt's C{response} and C{request} (and a fresh C{item}), as Scrapy does.
        When the download fails (one line printed), C{response} becomes None and
        C{request} the request that failed: no stale page is left behind.

        @return: the response, or None when the download failed.
        """
        from twisted.internet.threads import blockingCallFromThread

        from tinyscrapy.http.request import Request
        if isinstance(url_or_request, Request):
            request = url_or_request
        else:
            check_url(url_or_request)
            request = self.fetcher.request(url_or_request, no_redirect=not redirect)
        try:
            response = blockingCallFromThread(self._reactor, self.fetcher.fetch, request)
        except Exception as e:
            print(f"fetch failed: {request.url}: {type(e).__name__}: {e}", file=sys.stderr)
            self.namespace.update(response=None, request=request, item=self._new_item())
            return None
        self.namespace.update(response=response, request=response.request or request,
                              item=self._new_item())
        return response

    def view(self, response=None):
        """Open C{response} (the prompt's own by default) in a web browser."""
        from tinyscrapy.commands.view import open_in_browser
        return open_in_browser(response or self.namespace["response"])

    def banner(self):
        response = self.namespace.get("response")
        page = f"{response.status} {response.url}" if response is not None else "none yet"
        return (f"tinyscrapy shell (page: {page})\n"
                "  scrapy (the tinyscrapy package), response, request, item, spider,\n"
                "  crawler, settings;\n"
                "  fetch(url_or_request), view(response), shelp()\n"
                "  try: response.css('title::text').get()")

    def shelp(self):
        """Print what the prompt offers."""
        print(self.banner())

    def stop(self):
        """Close the pooled connections and stop the reactor thread."""
        from twisted.internet.threads import blockingCallFromThread
        if self._thread is None:
            return
        try:
            blockingCallFromThread(self._reactor, self.fetcher.close)
        finally:
            self._reactor.callFromThread(self._reactor.stop)
            self._thread.join(10)
