"""
L{TextResponse}: a response whose body is text, and how its text is decoded, as Scrapy's
C{scrapy.http.TextResponse} decides it. Its kinds are L{tinyscrapy.http.response.html},
L{tinyscrapy.http.response.xml} and L{tinyscrapy.http.response.json}.

C{.text} is decoded once, on first use. The parsel selector behind C{.css()} and
C{.xpath()} is built on first use too, so a callback that never selects never pays for
parsing.

L{decode}: the encoding is, in Scrapy's order,

    1. the one the response was built with (C{TextResponse(..., encoding=)});
    2. a byte-order mark (UTF-8, UTF-16, UTF-32);
    3. the C{charset} of the C{Content-Type} header;
    4. C{<meta charset>}, C{<meta http-equiv="Content-Type">} or C{<?xml encoding?>};
    5. inferred from the body: C{cp1252} (what Scrapy calls ASCII) when it is ASCII,
       C{utf-8} when it is valid UTF-8, else C{cp1252}.

Names are resolved as browsers and Scrapy do (w3lib): C{iso-8859-1} and C{ascii} are
C{cp1252}, C{gbk}/C{gb2312} C{gb18030}, C{shift_jis} C{cp932}. A UTF-8 JSON body labelled
C{charset=iso-8859-1} is C{cp1252} text, as in Scrapy; its C{json()} reads the bytes,
which JSON says are UTF-8, and comes out right.

tinyscrapy refines only what would otherwise be mojibake (docs/differences.md): a bare
C{utf-16}/C{utf-32} label without a BOM is read in the byte order the body shows (as the
WHATWG Encoding standard says); a UTF-16 label in C{<meta>} means UTF-8 (as HTML5 says: an
ASCII scan could not have found it in real UTF-16); an undeclared body in UTF-16 is
recognised by its zero bytes; an undeclared body that is not UTF-8 and has at least
L{GUESS_MIN} non-ASCII bytes is guessed by C{charset_normalizer} when it is installed (on
its first 16 KiB, only for these pages).
"""

import json
from urllib.parse import urljoin

from tinyscrapy.http.request import Request, unchecked_request
from tinyscrapy.http.response import Response, _link_url
from tinyscrapy.utils.url import HTML_SPACE, fast_join, join_prefixes, resolve_dot_segments

_UNSET = object()


