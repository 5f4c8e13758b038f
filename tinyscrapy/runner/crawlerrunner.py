"""
L{CrawlerRunner}: crawls in a reactor the script runs itself (Scrapy's C{CrawlerRunner}).

Unlike L{tinyscrapy.crawler.CrawlerProcess} it neither sets up logging nor starts or
stops the reactor::

    from twisted.internet import reactor
    configure_logging({"LOG_LEVEL": "INFO"})
    runner = CrawlerRunner({"FEEDS": {"items.jsonl": {"format": "jsonlines"}}})
    d = runner.crawl(MySpider)
    d.addBoth(stop_the_reactor)
    reactor.run()
"""

from twisted.internet.defer import DeferredList


class CrawlerRunner:
    """
    Keeps track of the crawls it started, in the installed reactor.

    @ivar settings: the L{tinyscrapy.settings.Settings} every crawl starts from.
    @ivar crawlers: the L{tinyscrapy.crawler.Crawler}s running now.
    """

    def __init__(self, settings=None):
        """@param settings: a L{tinyscrapy.settings.Settings}, a plain dict, or None."""
        from tinyscrapy.crawler import _as_settings
        self.settings = _as_settings(settings)
        self.crawlers = set()
        self._active = set()

    def create_crawler(self, crawler_or_spidercls):
        """A L{tinyscrapy.crawler.Crawler} for a spider class (or its dotted path); a
        crawler is returned as it is."""
        from tinyscrapy.components import load_object
        from tinyscrapy.crawler import Crawler
        if isinstance(crawler_or_spidercls, Crawler):
            return crawler_or_spidercls
        return Crawler(load_object(crawler_or_spidercls), self.settings)

    def crawl(self, crawler_or_spidercls, *args, **kwargs):
        """
        Start a crawl; C{args} and C{kwargs} go to the spider.

        @return: a Deferred that fires with the finish reason when the crawl has ended, or
            errbacks with what stopped it from starting (a L{tinyscrapy.errors.UsageError}
            for a bad setting, say).
        """
        crawler = self.create_crawler(crawler_or_spidercls)
        self.crawlers.add(crawler)
        d = crawler.crawl(*args, **kwargs)
        self._active.add(d)
        d.addBoth(self._cb_crawl_done, crawler, d)
        return d

    def _cb_crawl_done(self, result, crawler, d):
        self.crawlers.discard(crawler)
        self._active.discard(d)
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

    def stop(self):
        """Close every running crawl gracefully. @return: a Deferred for all of them."""
        return DeferredList([crawler.stop() for crawler in list(self.crawlers)])
