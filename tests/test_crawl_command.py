"""
The C{crawl URL} command: redirects followed and recorded, every status a page, bad start
URLs refused before the start, and a crawl that fetched nothing exits 1.
"""

import json
import os

from twisted.internet import defer, reactor
from twisted.trial import unittest

from tinyscrapy import signals
from tinyscrapy.commands.crawl import SiteCrawler, check_start_url
from tinyscrapy.crawler import Crawler
from tinyscrapy.exceptions import UsageError
from tinyscrapy.settings import Settings

from .helpers import ROOT, run_command, serve
from .servers import Drop, Redirect, Robots, Status, TestServer


class _Items:
    """The items of one crawl, as the C{item_scraped} signal sends them."""

    def __init__(self):
        self.items = []

    def item_scraped(self, item, **kwargs):
        self.items.append(item)

    def by_url(self):
        return {item["url"]: item for item in self.items}


def site_crawl(start_urls, settings=None):
    """
    Crawl C{start_urls} with the C{crawl} command's spider in this reactor.

    @return: a Deferred firing with C{(crawler, _Items)} once the crawl has closed.
    """
    base = {"LOG_LEVEL": "WARNING", "FEEDS": {}, "ROBOTSTXT_OBEY": False}
    base.update(settings or {})
    crawler = Crawler(SiteCrawler, Settings(base))
    collected = _Items()
    crawler.signals.connect(collected.item_scraped, signals.item_scraped)
    d = crawler.crawl(start_urls=list(start_urls))
    d.addCallback(_pair, crawler, collected)
    return d


def _pair(_, crawler, collected):
    return crawler, collected


class SiteCrawlRedirectTests(unittest.TestCase):
    """Redirects are followed, the chain is in the item, and every status is a page."""

    def setUp(self):
        self.server = serve(self)

    @defer.inlineCallbacks
    def test_start_url_that_redirects(self):
        """/ redirects to /en/: the site is crawled from /en/, whose item keeps the chain."""
        start = self.server.add("/", Redirect("/en/", 302))
        self.server.add_page("/en/", links=["/en/a"], title="English")
        self.server.add_page("/en/a", title="A")
        crawler, collected = yield site_crawl([start])
        items = collected.by_url()
        self.assertEqual(sorted(items), [self.server.url("/en/"), self.server.url("/en/a")])
        home = items[self.server.url("/en/")]
        self.assertEqual((home["status"], home["title"], home["redirect_urls"]),
                         (200, "English", [start]))
        self.assertEqual(items[self.server.url("/en/a")]["redirect_urls"], [])
        self.assertEqual(self.server.hits["/en/a"], 1)
        self.assertEqual(crawler.stats.get_value("ledger/missing"), 0)

    @defer.inlineCallbacks
    def test_redirect_chain(self):
        """A 302 to a 301 to a page: one item, the final URL, both hops in redirect_urls."""
        start = self.server.add_page("/", links=["/old"])
        self.server.add("/old", Redirect("/older", 302))
        self.server.add("/older", Redirect("/new", 301))
        self.server.add_page("/new", title="new")
        _, collected = yield site_crawl([start])
        items = collected.by_url()
        self.assertEqual(len(collected.items), 2)
        new = items[self.server.url("/new")]
        self.assertEqual(new["redirect_urls"],
                         [self.server.url("/old"), self.server.url("/older")])
        self.assertEqual((new["status"], new["depth"]), (200, 1))
        self.assertEqual(self.server.hits["/new"], 1)

    @defer.inlineCallbacks
    def test_error_pages_are_items(self):
        """A 404, a 500 and a 302 without a Location are recorded as pages, not followed."""
        start = self.server.add_page("/", links=["/missing", "/broken", "/nowhere"])
        self.server.add_page("/missing", status=404, links=["/behind-404"], title="gone")
        self.server.add("/broken", Status(500))
        self.server.add("/nowhere", Status(302))
        _, collected = yield site_crawl([start], {"RETRY_ENABLED": False})
        statuses = {url.rsplit("/", 1)[1]: item["status"]
                    for url, item in collected.by_url().items()}
        self.assertEqual(statuses, {"": 200, "missing": 404, "broken": 500, "nowhere": 302})
        self.assertEqual(collected.by_url()[self.server.url("/missing")]["title"], "gone")
        self.assertNotIn("/behind-404", self.server.hits)


