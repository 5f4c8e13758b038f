"""
LinkExtractor: each filter against a page with every kind of link, then a real crawl.
"""

import re

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy import Spider
from tinyscrapy.http import HttpResponse, Request
from tinyscrapy.link import Link
from tinyscrapy.linkextractors.lxmlhtml import IGNORED_EXTENSIONS, LinkExtractor
from tinyscrapy.utils.url import canonical_url

from .helpers import crawl, serve

EVERY_KIND = """<!DOCTYPE html>
<html><head><title>every kind of link</title></head>
<body>
<nav>
  <a href="/nav/home">Home</a>
  <a href="/nav/about#team">About <b>us</b></a>
</nav>
<main>
  <a href="item/1.html">One</a>
  <a href=" item/2.html
  ">Two</a>
  <a href="/item/1.html#again">One again</a>
  <a href="/item/3.html" rel="external nofollow">Three</a>
  <a href="http://127.0.0.1/ITEM/4.html?b=2&amp;a=1">Four</a>
  <a href="//sub.example.com/item/5.html">Five</a>
  <a href="https://www.example.org/item/6.html">Six</a>
  <a href="/login?next=/item/1.html">Log in</a>
  <a href="/photo.JPG">photo</a>
  <a href="/archive.tar.gz">archive</a>
  <a href="/film.mp4?x=1">film</a>
  <a href="/doc.pdf">doc</a>
  <a href="/not-a-file.html.">trailing dot</a>
  <a href="/feed/">feed</a>
  <a href="javascript:void(0)">js</a>
  <a href="mailto:me@example.com">mail</a>
  <a href="tel:+15550100">call</a>
  <a href="data:text/plain,hi">data</a>
  <a href="file:///etc/passwd">file</a>
  <a href="ftp://example.com/x">ftp</a>
  <a href="http://[broken">broken</a>
  <a>no href</a>
  <map><area href="/area/1" alt="area"></map>
  <img src="/img/1.png">
  <link href="/style.css" rel="stylesheet">
</main>
<footer><a href="/footer/contact">Contact</a></footer>
</body></html>
"""

PAGE_URL = "http://127.0.0.1/dir/page.html"


def _page(html=EVERY_KIND, url=PAGE_URL):
    return HttpResponse(url, 200, {"Content-Type": "text/html; charset=utf-8"},
                        html.encode("utf-8"), Request(url))


def _urls(extractor, response=None):
    return [link.url for link in extractor.extract_links(response or _page())]


def _followable(extractor, urls):
    """What extract_urls gives for extract_links' C{urls}: fragments off, and with
    C{unique}, the first of each canonical URL."""
    followable, seen = [], set()
    for url in urls:
        url = url.partition("#")[0]
        key = canonical_url(url)
        if not extractor.unique or key not in seen:
            seen.add(key)
            followable.append(url)
    return followable


