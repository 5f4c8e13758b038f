"""
L{Crawler} (one spider, one engine), L{CrawlerRunner} (crawls in a reactor the script runs
itself) and L{CrawlerProcess} (many crawlers, one reactor, which it starts and stops), with
Scrapy's coroutine runners L{AsyncCrawlerRunner} and L{AsyncCrawlerProcess}.

TinyScrapy's shape::

    Crawler.crawl():         (inlineCallbacks)
        engine, spider = ...
        yield engine.open_spider(spider, start_requests)
        yield engine.start()                    # the engine's _close Deferred

    CrawlerProcess.start():
        DeferredList(self._active).addBoth(stop the reactor)
        reactor.run()

L{CrawlerRunner} neither sets up logging nor starts or stops the reactor::

    from twisted.internet import reactor
    configure_logging({"LOG_LEVEL": "INFO"})
    runner = CrawlerRunner({"FEEDS": {"items.jsonl": {"format": "jsonlines"}}})
    d = runner.crawl(MySpider)
    d.addBoth(stop_the_reactor)
    reactor.run()

The coroutine runners (Scrapy 2.13 and later) run on the asyncio reactor, which
L{AsyncCrawlerProcess} installs; C{crawl()} returns an asyncio Future instead of a
Deferred, and C{join()} and C{stop()} are coroutines.

Ctrl-C (SIGINT), SIGTERM or SIGHUP closes every crawl gracefully, as in Scrapy: no new
downloads start, those in flight finish and are scraped, and the crawl ends with the reason
C{"shutdown"} (a C{--jobdir} frontier keeps what was waiting, for the next run). The close
is bounded (C{CLOSE_GRACE_PERIOD}): what is still in flight then is cancelled, a part still
closing is given up, and so is a step of a crawl still opening. A second signal stops the
reactor at once; it counts only once the reactor has handled the first (one kill delivered
twice, to the process and to its group, is one).
"""

import logging
import signal

from twisted.internet import defer
from twisted.internet.defer import DeferredList
from twisted.python.failure import Failure

from tinyscrapy import signals
from tinyscrapy.addons import AddonManager
from tinyscrapy.core.startrequests import start_of
from tinyscrapy.exceptions import StartError, UsageError
from tinyscrapy.extension import ExtensionManager
from tinyscrapy.ledger import RequestLedger
from tinyscrapy.settings import Settings
from tinyscrapy.signalmanager import SignalBus
from tinyscrapy.spiders import Spider
from tinyscrapy.statscollectors import call_with_spider_if_required
from tinyscrapy.utils.defer import (
    Unwaited,
    Waiting,
    deferred_to_future,
    maybe_deferred_to_future,
)
from tinyscrapy.utils.gc import tune_for_crawl
from tinyscrapy.utils.log import configure_logging, log_start, update_root_handler
from tinyscrapy.utils.misc import ReturnedNone, build, build_from_crawler, load_object
from tinyscrapy.utils.reactor import (
    ASYNCIO_REACTOR,
    apply_reactor_setting,
    install_reactor,
    is_asyncio_reactor_installed,
)
from tinyscrapy.utils.request import fingerprinter_for

logger = logging.getLogger(__name__)


def _as_settings(settings):
    """A L{Settings} from a L{Settings}, a plain dict (a script's), or None."""
    if settings is None:
        return Settings()
    if isinstance(settings, Settings):
        return settings
    return Settings(settings)


