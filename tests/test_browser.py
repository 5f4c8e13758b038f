"""
open_in_browser and get_base_url at Scrapy's path: the page as the spider saw it.
"""

from twisted.trial import unittest

from tinyscrapy.http import HttpResponse, Request
from tinyscrapy.utils.response import get_base_url, open_in_browser

PAGE = b'<html><head lang="en"><title>t</title></head><body><img src="a.png"></body></html>'


def response(body, content_type="text/html; charset=utf-8", url="http://127.0.0.1/d/p"):
    return HttpResponse(url, 200, {"Content-Type": content_type}, body, Request(url))


class BrowserTests(unittest.TestCase):
    """The page is written to a file a browser can open, its links still resolving."""

    def opened(self, page):
        urls = []
        open_in_browser(page, _openfunc=urls.append)
        self.assertEqual(len(urls), 1)
        self.assertTrue(urls[0].startswith("file://"))
        path = urls[0][len("file://"):]
        self.addCleanup(__import__("os").remove, path)
        with open(path, "rb") as stream:
            return path, stream.read()

    def test_html_gets_a_base_href(self):
        """An HTML page is written with <base href> to its base URL at its start, after
        its doctype (as Scrapy 2.19 writes it: the browser moves it into the head)."""
        path, body = self.opened(response(PAGE))
        self.assertTrue(path.endswith(".html"))
        self.assertEqual(body, b'<base href="http://127.0.0.1/d/p">' + PAGE)
        _, body = self.opened(response(b"<!DOCTYPE html>\n" + PAGE))
        self.assertTrue(body.startswith(b'<!DOCTYPE html><base href="http://127.0.0.1/d/p">'))
        _, body = self.opened(response(b'<html><head><base href="/o/"></head></html>'))
        self.assertTrue(body.startswith(b'<base href="http://127.0.0.1/o/"><html>'))

    def test_text_as_it_is_and_binary_by_its_type(self):
        """A JSON page is written unchanged as .txt; an image with its own extension; a
        body of a type with no extension is a TypeError."""
        path, body = self.opened(response(b'{"a": 1}', "application/json"))
        self.assertEqual((path[-4:], body), (".txt", b'{"a": 1}'))
        path, body = self.opened(response(b"\x89PNG", "image/png"))
        self.assertEqual((path[-4:], body), (".png", b"\x89PNG"))
        self.assertRaises(TypeError, open_in_browser,
                          response(b"\0", "application/x-unknown-thing"), _openfunc=print)

    def test_get_base_url(self):
        """The <base href> when the page has one, else its URL."""
        self.assertEqual(get_base_url(response(PAGE)), "http://127.0.0.1/d/p")
        based = response(b'<html><head><base href="/other/"></head></html>')
        self.assertEqual(get_base_url(based), "http://127.0.0.1/other/")
