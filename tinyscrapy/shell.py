"""
L{Shell}: the interactive Python prompt of C{python -m tinyscrapy shell}, as Scrapy's
C{scrapy.shell}.

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

    def _new_item(self):
        """An empty item for the prompt (Scrapy's C{item}): of C{DEFAULT_ITEM_CLASS}."""
        from tinyscrapy.utils.misc import load_object
        return load_object(self.settings["DEFAULT_ITEM_CLASS"])()

    def _make_fetcher(self):
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
        from tinyscrapy.utils.response import open_in_browser
        return open_in_browser(response or self.namespace["response"], _openfunc=open_or_print)

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


def check_url(url):
    """@raise UsageError: C{url} is not an http(s) URL."""
    from tinyscrapy.exceptions import UsageError
    if not url.lower().startswith(("http://", "https://")):
        raise UsageError(f"not an http(s) URL: {url!r}")


class _AllBut3xx:
    """C{handle_httpstatus_list} for "every status but redirects", as C{scrapy fetch}."""

    def __contains__(self, status):
        return not 300 <= status < 400


class PageFetcher:
    """
    A crawler's downloader, middlewares included, with no engine: for C{fetch}, C{view}
    and C{shell}.

    @ivar crawler: the L{Crawler} it belongs to (its spider is a bare L{Spider}).
    """

    def __init__(self, settings, reactor, spidercls=None):
        from tinyscrapy.core.downloader import Downloader
        from tinyscrapy.crawler import Crawler
        from tinyscrapy.utils.spider import DefaultSpider
        self.reactor = reactor
        self.crawler = Crawler(spidercls or DefaultSpider, settings, reactor=reactor)
        self.crawler.settings.freeze()
        self.spider = self.crawler.spider = self.crawler.spidercls.from_crawler(self.crawler)
        self.downloader = Downloader(self.crawler, reactor)
        self.crawler.downloader = self.downloader  # robots.txt is fetched through it

    def request(self, url, no_redirect=False):
        """A Request for C{url} that gets every status back (3xx too, if C{no_redirect})."""
        from tinyscrapy.http.request import Request
        meta = {"handle_httpstatus_all": True} if no_redirect else \
            {"handle_httpstatus_list": _AllBut3xx()}
        return Request(url, dont_filter=True, meta=meta)

    def fetch(self, request):
        """
        Download C{request}, following the requests the middlewares continue it with
        (L{tinyscrapy.core.downloader.fetch_through}).

        @return: a Deferred firing with the L{HttpResponse}; it errbacks with the
            download's failure.
        """
        from tinyscrapy.core.downloader import fetch_through
        return fetch_through(self.downloader, request, self.spider, self.reactor)

    def log_failure(self, failure, url):
        import logging

        from tinyscrapy.exceptions import describe_failure
        logging.getLogger(__name__).error("Error downloading %s: %s", url,
                                          describe_failure(failure))

    def close(self):
        """@return: a Deferred fired once the pooled connections are closed."""
        return self.downloader.close()


def open_or_print(url):
    """Open C{url} (a C{file://} URL) in a web browser; with none to open, print the
    file's path. @return: True when a browser opened it."""
    import webbrowser
    opened = webbrowser.open(url)
    if not opened:
        print(url.removeprefix("file://"), flush=True)
    return opened
