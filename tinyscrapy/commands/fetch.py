"""
C{fetch URL}: download one page through the downloader and its middlewares, and print its
body (or, with C{--headers}, the request's and the response's headers), as C{scrapy
fetch} does. Redirects are followed unless C{--no-redirect}; any status is printed. The
log goes to standard error, the page to standard output.

L{PageFetcher} is the part C{view} and C{shell} share: one crawler's downloader, without an
engine, that follows the requests a middleware answers with (a redirect, a retry).
"""

import sys

from tinyscrapy.commands import ScrapyCommand, spider_loader
from tinyscrapy.exceptions import UsageError
from tinyscrapy.shell import PageFetcher, check_url


class Command(ScrapyCommand):
    """Scrapy's C{fetch}."""

    default_settings = {"FEEDS": {}}

    def syntax(self):
        return "[options] <url>"

    def short_desc(self):
        return "Download a page and print it (as the crawl's downloader sees it)"

    def long_desc(self):
        return ("Download one page through the crawl's downloader and middlewares and print "
                "its body on standard output (with --headers, the request's and the "
                "response's headers), as Scrapy's fetch does; the log goes to standard "
                "error (--nolog silences it). Redirects are followed unless --no-redirect; "
                "any status is printed. The spider is --spider, else the project's spider "
                "for the URL's domain: its settings apply.")

    def add_options(self, parser):
        super().add_options(parser)
        add_page_options(parser)
        parser.add_argument("--headers", action="store_true",
                            help="print the request's and the response's headers, not the body")

    def run(self, args, opts):
        if len(args) != 1:
            raise UsageError()
        response = fetch_once(self, args[0], opts)
        if response is None:
            self.exitcode = 1
            return
        out = sys.stdout.buffer
        if opts.headers:
            for name, values in response.request.header_items():
                for value in values:
                    out.write(b"> " + _bytes(name) + b": " + _bytes(value) + b"\n")
            out.write(b">\n")
            for name, values in response.headers.items():
                for value in values if isinstance(values, list) else [values]:
                    out.write(b"< " + _bytes(name) + b": " + _bytes(value) + b"\n")
        else:
            out.write(response.body)
        out.flush()


def add_page_options(parser):
    """The options C{fetch}, C{view} and C{shell} share."""
    parser.add_argument("--spider", metavar="NAME",
                        help="use this spider's settings (a name, or a dotted class path)")
    parser.add_argument("--no-redirect", action="store_true",
                        help="do not follow redirects: the 3xx response itself")


def page_spider(command, url, opts):
    """
    The spider class of a one-page command: C{--spider}, else the project's spider whose
    C{allowed_domains} cover C{url}, else None (a bare spider).

    @raise UsageError: C{--spider} names no spider.
    """
    from tinyscrapy.spiderloader import resolve_spider
    if opts.spider:
        return resolve_spider(opts.spider, spider_loader(command))
    if url is None or command.crawler_process is None:
        return None
    from tinyscrapy.http.request import Request
    from tinyscrapy.utils.spider import spidercls_for_request
    return spidercls_for_request(command.crawler_process.spider_loader, Request(url))


def _bytes(value):
    return value if isinstance(value, bytes) else str(value).encode("latin-1", "replace")


def fetch_once(command, url, opts):
    """
    Run the reactor for one download of C{url}. @return: the L{HttpResponse}, or None
    when it failed (logged, with the URL).
    """
    from twisted.internet import reactor
    check_url(url)
    fetcher = PageFetcher.for_settings(command.settings, reactor,
                                       page_spider(command, url, opts))
    result = []
    d = fetcher.fetch(fetcher.request(url, opts.no_redirect))
    d.addCallbacks(result.append, fetcher.log_failure, errbackArgs=(url,))
    d.addBoth(_cb_close, fetcher)
    d.addBoth(_cb_stop, reactor)
    if not d.called:
        reactor.run()
    return result[0] if result else None


def _cb_close(_, fetcher):
    """Dump the stats (C{STATS_DUMP}, as Scrapy's fetch does at the end of its crawl) and
    close the connections."""
    fetcher.crawler.stats.close_spider(fetcher.spider, "finished")
    return fetcher.close()


def _cb_stop(_, reactor):
    if reactor.running:
        reactor.stop()
