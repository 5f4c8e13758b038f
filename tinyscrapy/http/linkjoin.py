"""
A page's links as absolute URLs, fast: the joins behind L{HttpResponse.urljoin},
L{HttpResponse.follow} and L{HttpResponse.follow_all}.

A crawl joins some thirty links a page, so L{fast_join} answers for the links most pages
are made of (an absolute path, a relative path without dot segments, an http(s) URL) in a
fraction of C{urllib.parse.urljoin}'s time, from the page's C{(origin, directory)} that
L{join_prefixes} computes once per page; anything else is left to C{urljoin}, and
L{resolve_dot_segments} resolves C{.} and C{..} where C{urljoin} leaves them (as a browser
does).

@var HTML_SPACE: the characters HTML strips around an attribute's URL.
"""

from urllib.parse import urljoin, urlsplit, urlunsplit

HTML_SPACE = " \t\n\f\r"


def join_prefixes(base):
    """
    C{(origin, directory)} of C{base} for L{fast_join}, or C{()} when C{base} is not a
    plain http(s) URL.
    """
    try:
        parts = urlsplit(base)
        if "/." in parts.path or "//" in parts.path \
                or not base.startswith(parts.scheme + "://" + parts.netloc):
            directory = urljoin(base, "x")[:-1]  # dot segments, odd spellings: urljoin's
        else:  # the path up to its last slash, as urljoin(base, "x") cuts it
            path = parts.path or "/"
            directory = parts.scheme + "://" + parts.netloc + path[:path.rfind("/") + 1]
    except ValueError:
        return ()
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return ()
    return parts.scheme + "://" + parts.netloc, directory


def fast_join(url, origin, directory):
    """
    C{urljoin} for the links most pages are made of (an absolute path, a relative path
    without dot segments but for leading C{./} and C{../}, an http(s) URL), in a fraction
    of its time; None for anything else, which takes C{urljoin} itself (whose quirks, such
    as collapsing C{//} in a relative path or dropping an empty C{;} or C{?}, stay its
    own). Checked against C{urljoin} in the tests.
    """
    if url.startswith("./"):  # "here": the page's directory
        while url.startswith("./"):
            url = url[2:]
        if url[:1] == "/" or ":" in url:  # ".//x", "./a:b": left to urljoin
            return None
    climb = 0
    while url.startswith("../"):  # up from the page's directory (the usual "../item/1")
        url = url[3:]
        climb += 1
    if not url or not url.isascii() or not url.isprintable() or url[0] in ". " \
            or url[-1] in " ?#" or "/." in url or "\\" in url or ";" in url or "?#" in url:
        return None
    if climb:
        if "//" in url or ":" in url or url[0] in "/?#":
            return None
        segments = directory[len(origin):].split("/")[1:-1]
        kept = segments[:max(0, len(segments) - climb)]
        return origin + "/" + "".join(segment + "/" for segment in kept) + url
    if url.startswith(("http://", "https://")):
        rest = url[url.index("//") + 2:]
        if not rest or rest[0] in "/?#" or "//" in rest:
            return None
        return url
    if "//" in url or ":" in url:  # a network path, or perhaps a scheme (mailto:)
        return None
    first = url[0]
    if first == "/":
        return origin + url
    if first in "?#":
        return None
    return directory + url


def resolve_dot_segments(url):
    """C{url} with C{.} and C{..} path segments resolved (RFC 3986, section 5.2.4)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if not parts.netloc or "/." not in parts.path:
        return url
    segments = parts.path.split("/")
    kept = []
    for segment in segments[1:]:
        if segment == "..":
            if kept:
                kept.pop()
        elif segment != ".":
            kept.append(segment)
    if segments[-1] in (".", ".."):
        kept.append("")
    path = "/" + "/".join(kept)
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, parts.fragment))
