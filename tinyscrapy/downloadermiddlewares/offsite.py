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
        self._allowed = None  # None: not read yet; False: any host
        self._allowed_domains = ()
        self._verdicts = {}  # host, or host:port -> allowed
        self._logged = set()

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.stats)

    def admit_request(self, request, spider, parent=None, host=None, port=None):
        """
        @param host: the request's host, lower-cased (the scope has it already).
        @param port: its port as written, or None.
        @raise OffsiteRequest: the host is outside the spider's C{allowed_domains}.
        """
        key = (host, port)
        verdict = self._verdicts.get(key)
        if verdict is None:
            verdict = self._verdicts[key] = self._judge(host, port, spider)
        if not verdict and not (request._meta and request._meta.get("allow_offsite")):
            raise OffsiteRequest(host)

    def _judge(self, host, port, spider):
        if self._allowed is None:
            self._allowed_domains = tuple(getattr(spider, "allowed_domains", None) or ())
            self._allowed = _allowed_pattern(self._allowed_domains or None)
        if self._allowed is False:
            return True
        return bool(self._allowed.match(host)
                    or (port and self._allowed.match(f"{host}:{port}")))

    def log_dropped(self, request, decision):
        """An off-site request was dropped: count it; log it once per origin."""
        if self.stats is not None:
            self.stats.inc_value("offsite/filtered")
        host = str(decision)
        origin = url_origin(request.url) or host
        if host not in self._logged:
            self._logged.add(host)
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