class LinkExtractorTests(unittest.TestCase):
    """Each filter of LinkExtractor on one page."""

    def test_defaults(self):
        """a and area hrefs, resolved, http(s) only, no files, each URL once (fragment
        included, as in Scrapy), in order."""
        self.assertEqual(_urls(LinkExtractor()), [
            "http://127.0.0.1/nav/home",
            "http://127.0.0.1/nav/about#team",
            "http://127.0.0.1/dir/item/1.html",
            "http://127.0.0.1/dir/item/2.html",
            "http://127.0.0.1/item/1.html#again",
            "http://127.0.0.1/item/3.html",
            "http://127.0.0.1/ITEM/4.html?b=2&a=1",
            "http://sub.example.com/item/5.html",
            "https://www.example.org/item/6.html",
            "http://127.0.0.1/login?next=/item/1.html",
            "http://127.0.0.1/not-a-file.html.",
            "http://127.0.0.1/feed/",
            "http://127.0.0.1/area/1",
            "http://127.0.0.1/footer/contact",
        ])

    def test_link_fields(self):
        """Text (markup inside included), the fragment in the URL (Link.fragment empty, as
        in Scrapy), nofollow from rel."""
        links = {link.url: link for link in LinkExtractor().extract_links(_page())}
        about = links["http://127.0.0.1/nav/about#team"]
        self.assertEqual((about.text, about.fragment, about.nofollow), ("About us", "", False))
        self.assertTrue(links["http://127.0.0.1/item/3.html"].nofollow)
        self.assertEqual(links["http://127.0.0.1/area/1"].text, "")

    def test_allow_and_deny(self):
        """allow keeps matches only; deny wins over allow; compiled patterns work too."""
        self.assertEqual(_urls(LinkExtractor(allow=r"/item/\d")), [
            "http://127.0.0.1/dir/item/1.html", "http://127.0.0.1/dir/item/2.html",
            "http://127.0.0.1/item/1.html#again", "http://127.0.0.1/item/3.html",
            "http://sub.example.com/item/5.html", "https://www.example.org/item/6.html",
            "http://127.0.0.1/login?next=/item/1.html",
        ])
        urls = _urls(LinkExtractor(allow=[r"/item/", re.compile("ITEM")],
                                   deny=[r"login", r"example\.(com|org)", r"/dir/"]))
        self.assertEqual(urls, ["http://127.0.0.1/item/1.html#again",
                                "http://127.0.0.1/item/3.html",
                                "http://127.0.0.1/ITEM/4.html?b=2&a=1"])

    def test_domains(self):
        """allow_domains admits subdomains; deny_domains refuses them."""
        self.assertEqual(_urls(LinkExtractor(allow_domains=["example.com", "example.org"])),
                         ["http://sub.example.com/item/5.html",
                          "https://www.example.org/item/6.html"])
        urls = _urls(LinkExtractor(deny_domains=["127.0.0.1", "example.org"]))
        self.assertEqual(urls, ["http://sub.example.com/item/5.html"])

    def test_restrict_css_and_xpaths(self):
        """Only links inside the selected parts; overlapping parts give each link once."""
        self.assertEqual(_urls(LinkExtractor(restrict_css="nav")),
                         ["http://127.0.0.1/nav/home", "http://127.0.0.1/nav/about#team"])
        self.assertEqual(_urls(LinkExtractor(restrict_xpaths=["//footer", "//nav/a[1]"])),
                         ["http://127.0.0.1/footer/contact", "http://127.0.0.1/nav/home"])
        urls = _urls(LinkExtractor(restrict_css=["nav", "nav a"], unique=False))
        self.assertEqual(urls, ["http://127.0.0.1/nav/home", "http://127.0.0.1/nav/about#team"])

    def test_tags_and_attrs(self):
        """Other elements and attributes can be scanned."""
        urls = _urls(LinkExtractor(tags=["img", "link"], attrs=["src", "href"],
                                   deny_extensions=[]))
        self.assertEqual(urls, ["http://127.0.0.1/img/1.png", "http://127.0.0.1/style.css"])

    def test_extensions(self):
        """The default list drops images, archives, media, documents; () keeps them."""
        self.assertTrue({"jpg", "png", "gz", "zip", "mp4", "pdf", "css"} <= IGNORED_EXTENSIONS)
        everything = _urls(LinkExtractor(deny_extensions=()))
        for path in ("/photo.JPG", "/archive.tar.gz", "/film.mp4?x=1", "/doc.pdf"):
            self.assertIn("http://127.0.0.1" + path, everything)
        only_pdf = _urls(LinkExtractor(deny_extensions=["pdf"]))
        self.assertIn("http://127.0.0.1/photo.JPG", only_pdf)
        self.assertNotIn("http://127.0.0.1/doc.pdf", only_pdf)

    def test_base_href(self):
        """<base href> is where relative links start from."""
        html = EVERY_KIND.replace("<head>", '<head><base href="http://base.example/b/">')
        urls = _urls(LinkExtractor(restrict_css="main", allow="item/1"), _page(html))
        self.assertEqual(urls, ["http://base.example/b/item/1.html",
                                "http://base.example/item/1.html#again",
                                "http://base.example/login?next=/item/1.html"])

    def test_unique_canonicalize_process_value_text(self):
        """unique=False keeps repeats; canonicalize rewrites; process_value filters and
        rewrites; restrict_text matches the link text."""
        repeated = _urls(LinkExtractor(allow=r"item/1", unique=False))
        self.assertEqual(len(repeated), 3)
        canonical = _urls(LinkExtractor(allow="ITEM", canonicalize=True))
        self.assertEqual(canonical, ["http://127.0.0.1/ITEM/4.html?a=1&b=2"])
        upper = _urls(LinkExtractor(restrict_css="nav", process_value=_only_home))
        self.assertEqual(upper, ["http://127.0.0.1/nav/HOME"])
        by_text = _urls(LinkExtractor(restrict_text=r"^(One|Two)$"))
        self.assertEqual(by_text, ["http://127.0.0.1/dir/item/1.html",
                                   "http://127.0.0.1/dir/item/2.html"])

    def test_not_text(self):
        """An image or a PDF has no links (and raises nothing)."""
        response = HttpResponse(PAGE_URL, 200, {"Content-Type": "image/png"}, b"\x89PNG....",
                                Request(PAGE_URL))
        self.assertEqual(LinkExtractor().extract_links(response), [])

    def test_extract_urls_is_extract_links_urls(self):
        """extract_urls (the XPath fast path and the general one) gives extract_links' URLs
        to follow: without fragments, each canonical URL once (with unique)."""
        extractors = [LinkExtractor(), LinkExtractor(unique=False),
                      LinkExtractor(deny=r"/about", canonicalize=True),
                      LinkExtractor(tags=("a", "area", "link"), attrs=("href", "src")),
                      LinkExtractor(deny_extensions=()),
                      LinkExtractor(restrict_css="nav"), LinkExtractor(process_value=str.upper)]
        for html in (EVERY_KIND, '<base href="http://other/base/"><a href="x">x</a>'):
            response = _page(html)
            for extractor in extractors:
                self.assertEqual(extractor.extract_urls(response), _followable(
                    extractor, [link.url for link in extractor.extract_links(response)]))
        self.assertTrue(LinkExtractor()._plain)
        self.assertFalse(LinkExtractor(restrict_css="nav")._plain)

    def test_matches(self):
        """matches() applies the URL filters to one URL."""
        extractor = LinkExtractor(allow="/item/", deny_domains=["example.com"])
        self.assertTrue(extractor.matches("http://h/item/1"))
        self.assertFalse(extractor.matches("http://h/other"))
        self.assertFalse(extractor.matches("http://a.example.com/item/1"))
        self.assertFalse(extractor.matches("http://h/item/1.zip"))

    def test_link_value(self):
        """Links compare by their fields."""
        self.assertEqual(Link("http://h/", "t"), Link("http://h/", "t"))
        self.assertNotEqual(Link("http://h/", "t"), Link("http://h/", "t", nofollow=True))
        self.assertEqual(len({Link("http://h/"), Link("http://h/")}), 1)

    def test_one_extractor_over_many_pages(self):
        """An extractor reused over pages (as a crawl does) answers each page as a fresh one
        would: per directory, per <base href>, per host, and with a bounded memo."""
        from tinyscrapy.linkextractors import lxmlhtml as links
        shared = LinkExtractor(deny=r"/private/")
        html = ('<a href="next.html">n</a><a href="../up.html">u</a><a href="/root">r</a>'
                '<a href="?page=2">q</a><a href="/private/x">p</a><a href="#top">t</a>')
        pages = [_page(html, "http://127.0.0.1/a/one.html"),
                 _page(html, "http://127.0.0.1/a/two.html"),
                 _page(html, "http://127.0.0.1/b/c/one.html"),
                 _page(html, "http://127.0.0.2:8080/a/one.html"),
                 _page('<base href="http://127.0.0.1/z/">' + html, "http://127.0.0.1/a/x")]
        for _ in range(2):  # the second round answers from the memo
            for page in pages:
                fresh = LinkExtractor(deny=r"/private/")
                self.assertEqual(shared.extract_urls(page), fresh.extract_urls(page))
                self.assertEqual(_urls(shared, page), _urls(fresh, page))
        self.assertEqual(shared.extract_urls(pages[2]), [
            "http://127.0.0.1/b/c/next.html", "http://127.0.0.1/b/up.html",
            "http://127.0.0.1/root", "http://127.0.0.1/b/c/one.html?page=2",
            "http://127.0.0.1/b/c/one.html"])
        self.assertEqual(shared.extract_urls(pages[4])[:2], [
            "http://127.0.0.1/z/next.html", "http://127.0.0.1/up.html"])
        for number in range(links.MEMO_SIZE + 10):
            shared.extract_urls(_page(f'<a href="p{number}.html">x</a>',
                                      f"http://127.0.0.1/d{number}/"))
        self.assertLessEqual(len(shared._memo), links.MEMO_SIZE)


