"""
Text and types, through a real server: each charset by each way of declaring it, and
binary types that are never parsed, even when their body looks like HTML.
"""

import json

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy import Spider
from tinyscrapy.commands.crawl import SiteCrawler
from tinyscrapy.http import HttpResponse, NotTextResponse, TextResponse, response_for
from tinyscrapy.http.response.text import decode
from tinyscrapy.responsetypes import is_html, is_text

from .fetchutil import get, make_fetcher
from .helpers import crawl, serve
from .servers import Page

SAMPLES = {
    "windows-1251": "Съешь же ещё этих мягких французских булок, да выпей чаю",
    "gbk": "我能吞下玻璃而不伤身体。中华人民共和国",
    "shift_jis": "私はガラスを食べられます。それは私を傷つけません",
    "utf-16": "Ünïcödé — 你好 — Привет — こんにちは",
}
PNG = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00"
       b"\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05"
       b"\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")


def _detector_installed():
    try:
        import charset_normalizer  # noqa: F401
    except ImportError:
        return False
    return True


def page(sample, head=""):
    return (f"<!DOCTYPE html><html><head>{head}<title>{sample}</title></head>"
            f"<body><p>{sample}</p></body></html>")


def declarations(charset):
    """C{(way, content type, body bytes, expected text)} for each way to declare it."""
    sample = SAMPLES[charset]
    codec = "utf-16-le" if charset == "utf-16" else charset
    plain = page(sample)
    meta = page(sample, f'<meta charset="{charset}">')
    equiv = page(sample, f'<meta http-equiv="Content-Type" content="text/html; '
                         f'charset={charset}">')
    ways = [
        ("header", f"text/html; charset={charset}", plain.encode(codec), plain),
        ("quoted header", f'text/html; charset="{charset.upper()}"', plain.encode(codec),
         plain),
        ("meta charset", "text/html", meta.encode(codec), meta),
        ("http-equiv", "text/html", equiv.encode(codec), equiv),
    ]
    # undeclared: UTF-16 is recognised by its zero bytes; windows-1251 is guessed by
    # charset_normalizer when installed; a guess for short CJK pages is a coin toss
    if charset == "utf-16" or (charset == "windows-1251" and _detector_installed()):
        ways.append(("undeclared", "text/html", plain.encode(codec), plain))
    if charset == "utf-16":
        ways.append(("BOM LE", "text/html", "\ufeff".encode("utf-16-le") + plain.encode(codec),
                     plain))
        ways.append(("BOM BE", "text/html", "\ufeff".encode("utf-16-be") +
                     plain.encode("utf-16-be"), plain))
        ways.append(("BOM beats header", "text/html; charset=iso-8859-1",
                     plain.encode("utf-16"), plain))
        ways.append(("header BE", "text/html; charset=utf-16be", plain.encode("utf-16-be"),
                     plain))
    return ways


class CharsetTests(unittest.TestCase):
    """Each charset, each declaration, over a real socket."""

    def setUp(self):
        self.server = serve(self)
        self.fetcher = make_fetcher(self)

    @defer.inlineCallbacks
    def assert_decodes(self, charset):
        for number, (way, content_type, body, expected) in enumerate(declarations(charset)):
            url = self.server.add(f"/{number}", Page(body, content_type=content_type))
            response = yield get(self.fetcher, url)
            self.assertEqual(response.text, expected, f"{charset} declared by {way}")
            self.assertEqual(response.css("title::text").get(), SAMPLES[charset], way)

    def test_windows_1251(self):
        """Cyrillic in windows-1251, by header, meta, http-equiv, or undeclared (then
        guessed by charset_normalizer, when installed)."""
        return self.assert_decodes("windows-1251")

    def test_gbk(self):
        """Chinese in GBK (decoded as its superset GB18030)."""
        return self.assert_decodes("gbk")

    def test_shift_jis(self):
        """Japanese in Shift_JIS (decoded as its superset CP932)."""
        return self.assert_decodes("shift_jis")

    def test_utf_16(self):
        """UTF-16: by BOM (which beats the header), by header (a bare label is little-
        endian), by a meta that is itself UTF-16, or undeclared."""
        return self.assert_decodes("utf-16")

    def test_order_header_before_meta(self):
        """The header's charset wins over a contradicting <meta>."""
        body = page(SAMPLES["windows-1251"], '<meta charset="utf-8">').encode("cp1251")
        encoding, text = decode("text/html; charset=windows-1251", body)
        self.assertEqual(encoding, "cp1251")
        self.assertIn(SAMPLES["windows-1251"], text)

    def test_invalid_utf8_never_raises(self):
        """A page that says UTF-8 but is not: replacement characters, no exception."""
        encoding, text = decode("text/html; charset=utf-8", b"<p>caf\xe9</p>")
        self.assertEqual((encoding, text), ("utf-8", "<p>caf\ufffd</p>"))

    def test_xml_declaration(self):
        """An XML document's encoding declaration is honoured."""
        body = '<?xml version="1.0" encoding="windows-1251"?><r>Привет</r>'.encode("cp1251")
        encoding, text = decode("application/xml", body)
        self.assertEqual(encoding, "cp1251")
        self.assertIn("Привет", text)


