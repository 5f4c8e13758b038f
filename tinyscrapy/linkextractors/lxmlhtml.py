"""
L{LinkExtractor}: the links of a page worth following, as Scrapy users know it.

    extractor = LinkExtractor(allow=r"/catalogue/", deny=r"/login", restrict_css="main")
    for link in extractor.extract_links(response):
        yield response.follow(link, callback=self.parse_item)

or, with the early duplicate check of L{HttpResponse.follow_all}::

    yield from response.follow_all(extractor.extract_links(response), self.parse_item)

What it does to each C{<a href>} and C{<area href>} (the C{tags} and C{attrs} it scans; as in
Scrapy, C{"*"} scans every tag or attribute, C{deny_tags} and C{deny_attrs} take some out
again, C{tags=None} or C{attrs=None} scans nothing, and the XHTML namespace of a page served
as XML is ignored, so C{text/xml} XHTML has its C{<a href>} links too):
HTML whitespace stripped, resolved against C{<base href>} or the page URL, then kept only
if it is http(s) (C{javascript:}, C{mailto:}, C{tel:}, C{data:}, C{file:} and the like
never make a link), it matches an C{allow} pattern (when there are any) and no C{deny}
pattern, its host is in C{allow_domains} (when given) and not in C{deny_domains}, its port
(if any) is a number from 0 to 65535 (C{http://host:abc/} is no link, as in Scrapy), its
extension is not in C{deny_extensions} (default L{IGNORED_EXTENSIONS}: images, archives,
audio, video, office documents, ...), and its text matches C{restrict_text} (when given).
As in Scrapy, C{Link.url} is the URL percent-encoded as a request sends it (its query in the
page's encoding), C{#fragment} included, and the filters see it so. With C{unique} (the
default), a URL is kept once: compared as it is, or by its canonical form with
C{canonicalize} (which also drops the fragment), so C{/a} and C{/a#top} are two links
unless C{canonicalize} is on. L{LinkExtractor.extract_urls}, the crawl's fast path, gives
the URLs to follow: without fragments, each canonical URL once.
"""

import re

from tinyscrapy.http.request import request_url
from tinyscrapy.http.response.html import compiled_xpath
from tinyscrapy.link import Link, element_text
from tinyscrapy.utils.url import (
    HTML_SPACE,
    as_list,
    canonical_url,
    compile_all,
    domain_list,
    fast_join,
    in_domains,
    url_extension,
    url_host,
    valid_host,
)

IGNORED_EXTENSIONS = frozenset("""
    7z 7zip apk arj bin bz2 cab deb dmg exe gz iso jar lz lzma msi pkg rar rpm tar tbz tbz2
    tgz txz xz z zip zst
    ai bmp cdr dxf drw eps gif heic heif ico jpeg jpg mng pct png ps psd psp pst svg svgz
    tif tiff webp avif
    3gp aac aiff amr ape asf asx au avi flac flv m4a m4v mid midi mkv mov mp2 mp3 mp4 mpeg mpg
    oga ogg ogv opus qt ra rm swf wav webm wma wmv
    doc docb docm docx dot dotm dotx odg odp ods odt pot potm potx pps ppsx ppt pptm pptx rtf
    xls xlsb xlsm xlsx xlt xltm xltx
    css js woff woff2 ttf otf eot pdf rss hqx sh rb
""".split())

MEMO_SIZE = 8192  # answers a LinkExtractor remembers (see LinkExtractor._resolver)
MEMO_ENCODINGS = 4  # page encodings it keeps answers for at once
# what request_url would give back unchanged: a page URL (lower-case scheme and host), and
# a relative link's characters (one "#" at most)
_PLAIN_CHARS = r"[A-Za-z0-9\-._~!$&'()*+,;=:@/%"  # and "]", with or without "?"
_PLAIN_PREFIX = re.compile(r"https?://[a-z0-9.\-]*(?::[0-9]*)?/" + _PLAIN_CHARS + r"]*\Z").match
_PLAIN_VALUE = re.compile(_PLAIN_CHARS + r"?]*(?:#" + _PLAIN_CHARS + r"?]*)?\Z").match
_LEFT_OUT = ()  # a remembered "no link"