class Crawler:
    """
    Runs one spider class with its own settings, signals, stats and engine.

    @ivar settings: the frozen L{Settings} once L{crawl} has started.
    @ivar spider: the spider instance (after L{crawl} started).
    @ivar engine: the L{ExecutionEngine} (after L{crawl} started).
    @ivar downloader: the engine's L{tinyscrapy.core.downloader.Downloader} (after
        L{crawl} started), which robots.txt is fetched through.
    @ivar slots: the downloader's per-host L{tinyscrapy.core.downloader.slots.Slots} (after L{crawl}
        started), which the scheduler consults.
    """

    def __init__(self, spidercls, settings=None, init_reactor=False, *, reactor=None):
        """
        @param spidercls: the spider class (not an instance).
        @param settings: a L{Settings}, a plain dict, or None; copied.
        @param init_reactor: Scrapy's flag, accepted: the reactor C{TWISTED_REACTOR} names
            is installed here whenever none is yet, whatever it says.
        @param reactor: the reactor to run in (a test's C{Clock}); None: the installed one.
        @raise ValueError: C{spidercls} is a spider instance.
        @raise UsageError: a setting has a bad value, or asks for another reactor than the
            installed one.
        """
        if isinstance(spidercls, Spider):
            raise ValueError("The spidercls argument must be a class, not an object")
        if reactor is None and not isinstance(init_reactor, bool):
            reactor = init_reactor  # tinyscrapy's older third argument: the reactor
        self.spidercls = spidercls
        self.settings = _as_settings(settings).copy()
        update_settings = getattr(spidercls, "update_settings", None)
        if update_settings is not None:  # custom_settings, or the spider's own code
            update_settings(self.settings)
        else:
            self.settings.update(getattr(spidercls, "custom_settings", None) or {}, "spider")
        self.unwaited = Unwaited()  # the Deferreds nobody waits for: the close waits for them
        self.signals = SignalBus(self, self.unwaited)
        self.addons = AddonManager(self)
        self.addons.load_settings(self.settings)  # before anything is built from them
        self.settings.validate()  # a bad value stops the start here, with one line
        # the reactor the crawl asks for is installed here, if nothing was yet
        self.reactor = reactor or apply_reactor_setting(self.settings, spidercls)
        self.stats = _stats_collector(load_object(self.settings["STATS_CLASS"]), self)
        self.ledger = RequestLedger(self.stats)
        self.crawling = False
        self.spider = None
        self._spider_receivers = {}  # what the spider's from_crawler connected, by signal
        self.engine = None
        self.downloader = None
        self.slots = None
        self.extensions = None  # the ExtensionManager, built as the crawl starts
        self._fingerprinter = None
        self._logformatter = None
        self._started = False
        self._opened = False
        self._stop_reason = None
        self._opening_step = None  # the Waiting of the opening step under way
        self._opening_timer = None  # set by a stop while opening: CLOSE_GRACE_PERIOD
        self._opening_overdue = False

    def crawl(self, *args, **kwargs):
        """
        Make the spider and the engine, and run the crawl to its end (L{_crawl}). Called
        once; C{crawling} is True until the crawl has ended.

        @return: a Deferred that fires with the finish reason, or errbacks with what
            stopped the crawl from starting (a RuntimeError when called twice).
        """
        if self._started:
            return defer.fail(self._started_already("crawl"))
        self.crawling = self._started = True
        self._spider_args = (args, kwargs)  # what a worker of --workers makes its spider with
        d = self._crawl(*args, **kwargs)
        d.addBoth(self._cb_crawl_ended)
        return d

    @defer.inlineCallbacks
    def _crawl(self, *args, **kwargs):
        """
        The crawl, step by step: each C{yield} waits for a Deferred.

        The spider's C{from_crawler} may still change C{self.settings}; they are frozen
        right after it.

        @return: a Deferred that fires with the finish reason.
        """
        self.spider = self._create_spider(*args, **kwargs)
        self._apply_settings()
        self.engine = self._create_engine()
        self._log_start()
        self._open_stats()
        yield self._opening(self.engine.scraper.open_spider(self.spider), "the pipelines")
        yield self._opening(self.signals.send_deferred(signals.spider_opened,
                                                       spider=self.spider), "spider_opened")
        start = start_of(self.spider, self.engine.scraper.spidermw)  # start(), or start_requests()
        yield self._opening(self.engine.open_spider(self.spider, start), "the frontier")
        self._opened = True
        if self._stop_reason is not None:  # stopped (Ctrl-C) while it was opening
            self._cancel_opening_timer()
            self.engine.close_spider(self._stop_reason)
        reason = yield self.engine.start()
        return reason

    def _open_stats(self):
        """The stats collector's C{open_spider}: with the spider only when its signature
        requires one (Scrapy 2.14's contract)."""
        call_with_spider_if_required(self.stats.open_spider, self.spider)

    def _cb_crawl_ended(self, result):
        self.crawling = False
        return result

    async def crawl_async(self, *args, **kwargs):
        """
        L{crawl} as a coroutine (Scrapy 2.14): complete when the crawl has ended.

        @return: the finish reason.
        @raise RuntimeError: called twice, or while L{crawl} runs.
        """
        if self._started:
            raise self._started_already("crawl_async")
        return await maybe_deferred_to_future(self.crawl(*args, **kwargs))

    def _started_already(self, method):
        """The error of a second C{crawl()} or C{crawl_async()}, as Scrapy words it."""
        if self.crawling:
            return RuntimeError("Crawling already taking place")
        return RuntimeError(f"Cannot run Crawler.{method}() more than once on the same "
                            f"instance.")

    def _create_spider(self, *args, **kwargs):
        """The spider, from C{spidercls.from_crawler}, as L{crawl} makes it (Scrapy's name for
        that step, which a component's tests call on a
        L{tinyscrapy.utils.test.get_crawler} crawler).

        The receivers its C{from_crawler} connected are kept (C{_spider_receivers}, each
        signal to a list): with C{--workers}, the spider's receivers of a signal run in
        one process only (L{tinyscrapy.frontier.service}).

        @raise ReturnedNone: the spider's C{from_crawler} returned None (a usage error).
        """
        before = self.signals.connections()
        spider = self.spidercls.from_crawler(self, *args, **kwargs)
        self._spider_receivers = {
            signal: [receiver for receiver in receivers
                     if receiver not in before.get(signal, ())]
            for signal, receivers in self.signals.connections().items()}
        if spider is None:
            raise ReturnedNone(f"{self.spidercls.__qualname__}.from_crawler returned None: "
                               f"it must return the spider (return super().from_crawler("
                               f"crawler, *args, **kwargs))")
        return spider

    def _apply_settings(self):
        """The spider is made (its C{from_crawler} may have set settings): check them,
        build the extensions (which may still set settings, and connect their signals
        before anything sends one), freeze the settings, and let them set the log up (a
        spider's C{LOG_LEVEL}), as Scrapy's crawler does."""
        self.settings.validate()
        self.extensions = ExtensionManager.from_crawler(self)
        self.settings.freeze()
        update_root_handler(self.settings)

    def stop(self, reason="shutdown"):
        """
        Close this crawl gracefully; a crawl still opening closes as soon as it is open.

        @return: a Deferred firing when it has closed (or at once, while it opens, or when
            it is not crawling).
        """
        if not self._opened:
            if self._stop_reason is None:
                self._stop_reason = reason
                grace = self.settings.getfloat("CLOSE_GRACE_PERIOD")
                if grace > 0 and self.crawling:
                    self._opening_timer = self.reactor.callLater(grace,
                                                                 self._opening_is_overdue)
            return defer.succeed(None)
        if not self.crawling:
            return defer.succeed(None)
        return self.engine.close_spider(reason)

    def _opening(self, d, what):
        """
        Wait for one step of the opening (C{d}); once the crawl was stopped, only until
        C{CLOSE_GRACE_PERIOD} is over: then the step is given up (cancelled), and the crawl
        opens on, to close at once.

        @return: a Deferred firing as C{d} does, or with None when given up.
        """
        step = self._opening_step = Waiting(d, f"opening {self.spider.name}: {what}")
        if self._opening_overdue and not step.done.called:
            self.reactor.callLater(0, self._give_up_opening, step)
        return step.done

    def _opening_is_overdue(self):
        self._opening_overdue = True
        self._give_up_opening(self._opening_step)

    def _cancel_opening_timer(self):
        if self._opening_timer is not None and self._opening_timer.active():
            self._opening_timer.cancel()

    def _give_up_opening(self, step):
        if step is not None and not step.done.called:
            logger.warning("%s: not finished within CLOSE_GRACE_PERIOD after the stop, "
                           "cancelled", step.what)
            step.give_up()

    async def stop_async(self):
        """L{stop} as a coroutine (Scrapy 2.14): complete when the crawl has closed."""
        await maybe_deferred_to_future(self.stop())

    def _create_engine(self):
        """The engine, which builds the parts it drives from this crawler's settings (the
        downloader first: robots.txt downloads through it, and the scheduler consults its
        slots)."""
        from tinyscrapy.core.engine import ExecutionEngine
        from tinyscrapy.frontier import workers_wanted
        engine_class = ExecutionEngine
        if workers_wanted(self.settings) > 1:  # --workers N: leased to N processes
            from tinyscrapy.frontier.service import FrontierService as engine_class
        self.engine = engine_class(self)
        return self.engine

    def scheduler_class(self):
        """The frontier's class: C{SCHEDULER} when the user set it, else the one C{JOBDIR}
        (on disk) or C{SCHEDULER_URL} (shared) asks for, else C{SCHEDULER}'s default."""
        from tinyscrapy.frontier import scheduler_class
        return scheduler_class(self.settings)

    @property
    def logformatter(self):
        """The crawl's L{tinyscrapy.logformatter.LogFormatter} (C{LOG_FORMATTER}), built on
        first use."""
        if self._logformatter is None:
            self._logformatter = build_from_crawler(
                load_object(self.settings["LOG_FORMATTER"]), self)
        return self._logformatter

    @property
    def request_fingerprinter(self):
        """The crawl's fingerprinter (Scrapy's API): C{fingerprint(request)} returns
        C{bytes}; the class is C{REQUEST_FINGERPRINTER_CLASS}, built on first use."""
        if self._fingerprinter is None:
            self._fingerprinter = fingerprinter_for(self)
        return self._fingerprinter

    def get_addon(self, cls):
        """The add-on of class C{cls} (or a subclass) this crawl loaded, or None."""
        for addon in self.addons.addons:
            if isinstance(addon, cls):
                return addon
        return None

    def get_downloader_middleware(self, cls):
        """The running downloader middleware of class C{cls} (or a subclass), or None.
        @raise RuntimeError: the engine is not made yet (before C{crawl})."""
        return _running(self, "get_downloader_middleware", cls,
                       self.downloader and self.downloader.middleware.middlewares)

    def get_spider_middleware(self, cls):
        """The running spider middleware of class C{cls} (or a subclass), or None.
        @raise RuntimeError: the engine is not made yet (before C{crawl})."""
        return _running(self, "get_spider_middleware", cls,
                       self.engine and self.engine.scraper.spidermw.middlewares)

    def get_item_pipeline(self, cls):
        """The running item pipeline of class C{cls} (or a subclass), or None.
        @raise RuntimeError: the engine is not made yet (before C{crawl})."""
        return _running(self, "get_item_pipeline", cls,
                       self.engine and self.engine.scraper.itemproc.middlewares)

    def get_extension(self, cls):
        """The running extension of class C{cls} (or a subclass), or None.
        @raise RuntimeError: the extensions are not built yet (before C{crawl})."""
        if self.extensions is None:
            raise RuntimeError("Crawler.get_extension() can only be called after the "
                               "extension manager has been created.")
        return next((ext for ext in self.extensions.middlewares if isinstance(ext, cls)),
                    None)

    def _log_start(self):
        """Log what this crawl runs with (L{tinyscrapy.utils.log.log_start})."""
        log_start(self)


