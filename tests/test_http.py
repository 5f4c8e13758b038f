"""L{Request}, L{JsonRequest}, L{FormRequest}: the request objects users build, with
Scrapy's arguments, messages and copies."""

import warnings
from urllib.parse import parse_qs, urlsplit

from twisted.trial import unittest

from tinyscrapy import FormRequest, JsonRequest, Request
from tinyscrapy.http import Headers, HttpResponse


def _callback(response):
    """A module-level callable to pass as callback."""


class RequestTests(unittest.TestCase):
    """Plain data with lazy dictionaries, a safe URL and Scrapy's arguments."""

    def test_defaults(self):
        """A bare Request is a GET at depth 0 with empty meta, headers and cb_kwargs."""
        request = Request("http://h/p")
        self.assertEqual((request.method, request.depth, request.priority, request.body,
                          request.encoding), ("GET", 0, 0, b"", "utf-8"))
        self.assertEqual((request.meta, dict(request.headers), request.cb_kwargs,
                          request.cookies, request.flags), ({}, {}, {}, {}, []))
        self.assertFalse(hasattr(request, "__dict__"))

    def test_url_made_safe(self):
        """Spaces and non-ASCII are percent-encoded; CR/LF cannot reach a header."""
        self.assertEqual(Request(" http://h/a b ").url, "http://h/a%20b")
        self.assertEqual(Request("http://h/é").url, "http://h/%C3%A9")
        self.assertNotIn("\n", Request("http://h/a\r\nX-Injected: 1").url)

    def test_encoding_applies_to_the_query(self):
        """encoding= encodes the query (latin-1 £ is %A3); the path stays UTF-8."""
        request = Request("http://h/£?currency=£", encoding="latin-1")
        self.assertEqual(request.url, "http://h/%C2%A3?currency=%A3")
        self.assertEqual(request.encoding, "latin-1")
        self.assertEqual(Request("http://h/", body="£", encoding="latin-1").body, b"\xa3")

    def test_bad_urls_as_scrapy_reports_them(self):
        """No scheme: ValueError; None, bytes or a number: TypeError, with Scrapy's words."""
        for url in ("foo", "/path", "example.com/x"):
            raised = self.assertRaises(ValueError, Request, url)
            self.assertEqual(str(raised), f"Missing scheme in request url: {url}")
        for url, kind in ((None, "NoneType"), (b"http://h/", "bytes"), (123, "int")):
            raised = self.assertRaises(TypeError, Request, url)
            self.assertEqual(str(raised), f"Request url must be str, got {kind}")
        self.assertEqual(Request("data:,hello").url, "data:,hello")
        self.assertEqual(Request("about:blank").url, "about:blank")

    def test_verbatim_url(self):
        """meta verbatim_url keeps the URL exactly as given."""
        request = Request("http://h/a b", meta={"verbatim_url": True})
        self.assertEqual(request.url, "http://h/a b")

    def test_priority_and_callbacks_checked(self):
        """A priority that is not an int, or a callback that is not callable: TypeError."""
        raised = self.assertRaises(TypeError, Request, "http://h/", priority="1")
        self.assertEqual(str(raised), "Request priority not an integer: '1'")
        raised = self.assertRaises(TypeError, Request, "http://h/", callback="parse")
        self.assertEqual(str(raised), "callback must be a callable, got str")
        self.assertRaises(TypeError, Request, "http://h/", errback="oops")
        self.assertRaises(TypeError, Request, "http://h/", body=5)

    def test_url_and_body_read_only(self):
        """url and body cannot be assigned: replace() makes the changed copy."""
        request = Request("http://h/a", body=b"x")
        self.assertRaises(AttributeError, setattr, request, "url", "http://h/b")
        self.assertRaises(AttributeError, setattr, request, "body", b"y")
        self.assertEqual(request.replace(url="http://h/b").url, "http://h/b")

    def test_replace_carries_every_argument(self):
        """replace() copies every argument, changes the named ones, shares no dict."""
        request = Request("http://h/a", callback=_callback, errback=_callback, method="POST",
                          body="x", meta={"k": 1}, headers={"X-A": "1"}, cb_kwargs={"c": 2},
                          cookies={"s": "1"}, encoding="latin-1", flags=["f"], depth=3,
                          priority=5, dont_filter=True)
        copy = request.replace(url="http://h/b")
        for name in Request.attributes:
            if name != "url":
                self.assertEqual(getattr(copy, name), getattr(request, name), name)
        self.assertEqual(copy.url, "http://h/b")
        copy.meta["k"] = 2
        copy.headers["X-A"] = "2"
        copy.cb_kwargs["c"] = 3
        self.assertEqual((request.meta["k"], request.headers["X-A"], request.cb_kwargs["c"]),
                         (1, b"1", 2))

    def test_copy_and_replace_cls(self):
        """copy() is an equal, separate request; replace(cls=...) changes the class."""
        request = Request("http://h/a", meta={"k": [1]})
        copy = request.copy()
        self.assertIsNot(copy, request)
        self.assertEqual((copy.url, copy.meta), (request.url, request.meta))
        form = request.replace(cls=FormRequest, formdata={"q": "1"})
        self.assertIsInstance(form, FormRequest)
        self.assertEqual((form.method, form.url), ("GET", "http://h/a?q=1"))  # the method kept

    def test_headers_copied_from_another_request(self):
        """Request(headers=other.headers) copies: changing one leaves the other."""
        first = Request("http://h/", headers={"X-A": "1"})
        second = Request("http://h/", headers=first.headers)
        second.headers["X-A"] = "2"
        self.assertEqual(first.headers["X-A"], b"1")

    def test_cookies_kept_as_given(self):
        """cookies= is kept as given (a dict or a list of dicts) for the cookies
        middleware."""
        self.assertEqual(Request("http://h/", cookies={"a": "1"}).cookies, {"a": "1"})
        cookies = [{"name": "a", "value": "1", "domain": "h"}]
        self.assertEqual(Request("http://h/", cookies=cookies).cookies, cookies)

    def test_header_items_without_materialising(self):
        """header_items() reads headers kept as pairs without building a Headers."""
        request = Request("http://h/", headers={"referer": "http://h/from"})
        self.assertEqual(list(request.header_items()), [(b"Referer", [b"http://h/from"])])
        self.assertTrue(request.has_header("REFERER"))
        self.assertNotIsInstance(request._headers, Headers)
        self.assertEqual(request.headers["Referer"], b"http://h/from")

    def test_weak_references(self):
        """Requests can be weakly referenced, as components keying data by request do."""
        import weakref
        cache = weakref.WeakKeyDictionary()
        request = Request("http://h/")
        cache[request] = 1
        self.assertEqual(cache[request], 1)

    def test_classes_registry(self):
        """Request.classes names every request class, subclasses as they are defined."""
        self.assertIs(Request.classes["tinyscrapy.http.request.Request"], Request)
        self.assertIs(Request.classes["tinyscrapy.http.request.form.FormRequest"], FormRequest)

        class Custom(Request):
            __slots__ = ()

        self.assertIs(Request.classes[f"{__name__}.{Custom.__qualname__}"], Custom)


