"""
L{Shell}: the interactive Python prompt of C{python -m tinyscrapy shell} and of
L{inspect_response}, as Scrapy's C{scrapy.shell}.

Two ways in, as in Scrapy:

 1. The C{shell} command. The prompt (C{code.interact}, or IPython's) blocks its thread
    while it waits for a line, and the reactor must not be blocked, so the two run in
    different threads: the reactor in a thread of its own (L{ReactorThread};
    C{installSignalHandlers=False}: only the main thread may install signal handlers),
    the prompt in the main thread. C{fetch()} goes through C{blockingCallFromThread},
    which runs a function in the reactor thread and blocks the prompt until the
    Deferred it returns has fired (docs/twisted/threads.md); the download itself is a
    L{PageFetcher}'s.
 2. L{inspect_response}, called from a spider's callback. The prompt opens in the
    reactor's own thread, inside the callback: the reactor waits until the prompt is
    left (Ctrl-D, C{exit()}). Nothing moves meanwhile: the downloads in flight are
    neither read nor timed out (their bytes wait in the sockets; a server may give up on
    them), no new request starts, and the crawl's timers (C{CLOSESPIDER_TIMEOUT}, the
    download timeouts) count the time spent in the prompt when it ends. C{fetch()} is
    not offered there (it would wait for the reactor that waits for it); Ctrl-C is
    ignored while the prompt is open, so that it cannot start the crawl's shutdown.

In the prompt, as in Scrapy's: C{scrapy} (the tinyscrapy package), C{response},
C{request}, C{item} (an empty item of C{DEFAULT_ITEM_CLASS}), C{spider}, C{crawler},
C{settings}; C{fetch(url_or_request)} downloads and replaces C{response}, C{request} and
C{item} (a failed download leaves C{response} None and C{request} the one that failed);
C{view(response)} opens a response in a browser; C{shelp()} lists all that.
"""

import logging
import os
import signal

import tinyscrapy
from tinyscrapy.utils.console import DEFAULT_PYTHON_SHELLS, start_python_console

logger = logging.getLogger(__name__)

MAX_LOCAL_FILE = 64 * 1024 * 1024  # a local file the shell reads (DOWNLOAD_MAXSIZE is lower)


