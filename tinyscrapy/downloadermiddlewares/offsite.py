"""
L{OffsiteMiddleware}: requests to hosts outside the spider's C{allowed_domains} are
dropped (L{tinyscrapy.exceptions.OffsiteRequest}), as Scrapy's.

A domain admits its subdomains, an entry with a port (C{"example.com:8080"}) only that
port; C{meta["allow_offsite"]} lets one request through. Logged at DEBUG, as in Scrapy,
once per origin (scheme, host and port: another port of the same host is another site),
with the C{allowed_domains} it is not in; counted as C{offsite/filtered} and
C{offsite/domains}.

Scrapy drops an off-site request in C{process_request}, after it waited in the
scheduler; tinyscrapy checks it before it is queued (L{admit_request}, which the scope
of L{tinyscrapy.core.scraper} calls for every request offered to the crawl), so it never
takes a place in the frontier. A spider without C{allowed_domains} crawls any host.

Scrapy's API is there too: C{spider_opened(spider)} reads C{allowed_domains} again,
C{process_request(request)} and C{request_scheduled(request, spider)} raise
L{OffsiteRequest} (an C{IgnoreRequest}) for an off-site request (one with C{dont_filter}
or C{meta["allow_offsite"]} passes), C{get_host_regex(spider)} answers the pattern, and a
subclass that overrides C{should_follow(request, spider)} decides instead of the host check
(Scrapy's way of changing the policy), for every request, then without the cache.
"""

import logging
import re

from tinyscrapy.exceptions import OffsiteRequest
from tinyscrapy.utils.url import url_origin

logger = logging.getLogger(__name__)


class OffsiteMiddleware:
    """The spider's C{allowed_domains}, checked for every request before it is queued."""

    def __init__(self, stats=None):
        self.stats = stats
        self.crawler = None
        self._allowed = None  # None: not read yet; False: any host
        self._allowed_domains = ()
        self._verdicts = {}  # host, or host:port -> allowed
        self._source = self._source_size = None  # the allowed_domains read, and its size
        self._logged = set()
        self.domains_seen = set()  # Scrapy's: the hosts an off-site drop was counted for
        # a subclass's own should_follow decides every request (no cache)
        self._own_policy = type(self).should_follow is not OffsiteMiddleware.should_follow

    @classmethod
    def from_crawler(cls, crawler):
        middleware = cls(crawler.stats)
        middleware.crawler = crawler
        return middleware

    def admit_request(self, request, spider, parent=None, host=None, port=None):
        """
        @param host: the request's host, lower-cased (the scope has it already).
        @param port: its port as written, or None.
        @raise OffsiteRequest: the host is outside the spider's C{allowed_domains}.
        """
        if self._own_policy:
            if not (request._meta and request._meta.get("allow_offsite")) \
                    and not self.should_follow(request, spider):
                raise OffsiteRequest(host)
            return
        self._watch(spider)
        key = (host, port)
        verdict = self._verdicts.get(key)
        if verdict is None:
            verdict = self._verdicts[key] = self._judge(host, port, spider)
        if not verdict and not (request._meta and request._meta.get("allow_offsite")):
            raise OffsiteRequest(host)

    # Scrapy's API

    def _watch(self, spider):
        """A spider may change its allowed_domains as it goes: another list, or one that
        grew or shrank, is read again (L{_forget})."""
        domains = getattr(spider, "allowed_domains", None)
        if domains is not self._source or (domains and len(domains) != self._source_size):
            self._forget(domains)

    def _forget(self, domains):
        """The spider's C{allowed_domains} is another list now, or has grown or shrunk:
        read it again at the next verdict."""
        self._source = domains
        self._source_size = len(domains) if domains else 0
        self._allowed = None
        self._verdicts.clear()

    def spider_opened(self, spider):
        """Read the spider's C{allowed_domains} (again)."""
        self._forget(getattr(spider, "allowed_domains", None))
        self._judge("", None, spider)

    def should_follow(self, request, spider):
        """
        Whether C{request} is on the spider's site: Scrapy's hook, which a subclass
        overrides to change the policy.

        @return: True to keep C{request}, False to drop it.
        """
        from tinyscrapy.utils.httpobj import urlparse_cached
        self._watch(spider)
        parts = urlparse_cached(request)
        host = (parts.hostname or "").lower()
        try:
            port = parts.port
        except ValueError:
            port = None
        return self._judge(host, port, spider)

    def get_host_regex(self, spider):
        """The pattern of the hosts the spider's C{allowed_domains} admits (one matching
        every host when it has none)."""
        pattern = _allowed_pattern(getattr(spider, "allowed_domains", None))
        return pattern if pattern is not False else re.compile("")

    def process_request(self, request, spider=None):
        """
        Drop an off-site request, as Scrapy's middleware does when a request reaches it
        (the crawl's own requests were checked before they were queued).

        @raise OffsiteRequest: C{request} is off-site (logged and counted once).
        """
        spider = spider if spider is not None else getattr(self.crawler, "spider", None)
        if request.dont_filter or (request._meta and request._meta.get("allow_offsite")) \
                or self.should_follow(request, spider):
            return None
        from tinyscrapy.utils.httpobj import urlparse_cached
        decision = OffsiteRequest(urlparse_cached(request).hostname or "")
        self.log_dropped(request, decision)
        raise decision

    def request_scheduled(self, request, spider):
        """Scrapy's receiver of C{request_scheduled}: L{process_request}."""
        self.process_request(request, spider)

    # the chain never calls process_request: admit_request checked every request before
    # it was queued (a subclass's own process_request is called)
    unchained_hooks = frozenset({process_request})

    def _judge(self, host, port, spider):
        if self._allowed is None:
            self._allowed_domains = tuple(domain for domain in
                                          getattr(spider, "allowed_domains", None) or ()
                                          if isinstance(domain, str))
            self._allowed = _allowed_pattern(self._allowed_domains or None)
        if self._allowed is False:
            return True
        return bool(self._allowed.match(host)
                    or (port and self._allowed.match(f"{host}:{port}")))

    def log_dropped(self, request, decision):
        """An off-site request was dropped: count it; log it once per origin."""
        if self.stats is not None:
            self.stats.inc_value("offsite/filtered")
        host = decision.host
        origin = url_origin(request.url) or host
        if host not in self.domains_seen:
            self.domains_seen.add(host)
            if self.stats is not None:
                self.stats.inc_value("offsite/domains")
        if origin not in self._logged:  # once per origin: a port is a site
            self._logged.add(origin)
            logger.debug("Filtered offsite request to %r (allowed_domains: %s): %r",
                        origin, ", ".join(self._allowed_domains) or "none", request)


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
