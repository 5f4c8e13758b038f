"""
Canonical URLs and request fingerprints: the identity the duplicate filter uses.

A page is one page however a site spells the link: fragment dropped, query arguments
sorted, scheme and host lower-cased, default port dropped, dot segments resolved,
percent-encoding normalised (escapes of unreserved characters decoded, the rest in upper
case, characters that need it encoded). w3lib's C{canonicalize_url} does all of that but
the port, and costs 10 to 35 µs a call; a crawl meets some thirty links a page, so most of
them take L{_PLAIN_URL}, a fast path that gives the same answer for the URLs that need no
re-encoding (checked against w3lib in C{tests/test_fingerprint.py}).
"""

import re
from hashlib import blake2b

from tinyscrapy.scope.seen import FingerprintSet

# scheme://host[:port] (any case), then a path of unreserved characters and sub-delims and
# a query of unreserved characters only: nothing here needs percent-encoding or decoding.
_PLAIN_URL = re.compile(
    r"([Hh][Tt][Tt][Pp][Ss]?)://([A-Za-z0-9.\-]+)(?::(\d*))?"
    r"(/[A-Za-z0-9\-._~/!$&'()*+,;=:@]*)?(?:\?([A-Za-z0-9\-._~=&]*))?(?:#.*)?\Z"
)
_DEFAULT_PORTS = {"http": 80, "https": 443}
_AUTHORITY = re.compile(r"(?i)^(https?)://([^/?#]*)")


def canonical_url(url):
    """
    The URL in its canonical spelling. Never raises: a URL that w3lib cannot parse (a bad
    port, a broken IPv6 address) is returned without its fragment.

    @param url: an absolute URL (C{str}).
    @return: C{str}.
    """
    match = _PLAIN_URL.match(url)
    if match is None or "/." in url:  # dot segments: let w3lib resolve them
        # imported here: w3lib.url imports urllib.request (and the email package), some
        # 25 ms of start-up that a crawl of plain links never needs
        from w3lib.url import canonicalize_url
        try:
            return _drop_default_port(canonicalize_url(url))
        except ValueError:
            return url.partition("#")[0]
    scheme, host, port, path, query = match.groups()
    scheme = scheme.lower()
    host = host.lower()
    if port and int(port) != _DEFAULT_PORTS[scheme]:
        host = host + ":" + str(int(port))
    canonical = scheme + "://" + host + (path or "/")
    if query:
        query = _sorted_query(query)
        if query:
            canonical += "?" + query
    return canonical


def _sorted_query(query):
    """Sort C{k=v} pairs by (key, value), as w3lib does; a bare C{k} becomes C{k=}, an
    C{=} inside a value C{%3D}, empty parts go."""
    pairs = []
    for part in query.split("&"):
        if part:
            key, _, value = part.partition("=")
            if "=" in value:
                value = value.replace("=", "%3D")
            pairs.append((key, value))
    pairs.sort()
    return "&".join([key + "=" + value for key, value in pairs])


def _drop_default_port(url):
    """C{url} (as w3lib canonicalised it) without C{:80} for http or C{:443} for https."""
    match = _AUTHORITY.match(url)
    if match is None:
        return url
    scheme, authority = match.groups()
    host, colon, port = authority.rpartition(":")
    if not colon or not port.isdigit() or host.endswith(":") or "]" in port:
        return url
    if int(port) != _DEFAULT_PORTS[scheme.lower()]:
        return url
    return url[:match.start(2)] + host + url[match.end(2):]


def url_fingerprint(url, method="GET", body=b""):
    """
    A compact identity for a request: an C{int} of 64 bits over its method, canonical URL
    and body. At 64 bits, ten million URLs collide with a chance of about one in 300,000.

    The fields cannot run into each other: the hashed bytes begin with the length of
    each (C{GET /foo} and C{GET /f} with the body C{oo} hash different bytes).
    """
    return int.from_bytes(_digest(method, canonical_url(url), body).digest(), "big")


def _digest(method, url, body):
    """The BLAKE2b of the three fields, each after its length."""
    method = method.encode("ascii")
    url = url.encode("utf-8", "surrogatepass")
    digest = blake2b(b"%d,%d,%d:" % (len(method), len(url), len(body)), digest_size=8)
    digest.update(method)
    digest.update(url)
    if body:
        digest.update(body)
    return digest