class Shell:
    """
    The prompt's namespace (L{vars}), and what fills it.

    @ivar crawler: the L{tinyscrapy.crawler.Crawler} whose settings and spider the
        prompt shows (and whose downloader a fetch goes through).
    @ivar vars: what the prompt sees (C{response}, C{request}, C{fetch}, ...).
    @ivar spider: the spider the prompt shows, once there is one.
    @ivar code: C{-c}'s code: evaluated and printed instead of the prompt.
    @ivar failed: the exception of the first download (L{start}'s C{url} or
        C{request}) when it failed, else None.
    """

    def __init__(self, crawler, update_vars=None, code=None):
        """
        @param crawler: the crawler; in a callback (L{inspect_response}), the running
            one, and then C{fetch} is not offered (C{fetch_available} is False).
        @param update_vars: called with L{vars} whenever they are filled (the C{shell}
            command's own C{update_vars}, for a subclass to add names).
        @param code: code to evaluate and print instead of opening the prompt.
        """
        from twisted.python import threadable

        from tinyscrapy.utils.misc import load_object
        self.crawler = crawler
        self.update_vars = update_vars or _no_vars
        self.item_class = load_object(crawler.settings["DEFAULT_ITEM_CLASS"])
        self.spider = None
        self.code = code
        self.vars = {}
        self.failed = None
        self._last_error = None
        self._inthread = not threadable.isInIOThread()
        self._fetcher = None

    @property
    def fetch_available(self):
        """Whether C{fetch()} can be used: the reactor runs in another thread."""
        return self._inthread

    def start(self, url=None, request=None, response=None, spider=None, redirect=True):
        """
        Fill the namespace (downloading C{url} or C{request} first, or showing
        C{response}), then evaluate L{code} and print its value, or open the prompt until
        it is left. When the first download fails (logged), neither runs: see L{failed}.
        """
        if url or request:
            fetched = self.fetch(url, spider, redirect=redirect) if url else \
                self.fetch(request, spider)
            if fetched is None:
                self.failed = self._last_error
                return
        elif response:
            self.populate_vars(response, response.request, spider)
        else:
            self.populate_vars(spider=spider)
        if self.code:
            print(eval(self.code, dict(self.vars)))  # noqa: S307 (the user's own code)
            return
        start_python_console(self.vars, shells=[*self._shells(DEFAULT_PYTHON_SHELLS), "python"],
                             banner=self.vars.pop("banner", ""))

    @staticmethod
    def _shells(known):
        """The prompts to try, as Scrapy chooses: C{SCRAPY_PYTHON_SHELL} (a comma-separated
        list), else the C{shell} option of a C{scrapy.cfg} (C{[settings]}), else all."""
        names = os.environ.get("SCRAPY_PYTHON_SHELL")
        if names:
            return names.strip().lower().split(",")
        from tinyscrapy.utils.conf import get_config
        config = get_config()
        if config.has_option("settings", "shell"):
            return [config.get("settings", "shell").strip().lower()]
        return list(known)

    def fetch(self, request_or_url, spider=None, redirect=True, **kwargs):
        """
        Download a URL or a L{Request} (through the crawler's downloader, in the reactor
        thread, waiting for it here), and make it the prompt's C{response} and
        C{request} (and a fresh C{item}), as Scrapy does. A C{file://} URL (or a path)
        is read from the disk. When the download fails (one line logged, with the URL),
        C{response} becomes None and C{request} the request that failed: no stale page
        is left behind.

        @param kwargs: more arguments for the L{Request} a URL becomes.
        @return: the response, or None when the download failed.
        @raise RuntimeError: the reactor runs in this thread (L{inspect_response}).
        """
        from tinyscrapy.http.request import Request
        if not self.fetch_available:
            raise RuntimeError("fetch() is not available here: the reactor is waiting for "
                               "this prompt to end (inspect_response)")
        if isinstance(request_or_url, Request):
            request = request_or_url
        else:
            from w3lib.url import any_to_uri
            request = Request(any_to_uri(request_or_url), dont_filter=True, **kwargs)
            request.meta.update(_status_meta(redirect))
        try:
            response = self._download(request, spider)
        except Exception as e:
            self._last_error = e
            logger.error("Error downloading %s: %s: %s", request.url, type(e).__name__, e)
            self.populate_vars(None, request, self.spider)
            return None
        self.populate_vars(response, response.request or request, self.spider)
        return response

    def _download(self, request, spider):
        """The response to C{request}. @raise Exception: the download's failure."""
        if request.url.startswith("file://"):
            return local_response(request)
        from twisted.internet import reactor
        from twisted.internet.threads import blockingCallFromThread
        if self._fetcher is None:
            self._fetcher = blockingCallFromThread(reactor, self._make_fetcher, spider)
        return blockingCallFromThread(reactor, self._fetcher.fetch, request)

    def _make_fetcher(self, spider):
        """The L{PageFetcher} (made in the reactor thread, where its downloader runs)."""
        if spider is not None and self.crawler.spider is None:
            self.crawler.spider = spider
        fetcher = PageFetcher(self.crawler)
        self.spider = fetcher.spider
        return fetcher

    def populate_vars(self, response=None, request=None, spider=None):
        """Fill L{vars}: C{scrapy}, C{crawler}, C{item}, C{settings}, C{spider},
        C{request}, C{response}, C{fetch} (when available), C{view}, C{shelp}; then
        C{update_vars}; and the banner, unless there is C{code}."""
        self.vars["scrapy"] = tinyscrapy
        self.vars["crawler"] = self.crawler
        self.vars["item"] = self.item_class()
        self.vars["settings"] = self.crawler.settings
        self.vars["spider"] = spider if spider is not None else self.spider
        self.vars["request"] = request
        self.vars["response"] = response
        if self.fetch_available:
            self.vars["fetch"] = self.fetch
        else:
            self.vars.pop("fetch", None)
        self.vars["view"] = self.view
        self.vars["shelp"] = self.print_help
        self.update_vars(self.vars)
        if not self.code:
            self.vars["banner"] = self.get_help()

    def view(self, response=None):
        """Open C{response} (the prompt's own by default) in a web browser (or print the
        file's path when there is none)."""
        from tinyscrapy.utils.response import open_in_browser
        return open_in_browser(response or self.vars["response"], _openfunc=open_or_print)

    def print_help(self):
        """C{shelp()}: print what the prompt offers."""
        print(self.get_help())

    def get_help(self):
        """What the prompt offers, one C{[s]} line each, as Scrapy's banner."""
        lines = ["Available Scrapy objects (tinyscrapy's):",
                 "  scrapy     the tinyscrapy package (scrapy.Request, scrapy.Selector, ...)"]
        lines += [f"  {name:<10} {_short(value)}" for name, value in sorted(self.vars.items())
                  if self._is_relevant(value)]
        lines.append("Useful shortcuts:")
        if self.fetch_available:
            lines += ["  fetch(url[, redirect=True]) Fetch URL and update local objects (by "
                      "default, redirects are followed)",
                      "  fetch(req)                  Fetch a scrapy.Request and update local "
                      "objects"]
        else:
            lines.append("  (no fetch(): the crawl's reactor waits for this prompt; Ctrl-D "
                         "lets the crawl go on)")
        lines += ["  shelp()           Shell help (print this help)",
                  "  view(response)    View response in a browser"]
        return "\n".join(f"[s] {line}" for line in lines) + "\n"

    @staticmethod
    def _is_relevant(value):
        from itemadapter import is_item

        from tinyscrapy.crawler import Crawler
        from tinyscrapy.http.request import Request
        from tinyscrapy.http.response import Response
        from tinyscrapy.settings import BaseSettings
        from tinyscrapy.spiders import Spider
        return isinstance(value, (Crawler, Spider, Request, Response, BaseSettings)) \
            or is_item(value)

    def close(self):
        """Close the fetcher's pooled connections (in the reactor thread), if it made
        any."""
        if self._fetcher is None:
            return
        from twisted.internet import reactor
        from twisted.internet.threads import blockingCallFromThread
        blockingCallFromThread(reactor, self._fetcher.close)
        self._fetcher = None