def _only_home(value):
    return value.replace("home", "HOME") if "home" in value else None


class ParserLinkExtractorTests(unittest.TestCase):
    """LxmlParserLinkExtractor, Scrapy's low-level extractor."""

    def test_tags_attributes_process_unique(self):
        """Every accepted attribute of every accepted element, joined to the base, passed
        to process; unique compares canonical URLs; rel=nofollow is kept."""
        from tinyscrapy.http import HtmlResponse
        from tinyscrapy.linkextractors.lxmlhtml import LxmlParserLinkExtractor
        body = (b'<base href="http://127.0.0.1/docs/"><a href="p.html?b=2&amp;a=1">one</a>'
                b'<a href="p.html?a=1&amp;b=2">two</a><a href=" q.html " rel="nofollow">q</a>'
                b'<img src="i.png"><area href="/skip">')
        response = HtmlResponse("http://127.0.0.1/", body=body)
        links = LxmlParserLinkExtractor().extract_links(response)
        self.assertEqual([link.url for link in links],
                         ["http://127.0.0.1/docs/p.html?b=2&a=1",
                          "http://127.0.0.1/docs/p.html?a=1&b=2",
                          "http://127.0.0.1/docs/q.html"])
        self.assertEqual([link.nofollow for link in links], [False, False, True])
        unique = LxmlParserLinkExtractor(unique=True).extract_links(response)
        self.assertEqual([link.text for link in unique], ["one", "q"])
        images = LxmlParserLinkExtractor(tag=lambda name: name in ("img", "area"),
                                         attr=lambda name: name in ("src", "href"),
                                         process=lambda url: None if "skip" in url else url)
        self.assertEqual([link.url for link in images.extract_links(response)],
                         ["http://127.0.0.1/docs/i.png"])


