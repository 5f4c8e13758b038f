"""
C{python -m tinyscrapy bench}: a quick, self-contained speed check, as C{scrapy bench} is.

It serves a generated site of C{--pages} pages (about 10 KB and 30 links each: neighbours,
pseudo-random pages, fragments, duplicates and off-site links) with twisted.web in the
same process, crawls it with the C{crawl} command's spider and prints pages per second and
the request ledger. Server and crawler share one core here, so the figure is for
comparing machines and versions, not for comparing with other crawlers: C{benchmarks/}
does that, beside Scrapy and a raw Twisted crawler.
"""

import random
import time

from twisted.web.resource import Resource
from twisted.web.server import Site

from tinyscrapy.commands import positive_int

HELP = "a quick speed check on a generated site"
DESCRIPTION = """\
Serve a generated site in this process, crawl it with the crawl command's spider, and
print pages per second and the request ledger. Exit 1 when not every page was crawled."""


def add_arguments(parser):
    parser.add_argument("--pages", type=positive_int, default=2000,
                        help="how many pages the generated site has (default 2000)")
    parser.add_argument("-s", dest="settings", action="append", default=[],
                        metavar="NAME=VALUE", help="set a setting (repeatable)")
    parser.add_argument("-L", dest="loglevel", metavar="LEVEL",
                        help="log level (default WARNING)")


def run(command):
    command.args.append, command.args.overwrite = [], []
    command.settings.set("FEEDS", {}, "project")
    if not command.args.loglevel:
        command.settings.set("LOG_LEVEL", "WARNING", "project")
    command.apply_options()
    return run_bench(command.args.pages, command.settings)


FILLER = ("Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor "
          "incididunt ut labore et dolore magna aliqua. ") * 60


class BenchSite(Resource):
    """C{/p/N.html} for N in 0..pages-1; each page rendered on demand, deterministically."""

    isLeaf = True

    def __init__(self, pages, seed=7):
        super().__init__()
        self.pages = pages
        self.seed = seed

    def render_GET(self, request):
        path = request.path.decode("latin-1")
        if not (path.startswith("/p/") and path.endswith(".html")):
            request.setResponseCode(404)
            return b"not found"
        try:
            number = int(path[3:-5])
        except ValueError:
            number = -1
        if not 0 <= number < self.pages:
            request.setResponseCode(404)
            return b"not found"
        request.setHeader(b"content-type", b"text/html; charset=utf-8")
        return self.page(number).encode("utf-8")

    def page(self, number):
        rng = random.Random(self.seed * 1_000_003 + number)
        targets = [(number + step) % self.pages for step in (1, 2, 3, 5, 8)]
        targets += [rng.randrange(self.pages) for _ in range(20)]
        links = [f'<a href="/p/{t}.html">page {t}</a>' for t in targets]
        links += [f'<a href="{(number + 1) % self.pages}.html#top">next</a>',
                  '<a href="http://offsite.invalid/">elsewhere</a>',
                  '<a href="mailto:bench@example.invalid">mail</a>',
                  f'<a href="/p/{number}.html">self</a>']
        return (f"<!DOCTYPE html><html><head><title>Page {number}</title></head><body>"
                f"<h1>Page {number}</h1><p>{FILLER}</p><ul><li>"
                + "</li><li>".join(links) + "</li></ul></body></html>")


def run_bench(pages, settings):
    """
    Serve the bench site, crawl it, print the figures.

    @param settings: the command's L{Settings} (C{-s} applied).
    @return: the exit status.
    """
    from twisted.internet import reactor

    from tinyscrapy.crawler import CrawlerProcess
    from tinyscrapy.spiders.sitespider import SiteCrawler

    site = Site(BenchSite(pages))
    site.noisy = False
    site.log = _no_access_log
    port = reactor.listenTCP(0, site, interface="127.0.0.1")
    start_url = f"http://127.0.0.1:{port.getHost().port}/p/0.html"
    settings.set("ROBOTSTXT_OBEY", False, "project")
    process = CrawlerProcess(settings)
    started = time.perf_counter()
    process.crawl(SiteCrawler, start_urls=[start_url])
    process.start()
    elapsed = time.perf_counter() - started
    (crawler,) = process.crawlers
    stats = crawler.stats.get_stats()
    responses = stats.get("response_received_count", 0)
    print(f"bench: {responses} pages in {elapsed:.2f} s: {responses / elapsed:.0f} pages/s "
          f"(CONCURRENT_REQUESTS={crawler.settings.getint('CONCURRENT_REQUESTS')}, "
          "server in the same process)")
    ledger = {k[len("ledger/"):]: v for k, v in sorted(stats.items())
              if k.startswith("ledger/")}
    print("ledger:", ", ".join(f"{k}={v}" for k, v in ledger.items()))
    return 0 if responses == pages else 1


def _no_access_log(request):
    return None
