"""
L{RobotsTxtMiddleware}: obey robots.txt (C{ROBOTSTXT_OBEY}), parsed by C{ROBOTSTXT_PARSER}
(L{tinyscrapy.robotstxt.ProtegoRobotParser}, on protego).

A downloader middleware. Before the first request to an origin (scheme, host and port)
goes out, the origin's C{/robots.txt} is fetched once, through the same downloader, and
every request to that origin waits for it; requests to other origins go on meanwhile.
Then each request is checked against the rules for C{ROBOTSTXT_USER_AGENT} (default: the
C{User-Agent} the crawl sends):

    - allowed: C{process_request} returns None and the download goes on;
    - disallowed: it raises L{RobotsDisallowed}, an L{IgnoreRequest}: the ledger counts the
      request as C{dropped/RobotsDisallowed}, the stats as C{robotstxt/forbidden}. A
      redirect target is a new download, so it is checked too.

A robots.txt that is missing, answers with an error status, times out or does not parse
allows everything (as Scrapy does). One larger than 500 KiB is read as Google reads it: the
rules in its first 500 KiB apply (up to the last whole line), the rest is never downloaded,
and the cut is counted (C{robotstxt/truncated}) and logged once for the origin. Its fetch
follows redirects (up to five); it is counted under C{robotstxt/...} in the stats, never as
a page, an item or a ledger entry. C{meta["dont_obey_robotstxt"]} exempts one request.

C{Crawl-delay}: the delay of each host is kept in L{RobotsTxtMiddleware.crawl_delays}
(also C{crawler.robots_delays}; read it with L{RobotsTxtMiddleware.crawl_delay}) for the
per-domain slots, and recorded in the stats as C{robotstxt/crawl_delay/<host>}. Until the
slots apply it, this middleware spaces the requests it lets through to that origin by the
delay itself (capped at C{ROBOTSTXT_MAX_CRAWL_DELAY}). The spacing counts from the moment a
request leaves here, so a slot delay that is longer already satisfies it: the longer of the
two applies. Scrapy ignores C{Crawl-delay}; a polite crawler should not.

The Deferred of C{process_request} fires with None (or errbacks with L{RobotsDisallowed})
once the rules are known and the crawl delay has passed; cancelling it cancels the wait for
that request only (the shared robots.txt fetch goes on).
"""

import logging

from twisted.internet.defer import Deferred, maybeDeferred
from twisted.internet.task import deferLater

import tinyscrapy
from tinyscrapy.exceptions import NotConfigured, RobotsDisallowed
from tinyscrapy.http.request import Request
from tinyscrapy.responsetypes import HttpResponse
from tinyscrapy.utils.misc import load_object
from tinyscrapy.utils.url import url_origin

logger = logging.getLogger(__name__)

MAX_HOPS = 5  # redirects (and retries) followed for one robots.txt
PARSE_LIMIT = 500 * 1024  # bytes of robots.txt parsed, as Google does


class _Fetching:
    """The state of an origin whose robots.txt is on its way: the requests waiting."""

    __slots__ = ("waiters",)

    def __init__(self):
        self.waiters = []


