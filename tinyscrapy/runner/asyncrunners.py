"""
L{AsyncCrawlerProcess} and L{AsyncCrawlerRunner}: Scrapy's runners with coroutine APIs
(Scrapy 2.13 and later). They run on the asyncio reactor, which L{AsyncCrawlerProcess}
installs; C{crawl()} returns an asyncio Future instead of a Deferred, and C{join()} and
C{stop()} are coroutines::

    process = AsyncCrawlerProcess(settings={"FEEDS": {"items.json": {"format": "json"}}})
    process.crawl(MySpider)
    process.start()
"""

from tinyscrapy.crawler import CrawlerProcess, CrawlerRunner, _as_settings
from tinyscrapy.errors import UsageError
from tinyscrapy.runner.reactors import (
    ASYNCIO_REACTOR,
    deferred_to_future,
    install_reactor,
    is_asyncio_reactor_installed,
)


def _asyncio_reactor(settings):
    """Install the asyncio reactor if none is yet. @raise UsageError: another one is."""
    install_reactor(ASYNCIO_REACTOR, settings.get("ASYNCIO_EVENT_LOOP"))
    if not is_asyncio_reactor_installed():
        raise UsageError("the coroutine runners need the asyncio reactor, but another "
                         "reactor is already installed (something imported "
                         "twisted.internet.reactor first)")
    from twisted.internet import reactor
    return reactor


class AsyncCrawlerRunner(CrawlerRunner):
    """L{CrawlerRunner} with coroutine APIs, in the asyncio reactor the script runs."""

    def crawl(self, crawler_or_spidercls, *args, **kwargs):
        """
        Start a crawl.

        @return: an asyncio Future completing with the finish reason when it has ended.
        @raise UsageError: the installed reactor is not asyncio's.
        """
        if not is_asyncio_reactor_installed():
            raise UsageError(f"AsyncCrawlerRunner needs the asyncio reactor: install it "
                             f"first (tinyscrapy.utils.reactor.install_reactor"
                             f"({ASYNCIO_REACTOR!r}))")
        return deferred_to_future(super().crawl(crawler_or_spidercls, *args, **kwargs))

    async def join(self):
        """Complete once every crawl has ended."""
        await deferred_to_future(super().join())

    async def stop(self):
        """Close every running crawl gracefully; complete once they have closed."""
        await deferred_to_future(super().stop())


class AsyncCrawlerProcess(CrawlerProcess):
    """L{CrawlerProcess} on the asyncio reactor (installed here), with coroutine APIs."""

    def __init__(self, settings=None, install_root_handler=True):
        settings = _as_settings(settings)
        super().__init__(settings, install_root_handler, reactor=_asyncio_reactor(settings))

    def crawl(self, crawler_or_spidercls, *args, **kwargs):
        """Start a crawl. @return: an asyncio Future completing when it has ended."""
        return deferred_to_future(super().crawl(crawler_or_spidercls, *args, **kwargs))

    async def join(self):
        """Complete once every crawl has ended."""
        from twisted.internet.defer import DeferredList
        await deferred_to_future(DeferredList(list(self._active)))
