"""The real engine on a fake clock: each turn of _next_request and what asked for it."""
from twisted.internet import task

from tinyscrapy import Request, Spider, signals
from tinyscrapy.crawler import Crawler
from tinyscrapy.core.engine import ExecutionEngine
from tinyscrapy.http import HttpResponse
from tinyscrapy.core.scheduler import Scheduler
from tinyscrapy.core.scraper import Scraper
from tinyscrapy.settings import Settings


class Downloader:             # answers each download 1 s after it starts
    middleware = type("NoMiddleware", (), {"middlewares": []})()

    def fetch(self, request, spider):
        return task.deferLater(clock, 1, HttpResponse, request.url, 200, {}, b"", request)

    def close(self):
        return None


class Three(Spider):
    name = "three"

    def start_requests(self):
        return (Request(f"http://127.0.0.1/{n}") for n in range(3))

    def parse(self, response):
        return None


def turn(spider, causes):
    print(f"t={clock.seconds():g} turn ({', '.join(sorted(causes))}): "
          f"{len(engine.in_flight)} in flight, {engine.scheduler.size()} queued")


clock = task.Clock()
crawler = Crawler(Three, Settings({"CONCURRENT_REQUESTS": 2, "LOG_LEVEL": "WARNING"}), clock)
crawler.settings.freeze()
crawler.spider = Three.from_crawler(crawler)
scraper = Scraper(crawler)
engine = crawler.engine = ExecutionEngine(
    crawler, reactor=clock, scheduler=Scheduler(), downloader=Downloader(), scraper=scraper)
engine.wake_causes = set()                   # what --trace does
crawler.signals.connect(turn, signals.engine_turn)
engine.open_spider(crawler.spider, crawler.spider.start_requests())
engine.start().addCallback(print)
clock.advance(0)
for _ in range(3):
    clock.advance(1)
print("pending calls at the end:", clock.getDelayedCalls())