class CrawlerRunnerBase:
    """
    What every runner shares, as Scrapy's base of its runners: the settings its crawls
    start from, the crawls running now, and how a crawler is made for a spider.

    @ivar settings: the L{tinyscrapy.settings.Settings} every crawl starts from (the
        add-ons' C{update_pre_crawler_settings} applied).
    @ivar crawlers: the L{tinyscrapy.crawler.Crawler}s running now.
    @ivar bootstrap_failed: True once a crawl failed before its spider was made.
    """

    def __init__(self, settings=None):
        """@param settings: a L{tinyscrapy.settings.Settings}, a plain dict, or None."""
        self.settings = _as_settings(settings)
        AddonManager.load_pre_crawler_settings(self.settings)
        self.crawlers = set()
        self.bootstrap_failed = False
        self._active = set()
        self._spider_loader = None

    @property
    def spider_loader(self):
        """The project's spider loader (C{SPIDER_LOADER_CLASS} over C{SPIDER_MODULES}),
        made on first use: it finds the spider a C{crawl("name")} names."""
        if self._spider_loader is None:
            from tinyscrapy.spiderloader import get_spider_loader
            self._spider_loader = get_spider_loader(self.settings)
        return self._spider_loader

    def create_crawler(self, crawler_or_spidercls):
        """
        A L{tinyscrapy.crawler.Crawler} for a spider class, a spider's name
        (C{SPIDER_MODULES}) or a class's dotted path; a crawler is returned as it is.

        @raise ValueError: a spider instance instead of its class.
        @raise UsageError: a name that is neither a spider's nor a class's.
        """
        if isinstance(crawler_or_spidercls, Spider):
            raise ValueError("The crawler_or_spidercls argument cannot be a spider object, "
                             "it must be a spider class (or a Crawler object)")
        if isinstance(crawler_or_spidercls, Crawler):
            return crawler_or_spidercls
        return self._create_crawler(crawler_or_spidercls)

    def _create_crawler(self, spidercls):
        if isinstance(spidercls, str):
            spidercls = self._spider_class(spidercls)
        return Crawler(spidercls, self.settings)

    def _spider_class(self, name):
        """The class a string names: a spider of the project's, else a dotted path."""
        if "." not in name or name in self.spider_loader.list():
            return self.spider_loader.load(name)
        return load_object(name)


