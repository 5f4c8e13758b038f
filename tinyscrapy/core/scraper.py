"""
L{Scraper}: what happens to a page after it is downloaded.

It applies the HTTP-error rule, calls the spider's callback (or errback), runs the output
through the spider middlewares, sends new requests to L{ExecutionEngine.crawl} and items to
the item pipelines. Its L{Scraper.scrape} Deferred fires only once every item of the page
has left the pipelines, and the engine keeps the request "in flight" until then: a slow
pipeline slows the crawl down instead of piling items up in memory.

When does a callback's generator run? Not when the callback is called: calling a generator
function only makes the generator. Its body runs here, in L{Scraper._drain}, one C{yield}
at a time, and pauses whenever an item waits for a pipeline's Deferred. It also pauses
after C{SLICE} seconds of routing (a callback yielding a million requests): the rest is
routed in later reactor turns (C{callLater(0)}), so downloads, timers and the other
callbacks go on meanwhile, as in Scrapy's cooperative scraper.
"""

import inspect
import logging
import re
import time
from types import GeneratorType
from urllib.parse import urlsplit

from twisted.internet.defer import CancelledError, Deferred, succeed
from twisted.python.failure import Failure

from tinyscrapy import signals
from tinyscrapy.core.spidermw import SpiderMiddlewareManager
from tinyscrapy.exceptions import (
    CloseSpider,
    DuplicateRequest,
    HttpError,
    IgnoreRequest,
    InvalidUrl,
    OffsiteRequest,
    describe_failure,
)
from tinyscrapy.http.request import Request
from tinyscrapy.logformatter import LogFormatter, log_line
from tinyscrapy.middleware import MiddlewareError
from tinyscrapy.utils.defer import deferred_from_coro, ignore_result
from tinyscrapy.utils.misc import build_from_crawler, load_object

logger = logging.getLogger(__name__)

SLICE = 0.05  # seconds of routing one callback's output before giving the reactor a turn
_CHECK_EVERY = 256  # outputs between two looks at the clock