class RobotsTxtMiddleware:
    """
    Fetch, cache and apply each origin's robots.txt.

    @ivar parser: the L{tinyscrapy.robotstxt.RobotParser} class (C{ROBOTSTXT_PARSER}).
    @ivar rules: origin (C{"http://host:port"}) to its parser, None (allow all)
        or a L{_Fetching} while the robots.txt is on its way.
    @ivar crawl_delays: host (and C{host:port}) to its C{Crawl-delay} in seconds, capped.
    """

    def __init__(self, crawler):
        settings = crawler.settings
        if not settings.getbool("ROBOTSTXT_OBEY"):
            raise NotConfigured("ROBOTSTXT_OBEY is off")
        self.crawler = crawler
        self.stats = crawler.stats
        self.reactor = crawler.reactor
        self.user_agent = (settings.get("ROBOTSTXT_USER_AGENT") or settings.get("USER_AGENT")
                           or f"tinyscrapy/{tinyscrapy.__version__}")
        self.max_delay = settings.getfloat("ROBOTSTXT_MAX_CRAWL_DELAY", 10.0)
        timeouts = [t for t in (settings.getfloat("ROBOTSTXT_TIMEOUT"),
                                settings.getfloat("DOWNLOAD_TIMEOUT")) if t > 0]
        self.timeout = min(timeouts) if timeouts else 0
        self.parser = load_object(settings["ROBOTSTXT_PARSER"])
        self.rules = {}
        self.crawl_delays = {}
        crawler.robots_delays = self.crawl_delays
        self._next_start = {}  # origin -> reactor time the next request may leave

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def crawl_delay(self, host):
        """
        @param host: C{"host"} or C{"host:port"} (lower case).
        @return: the robots.txt C{Crawl-delay} for C{host} in seconds (capped), or 0.
        """
        return self.crawl_delays.get(host, 0.0)

    # every request

    def process_request(self, request, spider=None):
        """
        @return: None when the rules are known and allow C{request} now, else a Deferred
            firing with None (allowed, after the crawl delay) or errbacking with
            L{RobotsDisallowed}.
        @raise RobotsDisallowed: the known rules forbid C{request}.
        """
        if request._meta and request._meta.get("dont_obey_robotstxt"):
            return None
        origin = url_origin(request.url)
        if origin is None:
            return None
        rules = self.rules.get(origin, _Fetching)
        if rules is _Fetching:  # first request to this origin
            self.rules[origin] = _Fetching()
            self._fetch_robots(origin, spider or self.crawler.spider)
            # read again: a robots.txt answered at once (by the HTTP cache) is already known
            rules = self.rules[origin]
        if isinstance(rules, _Fetching):
            waiting = Deferred()
            rules.waiters.append(waiting)
            waiting.addCallback(self._cb_rules_known, request, origin)
            return waiting
        return self._check(request, origin)

    def _cb_rules_known(self, _, request, origin):
        return self._check(request, origin)

    def _check(self, request, origin):
        """Raise L{RobotsDisallowed}, or let C{request} go (after the crawl delay)."""
        rules = self.rules[origin]
        if rules is not None and not rules.allowed(request.url, self.user_agent):
            self.stats.inc_value("robotstxt/forbidden")
            raise RobotsDisallowed(f"forbidden by robots.txt: {request.url}")
        if origin not in self._next_start:  # no Crawl-delay
            return None
        return self._space(origin)

    def _space(self, origin):
        """
        Hold a request until C{Crawl-delay} after the previous one to C{origin}. A margin
        of 5% (at most 50 ms) covers the jitter between leaving here and reaching the
        server (a new connection, a busy reactor), so the server sees the full delay.
        """
        host = origin.partition("://")[2]
        delay = self.crawl_delays.get(host, 0.0)
        now = self.reactor.seconds()
        start = max(now, self._next_start[origin])
        self._next_start[origin] = start + delay + min(0.05, delay * 0.05)
        if start <= now:
            return None
        self.stats.inc_value("robotstxt/crawl_delay_waits")
        return deferLater(self.reactor, start - now, _allow)

    # fetching robots.txt, once per origin

    def _fetch_robots(self, origin, spider):
        """
        Download C{origin}'s robots.txt; the rules are stored and the waiting requests
        released in L{_cb_robots_done}.
        """
        # one byte over the limit tells a cut robots.txt from one of exactly 500 KiB
        meta = {"dont_obey_robotstxt": True, "download_maxsize": PARSE_LIMIT + 1,
                "download_truncate": True}
        if self.timeout:
            meta["download_timeout"] = self.timeout
        request = Request(origin + "/robots.txt", meta=meta, dont_filter=True)
        d = self._download_robots(request, origin, spider, 0)
        d.addCallback(self._cb_robots_done, origin)
        d.addErrback(self._eb_unexpected, origin)

    def _download_robots(self, request, origin, spider, hops):
        """
        @return: a Deferred firing with the parsed rules, or None for "allow all"; it
            errbacks only on a bug.
        """
        self.stats.inc_value("robotstxt/request_count")
        d = maybeDeferred(self.crawler.downloader.fetch, request, spider)
        d.addCallbacks(self._cb_robots_downloaded, self._eb_robots_failed,
                       callbackArgs=(origin, spider, hops), errbackArgs=(origin,))
        return d

    def _cb_robots_downloaded(self, result, origin, spider, hops):
        """A response to parse, or a Request (a redirect, a retry) to fetch in turn."""
        if isinstance(result, Request):
            if hops >= MAX_HOPS:
                logger.info("robots.txt of %s: more than %d redirects, allowing all",
                            origin, MAX_HOPS)
                self.stats.inc_value("robotstxt/too_many_redirects")
                return None
            return self._download_robots(result, origin, spider, hops + 1)
        if not isinstance(result, HttpResponse):
            return None
        self.stats.inc_value("robotstxt/response_count")
        self.stats.inc_value(f"robotstxt/response_status_count/{result.status}")
        if not 200 <= result.status < 300:
            return None  # missing (4xx) or broken (5xx): allow all
        return self._parse(result, origin)

    def _parse(self, response, origin):
        body = response.body
        if len(body) > PARSE_LIMIT:
            # as Google: the rules in the first 500 KiB apply, and what follows is ignored;
            # a line cut in the middle is dropped (half a path would forbid too much)
            body = body[:body.rfind(b"\n", 0, PARSE_LIMIT) + 1]
            self.stats.inc_value("robotstxt/truncated")
            logger.warning("robots.txt of %s is larger than %d KiB: applying the rules in "
                           "its first %d KiB only", origin, PARSE_LIMIT // 1024,
                           PARSE_LIMIT // 1024)
        try:
            rules = self.parser.from_crawler(self.crawler, body)
            crawl_delay = getattr(rules, "crawl_delay", None)
            delay = crawl_delay(self.user_agent) if crawl_delay is not None else None
        except Exception as e:
            self.stats.inc_value(f"robotstxt/parse_error/{type(e).__name__}")
            logger.warning("robots.txt of %s does not parse (%s): allowing all", origin, e)
            return None
        if delay:
            self._set_crawl_delay(origin, float(delay))
        return rules

    def _set_crawl_delay(self, origin, delay):
        host_port = origin.partition("://")[2]
        host = _hostname(host_port)
        if delay > self.max_delay:
            logger.warning("robots.txt of %s asks for Crawl-delay %s s; using %s s "
                           "(ROBOTSTXT_MAX_CRAWL_DELAY)", origin, delay, self.max_delay)
            delay = self.max_delay
        self.crawl_delays[host] = max(delay, self.crawl_delays.get(host, 0.0))
        if host_port != host:
            self.crawl_delays[host_port] = delay
        self.stats.set_value(f"robotstxt/crawl_delay/{host_port}", delay)
        slots = getattr(self.crawler, "slots", None)
        if slots is not None:  # the host's politeness slot takes the delay from here on
            slots.raise_delay(host, delay)
        logger.info("robots.txt of %s: Crawl-delay %s s", origin, delay)

    def _eb_robots_failed(self, failure, origin):
        """No robots.txt to be had (connection refused, timeout, too large): allow all."""
        name = failure.type.__name__
        self.stats.inc_value(f"robotstxt/exception_count/{name}")
        logger.info("robots.txt of %s could not be fetched (%s: %s): allowing all",
                    origin, name, failure.getErrorMessage())
        return None

    def _cb_robots_done(self, rules, origin):
        """
        Store the rules (None: allow all) and release the requests that waited. With a
        Crawl-delay, the first page waits the delay after robots.txt arrived.
        """
        fetching = self.rules.get(origin)
        self.rules[origin] = rules
        delay = self.crawl_delays.get(origin.partition("://")[2])
        if delay:
            self._next_start[origin] = self.reactor.seconds() + delay
        for waiting in getattr(fetching, "waiters", ()):
            waiting.callback(None)

    def _eb_unexpected(self, failure, origin):
        """A bug while handling robots.txt: logged once; the origin is allowed."""
        self.stats.inc_value(f"robotstxt/unexpected_errors/{failure.type.__name__}")
        logger.error("error handling robots.txt of %s", origin, exc_info=(
            failure.type, failure.value, failure.getTracebackObject()))
        if isinstance(self.rules.get(origin), _Fetching):
            self._cb_robots_done(None, origin)


def _hostname(host_port):
    """C{host} from C{host:port} (IPv6 brackets kept)."""
    if host_port.startswith("["):
        return host_port[:host_port.find("]") + 1]
    return host_port.partition(":")[0]


def _allow(*_):
    return None
