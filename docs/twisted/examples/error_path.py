"""Where each Failure goes: the real engine and hooks that raise, on a fake clock."""
import gc
import logging

from twisted.internet import task
from twisted.internet.defer import Deferred
from twisted.logger import globalLogBeginner

from tinyscrapy import Request, Spider
from tinyscrapy.core.downloader.middleware import DownloaderMiddlewareManager
from tinyscrapy.core.engine import ExecutionEngine
from tinyscrapy.core.scheduler import Scheduler
from tinyscrapy.core.scraper import Scraper
from tinyscrapy.crawler import Crawler
from tinyscrapy.http import HttpResponse
from tinyscrapy.settings import Settings

unhandled = []            # what Twisted logs as "Unhandled error in Deferred"


def twisted_log(event):  # Deferred.__del__ logs the failure in namespace twisted.internet.defer
    if "log_failure" in event and event["log_namespace"] == "twisted.internet.defer":
        unhandled.append(event["log_failure"].type.__name__)


class Print(logging.Handler):
    def emit(self, record):
        line = f"  {record.levelname} {record.name}: {record.getMessage().splitlines()[0]}"
        if record.exc_info:
            line += f"\n    {type(record.exc_info[1]).__name__}: {record.exc_info[1]}"
        print(line)


class Downloader:         # the real middleware chain around a fetch that answers at once
    def __init__(self, crawler):
        self.middleware = DownloaderMiddlewareManager.from_crawler(crawler)

    def fetch(self, request, spider):
        print(request.url[len("http://127.0.0.1"):])
        return self.middleware.download(request, spider, self._fetch)

    def _fetch(self, request, spider):
        if request.url.endswith("/refused"):
            return task.deferLater(clock, 0, _refuse)
        return task.deferLater(clock, 0, HttpResponse, request.url, 200,
                               {"Content-Type": "text/html"}, b"<p>", request)

    def close(self):
        return None


def _refuse():
    raise ConnectionRefusedError("connection refused")


class Faulty(Spider):
    name = "faulty"
    paths = ["/callback", "/callback-and-hook", "/item-then-raise", "/refused", "/middleware",
             "/pipeline"]

    def start_requests(self):
        for path in self.paths:
            callback = self.item_then_raise if path == "/item-then-raise" else None
            yield Request("http://127.0.0.1" + path, callback=callback, errback=self.on_error)

    def item_then_raise(self, response):
        yield {"page": "held"}                   # a pipeline holds it for a second
        raise ValueError("the generator broke")  # and the hook fails on this one too

    def parse(self, response):
        if response.url.endswith("/pipeline"):
            return [{"page": "pipeline"}]
        raise ValueError("the callback broke")

    def on_error(self, failure):
        raise KeyError("the errback broke too")


class HookThatRaises:     # a spider middleware whose process_spider_exception raises
    def process_spider_exception(self, response, exception):
        if response is not None and response.url.endswith(("-hook", "-raise")):
            raise TypeError("process_spider_exception broke")
        return None       # not handled: the next hook, then the log


class RequestHookThatRaises:  # a downloader middleware
    def process_request(self, request):
        if request.url.endswith("/middleware"):
            raise RuntimeError("process_request broke")


class PipelineThatRaises:
    def process_item(self, item):
        if item["page"] == "held":
            return task.deferLater(clock, 1, dict, item)
        raise LookupError("process_item broke")


globalLogBeginner.beginLoggingTo([twisted_log], redirectStandardIO=False)
logging.getLogger("tinyscrapy").addHandler(Print())
clock = task.Clock()
crawler = Crawler(Faulty, Settings({
    "CONCURRENT_REQUESTS": 1, "LOG_ENABLED": False, "RETRY_ENABLED": False,
    "SPIDER_MIDDLEWARES": {HookThatRaises: 500},
    "DOWNLOADER_MIDDLEWARES": {RequestHookThatRaises: 500},
    "ITEM_PIPELINES": {PipelineThatRaises: 300}}), clock)
crawler.settings.freeze()
crawler.spider = Faulty.from_crawler(crawler)
logging.getLogger("tinyscrapy").setLevel(logging.ERROR)
engine = crawler.engine = ExecutionEngine(crawler, reactor=clock, scheduler=Scheduler(),
                                          downloader=Downloader(crawler),
                                          scraper=Scraper(crawler))
engine.open_spider(crawler.spider, crawler.spider.start_requests())
for _ in range(10):       # one request at a time, each to its end
    clock.advance(0)
    clock.advance(0.5)
print("finish reason:", engine.start().result)
for key, value in sorted(crawler.stats.get_stats().items()):
    if key.startswith(("spider_exceptions/", "engine/unexpected_errors/", "ledger/",
                       "item_scraped_count")):
        print(f"  {key}: {value}")
gc.collect()
print("Unhandled error in Deferred, from the crawl:", unhandled)
dropped = Deferred()
dropped.errback(ValueError("nobody handled me"))
del dropped
gc.collect()
print("Unhandled error in Deferred, from a Deferred dropped unhandled:", unhandled)