class Scraper:
    """
    Calls callbacks and routes their output.

    @ivar engine: set by the crawler; new requests go to C{engine.crawl}.
    """

    def __init__(self, crawler):
        self.crawler = crawler
        self.stats = crawler.stats
        self.signals = crawler.signals
        self.ledger = crawler.ledger
        self.unwaited = getattr(crawler, "unwaited", None)  # what nobody waits for
        self.engine = None
        self._seen_urls = None  # follow_all's early duplicate check, made on first use
        self.spidermw = SpiderMiddlewareManager.from_crawler(crawler)
        downloader = getattr(crawler, "downloader", None)
        downloadermw = downloader.middleware.components if downloader is not None else ()
        from tinyscrapy.core.downloader.handlers import handler_paths
        self.scope = Scope(crawler.stats, [*downloadermw, *self.spidermw.components],
                           schemes=handler_paths(crawler.settings))
        self._input_hooks = self.spidermw.has_input_hooks
        self.itemproc = build_from_crawler(
            load_object(crawler.settings["ITEM_PROCESSOR"]), crawler)
        self.logformatter = crawler.logformatter
        # asked once: a crawl at INFO pays nothing for the DEBUG line of each page (unless
        # a LOG_FORMATTER of the project's own may log it at another level)
        self._log_pages = logger.isEnabledFor(logging.DEBUG) \
            or type(self.logformatter) is not LogFormatter

    def open_spider(self, spider):
        """@return: a Deferred fired once every pipeline's C{open_spider} finished."""
        return self.itemproc.open_spider(spider)

    def close_spider(self, spider, reason):
        """@return: a Deferred fired once every pipeline's C{close_spider} finished."""
        return self.itemproc.close_spider(spider)

    # a page arrived

    def scrape(self, response, request, spider):
        """
        Call the request's callback with C{response} and handle what it returns.

        @return: a Deferred that fires with None once the output is handled (never
            errbacks: errors are counted and logged here, once, with the URL); the ledger
            entry ends (C{handled}) then. Cancelling it stops the callback's output where
            it is (the engine does, when the close's grace period is over).
        """
        self.received(response, request, spider)
        if response.request is None:
            response.request = request
        if self._input_hooks:  # the HTTP-error rule, and any process_spider_input
            try:
                self.spidermw.process_input(response, spider)
            except Exception:
                return self._input_refused(Failure(), response, request, spider)
        response._seen = self._early_dedup()
        request.meta["depth"] = request.depth  # where Scrapy's DepthMiddleware keeps it
        callback = request.callback or spider.parse
        kwargs = request._cb_kwargs or {}
        d = self._call(callback, response, request, spider, response, **kwargs)
        d.addCallback(self._cb_ended, request, "handled")
        return d

    def received(self, response, request, spider):
        """A response arrived (a page, or a download outside the scheduler): counted,
        logged at DEBUG (the log formatter's C{crawled} line), C{response_received} sent."""
        self.stats.inc_value("response_received_count")
        if self._log_pages:
            log_line(logger, self.logformatter.crawled(request, response, spider))
        self.signals.send(signals.response_received, response=response, request=request,
                          spider=spider)

    def _early_dedup(self):
        """The scheduler's seen set for C{follow_all}, or None when it has none locally."""
        if self._seen_urls is None:
            from tinyscrapy.dupefilters import SeenUrls  # with the frontier's seen set
            self._seen_urls = SeenUrls.of(self.engine.scheduler, self.stats) or False
        return self._seen_urls or None

    def _input_refused(self, failure, response, request, spider):
        """
        A C{process_spider_input} raised: an L{HttpError} (the status rule) is a refused
        page, as L{scrape_failure} counts it; anything else goes to the request's errback,
        or, without one, to the spider middlewares' C{process_spider_exception} (Scrapy's
        order). @return: a Deferred firing with None.
        """
        if failure.check(HttpError):
            return self.scrape_failure(failure, request, spider)
        if request.errback is not None:
            failure.request = request
            d = self._call(request.errback, response, request, spider, failure)
        else:
            d = self._spider_error(failure, response, request, spider)
        d.addCallback(self._cb_ended, request, "failed", failure.type.__name__)
        return d

    def scrape_failure(self, failure, request, spider):
        """
        The download failed or the status was refused: count it, log it once with the URL,
        and call the request's errback (whose output is handled like a callback's).

        A downloader middleware's L{IgnoreRequest} (robots.txt, ...) is a drop, not a
        failure: the ledger counts it as C{dropped}, by class; the errback still gets it.

        @return: a Deferred that fires with None, once the errback's output is handled
            (the ledger entry ends then).
        """
        if failure.check(HttpError):
            state, reason = "failed", "HttpError"
            response = failure.value.response
            self.stats.inc_value("httperror/response_ignored_count")
            self.stats.inc_value(f"httperror/response_ignored_status_count/{response.status}")
            logger.info("Ignoring response %r: HTTP status code is not handled or not allowed",
                        response)
        elif failure.check(IgnoreRequest):
            state, reason = self._note_dropped(request, failure.value)
        else:
            state, reason = "failed", failure.type.__name__
            log_line(logger, self.logformatter.download_error(
                failure, request, spider, describe_failure(failure)))
            self.signals.send(signals.download_error, failure=failure, request=request,
                              spider=spider)
        failure.request = request
        if request.errback is None:
            self.ledger.close(request, state, reason)
            return succeed(None)
        d = self._call(request.errback, None, request, spider, failure)
        d.addCallback(self._cb_ended, request, state, reason)
        return d

    def _cb_ended(self, _, request, state, reason=None):
        """The callback's (or errback's) output is handled: the request's entry ends."""
        self.ledger.close(request, state, reason)

    # calling user code

    def _call(self, function, response, request, spider, *args, **kwargs):
        """Call a callback or errback; route its output (whatever its kind)."""
        try:
            result = function(*args, **kwargs)
        except Exception:
            return self._spider_error(Failure(), response, request, spider)
        return self._handle_result(result, response, request, spider)

    def _handle_result(self, result, response, request, spider):
        """What a callback returned, or its Deferred fired with: routed, or waited for.
        Anything but None, a request, an item or an iterable of them is one error
        (L{_route}'s), never iterated (a string) nor waited for."""
        if inspect.isasyncgen(result):  # an asyncio Task under the asyncio reactor
            result = deferred_from_coro(_collect_async(result))
        elif inspect.iscoroutine(result):
            result = deferred_from_coro(result)
        if isinstance(result, Deferred):
            result.addCallbacks(self._handle_result, self._spider_error,
                                callbackArgs=(response, request, spider),
                                errbackArgs=(response, request, spider))
            return result
        if result is None:
            return succeed(None)
        if isinstance(result, (Request, dict, str, bytes)) or not hasattr(result, "__iter__") \
                or (not isinstance(result, (list, tuple, GeneratorType)) and _is_item(result)):
            result = [result]
        try:
            output = self.spidermw.wrap_output(response, iter(result), spider)
        except Exception:
            return self._spider_error(Failure(), response, request, spider)
        if isinstance(output, Deferred):  # a spider middleware that answered later
            output.addCallbacks(self._cb_drain, self._spider_error,
                                callbackArgs=(response, request, spider),
                                errbackArgs=(response, request, spider))
            return output
        return self._cb_drain(output, response, request, spider)

    def _cb_drain(self, output, response, request, spider, recovered=False):
        """Route the (wrapped) output. @return: L{_Routing.done}, fired once it is all
        routed."""
        routing = _Routing(iter(output), response, request, spider, recovered)
        done = routing.done
        self._drain(routing)
        return done

    def _drain(self, routing):
        """
        Route each output of C{routing.output}; pause while a pipeline is busy, and give
        the reactor a turn after C{SLICE} seconds. Never raises: an output that breaks is
        L{_spider_error}'s, and C{routing.done} fires in every case but a cancel.
        """
        routing.waiting = None
        if routing.cancelled:
            return
        output, response, request, spider = (routing.output, routing.response,
                                              routing.request, routing.spider)
        deadline = time.monotonic() + SLICE
        count = 0
        try:
            for each in output:
                waiting = self._route(each, response, request, spider)
                if waiting is not None:
                    routing.waiting = waiting
                    waiting.addBoth(self._cb_resume, routing)
                    return
                count += 1
                if count % _CHECK_EVERY == 0 and time.monotonic() >= deadline:
                    # a long output (a million requests): the reactor turns, then on
                    routing.waiting = self.crawler.reactor.callLater(0, self._drain, routing)
                    return
        except Exception:
            routing.output = iter(())  # it broke: nothing more comes from it
            d = self._spider_error(Failure(), response, request, spider, routing.recovered)
            routing.waiting = d
            d.addBoth(self._cb_resume, routing)
            return
        routing.finished()

    def _cb_resume(self, _, routing):
        """The pipeline let the item go (or the error is handled): on with the output. What
        it waited for ends here, with None."""
        self._drain(routing)

    def _route(self, output, response, request, spider):
        """One output: a Request to the engine, an item to the pipelines, else an error.
        @return: a Deferred when an item is still in a pipeline, else None."""
        if isinstance(output, Request):
            if not output.depth:  # made by hand, not by response.follow: one link deeper
                output.depth = request.depth + 1
            self.engine.crawl(output)
            return None
        if output is None:
            return None
        if isinstance(output, dict) or _is_item(output):
            return self.itemproc.process_item(output, response, spider)
        self.stats.inc_value("spider_exceptions/BadOutput")
        logger.error("Spider must return Request, item or None, got %r in %r (from %s)",
                     type(output).__name__, request, _hook_name(request, response, spider))
        ignore_result(output, f"the {type(output).__name__} yielded for {request!r}",
                      self.unwaited)
        return None

    def _spider_error(self, failure, response, request, spider, recovered=False):
        """
        A callback raised (or its output, or its Deferred): L{CloseSpider} closes the crawl;
        a request cancelled at close unwinds quietly; anything else is offered to the spider
        middlewares' C{process_spider_exception}, as in Scrapy: one that returns an
        iterable handles it (its output replaces the callback's; nothing is logged or
        counted), and one nobody handles is counted, logged once and signalled
        (C{spider_error}). An error in what a hook gave instead (C{recovered}), in a hook
        itself, or a hook's wrong result (L{MiddlewareError}) is not offered again:
        nothing loops.

        @return: a Deferred firing with None (never errbacks).
        """
        if failure.check(CloseSpider):
            self.engine.close_spider(failure.value.reason)
            return succeed(None)
        if failure.check(CancelledError) and request not in self.engine.in_flight:
            return succeed(None)
        if recovered or failure.check(MiddlewareError):
            self._log_spider_error(failure, response, request, spider)
            return succeed(None)
        try:
            replacement = self.spidermw.handle_exception(response, failure.value, spider)
        except Exception:  # the middleware's own error: logged as well, and the end of it
            self._log_spider_error(failure, response, request, spider)
            self._log_spider_error(Failure(), response, request, spider)
            return succeed(None)
        if replacement is None:  # nobody handled it
            self._log_spider_error(failure, response, request, spider)
            return succeed(None)
        return self._cb_drain(replacement, response, request, spider, recovered=True)

    def _log_spider_error(self, failure, response, request, spider):
        if failure.check(MiddlewareError):  # a hook's wrong result: maybe a Deferred
            ignore_result(failure.value.result, f"what {failure.value.label} returned",
                          self.unwaited)
        self.stats.inc_value(f"spider_exceptions/{failure.type.__name__}")
        log_line(logger, self.logformatter.spider_error(failure, request, response, spider),
                 exc_info=(failure.type, failure.value, failure.getTracebackObject()))
        if self.signals.listened(signals.spider_error):
            self.signals.send(signals.spider_error, failure=failure, response=response,
                              spider=spider)

    # bookkeeping the engine asks for

    def count_dropped(self, request, decision):
        """A rule or the duplicate filter refused C{request}: ledger, stats, signal."""
        state, reason = self._note_dropped(request, decision)
        self.ledger.close(request, state, reason)

    def _note_dropped(self, request, decision):
        """Stats, log and signal of a drop. @return: its ledger C{(state, reason)}."""
        if isinstance(decision, DuplicateRequest):
            state, reason = "duplicate", None  # the dupefilter counted it
        else:
            state, reason = "dropped", type(decision).__name__
            self.scope.log_dropped(request, decision)
        if self.signals.listened(signals.request_dropped):
            self.signals.send(signals.request_dropped, request=request, reason=decision,
                              spider=self.engine.spider)
        return state, reason

    def log_unexpected(self, failure, request):
        """The last errback of every download chain: a bug, logged with the URL (but not
        the cancel of a request the engine gave up at close: counted there)."""
        if failure.check(CancelledError) and request not in self.engine.in_flight:
            return
        self.stats.inc_value(f"engine/unexpected_errors/{failure.type.__name__}")
        logger.error("Unexpected error while handling %r", request, exc_info=(
            failure.type, failure.value, failure.getTracebackObject()))


