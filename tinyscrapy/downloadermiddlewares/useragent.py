"""
L{UserAgentMiddleware}: the C{User-Agent} every request carries, as Scrapy's: the request's
own header, else the spider's C{user_agent}, else C{USER_AGENT}, else
C{tinyscrapy/<version> (+<project URL>)}. C{USER_AGENT = ""} (or C{user_agent = None})
sends none.
"""

import tinyscrapy


def default_user_agent():
    """C{tinyscrapy/<version> (+<project URL>)}: who is crawling, and where to read about it."""
    return f"tinyscrapy/{tinyscrapy.__version__} (+{tinyscrapy.PROJECT_URL})"


class UserAgentMiddleware:
    """
    Set C{User-Agent} on every request that lacks one: the spider's C{user_agent}
    attribute, else C{USER_AGENT}, else L{default_user_agent}, so a site's operator can find
    out who is crawling. As in Scrapy, C{USER_AGENT = ""} or C{None} set by the user (or a
    spider's C{user_agent = None}) sends none.

    @ivar user_agent: the value sent, or None for none; L{spider_opened} takes the
        spider's.
    """

    crawler = None

    def __init__(self, user_agent=None):
        self.user_agent = user_agent
        self._spider_read = False

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        configured = settings.get("USER_AGENT")
        if configured is None and settings.priority("USER_AGENT") in (None, "default"):
            configured = default_user_agent()  # not set: who is crawling
        middleware = cls(configured or None)
        middleware.crawler = crawler
        if crawler.spider is not None:
            middleware.spider_opened(crawler.spider)
        return middleware

    def spider_opened(self, spider):
        """Use the spider's C{user_agent} attribute, when it has one."""
        self.user_agent = getattr(spider, "user_agent", self.user_agent)
        self._spider_read = True

    def process_request(self, request, spider=None):
        if not self._spider_read:
            spider = spider if spider is not None else getattr(self.crawler, "spider", None)
            if spider is not None:
                self.spider_opened(spider)
        if self.user_agent and "User-Agent" not in request.headers:
            request.headers["User-Agent"] = self.user_agent