class CrawlerRunner(CrawlerRunnerBase):
    """Runs crawls in the installed reactor, each a Deferred that fires with its finish
    reason; L{join} waits for them all."""

    def crawl(self, crawler_or_spidercls, *args, **kwargs):
        """
        Start a crawl; C{args} and C{kwargs} go to the spider.

        @return: a Deferred that fires with the finish reason when the crawl has ended, or
            errbacks with what stopped it from starting (a L{tinyscrapy.exceptions.UsageError}
            for a bad setting, say).
        """
        crawler = self.create_crawler(crawler_or_spidercls)
        return self._crawl(crawler, *args, **kwargs)

    def _crawl(self, crawler, *args, **kwargs):
        self.crawlers.add(crawler)
        d = crawler.crawl(*args, **kwargs)
        self._active.add(d)
        d.addBoth(self._cb_crawl_done, crawler, d)
        for worker in getattr(crawler.engine, "workers", ()):  # --workers: each process too
            self._active.add(worker.ended)
            worker.ended.addBoth(self._cb_worker_ended, worker.ended)
        return d

    def _cb_worker_ended(self, result, d):
        self._active.discard(d)
        return result

    def _cb_crawl_done(self, result, crawler, d):
        self.crawlers.discard(crawler)
        self._active.discard(d)
        self.bootstrap_failed |= crawler.spider is None
        return result

    def join(self):
        """
        @return: a Deferred that fires with None once every crawl has ended, those started
            while waiting included (never errbacks: each crawl's own Deferred does).
        """
        d = DeferredList(list(self._active))
        d.addCallback(self._cb_joined)
        return d

    def _cb_joined(self, _):
        return self.join() if self._active else None

    def stop(self, reason="shutdown"):
        """Close every running crawl gracefully. @return: a Deferred for all of them."""
        return self._stop_all(reason)

    def _stop_all(self, reason="shutdown"):
        return DeferredList([crawler.stop(reason) for crawler in list(self.crawlers)])


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


