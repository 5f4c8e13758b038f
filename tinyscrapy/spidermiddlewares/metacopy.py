"""
L{MetaCopyDetectionMiddleware}: Scrapy's warning for a spider that copies a response's whole
C{meta} into the requests it yields (C{Request(url, meta=response.meta)}), which carries
the middlewares' own keys (retry and redirect counts, the download latency) to pages they
do not belong to. It warns once a crawl, naming the keys; C{META_COPY_WARN_SKIP_KEYS} lists
keys not to warn about. It is not among the built-in middlewares: a project enables it in
C{SPIDER_MIDDLEWARES}.
"""

import logging

from tinyscrapy.spidermiddlewares.base import BaseSpiderMiddleware

logger = logging.getLogger(__name__)


class MetaCopyDetectionMiddleware(BaseSpiderMiddleware):
    """Warn (once) when a request a callback yields holds the middlewares' meta keys."""

    _INTERNAL_KEYS = frozenset({"_auth_proxy", "_dont_cache", "_scheme_proxy",
                                "cache_timestamp", "download_latency", "redirect_reasons",
                                "redirect_times", "redirect_ttl", "redirect_urls",
                                "retry_times"})

    def __init__(self, crawler):
        super().__init__(crawler)
        skipped = frozenset(crawler.settings.getlist("META_COPY_WARN_SKIP_KEYS"))
        self._keys = self._INTERNAL_KEYS - skipped
        self._warned = False

    def get_processed_request(self, request, response):
        if response is None or self._warned:
            return request
        found = self._keys & request.meta.keys()
        if found:
            spider = self.crawler.spider
            logger.warning("%s yielded a request containing internal meta keys that were "
                           "likely copied from response.meta and should not be forwarded "
                           "to new requests: %s. See the MetaCopyDetectionMiddleware "
                           "documentation for more information. Source response: %s, "
                           "target request: %s", type(spider).__name__, sorted(found),
                           response, request, extra={"spider": spider})
            self._warned = True
        return request
