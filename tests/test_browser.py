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
        """An HTML page is written with <base href> to its URL, right after <head>."""
        path, body = self.opened(response(PAGE))
        self.assertTrue(path.endswith(".html"))
        self.assertIn(b'<head lang="en"><base href="http://127.0.0.1/d/p"><title>', body)

    def test_text_as_it_is_and_binary_refused(self):
        """A JSON page is written unchanged; an image is a TypeError."""
        _, body = self.opened(response(b'{"a": 1}', "application/json"))
        self.assertEqual(body, b'{"a": 1}')
        self.assertRaises(TypeError, open_in_browser, response(b"\x89PNG", "image/png"),
                          _openfunc=print)

    def test_get_base_url(self):
        """The <base href> when the page has one, else its URL."""
        self.assertEqual(get_base_url(response(PAGE)), "http://127.0.0.1/d/p")
        based = response(b'<html><head><base href="/other/"></head></html>')
        self.assertEqual(get_base_url(based), "http://127.0.0.1/other/")
