"""
Canonical URLs and request fingerprints: the identity the duplicate filter uses.

A page is one page however a site spells the link: fragment dropped, query arguments
sorted, scheme and host lower-cased, default port dropped, percent-encoding normalised.
w3lib's C{canonicalize_url} does all of that but the port, and costs about 35 µs a call;
a crawl meets some thirty links a page, so most of them take L{_PLAIN_URL}, a fast path
that gives the same answer for the URLs that need no re-encoding (checked against w3lib in
C{tests/test_fingerprint.py}).
"""

import re
from hashlib import blake2b

from w3lib.url import canonicalize_url

# scheme://host[:port] with a lower-case host, then a path and query of unreserved
# characters only: nothing here needs percent-encoding or decoding.
_PLAIN_URL = re.compile(
    r"(https?)://([a-z0-9.\-]+)(?::(\d+))?(/[A-Za-z0-9\-._~/]*)?(?:\?([A-Za-z0-9\-._~=&]*))?(?:#.*)?\Z"
)
_DEFAULT_PORTS = {"http": "80", "https": "443"}
_HOST_PORT = re.compile(r"(?i)^(https?://[^/?#@]*?)(:\d+)?(?=[/?#]|\Z)")


def canonical_url(url):
    """
    The URL in its canonical spelling.

    @param url: an absolute URL (C{str}).
    @return: C{str}.
    """
    match = _PLAIN_URL.match(url)
    if match is None or "/." in url:  # dot segments: let w3lib resolve them
        return _drop_default_port(canonicalize_url(url))
    scheme, host, port, path, query = match.groups()
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        host = host + ":" + port
    canonical = scheme + "://" + host + (path or "/")
    if query:
        canonical += "?" + _sorted_query(query)
    return canonical


def _sorted_query(query):
    """Sort C{k=v} pairs by (key, value), as w3lib does; a bare C{k} becomes C{k=}."""
    pairs = []
    for part in query.split("&"):
        if part:
            key, _, value = part.partition("=")
            pairs.append((key, value))
    pairs.sort()
    return "&".join(key + "=" + value for key, value in pairs)


def _drop_default_port(url):
    match = _HOST_PORT.match(url)
    if match is None or match.group(2) is None:
        return url
    scheme = url[: url.index(":")].lower()
    if match.group(2)[1:] != _DEFAULT_PORTS.get(scheme):
        return url
    return match.group(1) + url[match.end():]


def request_fingerprint(request):
    """
    A compact identity for C{request}: an C{int} of 64 bits over its method, canonical URL
    and body. At 64 bits, ten million URLs collide with a chance of about one in 300,000.
    """
    digest = blake2b(digest_size=8)
    digest.update(request.method.encode("ascii"))
    digest.update(canonical_url(request.url).encode("utf-8"))
    if request.body:
        digest.update(request.body)
    return int.from_bytes(digest.digest(), "big")
