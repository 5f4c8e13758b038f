"""A blocking pipeline three ways: in the reactor thread, with deferToThread, with a pool
of its own; how many requests the crawl starts while one write blocks."""
import threading

from twisted.internet import reactor, threads
from twisted.internet.task import deferLater
from twisted.python.threadpool import ThreadPool

from tinyscrapy import Request, Spider, signals
from tinyscrapy.core.engine import ExecutionEngine
from tinyscrapy.core.scheduler import Scheduler
from tinyscrapy.core.scraper import Scraper
from tinyscrapy.crawler import Crawler
from tinyscrapy.http import HttpResponse
from tinyscrapy.settings import Settings

MORE = 5   # a write in a thread returns once the crawl has started this many more requests


class Downloader:          # answers each download 1 ms later, counting the starts
    def __init__(self):
        self.started = 0
        self.write = None  # the write now blocking: the count it began at, its event

    def fetch(self, request, spider):
        self.started += 1
        if self.write is not None and self.started - self.write[0] == MORE:
            self.write[1].set()  # the write may return now: MORE were started meanwhile
        return deferLater(reactor, 0.001, HttpResponse, request.url, 200, {}, b"", request)

    def close(self):
        return None


def blocking_write(item, downloader):
    """A write that blocks for up to a second (a database without a Twisted client, say).
    It ends early once MORE requests were started meanwhile: only the reactor starts them,
    so in the reactor thread it always waits its whole second."""
    began, done = downloader.started, threading.Event()
    downloader.write = (began, done)
    went_on = done.wait(timeout=1.0)
    downloader.write = None
    item["started meanwhile"] = MORE if went_on else downloader.started - began
    return item


class InTheReactorThread:
    def process_item(self, item, spider):
        return blocking_write(item, spider.downloader)


class WithDeferToThread:   # the reactor's shared pool (REACTOR_THREADPOOL_MAXSIZE threads)
    def process_item(self, item, spider):
        return threads.deferToThread(blocking_write, item, spider.downloader)


class WithItsOwnPool:      # one thread of its own: writes in order, the shared pool free
    def open_spider(self, spider):
        self.pool = ThreadPool(minthreads=1, maxthreads=1, name="writer")
        self.pool.start()

    def close_spider(self, spider):
        self.pool.stop()

    def process_item(self, item, spider):
        return threads.deferToThreadPool(reactor, self.pool, blocking_write, item,
                                         spider.downloader)


class Pages(Spider):
    name = "pages"

    def start_requests(self):
        return (Request(f"http://127.0.0.1/{n}") for n in range(40))

    def parse(self, response):
        if response.url.endswith("/0"):
            yield {"page": response.url}


def crawl(pipeline):
    crawler = Crawler(Pages, Settings({"ITEM_PIPELINES": {pipeline: 300},
                                       "CONCURRENT_REQUESTS": 4, "LOG_ENABLED": False}),
                      reactor=reactor)
    crawler.settings.freeze()
    spider = crawler.spider = Pages.from_crawler(crawler)
    spider.downloader = Downloader()
    engine = crawler.engine = ExecutionEngine(crawler, reactor=reactor, scheduler=Scheduler(),
                                              downloader=spider.downloader,
                                              scraper=Scraper(crawler))
    items = []

    def scraped(item):
        items.append(item)
    crawler.signals.connect(scraped, signals.item_scraped)
    d = engine.scraper.itemproc.open_spider(spider)
    d.addCallback(_open, engine, spider)
    d.addCallback(_closed, engine, spider, pipeline, items)
    return d


def _open(_, engine, spider):
    engine.open_spider(spider, spider.start_requests())
    return engine.start()


def _closed(reason, engine, spider, pipeline, items):
    print(f"{pipeline.__name__}: requests started while the write blocked: "
          f"{items[0]['started meanwhile']}; the crawl: {reason}, "
          f"{spider.downloader.started} requests, {len(items)} item")


def main():
    d = crawl(InTheReactorThread)
    d.addCallback(_next, WithDeferToThread)
    d.addCallback(_next, WithItsOwnPool)
    d.addBoth(_stop)


def _next(_, pipeline):
    return crawl(pipeline)


def _stop(result):
    if result is not None:
        print(result)
    reactor.stop()


reactor.callWhenRunning(main)
reactor.run()