class ExtractorSpider(Spider):
    """Follows what a LinkExtractor finds, with follow_all."""

    name = "extractor"
    links = LinkExtractor(deny=r"/private/")

    def start_requests(self):  # plain: the start page is remembered, links back are seen
        for url in self.start_urls:
            yield Request(url)

    def parse(self, response):
        yield {"url": response.url}
        yield from response.follow_all(self.links.extract_links(response))


class LinkCrawlTests(unittest.TestCase):
    """A crawl driven by a LinkExtractor."""

    def setUp(self):
        self.server = serve(self)

    @defer.inlineCallbacks
    def test_crawl_fetches_only_pages_worth_fetching(self):
        """Denied paths, files and non-http links are never requested; pages once each."""
        start = self.server.add_page("/", links=[
            "/a", "/a#x", "/private/secret", "/big.zip", "/pic.png", "mailto:a@b",
            "javascript:go()", "/b"])
        self.server.add_page("/a", links=["/", "/b", "/b?", "/A"])
        self.server.add_page("/b", links=["/a"])
        self.server.add_page("/A")
        crawler = yield crawl(ExtractorSpider, start_urls=[start])
        self.assertEqual(dict(self.server.hits), {"/": 1, "/a": 1, "/b": 1, "/A": 1})
        stats = crawler.stats
        self.assertIsNone(stats.get_value("ledger/dropped"))
        self.assertGreater(stats.get_value("dupefilter/skipped_early"), 0)
        self.assertEqual(stats.get_value("ledger/missing"), 0)