class CurlTests(unittest.TestCase):
    """Request.from_curl and to_curl, with Scrapy's handling of curl's arguments."""

    def test_from_curl(self):
        """Method, URL, headers, cookies (from -b and a Cookie header), data, user."""
        request = Request.from_curl(
            "curl 'http://h/api' -X PUT -H 'Accept: text/html' -H 'Cookie: a=1; b=2' "
            "-b 'c=3' -d 'x=1' -d 'y=2' -u 'me:secret' --compressed")
        self.assertEqual((request.method, request.url, request.body),
                         ("PUT", "http://h/api", b"x=1&y=2"))
        self.assertEqual(request.headers["Accept"], b"text/html")
        self.assertEqual(request.headers["Authorization"], b"Basic bWU6c2VjcmV0")
        self.assertEqual(request.cookies, {"a": "1", "b": "2", "c": "3"})

    def test_from_curl_defaults(self):
        """Data alone makes a POST; no scheme gets http://; kwargs win."""
        request = Request.from_curl("curl h/x --data-raw 'a=1'")
        self.assertEqual((request.method, request.url), ("POST", "http://h/x"))
        self.assertEqual(Request.from_curl("curl http://h/", method="HEAD").method, "HEAD")

    def test_unknown_options(self):
        """Unknown options warn, or raise ValueError when asked; a non-curl line raises."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            Request.from_curl("curl http://h/ --foo")
        self.assertIn("Unrecognized options: --foo", str(caught[0].message))
        raised = self.assertRaises(ValueError, Request.from_curl, "curl http://h/ --foo",
                                   ignore_unknown_options=False)
        self.assertEqual(str(raised), "Unrecognized options: --foo")
        self.assertRaises(ValueError, Request.from_curl, "wget http://h/")

    def test_to_curl_round_trip(self):
        """to_curl() writes what from_curl() reads back to an equal request."""
        request = Request("http://h/p", method="POST", body="a=1", headers={"X-A": "b"},
                          cookies={"s": "1"})
        self.assertEqual(request.to_curl(),
                         "curl -X POST http://h/p --data-raw 'a=1' -H 'X-A: b' --cookie 's=1'")
        back = Request.from_curl(request.to_curl())
        self.assertEqual((back.method, back.url, back.body, back.cookies),
                         ("POST", "http://h/p", b"a=1", {"s": "1"}))


    def test_to_curl_bytes_cookies(self):
        """Bytes cookie names and values are written as text (UTF-8, else latin-1)."""
        request = Request("http://h/", cookies={b"caf\xc3\xa9": b"\xe9t\xe9", "n": 1})
        self.assertEqual(request.to_curl(),
                         "curl -X GET http://h/ --cookie 'caf\u00e9=\u00e9t\u00e9; n=1'")
        listed = Request("http://h/", cookies=[{"name": b"a", "value": b"b", "path": "/"}])
        self.assertEqual(listed.to_curl(), "curl -X GET http://h/ --cookie 'a=b'")

class FormAndJsonTests(unittest.TestCase):
    """The subclasses that build a body."""

    def test_form_post(self):
        """formdata goes in the body, form-encoded, as a POST."""
        request = FormRequest("http://h/login", formdata={"user": "a b", "tag": ["x", "y"]})
        self.assertEqual(request.method, "POST")
        self.assertEqual(request.body, b"user=a+b&tag=x&tag=y")
        self.assertEqual(request.headers["Content-Type"], b"application/x-www-form-urlencoded")

    def test_form_get_replaces_the_query(self):
        """With method GET, formdata is the query string: keys are not appended twice."""
        request = FormRequest("http://h/search?q=old&x=1#top", formdata={"q": "new"},
                              method="GET")
        self.assertEqual((request.method, request.url, request.body),
                         ("GET", "http://h/search?q=new#top", b""))

    def test_form_encoding(self):
        """formdata is encoded with the request's encoding."""
        request = FormRequest("http://h/", formdata={"price": "£1"}, encoding="latin-1")
        self.assertEqual(request.body, b"price=%A31")

    def test_json(self):
        """data becomes a sorted JSON body, POST, with Scrapy's JSON headers."""
        request = JsonRequest("http://h/api", data={"b": 1, "a": [1, 2]})
        self.assertEqual(request.method, "POST")
        self.assertEqual(request.body, b'{"a": [1, 2], "b": 1}')
        self.assertEqual(request.headers["Content-Type"], b"application/json")
        self.assertEqual(request.headers["Accept"],
                         b"application/json, text/javascript, */*; q=0.01")
        self.assertEqual(JsonRequest("http://h/api").method, "GET")

    def test_json_dumps_kwargs_and_replace(self):
        """dumps_kwargs reach json.dumps; replace(data=...) makes a new body with them."""
        request = JsonRequest("http://h/", data={"b": 1, "a": 2},
                              dumps_kwargs={"sort_keys": False, "separators": (",", ":")})
        self.assertEqual(request.body, b'{"b":1,"a":2}')
        self.assertEqual(request.replace(data={"c": 3}).body, b'{"c":3}')

    def test_json_body_and_data(self):
        """Both body and data: the body wins, with Scrapy's warning."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            request = JsonRequest("http://h/", body=b"raw", data={"a": 1})
        self.assertEqual((request.body, request.method), (b"raw", "GET"))
        self.assertEqual(str(caught[0].message), "Both body and data passed. data will be ignored")


FORMS = b"""<html><head><base href="http://other/base/"></head><body>
<form name="search" action="find?x=1" method="get">
  <input name="q" value="default"><input type="submit" name="go" value="Go">
