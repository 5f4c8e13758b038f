"""
L{Scope}: the rules a new request must pass before it reaches the scheduler.

Each rule raises a named L{IgnoreRequest} kind, counted by the engine in the ledger and
the stats (C{ledger/dropped/OffsiteRequest}, ...):

    - L{InvalidUrl}: not http or https (C{mailto:}, C{javascript:}, C{file:}, ...), or
      no host. Always on: a spider that follows every C{href} keeps going.
    - L{UrlTooLong}: longer than C{URLLENGTH_LIMIT} (2083).
    - L{DepthExceeded}: deeper than C{DEPTH_LIMIT} (0: no limit).
    - L{OffsiteRequest}: the host is outside the spider's C{allowed_domains} (a domain
      admits its subdomains); logged once per host.
"""

import logging
import re
from urllib.parse import urlsplit

from tinyscrapy.errors import DepthExceeded, InvalidUrl, OffsiteRequest, UrlTooLong

logger = logging.getLogger(__name__)


class Scope:
    """The admission rules of one crawl."""

    def __init__(self, stats, depth_limit=0, url_length_limit=2083):
        self.stats = stats
        self.depth_limit = depth_limit
        self.url_length_limit = url_length_limit
        self._allowed = None
        self._allowed_domains = None
        self._host_verdicts = {}
        self._offsite_logged = set()

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        return cls(crawler.stats, settings.getint("DEPTH_LIMIT"),
                   settings.getint("URLLENGTH_LIMIT", 2083))

    def admit(self, request, spider):
        """
        @raise IgnoreRequest: a subclass naming the rule that refused C{request}.
        """
        url = request.url
        if not url[:8].lower().startswith(("http://", "https://")):
            raise InvalidUrl(f"not an http(s) URL: {url[:200]}")
        if self.url_length_limit and len(url) > self.url_length_limit:
            raise UrlTooLong(f"URL is {len(url)} characters long")
        if self.depth_limit and request.depth > self.depth_limit:
            raise DepthExceeded(f"depth {request.depth} > DEPTH_LIMIT {self.depth_limit}")
        host = _host(url)
        verdict = self._host_verdicts.get(host)
        if verdict is None:
            verdict = self._host_verdicts[host] = self._judge_host(host, spider)
        if verdict is not True:
            raise verdict(host)
        if request.depth:
            self.stats.max_value("request_depth_max", request.depth)

    def _judge_host(self, host, spider):
        """True, or the exception class that refuses every URL on C{host}."""
        if not host:
            return InvalidUrl
        if self._allowed is None:
            domains = [d.lower().lstrip(".") for d in getattr(spider, "allowed_domains", ())
                       if d]
            self._allowed_domains = domains
            self._allowed = re.compile(
                r"^(.*\.)?(%s)$" % "|".join(re.escape(d) for d in domains)) if domains else False
        if self._allowed is False or self._allowed.match(host):
            return True
        return OffsiteRequest

    def log_dropped(self, request, decision):
        """Log a drop: offsite ones once per host, the rest at debug level."""
        if isinstance(decision, OffsiteRequest):
            host = str(decision)
            if host not in self._offsite_logged:
                self._offsite_logged.add(host)
                self.stats.inc_value("offsite/domains")
                logger.info("Filtered offsite request to %r: %r", host, request)
        else:
            logger.debug("Dropped %r: %s", request, decision)


def _host(url):
    """The lower-cased host of an http(s) URL, without port or credentials."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return ""
    return host or ""