class TextResponse(Response):
    """
    A response whose body is text: C{.text}, C{.encoding}, C{.json()}, C{.selector},
    C{.css()}, C{.xpath()}, C{.jmespath()}, and C{follow()} of selectors.

    @ivar encoding: the encoding C{.text} is decoded with (see
        L{tinyscrapy.http.response.text}); given to the constructor, it wins.
    """

    attributes = (*Response.attributes, "encoding")
    is_text = True
    selector_type = None  # parsel guesses (HtmlResponse and its kin say)

    def __init__(self, *args, **kwargs):
        self._given_encoding = kwargs.pop("encoding", None)
        self._encoding = None
        self._text = None
        self._json = _UNSET
        self._selector = None
        self._root = None
        self._base_url = None
        super().__init__(*args, **kwargs)

    def _set_body(self, body):
        if isinstance(body, str):
            if self._given_encoding is None:
                raise TypeError(f"Cannot convert unicode body - {type(self).__name__} has "
                                f"no encoding")
            body = body.encode(self._given_encoding)
        super()._set_body(body)

    @property
    def encoding(self):
        if self._encoding is None:
            self._decode()
        return self._encoding

    @property
    def text(self):
        """The body as C{str}."""
        if self._text is None:
            self._decode()
        return self._text

    def _decode(self):
        content_type = self.headers.get(b"Content-Type")
        if content_type is not None:
            content_type = content_type.decode("latin-1")
        self._encoding, self._text = decode(content_type, self.body, self._given_encoding)

    def json(self):
        """The body parsed as JSON, once (later calls return the same object). JSON is
        UTF-8, -16 or -32 whatever the header says; other bytes are read as C{.text}."""
        if self._json is _UNSET:
            try:
                self._json = json.loads(self.body)
            except UnicodeDecodeError:
                self._json = json.loads(self.text)
        return self._json

    # -- selecting -----------------------------------------------------------------

    @property
    def selector(self):
        """The L{tinyscrapy.selector.unified.Selector} over C{.text}, built on first use
        (over L{root} for HTML); C{selector.response} is this response."""
        if self._selector is None:
            from tinyscrapy.selector.unified import Selector
            self._selector = Selector(self)
        return self._selector

    @property
    def root(self):
        """The lxml root element, parsed on first use (the selector's; an HTML page's is
        parsed without importing parsel: L{tinyscrapy.http.response.html})."""
        if self._root is None:
            self._root = self.selector.root
        return self._root

    def css(self, query):
        return self.selector.css(query)

    def xpath(self, query, **kwargs):
        return self.selector.xpath(query, **kwargs)

    def jmespath(self, query, **kwargs):
        """parsel's JMESPath query over a JSON body (or JSON inside the text)."""
        return self.selector.jmespath(query, **kwargs)

    # -- links ---------------------------------------------------------------------

    def _page_base_url(self):
        """The page's C{<base href>} (in its first 4 KiB) joined to its URL, else its URL."""
        if self._base_url is None:
            self._base_url = self.url
            if b"<base" in self.body[:4096].lower():
                from w3lib.html import get_base_url
                self._base_url = get_base_url(self.text[:4096], self.url)
        return self._base_url

    def join_prefixes(self):
        """
        C{(origin, directory)} of the page's base URL, computed once: what
        L{tinyscrapy.utils.url.fast_join} joins most links with (C{()} when the base is
        not a plain http(s) URL). Two pages with the same directory join a link alike.
        """
        prefixes = self.__dict__.get("_join_prefixes")
        if prefixes is None:
            prefixes = self._join_prefixes = join_prefixes(self._page_base_url())
        return prefixes

    def urljoin(self, url):
        """
        Resolve C{url} against the page's C{<base href>} (if any) or its URL, as a browser
        does: dot segments are resolved in absolute URLs too. Never raises: a URL that
        cannot be parsed (a broken IPv6 host) comes back as it is, for the scope to drop.
        """
        prefixes = self.__dict__.get("_join_prefixes")
        if prefixes is None:
            prefixes = self.join_prefixes()
        if prefixes:
            joined = fast_join(url, *prefixes)
            if joined is not None:
                return joined
            if url[:1] == "#" and url[-1] != " " and len(url) > 1 and url.isprintable():
                # "#top": this page
                return self._base_url.partition("#")[0] + url
        try:
            joined = urljoin(self._base_url, url)
        except ValueError:
            return url
        if "/." in joined:
            joined = resolve_dot_segments(joined)
        return joined

    def follow(self, url, callback=None, method="GET", headers=None, body=None,
               cookies=None, meta=None, encoding=None, priority=0, dont_filter=False,
               errback=None, cb_kwargs=None, flags=None, **kwargs):
        """
        A L{Request} for a link on this page: relative URLs resolved, one link deeper,
        its query encoded in the page's encoding unless C{encoding} is given.

        Never raises for a strange link: C{javascript:}, C{mailto:}, C{tel:}, C{data:} or
        a broken URL still make a Request, which the crawl's scope drops (counted as
        C{InvalidUrl}) before anything is downloaded.

        @param url: a string, a L{tinyscrapy.link.Link}, or a selector of an
            C{<a>}/C{<link>} element (its C{href}) or of an attribute (its value).
        @raise ValueError: C{url} is None, a C{SelectorList}, or a selector without a URL.
        """
        url = _selected_url(url)
        if self.request is not None:
            kwargs.setdefault("depth", self.request.depth + 1)
        return _request(self.urljoin(url.strip(HTML_SPACE)), dict(
            callback=callback, method=method, headers=headers, body=body, cookies=cookies,
            meta=meta, encoding=self.encoding if encoding is None else encoding,
            priority=priority, dont_filter=dont_filter, errback=errback,
            cb_kwargs=cb_kwargs, flags=flags, **kwargs))

    def follow_all(self, urls=None, callback=None, css=None, xpath=None, **kwargs):
        """
        One L{follow} per link: from C{urls} (strings, Links or selectors), or from the
        C{<a>}/C{<link>} elements C{css} or C{xpath} select (those without C{href} are
        skipped, as Scrapy skips them).

        During a crawl the scraper gives the response the scheduler's seen set
        (C{response._seen}, a L{tinyscrapy.dupefilters.SeenUrls}): a link whose
        canonical URL was already seen, or that appears twice in C{urls}, gets no Request
        at all. Those are counted as C{dupefilter/skipped_early} and never enter the
        ledger. Requests with C{dont_filter}, another method or a body are not skipped.

        @return: a list of L{Request}.
        @raise ValueError: not exactly one of C{urls}, C{css} and C{xpath}.
        """
        if len([given for given in (urls, css, xpath) if given is not None]) != 1:
            raise ValueError(
                "Please supply exactly one of the following arguments: urls, css, xpath")
        if css is not None or xpath is not None:
            urls = self.css(css) if css is not None else self.xpath(xpath)
        if not hasattr(urls, "__iter__"):
            raise TypeError("'urls' argument must be an iterable")
        if _is_selector_list(urls):
            urls = [url for url in map(_selector_url, urls) if url is not None]
        absolute = [url if isinstance(url, str) and url.startswith(("http://", "https://"))
                    and "/." not in url  # already absolute (a LinkExtractor's): no join
                    else self.urljoin(_selected_url(url).strip(HTML_SPACE)) for url in urls]
        seen = getattr(self, "_seen", None)
        if seen is not None and not kwargs.get("dont_filter") and not kwargs.get("body") \
                and kwargs.get("method", "GET").upper() == "GET":
            absolute = seen.unseen(absolute)
        if self.request is not None:
            kwargs.setdefault("depth", self.request.depth + 1)
        if kwargs.get("encoding") is None:
            kwargs["encoding"] = self.encoding
        kwargs["callback"] = callback
        return [_request(url, kwargs) for url in absolute]


