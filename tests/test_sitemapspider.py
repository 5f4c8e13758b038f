"""
L{SitemapSpider} against a real sitemap site: robots.txt C{Sitemap:} lines, a sitemap
index, gzip sitemaps, alternates, rules, follow patterns, filters and size limits.
"""

import gzip
import logging
import struct
import zlib

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy import signals
from tinyscrapy.crawler import Crawler
from tinyscrapy.settings import Settings
from tinyscrapy.spiders import SitemapSpider
from tinyscrapy.utils.gz import SizeExceeded, gunzip
from tinyscrapy.utils.sitemap import Sitemap, sitemap_urls_from_robots

from .logs import capture_logs
from .servers import Page, TestServer

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
XHTML = 'xmlns:xhtml="http://www.w3.org/1999/xhtml"'


def urlset(*entries):
    """A C{urlset}; each entry is a URL or C{(url, [alternate URLs], lastmod)}."""
    parts = []
    for entry in entries:
        url, alternates, lastmod = entry if isinstance(entry, tuple) else (entry, (), None)
        links = "".join(f'<xhtml:link rel="alternate" hreflang="x" href="{a}"/>'
                        for a in alternates)
        mod = f"<lastmod>{lastmod}</lastmod>" if lastmod else ""
        parts.append(f"<url><loc>{url}</loc>{mod}{links}</url>")
    return f'<?xml version="1.0"?><urlset {NS} {XHTML}>{"".join(parts)}</urlset>'.encode()


def index(*urls):
    entries = "".join(f"<sitemap><loc>{url}</loc></sitemap>" for url in urls)
    return f'<?xml version="1.0"?><sitemapindex {NS}>{entries}</sitemapindex>'.encode()


def cheap_bomb(megabytes):
    """Gzip of C{megabytes} MiB of zeros, about 1 KiB a MiB (one flushed block, repeated)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = bytes(1 << 20)
    first = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    block = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(megabytes):
        crc = zlib.crc32(zeros, crc)
    trailer = b"\x03\x00" + struct.pack("<II", crc, (megabytes << 20) & 0xFFFFFFFF)
    return first + block * (megabytes - 1) + trailer


class Shop(SitemapSpider):
    """Products and pages from the site's sitemaps, each to its own callback."""

    name = "shop"
    sitemap_rules = [("/product/", "parse_product"), ("/page/", "parse")]
    sitemap_follow = ["/sitemap-"]

    def parse(self, response):
        yield {"page": response.url, "depth": response.meta["depth"]}

    def parse_product(self, response):
        yield {"product": response.url}