class ScrapyLinkTests(unittest.TestCase):
    """Link URLs as Scrapy 2.19 gives them: fragment kept, percent-encoded in the page's
    encoding, unique by the URL as it is (by its canonical form with canonicalize)."""

    def test_fragment_is_part_of_the_url(self):
        """/s.html, /s.html#a and /s.html#b are three links; extract_urls follows one."""
        page = _page('<a href="/s.html">1</a><a href="/s.html#a">2</a><a href="/s.html#b">3</a>')
        self.assertEqual(_urls(LinkExtractor(), page), [
            "http://127.0.0.1/s.html", "http://127.0.0.1/s.html#a", "http://127.0.0.1/s.html#b"])
        self.assertEqual(_urls(LinkExtractor(canonicalize=True), page),
                         ["http://127.0.0.1/s.html"])
        self.assertEqual(LinkExtractor().extract_urls(page), ["http://127.0.0.1/s.html"])

    def test_unique_compares_urls_as_they_are(self):
        """Two spellings of one query are two links, one with canonicalize."""
        html = '<div><a href="/b?a=1&amp;b=2">1</a></div><div><a href="/b?b=2&amp;a=1">2</a></div>'
        for kwargs in ({}, {"restrict_css": "div"}):
            self.assertEqual(_urls(LinkExtractor(**kwargs), _page(html)), [
                "http://127.0.0.1/b?a=1&b=2", "http://127.0.0.1/b?b=2&a=1"])
            self.assertEqual(_urls(LinkExtractor(canonicalize=True, **kwargs), _page(html)),
                             ["http://127.0.0.1/b?a=1&b=2"])

    def test_urls_encoded_in_the_page_encoding(self):
        """The path as UTF-8, the query in the page's encoding, the filters on the result;
        one extractor gives each page its own encoding."""
        html = '<a href="/&hearts;/you?c=&euro;">text</a>'
        shared = LinkExtractor(allow="%A4")
        latin = HttpResponse(PAGE_URL, 200, {"Content-Type": "text/html; charset=iso8859-15"},
                             html.encode("iso8859-15"), Request(PAGE_URL))
        for _ in range(2):
            self.assertEqual(_urls(LinkExtractor(), latin),
                             ["http://127.0.0.1/%E2%99%A5/you?c=%A4"])
            self.assertEqual(shared.extract_urls(latin), ["http://127.0.0.1/%E2%99%A5/you?c=%A4"])
            self.assertEqual(shared.extract_urls(_page(html)), [])  # c=%E2%82%AC in UTF-8
        self.assertEqual(_urls(LinkExtractor(), _page(html)),
                         ["http://127.0.0.1/%E2%99%A5/you?c=%E2%82%AC"])

    def test_encoding_agrees_with_the_request(self):
        """Each link's URL is what a Request made from the joined link sends, on a plain
        page URL and on one that needs encoding (the fast path skips only what needs none)."""
        from urllib.parse import urljoin

        from tinyscrapy.http.request import request_url
        values = ["a b.html", "x|y", "/p?q=a b", "#a#b", "/%zz", "../up.html", "p.html#t",
                  "HTTP://EXAMPLE.COM/Up", "http://h/caf\u00e9", "/caf\u00e9?c=\u00e9", "?q=1",
                  "//other.example/x", "item-1.html?b=2&a=1"]
        html = "".join(f'<a href="{value}">x</a>' for value in values)
        for page_url in ("http://127.0.0.1/dir/page.html", "http://127.0.0.1/d%20ir/p.html",
                         "http://127.0.0.1/d ir/p.html"):
            page = _page(html, page_url)
            expected = [request_url(urljoin(page.url, value), "utf-8") for value in values]
            self.assertEqual(_urls(LinkExtractor(unique=False), page), expected)

    def test_link_url_must_be_text(self):
        """Link(bytes) is a TypeError, as in Scrapy."""
        self.assertRaises(TypeError, Link, b"http://www.example.com/\xc2\xa3")