class TypeTests(unittest.TestCase):
    """The type decides what is text; binary is never parsed."""

    def setUp(self):
        self.server = serve(self)
        self.fetcher = make_fetcher(self)

    @defer.inlineCallbacks
    def test_png_is_not_text(self):
        """A PNG: .body is there, .text / .css() raise a clear NotTextResponse."""
        url = self.server.add("/pixel.png", Page(PNG, content_type="image/png"))
        response = yield get(self.fetcher, url)
        self.assertEqual(response.body, PNG)
        self.assertFalse(response.is_text)
        raised = self.assertRaises(NotTextResponse, getattr, response, "text")
        self.assertIn("image/png", str(raised))
        self.assertIn(url, str(raised))
        with self.assertRaises(NotTextResponse):
            response.css("a")

    @defer.inlineCallbacks
    def test_pdf_that_looks_like_html(self):
        """application/pdf whose body starts with <html>: still binary."""
        body = b'<html><body><a href="/trap">trap</a></body></html>'
        url = self.server.add("/doc.pdf", Page(body, content_type="application/pdf"))
        response = yield get(self.fetcher, url)
        self.assertFalse(response.is_text)
        with self.assertRaises(NotTextResponse):
            response.xpath("//a/@href")

    @defer.inlineCallbacks
    def test_json_and_text_decode(self):
        """JSON and plain text decode; JSON parses."""
        data = {"name": "Привет", "n": 1}
        url = self.server.add("/data.json", Page(json.dumps(data).encode(),
                                                 content_type="application/json"))
        response = yield get(self.fetcher, url)
        self.assertTrue(response.is_text)
        self.assertEqual(response.json(), data)
        url = self.server.add("/a.txt", Page("plain ✓".encode(),
                                             content_type="text/plain; charset=utf-8"))
        response = yield get(self.fetcher, url)
        self.assertEqual(response.text, "plain ✓")

    def test_classification(self):
        """Types by family: text, XML/JSON suffixes, binary, and sniffing without one."""
        text = ["text/html", "text/html; charset=utf-8", "application/xhtml+xml",
                "application/rss+xml", "application/ld+json", "application/javascript",
                "TEXT/CSV", "application/json"]
        binary = ["image/png", "application/pdf", "application/zip", "application/gzip",
                  "application/octet-stream", "font/woff2", "video/mp4",
                  "application/vnd.ms-excel", "application/x-tar", "audio/mpeg"]
        for content_type in text:
            self.assertTrue(is_text(content_type, b"<html>"), content_type)
        for content_type in binary:
            self.assertFalse(is_text(content_type, b"<html>"), content_type)
        self.assertTrue(is_text(None, b"<!DOCTYPE html><html>"))
        self.assertFalse(is_text(None, PNG))
        self.assertFalse(is_text("", b"%PDF-1.7 <html>"))
        self.assertFalse(is_text(None, b"\x00\x01\x02binary"))
        self.assertTrue(is_text(None, "<html>utf-16</html>".encode("utf-16-le")))
        self.assertFalse(is_text("text/plain", PNG))  # browsers sniff text/plain too
        self.assertTrue(is_text("text/plain", b"just text"))

    def test_html_classification(self):
        """HTML is text/html or XHTML; XML, JSON and text/plain are not; a body without a
        type is HTML when it starts one (Scrapy's HtmlResponse)."""
        for content_type in ("text/html", "TEXT/HTML; charset=utf-8", "application/xhtml+xml"):
            self.assertTrue(is_html(content_type, b"<a href=x>"), content_type)
        for content_type in ("application/xml", "text/xml", "application/rss+xml",
                             "text/plain", "application/json", "image/png"):
            self.assertFalse(is_html(content_type, b"<html><a href=x>"), content_type)
        self.assertTrue(is_html(None, b"<!DOCTYPE html><p>"))
        self.assertTrue(is_html("", b'<?xml version="1.0"?><HTML lang="en">'))
        self.assertFalse(is_html(None, b'<?xml version="1.0"?><feed><a href="x"/></feed>'))
        self.assertFalse(is_html(None, b"\x00\x01<html>"))

    def test_response_without_type(self):
        """No Content-Type: an HTML body is text, a PNG is not."""
        self.assertTrue(HttpResponse("http://x/", body=b"<html><title>t</title></html>")
                        .is_text)
        self.assertFalse(HttpResponse("http://x/", body=PNG).is_text)