</form>
<form id="login" action="/login" method="post">
  <input type="hidden" name="token" value="t0k">
  <input name="user">
  <input type="checkbox" name="remember" checked>
  <input type="checkbox" name="spam" value="yes">
  <input type="radio" name="size" value="s"><input type="radio" name="size" value="m" checked>
  <select name="country"><option value="fr">France</option><option value="de">DE</option>
  </select>
  <select name="langs" multiple><option value="en" selected>e</option>
    <option value="fr" selected>f</option><option value="de">d</option></select>
  <select name="empty"></select>
  <textarea name="bio">hello</textarea>
  <input type="reset" name="reset" value="r"><input type="image" name="img" value="i">
  <button name="b1" value="one">1</button><button name="b2" value="two">2</button>
  <div class="inner"><span>x</span></div>
</form>
<form action="/third" method="delete"><input name="n" value="3"></form>
</body></html>"""


def _fields(request):
    data = request.body.decode() if request.method == "POST" else urlsplit(request.url).query
    return parse_qs(data, keep_blank_values=True)


class FromResponseTests(unittest.TestCase):
    """FormRequest.from_response fills in a page's form as a browser submits it."""

    def response(self):
        return HttpResponse("http://h/page", 200, {"Content-Type": "text/html"}, FORMS)

    def test_first_form_get_with_base_href(self):
        """The first form: GET to its action against <base href>, the query replaced, the
        first button clicked."""
        request = FormRequest.from_response(self.response())
        self.assertEqual(request.method, "GET")
        self.assertEqual(request.url, "http://other/base/find?q=default&go=Go")

    def test_fields_as_a_browser_sends_them(self):
        """Checked boxes and radios, selects (first option or the selected ones), textarea;
        no reset, no unchecked box; formdata overrides; the first button only."""
        request = FormRequest.from_response(self.response(), formid="login",
                                            formdata={"user": "me"})
        self.assertEqual((request.method, request.url), ("POST", "http://other/login"))
        self.assertEqual(_fields(request), {
            "token": ["t0k"], "user": ["me"], "remember": ["on"], "size": ["m"],
            "country": ["fr"], "langs": ["en", "fr"], "bio": ["hello"], "img": ["i"]})

    def test_choosing_the_form(self):
        """formname, formnumber, formxpath and formcss each pick a form."""
        response = self.response()
        self.assertIn("q=default", FormRequest.from_response(response, formname="search").url)
        third = FormRequest.from_response(response, formnumber=2)
        self.assertEqual((third.method, third.url), ("GET", "http://other/third?n=3"))
        for kwargs in ({"formxpath": "//div[@class='inner']/span"},
                       {"formcss": "div.inner span"}):
            request = FormRequest.from_response(response, **kwargs)
            self.assertEqual(request.url, "http://other/login", kwargs)
        self.assertRaises(IndexError, FormRequest.from_response, response, formnumber=9)
        self.assertRaises(ValueError, FormRequest.from_response, response, formxpath="//nav")
        empty = HttpResponse("http://h/", 200, {"Content-Type": "text/html"}, b"<p>none</p>")
        self.assertRaises(ValueError, FormRequest.from_response, empty)

    def test_clickdata_and_dont_click(self):
        """clickdata picks a button by attributes or position; dont_click clicks none."""
        response = self.response()
        request = FormRequest.from_response(response, formid="login", clickdata={"name": "b2"})
        self.assertEqual(_fields(request)["b2"], ["two"])
        self.assertNotIn("img", _fields(request))
        request = FormRequest.from_response(response, formid="login", dont_click=True)
        self.assertFalse({"img", "b1", "b2"} & set(_fields(request)))
        self.assertRaises(ValueError, FormRequest.from_response, response, formid="login",
                          clickdata={"name": "nope"})

    def test_formdata_none_removes_a_field(self):
        """A None value in formdata removes that field; url= and method= override."""
        request = FormRequest.from_response(self.response(), formid="login",
                                            formdata={"token": None}, url="/else",
                                            method="GET")
        self.assertNotIn("token", _fields(request))
        self.assertTrue(request.url.startswith("http://other/else?"))