class _Routing:
    """
    One callback's output on its way (L{Scraper._drain}), paused while an item is in a
    pipeline or between two slices.

    @ivar done: fires with None once every output is routed. Cancelling it stops the
        routing there: the pipeline's Deferred it waits for is cancelled too (or its next
        slice), and the rest of the output is never iterated.
    @ivar recovered: the output is what a spider middleware gave in place of an error.
    """

    __slots__ = ("output", "response", "request", "spider", "recovered", "done", "waiting",
                 "cancelled")

    def __init__(self, output, response, request, spider, recovered):
        self.output = output
        self.response = response
        self.request = request
        self.spider = spider
        self.recovered = recovered
        self.waiting = None  # the pipeline's Deferred, or the next slice's DelayedCall
        self.cancelled = False
        self.done = Deferred(self._cancel)

    def finished(self):
        done, self.done = self.done, None  # no cycle left through the canceller
        done.callback(None)

    def _cancel(self, _done):
        self.cancelled = True
        waiting, self.waiting = self.waiting, None
        if waiting is not None:
            waiting.cancel()


def _hook_name(request, response, spider):
    """The name of the callback (or, without a response, the errback) of C{request}."""
    hook = (request.callback or spider.parse) if response is not None else request.errback
    return getattr(hook, "__qualname__", None) or repr(hook)


