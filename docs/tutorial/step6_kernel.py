"""Step 6: the step-1 crawl again, on tinyscrapy's own kernel: the same pages and the same
limit of four in flight, driven by the ExecutionEngine of tinyscrapy/core/engine.py."""
import sys

from twisted.internet import reactor

from tinyscrapy import signals
from tinyscrapy.crawler import CrawlerRunner
from tinyscrapy.demo import listen
from tinyscrapy.spiders import Spider


class Books(Spider):
    """Step 1's parsing, as a spider: the engine does the rest."""

    name = "books"
    custom_settings = {"CONCURRENT_REQUESTS": 4}  # the engine's max

    def parse(self, response):
        if response.css("article.product_page"):
            yield {"title": response.css("h1::text").get(), "url": response.url}
        yield from response.follow_all(css="article.product_pod h3 a, li.next a")


TRACE = "--trace" in sys.argv


def trace(event, url, engine, t0):
    if TRACE:
        print(f"{reactor.seconds() - t0:7.3f} {event:9} in flight {len(engine.in_flight)}"
              f"  {url}", file=sys.stderr)


def main():
    port = listen(0, reactor=reactor)
    runner = CrawlerRunner()
    crawler = runner.create_crawler(Books)
    peak = [0]
    t0 = reactor.seconds()

    def reached(request, spider):  # a download starts: how many are in flight now
        peak[0] = max(peak[0], len(crawler.engine.in_flight))
        trace("start", request.url, crawler.engine, t0)

    def done(request, spider):  # its page was scraped: its place is free
        trace("done", request.url, crawler.engine, t0)

    crawler.signals.connect(reached, signals.request_reached_downloader)
    crawler.signals.connect(done, signals.request_done)
    d = runner.crawl(crawler, start_urls=[f"http://127.0.0.1:{port.getHost().port}/books/"])
    d.addCallback(report, crawler, peak)
    d.addBoth(stop)
    reactor.run()


def report(reason, crawler, peak):
    stats = crawler.stats
    print(f"pages {stats.get_value('response_received_count')}, "
          f"items {stats.get_value('item_scraped_count')}, peak in flight {peak[0]} "
          f"({reason})")


def stop(_):
    reactor.stop()


if __name__ == "__main__":
    main()