def _no_vars(namespace):
    return None


def _short(value):
    """A value as the banner shows it: settings by their count, not every value."""
    from tinyscrapy.settings import BaseSettings
    if isinstance(value, BaseSettings):
        return f"<{type(value).__name__}: {len(value)} settings>"
    return value


def inspect_response(response, spider):
    """
    Open a prompt on C{response} inside a spider's callback, as Scrapy's: the crawl (its
    reactor) waits until the prompt is left (module docstring). Ctrl-C is ignored
    meanwhile and its handler put back afterwards.
    """
    handler = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        Shell(spider.crawler).start(response=response, spider=spider)
    finally:
        signal.signal(signal.SIGINT, handler)


class ReactorThread:
    """The reactor, run in a thread of its own while a prompt has the main thread."""

    def __init__(self, reactor):
        self.reactor = reactor
        self._thread = None

    def start(self):
        """Run the reactor in a daemon thread (without signal handlers)."""
        import threading
        self._thread = threading.Thread(target=self.reactor.run, name="reactor", daemon=True,
                                        kwargs={"installSignalHandlers": False})
        self._thread.start()

    def stop(self, timeout=10):
        """Stop the reactor and wait for its thread, at most C{timeout} seconds."""
        if self._thread is None:
            return
        self.reactor.callFromThread(self.reactor.stop)
        self._thread.join(timeout)
        self._thread = None


def _status_meta(redirect):
    """The meta of a shell's (or C{fetch}'s) request: every status back, the redirects
    followed unless C{redirect} is False (then 3xx too)."""
    return {"handle_httpstatus_list": _AllBut3xx()} if redirect else \
        {"handle_httpstatus_all": True}


def local_response(request):
    """
    The response for a C{file://} request, read from the disk (as Scrapy's file handler
    reads it; the shell's C{shell ./page.html}).

    @raise OSError: the file cannot be read (C{No such file or directory}).
    @raise ValueError: it is larger than L{MAX_LOCAL_FILE}.
    """
    from w3lib.url import file_uri_to_path

    from tinyscrapy.responsetypes import response_class
    path = file_uri_to_path(request.url)
    size = os.path.getsize(path)
    if size > MAX_LOCAL_FILE:
        raise ValueError(f"{path} is larger than {MAX_LOCAL_FILE} bytes")
    with open(path, "rb") as f:
        body = f.read()
    cls = response_class(url=request.url, body=body)
    return cls(url=request.url, body=body, request=request)


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

    @ivar crawler: the L{Crawler} it belongs to; its spider is made here when it has
        none.
    """

    def __init__(self, crawler):
        """@param crawler: the crawler (not crawling); its settings are frozen here."""
        from tinyscrapy.core.downloader import Downloader
        self.crawler = crawler
        self.reactor = crawler.reactor
        if not crawler.settings.frozen:
            crawler.settings.freeze()
        if crawler.spider is None:
            crawler.spider = crawler.spidercls.from_crawler(crawler)
        self.spider = crawler.spider
        self.downloader = Downloader(crawler, self.reactor)
        crawler.downloader = self.downloader  # robots.txt is fetched through it

    @classmethod
    def for_settings(cls, settings, reactor, spidercls=None):
        """A fetcher with a crawler of its own, of C{spidercls} (a bare spider by
        default)."""
        from tinyscrapy.crawler import Crawler
        from tinyscrapy.utils.spider import DefaultSpider
        return cls(Crawler(spidercls or DefaultSpider, settings, reactor=reactor))

    def request(self, url, no_redirect=False):
        """A Request for C{url} that gets every status back (3xx too, if C{no_redirect})."""
        from tinyscrapy.http.request import Request
        return Request(url, dont_filter=True, meta=_status_meta(not no_redirect))

    def fetch(self, request):
        """
        Download C{request}, following the requests the middlewares continue it with
        (L{tinyscrapy.core.downloader.fetch_through}).

        @return: a Deferred firing with the L{HttpResponse}; it errbacks with the
            download's failure.
        """
        from tinyscrapy.core.downloader import fetch_through
        d = fetch_through(self.downloader, request, self.spider, self.reactor)
        d.addCallback(self._cb_fetched)
        return d

    def _cb_fetched(self, response):
        """Scrapy's C{Crawled (200)} line for the response, at DEBUG."""
        if logger.isEnabledFor(logging.DEBUG):
            from tinyscrapy.logformatter import log_line
            log_line(logger, self.crawler.logformatter.crawled(
                response.request, response, self.spider))
        return response

    def log_failure(self, failure, url):
        from tinyscrapy.exceptions import describe_failure
        logger.error("Error downloading %s: %s", url, describe_failure(failure))

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