class CrawlerProcess(CrawlerRunner):
    """
    Runs several crawlers in one reactor and stops it when all of them have finished.

    The script idiom of Scrapy::

        process = CrawlerProcess(settings={"FEEDS": {"items.json": {"format": "json"}}})
        process.crawl(MySpider, category="books")
        process.start()   # runs the reactor until every crawl has finished

    @ivar crawlers: the L{Crawler}s running now (keep the one L{create_crawler} returns to
        read its stats afterwards).
    @ivar failed: True once a crawl failed, or ended with a reason ending in C{_error}.
    @ivar forced: True when a second Ctrl-C stopped the reactor at once.
    @ivar usage_error: a L{UsageError} a crawl failed with while it opened, or None; the
        command prints it as one line and exits 2.
    """

    def __init__(self, settings=None, install_root_handler=None, *, reactor=None):
        """
        @param settings: a L{Settings} or a plain dict (the C{project} layer).
        @param install_root_handler: set up logging as Scrapy does (stderr or C{LOG_FILE},
            at C{LOG_LEVEL}); False leaves the root logger to the script; None: as
            C{LOG_INSTALL_ROOT_HANDLER} says.
        @param reactor: the reactor; None: the one C{TWISTED_REACTOR} names, installed when
            the first crawl is made (so a spider's C{custom_settings} may name it).
        """
        super().__init__(settings)
        configure_logging(self.settings, install_root_handler)
        self._reactor = reactor
        self.failed = False
        self.forced = False
        self.usage_error = None
        self._shutdown = None  # None, then "asked" (a signal came), "closing", "forced"

    @property
    def reactor(self):
        """The reactor the crawls run in (installed from C{TWISTED_REACTOR} on first use)."""
        if self._reactor is None:
            self._reactor = apply_reactor_setting(self.settings)
        return self._reactor

    def _create_crawler(self, spidercls):
        if isinstance(spidercls, str):
            spidercls = self._spider_class(spidercls)
        return Crawler(spidercls, self.settings, reactor=self._reactor)

    def crawl(self, crawler_or_spidercls, *args, **kwargs):
        """
        Start a crawl of a spider class (a name, a dotted path, or a L{Crawler}).

        @return: the crawler's Deferred, also kept in C{_active}.
        @raise UsageError: a bad setting, found while the crawl starts (synchronously).
        """
        crawler = self.create_crawler(crawler_or_spidercls)
        self._reactor = crawler.reactor
        d = self._crawl(crawler, *args, **kwargs)
        _raise_now(d)
        d.addCallbacks(self._cb_crawl_finished, self._eb_crawl_failed,
                       errbackArgs=(crawler,))
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
        name = crawler.spidercls.__name__
        if failure.check(StartError):  # a component could not start: one line
            logger.error("crawl of %s failed: %s", name, failure.value)
            cause = failure.value.__cause__ or failure.value
            logger.debug("crawl of %s failed", name, exc_info=(type(cause), cause,
                                                               cause.__traceback__))
            return failure
        logger.error("crawl of %s failed", name, exc_info=(
            failure.type, failure.value, failure.getTracebackObject()))
        return None  # logged once, here: not again as an unhandled error in the Deferred

    def start(self, stop_after_crawl=True, install_signal_handlers=True):
        """
        Run the reactor until every crawler's Deferred has fired (with
        C{stop_after_crawl=False}: until something else stops it).
        """
        if stop_after_crawl:
            d = defer.DeferredList(list(self._active), consumeErrors=True)
            if d.called:  # every crawl failed before the reactor ran: nothing would stop it
                return
            d.addBoth(self._stop_reactor)
        if install_signal_handlers:
            self._on_signals(self._signal_received)
        suggest = getattr(self.reactor, "suggestThreadPoolSize", None)
        if suggest is not None:  # DNS lookups and the file writes of a thread
            suggest(self.settings.getint("REACTOR_THREADPOOL_MAXSIZE"))
        tune_for_crawl()  # what exists now lives as long as the process
        self.reactor.run(installSignalHandlers=False)

    @staticmethod
    def _on_signals(handler):
        for name in ("SIGINT", "SIGTERM", "SIGHUP"):  # no SIGHUP on Windows
            signum = getattr(signal, name, None)
            if signum is not None:
                signal.signal(signum, handler)

    def _signal_received(self, signum, _frame):
        """
        SIGINT, SIGTERM or SIGHUP. A signal handler runs between two bytecodes of whatever
        the reactor thread was doing (logging, maybe): it logs nothing and only hands the
        work to the reactor. The first signal closes every crawl gracefully; one that
        comes before the reactor has handled it is the same one delivered twice (GNU
        C{timeout} signals the process and its group); one after it stops at once.
        """
        if self._shutdown is None:
            self._shutdown = "asked"
            self.reactor.callFromThread(self._graceful_stop, signum)
        elif self._shutdown == "closing":
            self._shutdown = "forced"
            self.reactor.callFromThread(self._forced_stop, signum)

    def _graceful_stop(self, signum):
        self._shutdown = "closing"
        logger.info("received %s: closing gracefully (send it again to stop at once)",
                    signal.Signals(signum).name)
        self._stop_all()

    def _forced_stop(self, signum):
        self.forced = True
        logger.info("received %s again: stopping at once", signal.Signals(signum).name)
        self._stop_reactor()

    def _stop_reactor(self, _=None):
        from twisted.internet.error import ReactorNotRunning
        try:
            self.reactor.stop()
        except ReactorNotRunning:
            pass