def request_fingerprint(request):
    """L{url_fingerprint} of C{request}'s method, URL and body; with C{meta["verbatim_url"]}
    (a URL sent as written), of the URL as written, as Scrapy's fingerprint does."""
    meta = request._meta
    if meta and meta.get("verbatim_url"):
        digest = _digest(request.method, request.url, request.body)
        return int.from_bytes(digest.digest(), "big")
    return url_fingerprint(request.url, request.method, request.body)


def fingerprint(request, *, include_headers=None, keep_fragments=False):
    """
    Scrapy's C{scrapy.utils.request.fingerprint}: the request's identity as C{bytes} (8 of
    them: L{request_fingerprint}, not Scrapy's SHA-1), optionally telling apart requests
    that differ in the headers named by C{include_headers} (any casing) or, with
    C{keep_fragments}, in the URL's fragment. A request with C{meta["verbatim_url"]} is
    told apart by its URL as written, fragment included (as in Scrapy).
    """
    if not include_headers and not keep_fragments:
        return request_fingerprint(request).to_bytes(8, "big")
    meta = request._meta
    if meta and meta.get("verbatim_url"):
        url = request.url
    else:
        url = canonical_url(request.url)
        if keep_fragments and "#" in request.url:
            url += "#" + request.url.partition("#")[2]
    digest = _digest(request.method, url, request.body)
    for name in sorted({name.lower() for name in include_headers or ()}):
        values = request.headers.getlist(name)
        if values:
            encoded = name.encode("latin-1") if isinstance(name, str) else name
            joined = b"\0".join(values)
            digest.update(b"%d,%d:" % (len(encoded), len(joined)) + encoded + joined)
    return digest.digest()


class SeenUrls:
    """
    The early duplicate check of L{HttpResponse.follow_all}: links whose fingerprint the
    scheduler has already seen get no Request at all (where most of a crawl's duplicates
    die cheaply). Counted as C{dupefilter/skipped_early}; never in the ledger.

    @ivar seen: the scheduler's set of fingerprints (read, never written).
    """

    # most duplicate links of a site are the same few strings (menus, pagers, footers):
    # a bounded cache of URL strings already known as seen skips their fingerprint
    RECENT_MAX = 20_000

    def __init__(self, seen, stats):
        self.seen = seen
        self.stats = stats
        self._recent = set()

    @classmethod
    def of(cls, scheduler, stats):
        """
        The check for C{scheduler}, or None when it cannot be done locally: a backend
        with its own fingerprint function, or without a local C{seen} set.
        """
        seen = getattr(scheduler, "seen", None)
        if getattr(scheduler, "fingerprint", None) is not request_fingerprint \
                or not isinstance(seen, (set, frozenset, FingerprintSet)):
            return None
        return cls(seen, stats)

    def unseen(self, urls):
        """
        @param urls: absolute URLs of GET requests without a body.
        @return: those not seen by the scheduler, each canonical URL once, in order.
        """
        seen, recent = self.seen, self._recent
        kept = []
        on_page = set()
        for url in urls:
            if url in recent:
                continue
            fingerprint = url_fingerprint(url)
            if fingerprint in seen:
                if len(recent) >= self.RECENT_MAX:
                    recent.clear()
                recent.add(url)
                continue
            if fingerprint in on_page:
                continue
            on_page.add(fingerprint)
            kept.append(url)
        skipped = len(urls) - len(kept)
        if skipped:
            self.stats.inc_value("dupefilter/skipped_early", skipped)
        return kept


_ORIGIN = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*)://(?:[^@/?#]*@)?([^/?#]*)")
_DEFAULT_PORT_SUFFIX = {"http": ":80", "https": ":443"}


def url_origin(url):
    """
    C{scheme://host[:port]} of an absolute URL: lower case, without credentials or a
    default port. None when the URL has no host.
    """
    match = _ORIGIN.match(url)
    if match is None or not match.group(2):
        return None
    scheme = match.group(1).lower()
    authority = match.group(2).lower()
    suffix = _DEFAULT_PORT_SUFFIX.get(scheme)
    if suffix and authority.endswith(suffix):
        authority = authority[:-len(suffix)]
    return scheme + "://" + authority