class LinkSpider(Spider):
    """Follows every link; one item per page with a title."""

    name = "links"

    def parse(self, response):
        yield {"url": response.url, "title": response.css("title::text").get()}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href)


class BinaryCrawlTests(unittest.TestCase):
    """In a crawl, binary pages yield no links and no items."""

    def setUp(self):
        self.server = serve(self)
        trap = b'<html><head><title>bait</title></head><body><a href="/trap">x</a></body></html>'
        self.server.add("/doc.pdf", Page(trap, content_type="application/pdf"))
        self.server.add("/pixel.png", Page(PNG, content_type="image/png"))
        self.server.add_page("/trap")
        self.start = self.server.add_page("/", links=["/doc.pdf", "/pixel.png"])

    @defer.inlineCallbacks
    def test_spider_gets_no_links_or_items_from_binary(self):
        """A spider that selects on every page: binary pages raise NotTextResponse
        (counted), so /trap is never requested and only the HTML page gives an item."""
        crawler = yield crawl(LinkSpider, start_urls=[self.start])
        stats = crawler.stats
        self.assertEqual(self.server.hits["/trap"], 0)
        self.assertEqual(self.server.hits["/doc.pdf"], 1)
        self.assertEqual(stats.get_value("item_scraped_count"), 1)
        self.assertEqual(stats.get_value("spider_exceptions/NotTextResponse"), 2)

    @defer.inlineCallbacks
    def test_site_crawl_skips_binary(self):
        """The crawl command's spider does not parse the PDF for links."""
        crawler = yield crawl(SiteCrawler, {"ROBOTSTXT_OBEY": False},
                              start_urls=[self.start])
        self.assertEqual(self.server.hits["/trap"], 0)
        self.assertIsNone(crawler.stats.get_value("spider_exceptions/NotTextResponse"))


class ScrapyEncodingTests(unittest.TestCase):
    """The encoding names and texts Scrapy's TextResponse gives."""

    def make(self, body, content_type=None, **kwargs):
        headers = {"Content-Type": content_type} if content_type else {}
        return response_for("http://h/", 200, headers, body, **kwargs)

    def test_names(self):
        """BOMs, labels and undeclared bodies get Scrapy's names."""
        cases = [
            (b"\xff\xfeh\x00i\x00", None, "utf-16-le", "hi"),
            (b"\xef\xbb\xbfWORD\xe3\xab", "text/html; charset=utf-8", "utf-8", "WORD\ufffd"),
            (b"plain", "text/html", "cp1252", "plain"),  # ASCII, as Scrapy names it
            ("caf\u00e9".encode(), "text/html", "utf-8", "caf\u00e9"),
            (b"caf\xe9", "text/html", "cp1252", "caf\u00e9"),  # not UTF-8: cp1252
            (b"x", "text/html; charset=latin1", "cp1252", "x"),
            ('<meta charset="gb2312">\u4e2d'.encode("gbk"), "text/html", "gb18030",
             '<meta charset="gb2312">\u4e2d'),
        ]
        for body, content_type, encoding, text in cases:
            response = self.make(body, content_type)
            self.assertEqual((response.encoding, response.text), (encoding, text), body)

    def test_given_encoding_wins(self):
        """An encoding given to the response is its encoding (a BOM still strips)."""
        response = TextResponse("http://h/", body=b"\xff\xfeh\x00i\x00", encoding="utf-16")
        self.assertEqual((response.encoding, response.text), ("utf-16", "hi"))
        response = TextResponse("http://h/", body=b"PREFIX\xe3\xabSUFFIX", encoding="utf-8")
        self.assertIn("\ufffd", response.text)

    def test_utf8_json_with_a_wrong_label(self):
        """UTF-8 JSON labelled iso-8859-1: .text is cp1252 as Scrapy reads it; .json()
        reads the bytes, as JSON says, and comes out right."""
        response = self.make('{"a": "caf\u00e9"}'.encode(), "application/json; charset=iso-8859-1")
        self.assertEqual(response.encoding, "cp1252")
        self.assertEqual(response.text, '{"a": "caf\u00c3\u00a9"}')
        self.assertEqual(response.json(), {"a": "caf\u00e9"})
