"""L{Request}, L{JsonRequest}, L{FormRequest}: the request objects users build."""

import json

from twisted.trial import unittest

from tinyscrapy import FormRequest, JsonRequest, Request
from tinyscrapy.http import Headers, HttpResponse


class RequestTests(unittest.TestCase):
    """Plain data with lazy dictionaries and a safe URL."""

    def test_defaults(self):
        """A bare Request is a GET at depth 0 with empty meta, headers and cb_kwargs."""
        request = Request("http://h/p")
        self.assertEqual((request.method, request.depth, request.priority, request.body),
                         ("GET", 0, 0, b""))
        self.assertEqual((request.meta, dict(request.headers), request.cb_kwargs), ({}, {}, {}))
        self.assertFalse(hasattr(request, "__dict__"))

    def test_url_made_safe(self):
        """Spaces and non-ASCII are percent-encoded; CR/LF cannot reach a header."""
        self.assertEqual(Request(" http://h/a b ").url, "http://h/a%20b")
        self.assertEqual(Request("http://h/é").url, "http://h/%C3%A9")
        self.assertNotIn("\n", Request("http://h/a\r\nX-Injected: 1").url)

    def test_url_must_be_text(self):
        """A URL that is not a str is a TypeError naming the value."""
        self.assertRaises(TypeError, Request, b"http://h/")

    def test_replace(self):
        """replace() copies every attribute and changes the named ones."""
        request = Request("http://h/a", method="POST", body="x", meta={"k": 1},
                          headers={"X-A": "1"}, cb_kwargs={"c": 2}, depth=3, priority=5)
        copy = request.replace(url="http://h/b")
        self.assertEqual((copy.url, copy.method, copy.body, copy.meta, copy.cb_kwargs,
                          copy.depth, copy.priority, copy.headers["x-a"]),
                         ("http://h/b", "POST", b"x", {"k": 1}, {"c": 2}, 3, 5, "1"))
        copy.meta["k"] = 2
        self.assertEqual(request.meta["k"], 1)

    def test_headers_case_insensitive(self):
        """Header names match whatever their case; getlist keeps every value."""
        headers = Headers({"Content-Type": "text/html"})
        headers.add("set-cookie", "a=1")
        headers.add("Set-Cookie", "b=2")
        self.assertEqual(headers["content-type"], "text/html")
        self.assertEqual(headers.getlist("SET-COOKIE"), ["a=1", "b=2"])
        self.assertIn("Content-TYPE", headers)

    def test_header_items_without_materialising(self):
        """header_items() reads headers kept as pairs without building a Headers."""
        request = Request("http://h/", headers={"Referer": "http://h/from"})
        self.assertEqual(list(request.header_items()), [("referer", ["http://h/from"])])
        self.assertNotIsInstance(request._headers, Headers)
        self.assertEqual(request.headers["referer"], "http://h/from")


class FormAndJsonTests(unittest.TestCase):
    """The two thin subclasses."""

    def test_form_post(self):
        """formdata goes in the body, form-encoded, as a POST."""
        request = FormRequest("http://h/login", formdata={"user": "a b", "tag": ["x", "y"]})
        self.assertEqual(request.method, "POST")
        self.assertEqual(request.body, b"user=a+b&tag=x&tag=y")
        self.assertEqual(request.headers["Content-Type"], "application/x-www-form-urlencoded")

    def test_form_get(self):
        """With method GET, formdata goes in the query string."""
        request = FormRequest("http://h/search?lang=en", formdata={"q": "1"}, method="GET")
        self.assertEqual((request.method, request.url, request.body),
                         ("GET", "http://h/search?lang=en&q=1", b""))

    def test_json(self):
        """data becomes a JSON body, POST, with a JSON Content-Type."""
        request = JsonRequest("http://h/api", data={"b": 1, "a": [1, 2]})
        self.assertEqual(request.method, "POST")
        self.assertEqual(json.loads(request.body), {"a": [1, 2], "b": 1})
        self.assertEqual(request.headers["Content-Type"], "application/json")


class DocumentTreeTests(unittest.TestCase):
    """C{HttpResponse.root} is the tree parsel would build, made without parsel; the
    selector wraps that same tree."""

    CASES = ["", "   ", "<!-- only a comment -->", "<html><title>t</title></html>",
             "\x00<p>a\x00b</p>", "plain text", "<a href='x'>é</a>",
             "<?xml version='1.0'?><html><body>x</body></html>"]

    def test_root_matches_parsel(self):
        from lxml import etree
        from parsel import Selector
        for text in self.CASES:
            response = HttpResponse("http://h/p", headers={"Content-Type": "text/html"},
                                    body=text.encode("utf-8"))
            expected = Selector(text=text, type="html", base_url="http://h/p").root
            self.assertEqual(etree.tostring(response.root), etree.tostring(expected), text)

    def test_selector_wraps_the_same_tree(self):
        response = HttpResponse("http://h/p", headers={"Content-Type": "text/html"},
                                body=b"<title>T</title><a href='/x'>x</a>")
        root = response.root
        self.assertIs(response.selector.root, root)
        self.assertEqual(response.css("title::text").get(), "T")
        self.assertEqual(root.base_url, "http://h/p")

    def test_xml_root_is_the_selectors(self):
        response = HttpResponse("http://h/feed", headers={"Content-Type": "application/xml"},
                                body=b"<?xml version='1.0'?><feed><entry>e</entry></feed>")
        self.assertIs(response.root, response.selector.root)
        self.assertEqual(response.xpath("//entry/text()").get(), "e")
