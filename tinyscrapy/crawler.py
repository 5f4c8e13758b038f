"""
L{Crawler} (one spider, one engine) and L{CrawlerProcess} (many crawlers, one reactor).

TinyScrapy's shape::

    Crawler.crawl():         (inlineCallbacks)
        engine, spider = ...
        yield engine.open_spider(spider, start_requests)
        yield engine.start()                    # the engine's _close Deferred

    CrawlerProcess.start():
        DeferredList(self._active).addBoth(stop the reactor)
        reactor.run()

Ctrl-C (SIGINT) or SIGTERM closes every crawl gracefully, as in Scrapy: no new downloads
start, those in flight finish and are scraped, and the crawl ends with the reason
C{"shutdown"} (a C{--jobdir} frontier keeps what was waiting, for the next run). A second
signal stops the reactor at once.
"""

import logging
import signal

from twisted.internet import defer
from twisted.python.failure import Failure

from tinyscrapy.components import build, build_ordered, load_object
from tinyscrapy.errors import UsageError
from tinyscrapy.observe.crawllog import apply_spider_log_level, log_start
from tinyscrapy.observe.ledger import RequestLedger
from tinyscrapy.observe.stats import StatsCollector
from tinyscrapy.settings import Settings
from tinyscrapy.signals import SignalBus

logger = logging.getLogger(__name__)


def _default_reactor():
    from twisted.internet import reactor
    return reactor


class Crawler:
    """
    Runs one spider class with its own settings, signals, stats and engine.

    @ivar settings: the frozen L{Settings} once L{crawl} has started.
    @ivar spider: the spider instance (after L{crawl} started).
    @ivar engine: the L{ExecutionEngine} (after L{crawl} started).
    @ivar slots: the downloader's per-host L{tinyscrapy.download.slots.Slots} (after L{crawl}
        started), which the scheduler consults.
    """

    def __init__(self, spidercls, settings=None, reactor=None):
        self.spidercls = spidercls
        self.settings = settings.copy() if settings is not None else Settings()
        self.settings.update(getattr(spidercls, "custom_settings", None) or {}, "spider")
        self.settings.validate()  # a bad value stops the start here, with one line
        apply_spider_log_level(self.settings)  # a LOG_LEVEL in custom_settings
        self.reactor = reactor or _default_reactor()
        self.signals = SignalBus()
        self.stats = build(load_object(self.settings.get("STATS_CLASS", StatsCollector)), self)
        self.ledger = RequestLedger(self.stats)
        self.spider = None
        self.engine = None
        self.slots = None
        self.extensions = []
        self._opened = False
        self._stop_reason = None

    @defer.inlineCallbacks
    def crawl(self, *args, **kwargs):
        """
        Make the spider and the engine, and run the crawl to its end.

        @return: a Deferred that fires with the finish reason.
        """
        self.settings.freeze()
        self.spider = self.spidercls.from_crawler(self, *args, **kwargs)
        self.engine = self._create_engine()
        self._log_start()
        self.stats.open_spider(self.spider)
        yield self.engine.scraper.open_spider(self.spider)
        start_requests = self.engine.scraper.spidermw.wrap_start_requests(
            self.spider.start_requests(), self.spider)
        yield self.engine.open_spider(self.spider, start_requests)
        self._opened = True
        if self._stop_reason is not None:  # stopped (Ctrl-C) while it was opening
            self.engine.close_spider(self._stop_reason)
        reason = yield self.engine.start()
        return reason

    def stop(self, reason="shutdown"):
        """
        Close this crawl gracefully; a crawl still opening closes as soon as it is open.

        @return: a Deferred firing when it has closed (or at once, while it opens).
        """
        if not self._opened:
            self._stop_reason = reason
            return defer.succeed(None)
        return self.engine.close_spider(reason)

    def _create_engine(self):
        """Build the parts the engine drives, each from this crawler's settings."""
        from tinyscrapy.download.downloader import Downloader
        from tinyscrapy.engine import ExecutionEngine
        from tinyscrapy.frontier import scheduler_class
        from tinyscrapy.scraper import Scraper

        downloader = Downloader(self, self.reactor)
        self.slots = downloader.slots  # made first: the scheduler consults them
        scheduler = build(scheduler_class(self.settings), self)
        scraper = Scraper(self)
        engine = ExecutionEngine(self, self.reactor, scheduler, downloader, scraper)
        scraper.engine = engine
        # extensions only listen to signals: each connects its own in from_crawler
        self.extensions = build_ordered(self, "EXTENSIONS")
        return engine

    def _log_start(self):
        """Log what this crawl runs with (L{tinyscrapy.observe.crawllog.log_start})."""
        log_start(self)