def _is_selector_list(value):
    return type(value).__name__ == "SelectorList" or (
        isinstance(value, list) and hasattr(value, "getall"))


def _selected_url(url):
    """The URL of a string, a Link or one selector.
    @raise ValueError: None, a C{SelectorList}, or a selector that holds no URL."""
    if isinstance(url, str):
        return url
    if _is_selector_list(url):
        raise ValueError("SelectorList is not supported")
    if hasattr(url, "root") and hasattr(url, "xpath"):
        found = _selector_url(url)
        if found is None:
            tag = getattr(url.root, "tag", None)
            if tag is None:
                raise ValueError(f"Unsupported selector: {url}")
            if tag not in ("a", "link"):
                raise ValueError(f"Only <a> and <link> elements are supported; got <{tag}>")
            raise ValueError(f"<{tag}> element has no href attribute: {url}")
        return found
    return _link_url(url)


def _selector_url(selector):
    """The C{href} of an C{<a>}/C{<link>} selector, or an attribute selector's text, or
    None (Scrapy skips those in C{follow_all})."""
    from w3lib.html import strip_html5_whitespace
    root = selector.root
    if isinstance(root, str):
        return strip_html5_whitespace(root)
    if getattr(root, "tag", None) not in ("a", "link"):
        return None
    href = root.get("href")
    return None if href is None else strip_html5_whitespace(href)


def _request(url, kwargs):
    """C{Request(url, **kwargs)}; a link Request refuses (no scheme, C{mailto:}, a bad
    port) still becomes a Request, which the scope drops as C{InvalidUrl}."""
    try:
        return Request(url, **kwargs)
    except ValueError:  # UnicodeError included
        return unchecked_request(url, **kwargs)

GUESS_MIN = 8
_DETECT_BYTES = 16384


def decode(content_type, body, encoding=None):
    """
    Decode C{body} as the module docstring says.

    @param content_type: the C{Content-Type} header (C{str}), or None.
    @param encoding: the encoding the response was built with, or None.
    @return: C{(encoding name, text)}.
    """
    from w3lib.encoding import html_to_unicode, read_bom, to_unicode

    if encoding is not None:  # as Scrapy decodes it (a BOM still wins for the text)
        return encoding, html_to_unicode(f"charset={encoding}", body)[1]
    name, bom = read_bom(body)
    if name is not None:
        return name, to_unicode(body[len(bom):], name)
    name = declared_encoding(content_type, body)
    if name is None:
        name = inferred_encoding(body)
    return name, to_unicode(body, name)


def declared_encoding(content_type, body):
    """The encoding the header or the body declares (steps 3 and 4), or None."""
    from w3lib.encoding import html_body_declared_encoding, http_content_type_encoding
    # most servers send no charset at all: no need to parse the header for one
    name = http_content_type_encoding(content_type) \
        if content_type and "=" in content_type else None
    if name in ("utf-16", "utf-32"):
        return _endianness(body, name)
    if name is None:
        name = html_body_declared_encoding(body)
        if name is not None and name.startswith(("utf-16", "utf-32")):
            name = "utf-8"
    return name


def inferred_encoding(body):
    """The encoding of an undeclared body (step 5, with its refinements)."""
    sniffed = _utf16_sniff(body[:512])
    if sniffed is not None:
        return sniffed
    if body.isascii():
        return "cp1252"
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        return "utf-8"
    if sum(1 for byte in body[:_DETECT_BYTES] if byte > 127) >= GUESS_MIN:
        return _detect(body) or "cp1252"
    return "cp1252"


def _endianness(body, encoding):
    """A bare C{utf-16}/C{utf-32} label without a BOM: LE unless the bytes say BE."""
    if encoding == "utf-16":
        return "utf-16-be" if body[:1] == b"\x00" and body[1:2] != b"\x00" else "utf-16-le"
    return "utf-32-be" if body[:1] == b"\x00" else "utf-32-le"


def _utf16_sniff(head):
    """UTF-16 without BOM: ASCII characters show as a zero byte beside each one."""
    if len(head) < 8:
        return None
    even, odd = head[0:64:2], head[1:64:2]
    if odd.count(0) > len(odd) * 3 // 4 and even.count(0) == 0:
        return "utf-16-le"
    if even.count(0) > len(even) * 3 // 4 and odd.count(0) == 0:
        return "utf-16-be"
    return None


def _detect(body):
    """A guess from charset_normalizer (when installed), resolved as a browser would."""
    try:
        from charset_normalizer import from_bytes
    except ImportError:  # pragma: no cover - depends on the environment
        return None
    from w3lib.encoding import resolve_encoding
    best = from_bytes(body[:_DETECT_BYTES]).best()
    if best is None:
        return None
    return resolve_encoding(best.encoding)
