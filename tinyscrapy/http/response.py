"""
L{HttpResponse}: what came back for a L{Request}.

A response is plain data. Its text is decoded by L{tinyscrapy.http.charsets} on first use,
and its links are joined by L{tinyscrapy.http.linkjoin}.
"""

import json
from urllib.parse import urljoin

from tinyscrapy.http.headers import Headers
from tinyscrapy.http.linkjoin import (
    HTML_SPACE,
    fast_join,
    join_prefixes,
    link_url,
    resolve_dot_segments,
    selector_url,
)
from tinyscrapy.http.request import Request, safe_url


class NotTextResponse(TypeError):
    """C{.text}, C{.css()} or C{.xpath()} was used on an image, a PDF or other binary body."""


class HttpResponse:
    """
    A downloaded page.

    C{.text} is decoded once, on first use: the BOM wins, then the C{Content-Type} charset,
    then C{<meta charset>}, then UTF-8 or a guess (L{tinyscrapy.http.charsets}). The parsel selector
    behind C{.css()} and C{.xpath()} is also built on first use, so a callback that never
    selects never pays for parsing.

    @ivar request: the L{Request} that was downloaded (after redirects, the last hop).
    @ivar flags: marks set on the way, as in Scrapy: C{"cached"} when the HTTP cache
        answered instead of the server.
    """

    def __init__(self, url, status=200, headers=None, body=b"", request=None, flags=None):
        self.url = url
        self.status = status
        self.headers = headers if isinstance(headers, Headers) else Headers(headers)
        self.body = body
        self.request = request
        self.flags = list(flags) if flags else []
        self._encoding = None
        self._text = None
        self._selector = None
        self._root = None
        self._base_url = None

    def __repr__(self):
        return f"<{self.status} {self.url}>"

    @property
    def meta(self):
        """The request's C{meta}, with C{"depth"}: how many links from a start request
        (what Scrapy's DepthMiddleware keeps there; here it is C{request.depth})."""
        if self.request is None:
            return {}
        meta = self.request.meta
        meta["depth"] = self.request.depth
        return meta

    @property
    def is_text(self):
        """
        False for images, PDFs, archives and other binary bodies: the C{Content-Type}
        decides (see L{tinyscrapy.http.charsets}); a body without one is sniffed.
        """
        from tinyscrapy.http.charsets import is_text
        return is_text(self.headers.get("Content-Type"), self.body)

    @property
    def is_html(self):
        """True for HTML and XHTML (the C{Content-Type}; a body without one is sniffed):
        what Scrapy makes an C{HtmlResponse} of, see L{tinyscrapy.http.charsets.is_html}."""
        from tinyscrapy.http.charsets import is_html
        return is_html(self.headers.get("Content-Type"), self.body)

    @property
    def encoding(self):
        """The name of the encoding C{.text} was decoded with.
        @raise NotTextResponse: the body is binary."""
        if self._encoding is None:
            self._decode()
        return self._encoding

    @property
    def text(self):
        """The body as C{str}. @raise NotTextResponse: the body is binary."""
        if self._text is None:
            self._decode()
        return self._text

    def _decode(self):
        """BOM, then the header's charset, then C{<meta>}, then UTF-8 or a guess: see
        L{tinyscrapy.http.charsets.decode}."""
        from tinyscrapy.http.charsets import decode, is_text
        content_type = self.headers.get("Content-Type")
        if not is_text(content_type, self.body):
            raise NotTextResponse(
                f"{self.url} is not text ({content_type or 'binary content'}): .text, "
                f".css() and .xpath() work on HTML, XML, JSON and other text; use .body")
        self._encoding, self._text = decode(content_type, self.body)

    def json(self):
        """The body parsed as JSON."""
        return json.loads(self.text)

    @property
    def selector(self):
        """The parsel C{Selector} over C{.text}, built on first use (over L{root})."""
        if self._selector is None:
            from parsel import Selector
            content_type = (self.headers.get("Content-Type") or "").lower()
            if "xml" in content_type and "html" not in content_type:
                self._selector = Selector(text=self.text, type="xml", base_url=self.url)
            else:
                self._selector = Selector(root=self.root, type="html")
        return self._selector

    @property
    def root(self):
        """The lxml root element, parsed on first use: for HTML without importing parsel
        (L{tinyscrapy.http.htmltree}); for XML, the selector's."""
        if self._root is None:
            from tinyscrapy.http.htmltree import parse_html
            content_type = (self.headers.get("Content-Type") or "").lower()
            self._root = (self.selector.root if "xml" in content_type and "html" not in
                          content_type else parse_html(self.text, self.url))
        return self._root

    def css(self, query):
        return self.selector.css(query)

    def xpath(self, query, **kwargs):
        return self.selector.xpath(query, **kwargs)

    def urljoin(self, url):
        """
        Resolve C{url} against the page's C{<base href>} (if any) or its URL, as a browser
        does: dot segments are resolved in absolute URLs too. Never raises: a URL that
        cannot be parsed (a broken IPv6 host) comes back as it is, for the scope to drop.
        """
        prefixes = self.__dict__.get("_join_prefixes")
        if prefixes is None:
            if self._base_url is None:
                self._base_url = self.url
                if self.is_text and b"<base" in self.body[:4096].lower():
                    from w3lib.html import get_base_url
                    self._base_url = get_base_url(self.text[:4096], self.url)
            prefixes = self._join_prefixes = join_prefixes(self._base_url)
        if prefixes:
            joined = fast_join(url, *prefixes)
            if joined is not None:
                return joined
        try:
            joined = urljoin(self._base_url, url)
        except ValueError:
            return url
        if "/." in joined:
            joined = resolve_dot_segments(joined)
        return joined

    def follow(self, url, callback=None, **kwargs):
        """
        A L{Request} for a link on this page: relative URLs resolved, depth one more.

        Never raises for a strange link: C{javascript:}, C{mailto:}, C{tel:}, C{data:},
        C{file:} or a broken URL still make a Request, which the crawl's scope drops
        (counted as C{InvalidUrl}) before anything is downloaded.

        @param url: a string, a L{tinyscrapy.scope.links.Link}, or a parsel selector of an
            C{<a>}/C{<link>} element (its C{href}) or of an attribute (its value).
        @raise ValueError: a selector that holds no URL.
        """
        if not isinstance(url, str):
            url = link_url(url)
        if self.request is not None:
            kwargs.setdefault("depth", self.request.depth + 1)
        return _request(self.urljoin(url.strip(HTML_SPACE)), callback, kwargs)

    def follow_all(self, urls=None, callback=None, css=None, xpath=None, **kwargs):
        """
        One L{follow} per link: from C{urls} (strings, Links or selectors), or from the
        C{href}s that C{css} or C{xpath} select.

        During a crawl the scraper gives the response the scheduler's seen set
        (C{response._seen}, a L{tinyscrapy.scope.fingerprint.SeenUrls}): a link whose
        canonical URL was already seen, or that appears twice in C{urls}, gets no Request
        at all. Those are counted as C{dupefilter/skipped_early} and never enter the
        ledger. Requests with C{dont_filter}, another method or a body are not skipped.

        @return: a list of L{Request}.
        """
        if len([given for given in (urls, css, xpath) if given is not None]) > 1:
            raise ValueError("follow_all takes only one of urls, css and xpath")
        if urls is None:
            selected = self.css(css) if css else self.xpath(xpath) if xpath else []
            urls = [url for url in map(selector_url, selected) if url is not None]
        absolute = [url if isinstance(url, str) and url.startswith(("http://", "https://"))
                    and "/." not in url  # already absolute (a LinkExtractor's): no join
                    else self.urljoin((url if isinstance(url, str) else link_url(url))
                                      .strip(HTML_SPACE)) for url in urls]
        seen = getattr(self, "_seen", None)
        if seen is not None and not kwargs.get("dont_filter") and not kwargs.get("body") \
                and kwargs.get("method", "GET").upper() == "GET":
            absolute = seen.unseen(absolute)
        if self.request is not None:
            kwargs.setdefault("depth", self.request.depth + 1)
        return [_request(url, callback, kwargs) for url in absolute]


def request_url(url):
    """
    The C{url} of the Request that L{HttpResponse.follow} makes for the absolute C{url}:
    L{safe_url}, or, for a URL it refuses, the percent-encoded URL of L{_request}.
    """
    try:
        return safe_url(url)
    except ValueError:  # UnicodeError included
        return _quote_refused(url)


def _request(url, callback, kwargs):
    """
    C{Request(url, callback, **kwargs)}; a URL Request refuses (a bad port with non-ASCII
    characters, a lone surrogate) is percent-encoded as it is, so that the scope drops it
    as C{InvalidUrl} instead of the callback breaking.
    """
    try:
        return Request(url, callback=callback, **kwargs)
    except ValueError:  # UnicodeError included
        return Request(_quote_refused(url), callback=callback, **kwargs)


def _quote_refused(url):
    from urllib.parse import quote
    return quote(url, safe="/:?#[]@!$&'()*+,;=%~", errors="surrogatepass")