def _raise_now(d):
    """
    A bad setting is found while the crawl starts, which happens synchronously inside
    C{crawl()}: raise it to the command line (one line, exit 2) instead of logging it.
    So is a Ctrl-C there, before the reactor runs (a large C{--jobdir} loading, say): the
    command exits 130, as for a Ctrl-C at any moment before the crawl.
    """
    if d.called and isinstance(d.result, Failure) and \
            d.result.check(UsageError, KeyboardInterrupt):
        failure = d.result
        d.addErrback(_consume)
        raise failure.value


def _consume(_failure):
    return None


class CrawlerProcess:
    """
    Runs several crawlers in one reactor and stops it when all of them have finished.

    @ivar crawlers: every L{Crawler} started.
    @ivar usage_error: a L{UsageError} a crawl failed with while it opened, or None; the
        command prints it as one line and exits 2.
    """

    def __init__(self, settings=None, reactor=None):
        self.settings = settings if settings is not None else Settings()
        self.reactor = reactor or _default_reactor()
        self.crawlers = set()
        self._active = set()
        self.failed = False
        self.forced = False
        self.usage_error = None

    def crawl(self, spidercls, *args, **kwargs):
        """
        Start a crawl of C{spidercls} (a class or a dotted path).

        @return: the crawler's Deferred, also kept in C{_active}.
        """
        crawler = Crawler(load_object(spidercls), self.settings, self.reactor)
        self.crawlers.add(crawler)
        d = crawler.crawl(*args, **kwargs)
        _raise_now(d)
        d.addCallbacks(self._cb_crawl_finished, self._eb_crawl_failed,
                       errbackArgs=(crawler,))
        self._active.add(d)
        return d

    def _cb_crawl_finished(self, reason):
        """A finish reason ending in C{_error} (C{jobdir_error}: the frontier could not be
        written) means the crawl could not go on: the command exits 1."""
        if isinstance(reason, str) and reason.endswith("_error"):
            self.failed = True
        return reason

    def _eb_crawl_failed(self, failure, crawler):
        if failure.check(UsageError):  # found while opening (a frontier that cannot connect)
            self.usage_error = failure.value
            return failure
        self.failed = True
        logger.error("crawl of %s failed", crawler.spidercls.__name__, exc_info=(
            failure.type, failure.value, failure.getTracebackObject()))
        return failure

    def start(self, install_signal_handlers=True):
        """Run the reactor until every crawler's Deferred has fired."""
        d = defer.DeferredList(list(self._active), consumeErrors=True)
        if d.called:  # every crawl failed before the reactor ran: nothing would stop it
            return
        d.addBoth(self._stop_reactor)
        if install_signal_handlers:
            self._on_signals(self._signal_shutdown)
        self.reactor.run(installSignalHandlers=False)

    @staticmethod
    def _on_signals(handler):
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, handler)

    def _signal_shutdown(self, signum, _frame):
        """First Ctrl-C: close every crawl gracefully (runs between two reactor steps, so
        it only hands the work to the reactor)."""
        self._on_signals(self._signal_force)
        logger.info("received %s: closing gracefully (send it again to stop at once)",
                    signal.Signals(signum).name)
        self.reactor.callFromThread(self.stop)

    def _signal_force(self, signum, _frame):
        self.forced = True
        logger.info("received %s again: stopping at once", signal.Signals(signum).name)
        self.reactor.callFromThread(self._stop_reactor)

    def stop(self, reason="shutdown"):
        """Close every running crawl gracefully. @return: a Deferred for all of them."""
        return defer.DeferredList([crawler.stop(reason) for crawler in self.crawlers])

    def _stop_reactor(self, _=None):
        from twisted.internet.error import ReactorNotRunning
        try:
            self.reactor.stop()
        except ReactorNotRunning:
            pass