def _stats_collector(stats_class, crawler):
    """C{STATS_CLASS}'s collector: built with C{from_crawler} when it has one, else called
    with the crawler, as Scrapy does."""
    if hasattr(stats_class, "from_crawler"):
        return build(stats_class, crawler)
    return stats_class(crawler)


def _running(crawler, method, cls, components):
    """
    The first of C{components} that is a C{cls}, or None; the lookup behind
    C{Crawler.get_downloader_middleware()} and its kin.

    @param components: a manager's C{middlewares}, or a false value when the engine is not
        made yet.
    @raise RuntimeError: the engine is not made yet, as Scrapy says it.
    """
    if crawler.engine is None:
        raise RuntimeError(f"Crawler.{method}() can only be called after the crawl engine "
                           f"has been created.")
    for component in components or ():
        if isinstance(component, cls):
            return component
    return None


def _asyncio_reactor(settings):
    """Install the asyncio reactor if none is yet. @raise UsageError: another one is."""
    install_reactor(ASYNCIO_REACTOR, settings.get("ASYNCIO_EVENT_LOOP"))
    if not is_asyncio_reactor_installed():
        raise UsageError("the coroutine runners need the asyncio reactor, but another "
                         "reactor is already installed (something imported "
                         "twisted.internet.reactor first)")
    from twisted.internet import reactor
    return reactor