class LinkExtractor:
    """
    Extract the links of a page that pass its filters (see the module docstring).

    @param allow: regular expressions (one or several); a URL must match one (C{re.search}).
    @param deny: regular expressions; a URL that matches one is left out. Deny wins.
    @param allow_domains: hosts (with their subdomains) a link may point to.
    @param deny_domains: hosts (with their subdomains) a link may not point to.
    @param restrict_xpaths: look for links only inside what these XPaths select.
    @param restrict_css: the same with CSS selectors.
    @param tags: the elements to scan (default C{a} and C{area}; C{"*"}: every element;
        None: none).
    @param attrs: their attributes holding URLs (default C{href}; C{"*"}: every attribute;
        None: none).
    @param deny_tags: elements never scanned, even with C{tags="*"}.
    @param deny_attrs: attributes never read, even with C{attrs="*"}.
    @param canonicalize: give each link its canonical URL (sorted query, ...).
    @param unique: keep one link per canonical URL.
    @param process_value: a function applied to each attribute value; None drops it.
    @param deny_extensions: extensions (without the dot) never followed; None: the default
        L{IGNORED_EXTENSIONS}, C{()}: none.
    @param strip: strip HTML whitespace around attribute values.
    @param restrict_text: regular expressions the link's text must match one of.
    """

    def __init__(self, allow=(), deny=(), allow_domains=(), deny_domains=(),
                 restrict_xpaths=(), tags=("a", "area"), attrs=("href",), canonicalize=False,
                 unique=True, process_value=None, deny_extensions=None, restrict_css=(),
                 strip=True, restrict_text=None, deny_tags=(), deny_attrs=()):
        self.allow_res = compile_all(allow)
        self.deny_res = compile_all(deny)
        self.allow_domains = domain_list(allow_domains)
        self.deny_domains = domain_list(deny_domains)
        self.restrict_xpaths = tuple(as_list(restrict_xpaths))
        self.restrict_css = tuple(as_list(restrict_css))
        self.tags = tuple(dict.fromkeys(as_list(tags)))
        self.attrs = tuple(dict.fromkeys(as_list(attrs)))
        self.deny_tags = frozenset(as_list(deny_tags))
        self.deny_attrs = frozenset(as_list(deny_attrs))
        # "*" (or a denied name) needs every element or attribute looked at by name
        self._every_tag = "*" in self.tags or bool(self.deny_tags)
        self._every_attr = "*" in self.attrs or bool(self.deny_attrs)
        self.canonicalize = canonicalize
        self.unique = unique
        self.process_value = process_value
        if deny_extensions is None:
            deny_extensions = IGNORED_EXTENSIONS
        self.deny_extensions = frozenset(e.lower().lstrip(".") for e in
                                         as_list(deny_extensions))
        self.strip = strip
        self.restrict_text = compile_all(restrict_text)
        # extract_urls reads the attribute values with one XPath query when nothing else
        # (restrictions, a value hook, a text filter) needs the elements themselves
        self._plain = not (self.restrict_xpaths or self.restrict_css or process_value
                           or self.restrict_text or self._every_tag
                           or self._every_attr) and all(
            re.fullmatch(r"[a-z][a-z0-9]*", name) for name in self.tags + self.attrs)
        self._memos = {}  # page encoding -> [recent memo, older memo] (see _resolver)
        self._memo = {}  # (directory, value) -> (url, url without fragment), or ()
        self._plain_xpath = " | ".join(f"//{tag}/@{attr}" for tag in self.tags
                                       for attr in self.attrs) or "/nothing"

    def extract_links(self, response):
        """
        @param response: an L{HttpResponse}; one that is not text has no links.
        @return: a list of L{Link}, in document order.
        """
        if not response.is_text or not self.tags or not self.attrs:
            return []
        links = []
        keys = set()
        resolve = self._resolver(response)
        for element, value in self._attribute_values(response):
            link = self._make_link(resolve, element, value)
            if link is None:
                continue
            if self.unique:  # as Scrapy: the URL as it is (canonical with canonicalize)
                if link.url in keys:
                    continue
                keys.add(link.url)
            links.append(link)
        return links

    def extract_urls(self, response):
        """
        The URLs of L{extract_links}, without making a L{Link} for each: the fast path of
        a crawl that only follows links. With the default tags and attributes and no
        C{restrict_*} or C{process_value}, the attribute values come straight from one
        XPath query (in C), and each one costs a join and the URL filters.

        Unlike L{extract_links}, it gives URLs to follow: without fragments, and with
        C{unique}, each canonical URL once.

        @return: a list of absolute URLs without fragments, in document order.
        """
        if not response.is_text:
            return []
        if not self._plain or _namespaced(response.root):
            return self._followable([link.url for link in self.extract_links(response)])
        urls = []
        keys = set() if self.unique else None
        strip, canonicalize = self.strip, self.canonicalize
        resolve = self._resolver(response)
        for value in compiled_xpath(self._plain_xpath)(response.root):
            if strip:
                value = value.strip(HTML_SPACE)
            parts = resolve(value)
            if parts is None:
                continue
            url = canonical_url(parts[1]) if canonicalize else parts[1]
            if keys is not None:
                key = url if canonicalize else canonical_url(url)
                if key in keys:
                    continue
                keys.add(key)
            urls.append(url)
        return urls

    def _followable(self, urls):
        """C{urls} without fragments, and with C{unique} each canonical URL once."""
        followable = []
        keys = set()
        for url in urls:
            url = url.partition("#")[0]
            if self.unique:
                key = url if self.canonicalize else canonical_url(url)
                if key in keys:
                    continue
                keys.add(key)
            followable.append(url)
        return followable

    def matches(self, url):
        """True if an absolute C{url} passes the URL filters (not the text one)."""
        return self._url_allowed(url)

    def _attribute_values(self, response):
        """C{(element, value)} for each scanned attribute inside the restricted parts."""
        roots = [s.root for query in self.restrict_xpaths for s in response.xpath(query)]
        roots += [s.root for query in self.restrict_css for s in response.css(query)]
        if not (self.restrict_xpaths or self.restrict_css):
            roots = [response.root]
        overlapping = set() if len(roots) > 1 else None
        for root in roots:
            if not hasattr(root, "iter"):  # an attribute or text node was selected
                continue
            for element in self._elements(root):
                if overlapping is not None:  # nested restrictions: scan each element once
                    if element in overlapping:
                        continue
                    overlapping.add(element)
                if self._every_attr:
                    for name, value in element.items():
                        if name not in self.deny_attrs and ("*" in self.attrs
                                                            or name in self.attrs):
                            yield element, value
                    continue
                for attr in self.attrs:
                    value = element.get(attr)
                    if value is not None:
                        yield element, value

    def _elements(self, root):
        """The elements under C{root} whose tag is scanned, in document order (a tag in the
        XHTML namespace counts by its local name)."""
        if not self._every_tag and not _namespaced(root):
            yield from root.iter(*self.tags)
            return
        from lxml.etree import Element
        every = "*" in self.tags
        for element in root.iter(Element):
            tag = element.tag
            if tag[:1] == "{" and tag.startswith(_XHTML):
                tag = tag[len(_XHTML):]
            if tag not in self.deny_tags and (every or tag in self.tags):
                yield element

    def _make_link(self, resolve, element, value):
        if self.strip:
            value = value.strip(HTML_SPACE)
        if self.process_value is not None:
            value = self.process_value(value)
            if value is None:
                return None
        parts = resolve(value)
        if parts is None:
            return None
        url = parts[0]
        if self.restrict_text:
            text = element_text(element)
            if not any(r.search(text) for r in self.restrict_text):
                return None
        if self.canonicalize:
            url = canonical_url(url)
        rel = element.get("rel")
        nofollow = bool(rel) and "nofollow" in rel.lower().split()
        return Link(url, nofollow=nofollow, element=element)

    def _resolver(self, response):
        """
        What every link goes through, in L{extract_links} and L{extract_urls} alike, as a
        function of one attribute value: resolve it against the page, percent-encode it as a
        request sends it (its query in the page's encoding, as Scrapy's C{safe_url_string}),
        keep it only if it is http(s) with a host and passes the URL filters.

        The answer for a link that L{fast_join} joins depends only on the value, the
        page's directory and (for a non-ASCII value) the page's encoding, and a site's pages
        repeat most of their links (menus, footers, pagination): it is remembered (one memo
        per page encoding), keyed by C{(directory, value)}, and the join, the encoding and
        the filters are skipped the next time. When a memo holds L{MEMO_SIZE} answers it
        becomes the older memo (the one before is dropped), and an answer found there moves
        back to the recent one: the links a site repeats on every page stay, and the memos
        stay a few megabytes at most.

        @return: a function of a value returning C{(url, url without its fragment)} of the
            absolute URL, or None when it is left out.
        """
        check = self._check
        encoding = response.encoding
        prefixes = response.join_prefixes()
        if not prefixes:
            def resolve_slowly(value):
                return check(request_url(response.urljoin(value), encoding))
            return resolve_slowly
        origin, directory = prefixes
        # a relative link of plain characters joined to a plain page URL needs no encoding
        plain_page = _PLAIN_PREFIX(directory) is not None
        memos = self._memos.get(encoding)
        if memos is None:
            if len(self._memos) >= MEMO_ENCODINGS:
                self._memos.clear()
            memos = self._memos[encoding] = [{}, {}]
        elif len(memos[0]) >= MEMO_SIZE:  # the recent answers become the older ones
            memos[:] = [{}, memos[0]]
        memo, older = memos
        self._memo = memo
        # a link joined to this page's path is on this page's host: checked once here
        on_page = self._allowed if valid_host(origin + "/") else check

        def resolve(value):
            key = (directory, value)
            parts = memo.get(key)
            if parts is None:
                parts = older.get(key)
                if parts is None:
                    url = fast_join(value, origin, directory)
                    if url is None:  # joined against the whole base URL: not remembered
                        return check(request_url(response.urljoin(value), encoding))
                    if url is value:  # an absolute URL: its scheme and host checked too
                        parts = check(request_url(url, encoding))
                    elif not plain_page or _PLAIN_VALUE(value) is None:
                        parts = on_page(request_url(url, encoding))
                    else:
                        parts = on_page(url)
                    parts = parts or _LEFT_OUT
                memo[key] = parts
            return parts or None
        return resolve

    def _check(self, url):
        """C{(url, url without its fragment)} for an absolute, encoded C{url} that is
        http(s) with a valid host and passes the URL filters, else None."""
        if not url[:8].lower().startswith(("http://", "https://")) or not valid_host(url):
            return None
        return self._allowed(url)

    def _allowed(self, url):
        """C{(url, url without its fragment)} for an http(s) C{url} with a valid host when
        it passes the URL filters, else None."""
        if not self._url_allowed(url):
            return None
        return url, url.partition("#")[0] if "#" in url else url

    def _url_allowed(self, url):
        if self.allow_res and not any(r.search(url) for r in self.allow_res):
            return False
        if self.deny_res and any(r.search(url) for r in self.deny_res):
            return False
        if self.allow_domains or self.deny_domains:
            host = url_host(url)
            if self.allow_domains and not in_domains(host, self.allow_domains):
                return False
            if self.deny_domains and in_domains(host, self.deny_domains):
                return False
        if self.deny_extensions and url_extension(url.partition("#")[0] if "#" in url else url) \
                in self.deny_extensions:
            return False
        return True


