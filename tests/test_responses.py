"""
The response objects: Scrapy's class tree chosen from the Content-Type (over a real
socket), copies, JSON, selectors, follow() and follow_all(), and the forms and JSON
requests that a page leads to, sent to a real server.
"""

import json

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy.exceptions import NotSupported
from tinyscrapy.http import (
    FormRequest,
    Headers,
    HtmlResponse,
    HttpResponse,
    JsonRequest,
    JsonResponse,
    Request,
    Response,
    TextResponse,
    XmlResponse,
    response_for,
)
from tinyscrapy.link import Link

from .fetchutil import make_fetcher
from .helpers import serve
from .servers import Echo, Page

PAGE = (b'<html><head><title>T</title></head><body><a href="a.html">A</a><a>none</a>'
        b'<a href=" b.html ">B</a><link href="/l"><img src="i.png"></body></html>')


def _page(body=PAGE, url="http://h/dir/page", **kwargs):
    return HtmlResponse(url, body=body, request=Request(url, meta={"m": 1},
                                                        cb_kwargs={"k": 2}), **kwargs)


class ResponseClassTests(unittest.TestCase):
    """The class comes from the Content-Type, over a real socket."""

    def setUp(self):
        self.server = serve(self)
        self.fetcher = make_fetcher(self)

    @defer.inlineCallbacks
    def test_classes_by_content_type(self):
        """HTML, XHTML, XML, RSS, JSON, text, JavaScript, PDF, PNG: each its class."""
        cases = {"text/html; charset=utf-8": HtmlResponse,
                 "application/xhtml+xml": HtmlResponse, "text/xml": XmlResponse,
                 "application/rss+xml": XmlResponse, "application/json": JsonResponse,
                 "text/plain": TextResponse, "application/javascript": TextResponse,
                 "application/pdf": Response, "image/png": Response}
        for number, (content_type, expected) in enumerate(cases.items()):
            url = self.server.add(f"/{number}", Page(b"<html><a href='x'>x</a></html>",
                                                     content_type=content_type))
            response = yield self.fetcher.fetch(Request(url))
            self.assertIs(type(response), expected, content_type)
            self.assertIsInstance(response, HttpResponse)
        self.assertNotIsInstance(response, TextResponse)  # the PNG
        self.assertNotIsInstance(response, HtmlResponse)

    @defer.inlineCallbacks
    def test_headers_arrive_as_bytes(self):
        """A downloaded response's headers: case-insensitive, values in bytes."""
        url = self.server.add("/h", Page(b"x", content_type="text/plain",
                                         headers={"X-Thing": "a"}))
        response = yield self.fetcher.fetch(Request(url))
        self.assertEqual(response.headers["content-type"], b"text/plain")
        self.assertEqual(response.headers.getlist("X-THING"), [b"a"])

    def test_classes_without_content_type(self):
        """No Content-Type: the URL's extension, then the body, as Scrapy looks."""
        self.assertIs(type(response_for("http://h/a.xml", body=b"<r/>")), XmlResponse)
        self.assertIs(type(response_for("http://h/x", body=b"<html><p>x</p></html>")),
                      HtmlResponse)
        self.assertIs(type(response_for("http://h/x", body=b"\x89PNG\r\n\x1a\n\x00")),
                      Response)
        self.assertIs(type(response_for("http://h/x", body=b"plain")), TextResponse)
        self.assertIs(type(response_for("http://h/x.pdf", 200,
                                        {"Content-Type": "application/pdf"}, b"<html>")), Response)

    def test_http_response_builds_the_right_kind(self):
        """HttpResponse(url, status, headers, body, request) is response_for."""
        request = Request("http://h/")
        response = HttpResponse("http://h/", 200, {"Content-Type": "text/html"}, b"<p>", request)
        self.assertIs(type(response), HtmlResponse)
        self.assertIs(response.request, request)
        self.assertTrue(issubclass(XmlResponse, HttpResponse))