def _is_item(value):
    """Dataclass and attrs items, through itemadapter (imported on first need: it imports
    every item library it can find, which costs a fifth of a second at start-up)."""
    from itemadapter import is_item
    return is_item(value)


async def _collect_async(agen):
    """Gather an async generator callback's output into a list."""
    return [each async for each in agen]


class Scope:
    """
    The rules a new request must pass before it reaches the scheduler.

    L{tinyscrapy.core.engine.ExecutionEngine.crawl} calls L{admit} for every request
    offered to the crawl: start requests, callback output, and the redirects and retries
    that continue a request (so an off-site redirect is refused like an off-site link).
    Only http and https URLs with a valid host and port pass (L{InvalidUrl}: C{mailto:},
    C{javascript:}, no host, a port out of range), and the URLs of another scheme that has
    a download handler (C{data:}; C{file:} when a project enables it), as with no host;
    the rest is asked of every
    enabled downloader and spider middleware that has C{admit_request(request, spider,
    parent, host, port)} -- the built-in ones are
    L{tinyscrapy.downloadermiddlewares.offsite.OffsiteMiddleware},
    L{tinyscrapy.spidermiddlewares.urllength.UrlLengthMiddleware} and
    L{tinyscrapy.spidermiddlewares.depth.DepthMiddleware}, in that order. Each refusal is
    a named L{IgnoreRequest} kind, counted by the scraper in the ledger and the stats
    (C{ledger/dropped/OffsiteRequest}, ...).
    """

    def __init__(self, stats, middlewares=(), schemes=()):
        """
        @param middlewares: C{(path, component)} pairs, the downloader's first.
        @param schemes: the schemes that have a download handler (C{DOWNLOAD_HANDLERS}).
        """
        self.stats = stats
        self.schemes = frozenset(scheme for scheme in schemes if scheme not in ("http", "https"))
        self.rules = [component.admit_request for _, component in middlewares
                      if hasattr(component, "admit_request")]
        self._loggers = [component.log_dropped for _, component in middlewares
                         if hasattr(component, "log_dropped")]
        self._hosts = {}  # authority as written -> (host, port), or an InvalidUrl message

    def admit(self, request, spider, parent=None):
        """
        @param parent: the request that C{request} continues (a redirect, a retry).
        @raise IgnoreRequest: a subclass naming the rule that refused C{request}.
        """
        url = request.url
        if not url[:8].lower().startswith(("http://", "https://")):
            self._admit_other_scheme(request, spider, parent)
            return
        authority = _authority(url)
        parsed = self._hosts.get(authority)
        if parsed is None:
            parsed = self._hosts[authority] = _split_authority(authority)
        if isinstance(parsed, str):
            raise InvalidUrl(parsed)
        host, port = parsed
        for rule in self.rules:
            rule(request, spider, parent, host, port)

    def _admit_other_scheme(self, request, spider, parent):
        """A URL that is not http(s): admitted (hostless) when its scheme has a handler.
        @raise InvalidUrl: it has none."""
        url = request.url
        scheme = url.partition(":")[0].lower()
        if scheme not in self.schemes:
            hint = (" (file: URLs are off by default: DOWNLOAD_HANDLERS enables them)"
                    if scheme == "file" else "")
            raise InvalidUrl(f"not an http(s) URL{hint}: {url[:200]}")
        for rule in self.rules:
            rule(request, spider, parent, "", None)

    def log_dropped(self, request, decision):
        """Log a drop: offsite ones once per host (by the offsite middleware), the rest at
        debug level."""
        if isinstance(decision, OffsiteRequest) and self._loggers:
            for log in self._loggers:
                log(request, decision)
        else:
            logger.debug("Dropped %r: %s", request, decision)


_AUTHORITY = re.compile(r"[A-Za-z]+://([^/?#]*)")


def _authority(url):
    """The C{user@host:port} part of an absolute URL, as written."""
    match = _AUTHORITY.match(url)
    return match.group(1) if match else ""


def _split_authority(authority):
    """
    C{(host, port)}: the host lower-cased without credentials or brackets, the port as
    C{int} or None; a message saying why when there is no host or the port is not valid.
    """
    try:
        parts = urlsplit("http://" + authority)
        host, port = parts.hostname, parts.port
    except ValueError:
        host = port = None
    if not host:
        return f"no valid host in {authority[:200]!r}"
    return host, port