class SitemapSpiderTests(unittest.TestCase):
    """A sitemap site: robots.txt -> index -> a gzip sitemap and a plain one."""

    def setUp(self):
        self.server = server = TestServer().start()
        self.addCleanup(self.server.stop)
        url = server.url
        server.add("/robots.txt", Page(
            f"User-agent: *\nDisallow:\nSitemap: {url('/sitemap_index.xml')}\n"
            f"sitemap: /sitemap-pages.xml\n", content_type="text/plain"))
        server.add("/sitemap_index.xml", Page(index(
            url("/sitemap-products.xml.gz"), url("/other-index.xml")),
            content_type="application/xml"))
        server.add("/sitemap-products.xml.gz", Page(gzip.compress(urlset(
            (url("/product/1"), (), "2020-01-01"), (url("/product/2"), (), "2024-05-01"))),
            content_type="application/x-gzip"))
        server.add("/sitemap-pages.xml", Page(urlset(
            (url("/page/en"), [url("/page/de")], None), url("/elsewhere")),
            content_type="text/html"))  # a wrong type: the .xml name still counts
        server.add("/other-index.xml", Page(index(url("/product/never")),
                                            content_type="text/xml"))
        for path in ("/product/1", "/product/2", "/page/en", "/page/de", "/elsewhere"):
            server.add_page(path)

    def crawl(self, spidercls, settings=None, **spargs):
        base = {"LOG_LEVEL": "WARNING", "FEEDS": {}}
        base.update(settings or {})
        crawler = Crawler(spidercls, Settings(base))
        items = []

        def scraped(item, response, spider):
            items.append(item)
        crawler.signals.connect(scraped, signals.item_scraped)
        d = crawler.crawl(**spargs)
        d.addCallback(_pair, crawler, items)
        return d

    @defer.inlineCallbacks
    def test_robots_index_gzip_rules_and_follow(self):
        """From robots.txt: the index is followed where sitemap_follow says, the gzip
        sitemap read, each page sent to the first rule that matches."""
        _, items = yield self.crawl(Shop, sitemap_urls=[self.server.url("/robots.txt")])
        url = self.server.url
        self.assertEqual(sorted(i["product"] for i in items if "product" in i),
                         [url("/product/1"), url("/product/2")])
        self.assertEqual([i["page"] for i in items if "page" in i], [url("/page/en")])
        self.assertEqual(self.server.hits["/other-index.xml"], 0)  # not followed
        self.assertEqual(self.server.hits["/elsewhere"], 0)  # no rule matches
        self.assertEqual([i["depth"] for i in items if "page" in i], [2])

    @defer.inlineCallbacks
    def test_alternate_links(self):
        """sitemap_alternate_links: the <xhtml:link> alternates are crawled too."""
        class Alternates(Shop):
            sitemap_alternate_links = True
        _, items = yield self.crawl(Alternates,
                                    sitemap_urls=[self.server.url("/sitemap-pages.xml")])
        self.assertEqual(sorted(i["page"] for i in items),
                         [self.server.url("/page/de"), self.server.url("/page/en")])

    @defer.inlineCallbacks
    def test_sitemap_filter(self):
        """sitemap_filter() sees each entry's fields and chooses which are crawled."""
        class Recent(Shop):
            def sitemap_filter(self, entries):
                for entry in entries:
                    if entry.get("lastmod", "9999") >= "2024":
                        yield entry
        _, items = yield self.crawl(
            Recent, sitemap_urls=[self.server.url("/sitemap-products.xml.gz")])
        self.assertEqual(items, [{"product": self.server.url("/product/2")}])

    @defer.inlineCallbacks
    def test_gzip_bomb_stops_at_the_size_limit(self):
        """A gzip sitemap inflating past DOWNLOAD_MAXSIZE is ignored, counted, logged."""
        self.server.add("/bomb.xml.gz", Page(cheap_bomb(64), content_type="application/gzip"))
        logs = capture_logs(self)
        crawler, items = yield self.crawl(
            Shop, {"DOWNLOAD_MAXSIZE": 1 << 20}, sitemap_urls=[self.server.url("/bomb.xml.gz")])
        self.assertEqual(items, [])
        self.assertEqual(crawler.stats.get_value("sitemap/ignored_too_large"), 1)
        warnings = [m for m in logs.messages(logging.WARNING) if "bomb.xml.gz" in m]
        self.assertEqual(len(warnings), 1)
        self.assertIn("size limit", warnings[0])

    @defer.inlineCallbacks
    def test_gzip_bomb_refused_by_the_ratio(self):
        """A 1 GiB sitemap bomb (1 MB on the wire), the size limit left at its 1 GiB
        default: refused by DOWNLOAD_MAXRATIO a mebibyte in, the process growing by far
        less than 200 MB."""
        import resource
        self.server.add("/huge.xml.gz", Page(cheap_bomb(1024),
                                             content_type="application/gzip"))
        logs = capture_logs(self)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB
        crawler, items = yield self.crawl(Shop, sitemap_urls=[self.server.url("/huge.xml.gz")])
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
        self.assertEqual(items, [])
        self.assertEqual(crawler.stats.get_value("sitemap/ignored_too_large"), 1)
        self.assertLess(grown, 200 * 1024)
        warnings = [m for m in logs.messages(logging.WARNING) if "huge.xml.gz" in m]
        self.assertEqual(len(warnings), 1)
        self.assertIn("compression bomb", warnings[0])

    @defer.inlineCallbacks
    def test_not_a_sitemap_is_ignored(self):
        """An HTML page given as a sitemap is ignored with one warning."""
        logs = capture_logs(self)
        crawler, items = yield self.crawl(Shop, sitemap_urls=[self.server.url("/page/en")])
        self.assertEqual(items, [])
        self.assertEqual(crawler.stats.get_value("sitemap/ignored_invalid"), 1)
        self.assertEqual(len([m for m in logs.messages(logging.WARNING)
                              if "Ignoring invalid sitemap" in m]), 1)


def _pair(_, crawler, items):
    return crawler, items


class SitemapReadingTests(unittest.TestCase):
    """The parts: XML read safely, robots.txt lines, bounded gunzip."""

    def test_entities_are_not_expanded(self):
        """A billion-laughs sitemap does not expand its entities."""
        body = (b'<?xml version="1.0"?><!DOCTYPE u [<!ENTITY a "aaaaaaaaaa">'
                b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
                b'<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>'
                b'<urlset><url><loc>http://x/&c;</loc></url></urlset>')
        self.assertEqual([e["loc"] for e in Sitemap(body)], ["http://x/"])

    def test_external_entities_are_not_read(self):
        """An external entity naming a local file is not read."""
        path = self.mktemp()
        with open(path, "w") as f:
            f.write("SECRET")
        body = (f'<?xml version="1.0"?><!DOCTYPE u [<!ENTITY e SYSTEM "file://{path}">]>'
                f'<urlset><url><loc>http://x/&e;</loc></url></urlset>').encode()
        self.assertNotIn("SECRET", "".join(e["loc"] for e in Sitemap(body)))

    def test_robots_sitemap_lines(self):
        """Sitemap: lines in any case, relative ones made absolute."""
        text = "User-agent: *\nSITEMAP: /a.xml\n  Sitemap:http://o/b.xml\nDisallow: /x\n"
        self.assertEqual(list(sitemap_urls_from_robots(text, "http://h/robots.txt")),
                         ["http://h/a.xml", "http://o/b.xml"])

    def test_gunzip_is_bounded(self):
        """gunzip refuses to grow past max_size; members one after another are joined."""
        self.assertRaises(SizeExceeded, gunzip, cheap_bomb(32), 1 << 20)
        with self.assertRaises(SizeExceeded) as caught:
            gunzip(cheap_bomb(32), max_ratio=100, grace=1 << 20)
        self.assertIn("DOWNLOAD_MAXRATIO", str(caught.exception))
        sitemap = b"".join(b"<url><loc>http://example.com/p/%d</loc></url>" % n
                           for n in range(100000))  # 4.4 MB of a real sitemap's shape
        self.assertEqual(gunzip(gzip.compress(sitemap), max_ratio=100, grace=1 << 20),
                         sitemap)
        self.assertEqual(gunzip(gzip.compress(b"a") + gzip.compress(b"b")), b"ab")
        self.assertEqual(len(gunzip(cheap_bomb(2))), 2 << 20)
