"""
Tests for L{tinyscrapy.demo}, the embedded demo site, over HTTP on 127.0.0.1.
"""

import hashlib
import os
import sys
from urllib.parse import urljoin

import treq
from parsel import Selector
from twisted.internet import defer, reactor, utils
from twisted.trial import unittest
from twisted.web.client import HTTPConnectionPool

from tinyscrapy.demo import BOOK_CATEGORY_COUNT, BOOK_COUNT, QUOTE_COUNT, build_site, listen

PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Printed by a child process: a digest of every page of a freshly built site.
DIGEST_SCRIPT = """
import hashlib
from tinyscrapy.demo import build_site
site = build_site()
digest = hashlib.sha256()
for path in site.paths():
    digest.update(path.encode() + site.page(path)[1])
print(digest.hexdigest())
"""


def _site_digest(site):
    """The digest that L{DIGEST_SCRIPT} prints, computed in this process."""
    digest = hashlib.sha256()
    for path in site.paths():
        digest.update(path.encode() + site.page(path)[1])
    return digest.hexdigest()


class DemoSiteTests(unittest.TestCase):
    """The demo site's pages, links and headers, fetched with treq from a real port."""

    def setUp(self):
        self.ports = []
        self.base_url = self.listen()
        self.pool = HTTPConnectionPool(reactor, persistent=False)

    def tearDown(self):
        closing = [defer.maybeDeferred(port.stopListening) for port in self.ports]
        closing.append(self.pool.closeCachedConnections())
        return defer.gatherResults(closing)

    def listen(self):
        """Serve a new demo site on a free port; return its base URL."""
        port = listen(0)
        self.ports.append(port)
        return f"http://127.0.0.1:{port.getHost().port}"

    @defer.inlineCallbacks
    def fetch(self, url):
        """GET C{url} (a path is taken on the first site); fire with (response, body bytes)."""
        if url.startswith("/"):
            url = self.base_url + url
        response = yield treq.get(url, pool=self.pool, allow_redirects=False)
        body = yield response.content()
        return response, body

    @defer.inlineCallbacks
    def select(self, url):
        """GET C{url}, check it is a 200, and fire with a parsel L{Selector} of it."""
        response, body = yield self.fetch(url)
        self.assertEqual(response.code, 200, url)
        return Selector(text=body.decode("utf-8"))

    @defer.inlineCallbacks
    def walk(self, url, link_css):
        """
        Follow C{li.next a} from C{url} to the last page; fire with (pages visited, the
        absolute URLs of every link matched by C{link_css}, in order).
        """
        pages, links = 0, []
        while url:
            page = yield self.select(url)
            pages += 1
            links += [urljoin(url, href) for href in page.css(link_css).getall()]
            next_href = page.css("li.next a::attr(href)").get()
            url = next_href and urljoin(url, next_href)
        return pages, links

    @defer.inlineCallbacks
    def test_listing_has_twenty_products(self):
        """/books/ lists 20 books, each linking to its page with a relative href."""
        page = yield self.select("/books/")
        hrefs = page.css("article.product_pod h3 a::attr(href)").getall()
        self.assertEqual(len(hrefs), 20)
        self.assertTrue(all(href.startswith("item/") for href in hrefs), hrefs)

    @defer.inlineCallbacks
    def test_pagination_reaches_every_book(self):
        """Following next from /books/ visits 10 pages and 200 distinct books."""
        pages, books = yield self.walk(self.base_url + "/books/", "h3 a::attr(href)")
        self.assertEqual(pages, BOOK_COUNT // 20)
        self.assertEqual(len(books), BOOK_COUNT)
        self.assertEqual(len(set(books)), BOOK_COUNT)
        self.assertTrue(all("/books/item/" in url for url in books))

    @defer.inlineCallbacks
    def test_categories_partition_the_books(self):
        """The 10 categories, each followed through its pages, hold the 200 books once."""
        listing = yield self.select("/books/")
        categories = listing.css("ul.categories a::attr(href)").getall()
        self.assertEqual(len(categories), BOOK_CATEGORY_COUNT)
        books, longest = [], 0
        for href in categories:
            pages, found = yield self.walk(self.base_url + "/books/" + href, "h3 a::attr(href)")
            books += found
            longest = max(longest, pages)
        self.assertEqual(len(books), BOOK_COUNT)
        self.assertEqual(len(set(books)), BOOK_COUNT)
        self.assertGreater(longest, 1)

    @defer.inlineCallbacks
    def test_book_page_fields(self):
        """A book page has a title, a £ price, a rating class and an availability."""
        listing = yield self.select("/books/")
        link = listing.css("article.product_pod h3 a")[0]
        book_url = urljoin(self.base_url + "/books/", link.attrib["href"])
        page = yield self.select(book_url)
        self.assertEqual(page.css("h1::text").get(), link.attrib["title"])
        price = page.css("p.price::text").re_first(r"^£(\d+\.\d\d)$")
        self.assertGreater(float(price), 0)
        rating = page.css("p.star-rating::attr(class)").re_first(r"star-rating (\w+)")
        self.assertIn(rating, ["One", "Two", "Three", "Four", "Five"])
        availability = page.css("p.availability::text").get()
        self.assertRegex(availability, r"^(In stock \(\d+ available\)|Out of stock)$")
        self.assertEqual(len(page.css("ul.breadcrumb li")), 4)
        category = page.css("p.category a::attr(href)").get()
        yield self.select(urljoin(book_url, category))

    @defer.inlineCallbacks
    def test_quotes_first_page(self):
        """/quotes/ shows 10 quotes, each with text, author, tags and an author link."""
        page = yield self.select("/quotes/")
        quotes = page.css("div.quote")
        self.assertEqual(len(quotes), 10)
        for quote in quotes:
            self.assertTrue(quote.css("span.text::text").get().startswith("“"))
            self.assertTrue(quote.css("small.author::text").get())
            self.assertIsInstance(quote.css("div.tags a.tag::text").getall(), list)
        about = quotes[0].css("a[href^='/quotes/author/']::attr(href)").get()
        author = yield self.select(about)
        self.assertTrue(author.css("h3.author-title::text").get())
        self.assertTrue(author.css("span.author-born-date::text").get())
        self.assertTrue(author.css("div.author-description::text").get().strip())

    @defer.inlineCallbacks
    def test_quote_pagination(self):
        """Following next from /quotes/ visits 10 pages and 100 quotes."""
        pages, texts = yield self.walk(self.base_url + "/quotes/", "span.text::text")
        self.assertEqual(pages, QUOTE_COUNT // 10)
        self.assertEqual(len(set(texts)), QUOTE_COUNT)

    @defer.inlineCallbacks
    def test_tag_page(self):
        """A tag page lists only quotes that carry the tag."""
        page = yield self.select("/quotes/")
        tag = page.css("div.tags a.tag::text").get()
        tagged = yield self.select(f"/quotes/tag/{tag}/")
        quotes = tagged.css("div.quote")
        self.assertTrue(quotes)
        for quote in quotes:
            self.assertIn(tag, quote.css("a.tag::text").getall())

    @defer.inlineCallbacks
    def test_unknown_path_is_404(self):
        """An unknown path answers 404 with a small HTML page."""
        response, body = yield self.fetch("/books/item/no-such-book-999.html")
        self.assertEqual(response.code, 404)
        self.assertIn(b"404 Not Found", body)
        self.assertEqual(response.headers.getRawHeaders("content-type"),
                         ["text/html; charset=utf-8"])

    @defer.inlineCallbacks
    def test_missing_slash_redirects(self):
        """A known path without its final slash is redirected to it (301)."""
        response, _ = yield self.fetch("/quotes/page/2")
        self.assertEqual(response.code, 301)
        self.assertEqual(response.headers.getRawHeaders("location"), ["/quotes/page/2/"])

    @defer.inlineCallbacks
    def test_head_has_length_without_body(self):
        """HEAD answers GET's Content-Length with an empty body."""
        _, body = yield self.fetch("/books/")
        response = yield treq.head(self.base_url + "/books/", pool=self.pool)
        self.assertEqual(response.headers.getRawHeaders("content-length"), [str(len(body))])
        self.assertEqual((yield response.content()), b"")

    @defer.inlineCallbacks
    def test_content_type_and_charset(self):
        """Pages declare UTF-8 in the header and in a meta tag, and hold non-ASCII text."""
        response, body = yield self.fetch("/quotes/author/gabriel-garcia-marquez/")
        self.assertEqual(response.headers.getRawHeaders("content-type"),
                         ["text/html; charset=utf-8"])
        self.assertTrue(body.startswith(b"<!DOCTYPE html>"))
        self.assertIn(b'<meta charset="utf-8">', body)
        self.assertIn("Gabriel García Márquez", body.decode("utf-8"))

    @defer.inlineCallbacks
    def test_robots_txt_allows_everything(self):
        """/robots.txt is plain text that allows every path."""
        response, body = yield self.fetch("/robots.txt")
        self.assertEqual(response.headers.getRawHeaders("content-type"),
                         ["text/plain; charset=utf-8"])
        self.assertEqual(body, b"User-agent: *\nAllow: /\n")

    @defer.inlineCallbacks
    def test_two_builds_serve_identical_bytes(self):
        """Two sites built separately serve the same bytes for the same page."""
        other_url = self.listen()
        for path in ["/", "/books/page-3.html", "/quotes/page/4/", "/robots.txt"]:
            _, mine = yield self.fetch(self.base_url + path)
            _, theirs = yield self.fetch(other_url + path)
            self.assertEqual(mine, theirs, path)

    @defer.inlineCallbacks
    def test_identical_across_processes(self):
        """A process with another hash seed builds exactly the same pages."""
        env = dict(os.environ, PYTHONHASHSEED="12345", PYTHONPATH=PROJECT_ROOT)
        output = yield utils.getProcessOutput(sys.executable, ["-c", DIGEST_SCRIPT], env=env)
        self.assertEqual(output.decode().strip(), _site_digest(build_site()))

