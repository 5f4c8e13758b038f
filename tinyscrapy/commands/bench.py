"""
C{python -m tinyscrapy bench}: a quick, self-contained speed check, as C{scrapy bench} is.

It serves a generated site of C{--pages} pages (L{tinyscrapy.demo.benchsite}) with
twisted.web in the same process, crawls it with the C{crawl} command's spider and prints
pages per second and the request ledger. Server and crawler share one core here, so the
figure is for comparing machines and versions, not for comparing with other crawlers:
C{benchmarks/} does that, beside Scrapy and a raw Twisted crawler.
"""

import time

from tinyscrapy.commands import ScrapyCommand, positive_int


class Command(ScrapyCommand):
    """Scrapy's C{bench}, on a site served in this process."""

    # Scrapy's: the log at INFO, with LogStats' line every second
    default_settings = {"LOG_LEVEL": "INFO", "LOGSTATS_INTERVAL": 1, "FEEDS": {}}

    def short_desc(self):
        return "A quick speed check on a generated site"

    def long_desc(self):
        return ("Serve a generated site in this process, crawl it with the crawl command's "
                "spider, and print pages per second and the request ledger. Exit 1 when not "
                "every page was crawled.")

    def add_options(self, parser):
        super().add_options(parser)
        parser.add_argument("--pages", type=positive_int, default=2000,
                            help="how many pages the generated site has (default 2000)")

    def run(self, args, opts):
        self.exitcode = run_bench(opts.pages, self.settings, self.crawler_process)


def run_bench(pages, settings, process):
    """
    Serve the bench site, crawl it, print the figures.

    @param settings: the command's L{Settings} (C{-s} applied).
    @param process: the command's L{CrawlerProcess}, which crawls it.
    @return: the exit status.
    """
    from twisted.internet import reactor

    from tinyscrapy.commands.crawl import SiteCrawler
    from tinyscrapy.demo.benchsite import bench_site

    site = bench_site(pages)
    port = reactor.listenTCP(0, site, interface="127.0.0.1")
    start_url = f"http://127.0.0.1:{port.getHost().port}/p/0.html"
    settings.set("ROBOTSTXT_OBEY", False, "project")
    started = time.perf_counter()
    crawler = process.create_crawler(SiteCrawler)
    process.crawl(crawler, start_urls=[start_url])
    process.start()
    elapsed = time.perf_counter() - started
    stats = crawler.stats.get_stats()
    responses = stats.get("response_received_count", 0)
    print(f"bench: {responses} pages in {elapsed:.2f} s: {responses / elapsed:.0f} pages/s "
          f"(CONCURRENT_REQUESTS={crawler.settings.getint('CONCURRENT_REQUESTS')}, "
          "server in the same process)")
    ledger = {k[len("ledger/"):]: v for k, v in sorted(stats.items())
              if k.startswith("ledger/")}
    print("ledger:", ", ".join(f"{k}={v}" for k, v in ledger.items()))
    return 0 if responses == pages else 1