# Scrapy's name of the class in this module (C{scrapy.linkextractors.LinkExtractor} is it too)
LxmlLinkExtractor = LinkExtractor


class LxmlParserLinkExtractor:
    """
    Scrapy's low-level extractor: a L{Link} for every attribute C{attr} accepts of every
    element C{tag} accepts, in document order, without L{LinkExtractor}'s filters
    (domains, extensions, patterns).

    @param tag: an element name (C{"a"}), or a function of the name answering True.
    @param attr: an attribute name (C{"href"}), or a function of the name.
    @param process: called with each absolute URL; what it returns is the link's URL,
        None leaves the link out.
    @param unique: one link per URL (compared canonicalized, unless C{canonicalized}).
    @param strip: strip HTML whitespace around each value first.
    @param canonicalized: the URLs are canonical already: compare them as they are.
    """

    def __init__(self, tag="a", attr="href", process=None, unique=False, strip=True,
                 canonicalized=False):
        self.scan_tag = tag if callable(tag) else _equals(tag)
        self.scan_attr = attr if callable(attr) else _equals(attr)
        self.process_attr = process if callable(process) else _same
        self.unique = unique
        self.strip = strip
        self.canonicalized = canonicalized

    def extract_links(self, response):
        """@return: the links of C{response} (none for one that is not text)."""
        if not getattr(response, "is_text", False):
            return []
        from urllib.parse import urljoin

        from lxml.etree import Element

        from tinyscrapy.utils.response import get_base_url
        base = get_base_url(response)
        links, seen = [], set()
        for element in response.selector.root.iter(Element):
            name = element.tag.rpartition("}")[2]
            if not self.scan_tag(name):
                continue
            for attribute, value in element.attrib.items():
                if not self.scan_attr(attribute):
                    continue
                if self.strip:
                    value = value.strip(HTML_SPACE)  # noqa: PLW2901 - the value, cleaned
                try:
                    url = self.process_attr(urljoin(base, value))
                except ValueError:  # a bogus link
                    continue
                if url is None:
                    continue
                url = urljoin(response.url, request_url(url, response.encoding))
                key = url if self.canonicalized else canonical_url(url)
                if self.unique and key in seen:
                    continue
                seen.add(key)
                rel = element.get("rel")
                links.append(Link(url, text=element_text(element),
                                  nofollow=bool(rel) and "nofollow" in rel.lower().split()))
        return links


def _equals(name):
    def equals(other):
        return other == name
    return equals


def _same(value):
    return value


_XHTML = "{http://www.w3.org/1999/xhtml}"


def _namespaced(root):
    """True when C{root}'s tag is namespaced (XHTML parsed as XML, say)."""
    tag = getattr(root, "tag", None)
    return isinstance(tag, str) and tag[:1] == "{"
