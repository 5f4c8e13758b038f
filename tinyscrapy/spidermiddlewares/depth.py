"""
L{DepthMiddleware}: how many links from a start request a request is, and a limit on it,
as Scrapy's (C{DEPTH_LIMIT}, C{DEPTH_PRIORITY}).

Depth is set by L{tinyscrapy.http.response.Response.follow}, by the scraper on a Request a
callback made by hand (one deeper than the page's), and kept by a redirect or a retry.
A request deeper than C{DEPTH_LIMIT} (0: no limit) is dropped
(L{tinyscrapy.exceptions.DepthExceeded}); C{DEPTH_PRIORITY} lowers (positive: breadth
first) or raises (negative: depth first) a new request's priority by
C{depth * DEPTH_PRIORITY}. The stats keep C{request_depth_max} and, with
C{DEPTH_STATS_VERBOSE}, C{request_depth_count/<depth>}: the start pages at depth 0, and
every request admitted at its depth, as Scrapy counts them.

Scrapy filters a callback's output in C{process_spider_output}; tinyscrapy checks every
request offered to the crawl before it is queued (L{admit_request}), start requests and
redirects included.
"""

from tinyscrapy import signals
from tinyscrapy.exceptions import DepthExceeded


class DepthMiddleware:
    """The depth limit and priority, checked for every request before it is queued."""

    def __init__(self, maxdepth=0, stats=None, verbose_stats=False, prio=0):
        self.maxdepth = maxdepth
        self.stats = stats
        self.verbose_stats = verbose_stats
        self.prio = prio

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        middleware = cls(settings.getint("DEPTH_LIMIT"), crawler.stats,
                         settings.getbool("DEPTH_STATS_VERBOSE"),
                         settings.getint("DEPTH_PRIORITY"))
        if middleware.verbose_stats:
            crawler.signals.connect(middleware.count_page, signals.response_received)
        return middleware

    def admit_request(self, request, spider, parent=None, host=None, port=None):
        """
        Give a new request (no C{parent}) its C{DEPTH_PRIORITY}.

        @raise DepthExceeded: deeper than C{DEPTH_LIMIT}.
        """
        depth = request.depth
        if not depth:
            return
        if self.maxdepth and depth > self.maxdepth:
            raise DepthExceeded(f"depth {depth} > DEPTH_LIMIT {self.maxdepth}")
        self.stats.max_value("request_depth_max", depth)
        if self.verbose_stats:
            self.stats.inc_value(f"request_depth_count/{depth}")
        if self.prio and parent is None:
            request.priority -= depth * self.prio

    def count_page(self, response, request, spider):
        """A start page arrived: count it (C{request_depth_count/0})."""
        if not request.depth:
            self.stats.inc_value("request_depth_count/0")