class AsyncCrawlerRunner(CrawlerRunner):
    """L{CrawlerRunner} with coroutine APIs, in the asyncio reactor the script runs."""

    def crawl(self, crawler_or_spidercls, *args, **kwargs):
        """
        Start a crawl.

        @return: an asyncio Future completing with the finish reason when it has ended.
        @raise UsageError: the installed reactor is not asyncio's.
        """
        if not is_asyncio_reactor_installed():
            raise UsageError(f"AsyncCrawlerRunner needs the asyncio reactor: install it "
                             f"first (tinyscrapy.utils.reactor.install_reactor"
                             f"({ASYNCIO_REACTOR!r}))")
        return deferred_to_future(super().crawl(crawler_or_spidercls, *args, **kwargs))

    async def join(self):
        """Complete once every crawl has ended."""
        await deferred_to_future(super().join())

    async def stop(self, reason="shutdown"):
        """Close every running crawl gracefully; complete once they have closed."""
        await deferred_to_future(self._stop_all(reason))


class AsyncCrawlerProcess(CrawlerProcess):
    """L{CrawlerProcess} on the asyncio reactor (installed here), with coroutine APIs."""

    def __init__(self, settings=None, install_root_handler=None):
        settings = _as_settings(settings)
        super().__init__(settings, install_root_handler, reactor=_asyncio_reactor(settings))

    def crawl(self, crawler_or_spidercls, *args, **kwargs):
        """Start a crawl. @return: an asyncio Future completing when it has ended."""
        return deferred_to_future(super().crawl(crawler_or_spidercls, *args, **kwargs))

    async def join(self):
        """Complete once every crawl has ended."""
        await deferred_to_future(CrawlerRunner.join(self))

    async def stop(self, reason="shutdown"):
        """Close every running crawl gracefully; complete once they have closed."""
        await deferred_to_future(self._stop_all(reason))


__all__ = ["AsyncCrawlerProcess", "AsyncCrawlerRunner", "Crawler", "CrawlerProcess",
"CrawlerRunner"]