class CheckStartUrlTests(unittest.TestCase):
    """L{check_start_url}: what cannot be fetched in principle is a usage error."""

    def test_good_urls_pass(self):
        """http and https URLs with a host pass, IPv6 literals included."""
        for url in ("http://127.0.0.1:8800/", "https://example.com", "http://[::1]:80/x"):
            check_start_url(url)

    def test_refused(self):
        """Another scheme, a malformed URL, no host, a bare word: each a UsageError."""
        for url, words in (("ftp://example.com/", "only http and https"),
                           ("http://[::1", "not a valid URL"),
                           ("http://example.com:99999/", "not a valid URL"),
                           ("http:///path", "has no host"),
                           ("example.com", "http://example.com/")):
            with self.assertRaises(UsageError) as caught:
                check_start_url(url)
            self.assertIn(words, str(caught.exception))


class CrawlCommandLineTests(unittest.TestCase):
    """C{python -m tinyscrapy crawl ...} in a child: exit statuses and the one-line errors."""

    def setUp(self):
        self.server = serve(self)
        self.tmp = os.path.abspath(self.mktemp())
        os.makedirs(self.tmp)

    @defer.inlineCallbacks
    def assertRefused(self, args, words, cwd=None):
        code, _, err = yield run_command(reactor, args, cwd=cwd or self.tmp)
        self.assertEqual(code, 2, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn(words, err)
        self.assertNotIn("Traceback", err)

    @defer.inlineCallbacks
    def test_bad_start_urls_are_usage_errors(self):
        """A bare word, ftp:// and a malformed URL: exit 2, one line, before any start."""
        yield self.assertRefused(["crawl", "example"], "crawl takes URLs")
        yield self.assertRefused(["crawl", "ftp://127.0.0.1/"], "only http and https")
        yield self.assertRefused(["crawl", "http://[::1"], "not a valid URL")

    def test_spider_name_suggests_run(self):
        """crawl quotes where ./spiders has a spider named quotes: did you mean run quotes?"""
        return self.assertRefused(["crawl", "quotes"], "did you mean `run quotes`?", cwd=ROOT)

    @defer.inlineCallbacks
    def test_nothing_fetched_exits_1(self):
        """A start URL whose host refuses: one line saying so at the end, exit 1."""
        closed = TestServer().start()
        url = closed.url("/")
        yield closed.stop()
        code, out, err = yield run_command(
            reactor, ["crawl", url, "-s", "RETRY_ENABLED=False", "-L", "WARNING"])
        self.assertEqual(code, 1, err)
        last = err.strip().splitlines()[-1]
        self.assertIn(f"nothing was fetched: the start request of {url} failed: "
                      "connection refused", last)
        self.assertEqual(out, "")

    @defer.inlineCallbacks
    def test_robots_forbidding_everything_exits_1(self):
        """robots.txt disallows the start URL: nothing fetched, exit 1, the reason said."""
        self.server.add("/robots.txt", Robots("User-agent: *\nDisallow: /\n"))
        start = self.server.add_page("/")
        code, _, err = yield run_command(reactor, ["crawl", start, "-L", "WARNING"])
        self.assertEqual(code, 1, err)
        self.assertIn("forbidden by robots.txt", err.strip().splitlines()[-1])
        self.assertEqual(self.server.hits["/"], 0)

    @defer.inlineCallbacks
    def test_start_page_404_and_some_failures_exit_0(self):
        """A start page that answers 404 was fetched; a failed link keeps exit 0 too."""
        start = self.server.add_page("/", status=404, links=["/drop"])
        self.server.add("/drop", Drop())
        out = os.path.join(self.tmp, "items.jsonl")
        code, _, err = yield run_command(
            reactor, ["crawl", start, "-O", out, "-s", "RETRY_ENABLED=False", "-L", "WARNING"])
        self.assertEqual(code, 0, err)
        self.assertNotIn("nothing was fetched", err)
        with open(out) as f:
            self.assertEqual([json.loads(line)["status"] for line in f], [404])


class SiteTitleTests(unittest.TestCase):
    """The crawl command's title is string(//title), stripped, found the quick way."""

    def test_title_as_string_of_the_first_title(self):
        """Head or body, nested text, empty, none, several: as string(//title) says."""
        from tinyscrapy.http import HttpResponse, Request
        pages = [
            "<html><head><title> Shop </title></head><body><title>x</title></body></html>",
            "<html><head></head><body><svg><title>in svg</title></svg></body></html>",
            "<title>bare <b>bold</b></title><p>text",
            "<html><head><title></title></head><body><title>later</title></body></html>",
            "<p>no title at all</p>",
            "<html><body><p>late</p><title>after the body</title></body></html>",
        ]
        for html in pages:
            url = "http://127.0.0.1/p"
            response = HttpResponse(url, 200, {"Content-Type": "text/html"},
                                    html.encode(), Request(url))
            expected = response.root.xpath("string(//title)").strip() or None
            self.assertEqual(SiteCrawler._title(response), expected, html)