class ResponseTests(unittest.TestCase):
    """What every response offers."""

    def test_read_only_and_copies(self):
        """url and body are read-only; copy() and replace() make new responses."""
        response = _page(flags=["f"])
        self.assertRaises(AttributeError, setattr, response, "url", "http://h/x")
        self.assertRaises(AttributeError, setattr, response, "body", b"x")
        copy = response.copy()
        self.assertIs(type(copy), HtmlResponse)
        self.assertEqual((copy.url, copy.body, copy.flags, copy.status),
                         (response.url, response.body, ["f"], 200))
        self.assertIsNot(copy.headers, response.headers)
        changed = response.replace(status=404, body=b"<p>gone</p>")
        self.assertEqual((changed.status, changed.text), (404, "<p>gone</p>"))
        self.assertIs(type(response.replace(cls=XmlResponse)), XmlResponse)

    def test_meta_and_cb_kwargs_are_the_requests(self):
        """meta and cb_kwargs are the request's; without a request, AttributeError."""
        response = _page()
        self.assertEqual((response.meta, response.cb_kwargs), ({"m": 1}, {"k": 2}))
        bare = Response("http://h/")
        raised = self.assertRaises(AttributeError, getattr, bare, "meta")
        self.assertIn("not tied to any request", str(raised))
        self.assertRaises(AttributeError, getattr, bare, "cb_kwargs")

    def test_bad_arguments(self):
        """A str body on a binary Response, a bytes URL: Scrapy's TypeErrors."""
        self.assertRaises(TypeError, Response, "http://h/", body="x")
        raised = self.assertRaises(TypeError, Response, b"http://h/")
        self.assertEqual(str(raised), "Response url must be str, got bytes")
        self.assertRaises(TypeError, TextResponse, "http://h/", body="x")
        self.assertEqual(TextResponse("http://h/", body="£", encoding="latin-1").body, b"\xa3")

    def test_binary_is_not_text(self):
        """A binary response has no .text (AttributeError) and no selectors
        (NotSupported), with Scrapy's message."""
        response = Response("http://h/x.pdf", body=b"%PDF")
        for attempt in (lambda: response.text, lambda: response.css("a"),
                        lambda: response.xpath("//a")):
            raised = self.assertRaises(AttributeError, attempt)
            self.assertIsInstance(raised, NotSupported)
            self.assertIn("Response content isn't text", str(raised))

    def test_json_parsed_once(self):
        """json() parses once and returns the same object; jmespath queries it."""
        response = JsonResponse("http://h/", body=b'{"a": [1, {"b": 2}]}')
        self.assertIs(response.json(), response.json())
        self.assertEqual(response.json(), {"a": [1, {"b": 2}]})
        self.assertEqual(response.jmespath("a[1].b").getall(), [2])

    def test_selector_knows_its_response(self):
        """response.selector.response is the response; XML gets an XML selector."""
        response = _page()
        self.assertIs(response.selector.response, response)
        self.assertEqual(response.css("title::text").get(), "T")
        xml = XmlResponse("http://h/", body=b'<?xml version="1.0"?><r><i>1</i></r>')
        self.assertEqual((xml.selector.type, xml.xpath("//i/text()").get()), ("xml", "1"))