class EncodedLinkCrawlTests(unittest.TestCase):
    """A LinkExtractor's encoded URLs, followed in a crawl."""

    def setUp(self):
        self.server = serve(self)

    @defer.inlineCallbacks
    def test_query_in_the_page_encoding_reaches_the_server(self):
        """A link on a latin-9 page is fetched with its query in latin-9, once."""
        from .servers import Page
        body = '<a href="/you?c=&euro;">1</a><a href="/you?c=&euro;#top">2</a>'
        start = self.server.add("/", Page(body.encode("iso8859-15"),
                                          content_type="text/html; charset=iso8859-15"))
        self.server.add_page("/you")
        yield crawl(ExtractorSpider, start_urls=[start])
        self.assertEqual({path: hits for path, hits in self.server.hits.items()
                          if path.startswith("/you")}, {"/you?c=%A4": 1})


SCANNED = """<html><body>
<a href="/a.html">a</a>
<a href="http://127.0.0.1:abc/bad-port.html">bad port</a>
<a href="http://127.0.0.1:99999/big-port.html">big port</a>
<a href="http://127.0.0.1:8080/good-port.html">good port</a>
<img src="/img.html">
<div data-url="/div.html">div</div>
<link href="/link.html">
</body></html>
"""

XHTML = """<?xml version="1.0"?>
<html xmlns="http://www.w3.org/1999/xhtml"><body>
<p><a href="/x1.html">one</a></p><map><area href="/x2.html"/></map>
</body></html>
"""


def _path(url):
    """C{url} less its scheme and authority."""
    return "/" + url.split("/", 3)[3]


class ScannedPagesTests(unittest.TestCase):
    """Tags, attributes, XHTML and ports, on pages fetched from a real server."""

    def setUp(self):
        self.server = serve(self)

    @defer.inlineCallbacks
    def fetch(self, path, body, content_type="text/html; charset=utf-8"):
        """The response a crawl got for C{body} served at C{path}."""
        from .recording import Recorder
        from .servers import Page
        url = self.server.add(path, Page(body, content_type=content_type))
        crawler = yield crawl(Recorder, start_urls=[url])
        response, = crawler.spider.responses
        return response

    def paths(self, extractor, response):
        """The paths of the links, and of the URLs of the fast path (they must agree)."""
        links = [_path(link.url) for link in extractor.extract_links(response)]
        urls = [_path(url) for url in extractor.extract_urls(response)]
        self.assertEqual(links, urls)
        return links

    @defer.inlineCallbacks
    def test_tags_none_and_attrs_none_scan_nothing(self):
        """tags=None or attrs=None: no links, as in Scrapy."""
        response = yield self.fetch("/page", SCANNED)
        self.assertEqual(self.paths(LinkExtractor(tags=None), response), [])
        self.assertEqual(self.paths(LinkExtractor(attrs=None), response), [])

    @defer.inlineCallbacks
    def test_wildcards_and_denied_names(self):
        """tags="*" / attrs="*" scan everything; deny_tags and deny_attrs take some out."""
        response = yield self.fetch("/page", SCANNED)
        everything = self.paths(LinkExtractor(tags="*", attrs="*"), response)
        self.assertEqual(everything, ["/a.html", "/good-port.html", "/img.html", "/div.html",
                                      "/link.html"])
        self.assertEqual(self.paths(LinkExtractor(tags="*", attrs=("href", "src"),
                                                  deny_tags="a"), response),
                         ["/img.html", "/link.html"])
        self.assertEqual(self.paths(LinkExtractor(tags="*", attrs="*", deny_attrs="href"),
                                    response), ["/img.html", "/div.html"])

    @defer.inlineCallbacks
    def test_non_numeric_or_out_of_range_port_is_dropped(self):
        """http://host:abc/ and http://host:99999/ make no link; :8080 does."""
        response = yield self.fetch("/page", SCANNED)
        self.assertEqual(self.paths(LinkExtractor(), response),
                         ["/a.html", "/good-port.html"])

    @defer.inlineCallbacks
    def test_xhtml_served_as_text_xml(self):
        """An XHTML page served as text/xml has its <a> and <area> links."""
        response = yield self.fetch("/x", XHTML, content_type="text/xml")
        self.assertEqual(self.paths(LinkExtractor(), response), ["/x1.html", "/x2.html"])
        self.assertEqual(self.paths(LinkExtractor(tags="area"), response), ["/x2.html"])
