"""
L{Scope}: the rules a new request must pass before it reaches the scheduler.

L{ExecutionEngine.crawl} calls L{Scope.admit} for every request offered to the crawl:
start requests, callback output, and the redirects and retries that continue a request
(so an off-site redirect is refused like an off-site link). Each rule raises a named
L{IgnoreRequest} kind, counted by the scraper in the ledger and the stats
(C{ledger/dropped/OffsiteRequest}, ...):

    - L{InvalidUrl}: not http or https (C{mailto:}, C{javascript:}, C{tel:}, C{data:},
      C{file:}, ...), no host, or a port that is not a number in range. Always on: a
      spider that follows every C{href} keeps going, and nothing but http(s) is fetched.
    - L{UrlTooLong}: longer than C{URLLENGTH_LIMIT} (2083; 0 switches it off).
    - L{DepthExceeded}: deeper than C{DEPTH_LIMIT} (0: no limit).
    - L{OffsiteRequest}: the host is outside the spider's C{allowed_domains}: a domain
      admits its subdomains, an entry with a port (C{"example.com:8080"}) only that port.
      C{meta["allow_offsite"]} lets one request through. Logged once per origin
      (scheme, host and port: another port of the same host is another site), with the
      C{allowed_domains} it is not in.

Depth is the number of links from a start request: L{HttpResponse.follow} sets it, the
scraper sets it on a Request a callback made by hand, and a redirect or a retry keeps it.
C{DEPTH_PRIORITY} lowers (positive: breadth first) or raises (negative: depth first) a new
request's priority by C{depth * DEPTH_PRIORITY}, as Scrapy's depth middleware does.
"""

import logging
import re
from urllib.parse import urlsplit

from tinyscrapy import signals
from tinyscrapy.exceptions import DepthExceeded, InvalidUrl, OffsiteRequest, UrlTooLong
from tinyscrapy.utils.url import url_origin

logger = logging.getLogger(__name__)


class Scope:
    """The admission rules of one crawl."""

    def __init__(self, stats, depth_limit=0, url_length_limit=2083, depth_priority=0):
        self.stats = stats
        self.depth_limit = depth_limit
        self.url_length_limit = url_length_limit
        self.depth_priority = depth_priority
        self._allowed = None
        self._host_verdicts = {}
        self._offsite_logged = set()
        self._allowed_domains = ()

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        scope = cls(crawler.stats, settings.getint("DEPTH_LIMIT"),
                    settings.getint("URLLENGTH_LIMIT", 2083),
                    settings.getint("DEPTH_PRIORITY"))
        crawler.signals.connect(scope.count_page, signals.response_received)
        return scope

    def admit(self, request, spider, parent=None):
        """
        Check C{request} against every rule; a new request (no C{parent}) also gets its
        C{DEPTH_PRIORITY}.

        @param parent: the request that C{request} continues (a redirect, a retry).
        @raise IgnoreRequest: a subclass naming the rule that refused C{request}.
        """
        url = request.url
        if not url[:8].lower().startswith(("http://", "https://")):
            raise InvalidUrl(f"not an http(s) URL: {url[:200]}")
        if self.url_length_limit and len(url) > self.url_length_limit:
            raise UrlTooLong(f"URL is {len(url)} characters long")
        depth = request.depth
        if self.depth_limit and depth > self.depth_limit:
            raise DepthExceeded(f"depth {depth} > DEPTH_LIMIT {self.depth_limit}")
        authority = _authority(url)
        verdict = self._host_verdicts.get(authority)
        if verdict is None:
            verdict = self._host_verdicts[authority] = self._judge(authority, spider)
        if verdict is not True:
            refusal, host = verdict
            if not (refusal is OffsiteRequest and request._meta
                    and request._meta.get("allow_offsite")):
                raise refusal(host)
        if depth:
            self.stats.max_value("request_depth_max", depth)
            if self.depth_priority and parent is None:
                request.priority -= depth * self.depth_priority

    def _judge(self, authority, spider):
        """True, or C{(exception class, host)} refusing every URL with this C{authority}."""
        host, port = _split_authority(authority)
        if not host:
            return InvalidUrl, f"no valid host in {authority[:200]!r}"
        if self._allowed is None:
            self._allowed_domains = tuple(getattr(spider, "allowed_domains", None) or ())
            self._allowed = _allowed_pattern(self._allowed_domains or None)
        if self._allowed is False:
            return True
        if self._allowed.match(host) or (port and self._allowed.match(f"{host}:{port}")):
            return True
        return OffsiteRequest, host

    def count_page(self, response, request, spider):
        """A page arrived: count it by depth (C{request_depth_count/<depth>})."""
        self.stats.inc_value(f"request_depth_count/{request.depth}")

    def log_dropped(self, request, decision):
        """Log a drop: offsite ones once per host, the rest at debug level."""
        if isinstance(decision, OffsiteRequest):
            self.stats.inc_value("offsite/filtered")
            host = str(decision)
            origin = url_origin(request.url) or host
            if host not in self._offsite_logged:
                self._offsite_logged.add(host)
                self.stats.inc_value("offsite/domains")
            if origin not in self._offsite_logged:  # once per origin: a port is a site
                self._offsite_logged.add(origin)
                logger.info("Filtered offsite request to %r (allowed_domains: %s): %r",
                            origin, ", ".join(self._allowed_domains) or "none", request)
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
    C{int} or None; C{("", None)} when there is no host or the port is not valid.
    """
    try:
        parts = urlsplit("http://" + authority)
        host, port = parts.hostname, parts.port
    except ValueError:
        return "", None
    return host or "", port


def _allowed_pattern(domains):
    """A regex matching the hosts (and C{host:port}s) C{domains} admits, or False for
    "any"."""
    cleaned = [d.strip().lower().lstrip(".") for d in domains or () if d and d.strip()]
    if not cleaned:
        return False
    for domain in cleaned:
        if "/" in domain:
            logger.warning("allowed_domains accepts only domains, not URLs: %r", domain)
    alternatives = "|".join(re.escape(d) for d in cleaned)
    return re.compile(r"^(.*\.)?(%s)\Z" % alternatives)