class FollowTests(unittest.TestCase):
    """follow() and follow_all(), as Scrapy's."""

    def test_follow_kinds_of_url(self):
        """A relative URL, a Link, an <a> selector and an attribute selector."""
        response = _page()
        self.assertEqual(response.follow("x?a=1").url, "http://h/dir/x?a=1")
        self.assertEqual(response.follow(Link("http://h/l")).url, "http://h/l")
        self.assertEqual(response.follow(response.css("a")[0]).url, "http://h/dir/a.html")
        self.assertEqual(response.follow(response.css("img::attr(src)")[0]).url,
                         "http://h/dir/i.png")

    def test_follow_refuses(self):
        """None, a SelectorList, an <a> without href, an <img>: ValueError."""
        response = _page()
        raised = self.assertRaises(ValueError, response.follow, None)
        self.assertEqual(str(raised), "url can't be None")
        raised = self.assertRaises(ValueError, response.follow, response.css("a"))
        self.assertEqual(str(raised), "SelectorList is not supported")
        self.assertRaises(ValueError, response.follow, response.css("a")[1])
        self.assertRaises(ValueError, response.follow, response.css("img")[0])

    def test_follow_encoding_none(self):
        """A binary Response's follow(encoding=None) is a ValueError (no page encoding to
        fall back on); a text response's is its page's encoding."""
        binary = Response("http://h/dir/file.bin", body=b"\0")
        raised = self.assertRaises(ValueError, binary.follow, "x", encoding=None)
        self.assertEqual(str(raised), "encoding can't be None")
        latin = _page(body=b"<p>x</p>", encoding="latin-1")
        self.assertEqual(latin.follow("x?p=\u00a3", encoding=None).url, "http://h/dir/x?p=%A3")

    def test_follow_arguments(self):
        """flags, cb_kwargs, meta and the rest reach the Request; depth one more; the
        query is encoded in the page's encoding."""
        response = _page()
        request = response.follow("x", flags=["f"], cb_kwargs={"a": 1}, meta={"b": 2},
                                  priority=3, dont_filter=True)
        self.assertEqual((request.flags, request.cb_kwargs, request.meta, request.priority,
                          request.dont_filter, request.depth),
                         (["f"], {"a": 1}, {"b": 2}, 3, True, 1))
        latin = _page(body=b"<p>x</p>", encoding="latin-1")
        self.assertEqual(latin.follow("x?p=\u00a3").url, "http://h/dir/x?p=%A3")

    def test_follow_all_skips_anchors_without_href(self):
        """css=, xpath= or a SelectorList: <a> without href skipped; one argument only."""
        response = _page()
        self.assertEqual([r.url for r in response.follow_all(css="a")],
                         ["http://h/dir/a.html", "http://h/dir/b.html"])
        self.assertEqual([r.url for r in response.follow_all(xpath="//a|//link")],
                         ["http://h/dir/a.html", "http://h/dir/b.html", "http://h/l"])
        self.assertEqual(len(response.follow_all(response.css("a"))), 2)
        self.assertRaises(ValueError, response.follow_all)
        self.assertRaises(ValueError, response.follow_all, ["a"], css="a")
        self.assertRaises(TypeError, Response("http://h/").follow_all, 5)

    def test_base_href(self):
        """<base href> is what relative links resolve against."""
        response = _page(body=b'<html><head><base href="/sub/"></head><a href="a">a</a>')
        self.assertEqual(response.urljoin("a"), "http://h/sub/a")
        self.assertEqual(response.follow_all(css="a")[0].url, "http://h/sub/a")


class SubmitTests(unittest.TestCase):
    """Requests built from a downloaded page reach a real server as a browser sends them."""

    def setUp(self):
        self.server = serve(self)
        self.fetcher = make_fetcher(self)
        self.echo = self.server.add("/echo", Echo())

    @defer.inlineCallbacks
    def test_form_from_a_downloaded_page(self):
        """The page's form, filled in, arrives at its action as a POST."""
        form = (b'<form action="/echo" method="post"><input type="hidden" name="t" value="1">'
                b'<input name="user"><input type="submit" name="go" value="Go"></form>')
        url = self.server.add("/form", Page(form))
        page = yield self.fetcher.fetch(Request(url))
        sent = yield self.fetcher.fetch(FormRequest.from_response(page,
                                                                  formdata={"user": "me"}))
        echo = sent.json()
        self.assertEqual((echo["method"], echo["body"]), ("POST", "t=1&go=Go&user=me"))
        self.assertEqual(echo["headers"]["content-type"], ["application/x-www-form-urlencoded"])

    @defer.inlineCallbacks
    def test_json_request_sent(self):
        """A JsonRequest arrives as a POST with its JSON body and headers."""
        sent = yield self.fetcher.fetch(JsonRequest(self.echo, data={"b": 1, "a": 2}))
        echo = sent.json()
        self.assertEqual((echo["method"], json.loads(echo["body"])), ("POST", {"a": 2, "b": 1}))
        self.assertEqual(echo["headers"]["content-type"], ["application/json"])

    @defer.inlineCallbacks
    def test_request_headers_sent_as_given(self):
        """Headers given as str, bytes or int, several values of one, all reach the server."""
        headers = Headers({"X-A": "1", b"x-b": b"2", "X-N": 3})
        headers.appendlist("X-A", "again")
        sent = yield self.fetcher.fetch(Request(self.echo, headers=headers))
        received = sent.json()["headers"]
        self.assertEqual((received["x-a"], received["x-b"], received["x-n"]),
                         (["1", "again"], ["2"], ["3"]))
