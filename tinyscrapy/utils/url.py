"""
Scrapy's C{scrapy.utils.url}: URLs as strings, fast, because a crawl meets some thirty
links a page.

    - joining (L{fast_join}, L{join_prefixes}, L{resolve_dot_segments}): the joins behind
      C{response.urljoin}, C{follow} and C{follow_all}. L{fast_join} answers for the links
      most pages are made of (an absolute path, a relative path without dot segments, an
      http(s) URL) from the page's C{(origin, directory)} that L{join_prefixes} computes
      once per page; anything else is left to C{urllib.parse.urljoin}, and
      L{resolve_dot_segments} resolves C{.} and C{..} where C{urljoin} leaves them (as a
      browser does);
    - the canonical form (L{canonical_url}), the identity the duplicate filter
      fingerprints: fragment dropped, query arguments sorted, scheme and host
      lower-cased, default port dropped, dot segments resolved, percent-encoding
      normalised (escapes of unreserved characters decoded, the rest in upper case,
      characters that need it encoded). w3lib's C{canonicalize_url} does all of that but
      the port; most links take L{_PLAIN_URL}, a fast path that gives the same answer for
      the URLs that need no re-encoding (checked against w3lib in
      C{tests/test_fingerprint.py});
    - the origin (L{url_origin}: scheme, host and port, as robots.txt and the offsite
      log count sites);
    - the checks behind the link extractor's filters, on absolute URL strings without
      parsing them: the host (C{allow_domains}/C{deny_domains}), a valid host and port
      (C{http://host:abc/} is no link, as in Scrapy), the extension (C{deny_extensions}),
      and the argument shapes the extractor accepts (one pattern or several);
    - Scrapy's own helpers, with its behaviour, for the components and plugins that
      import them: L{url_is_from_any_domain}, L{url_is_from_spider},
      L{url_has_any_extension}, L{add_http_if_no_scheme}, L{guess_scheme}, L{strip_url},
      and w3lib's C{parse_url}.

@var HTML_SPACE: the characters HTML strips around an attribute's URL.
"""

import re
import warnings
from urllib.parse import urljoin, urlparse, urlsplit, urlunparse, urlunsplit

from w3lib.url import parse_url

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


def as_list(value):
    if value is None:
        return []
    if isinstance(value, (str, bytes, re.Pattern)):
        return [value]
    return list(value)


def compile_all(patterns):
    return tuple(p if isinstance(p, re.Pattern) else re.compile(p) for p in as_list(patterns))


def domain_list(domains):
    return tuple(d.strip().lower().lstrip(".") for d in as_list(domains) if d.strip())


def in_domains(host, domains):
    return any(host == d or host.endswith("." + d) for d in domains)


_HOST = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]*)")


def url_host(url):
    match = _HOST.match(url)
    return match.group(1).lower() if match else ""


def valid_host(url):
    """False for an absolute URL whose host is missing or a broken IPv6 address, or whose
    port is not a number from 0 to 65535."""
    start = url.find("//") + 2
    if start >= len(url) or url[start] in "/?#":
        return False
    if url[start] == "[" and "]" not in url:
        return False
    end = url.find("/", start)
    if end == -1:
        end = len(url)
    if url.find(":", start, end) == -1:  # no port (nor user info): most links
        return True
    netloc = url[start:end]
    if "?" in netloc or "#" in netloc:  # a query or fragment right after the host: rare
        netloc = netloc.partition("?")[0].partition("#")[0]
        if ":" not in netloc:
            return True
    valid = _PORT_CHECKED.get(netloc)  # a page's links share a few authorities
    if valid is None:
        valid = _valid_port(netloc)
        if len(_PORT_CHECKED) < 1024:
            _PORT_CHECKED[netloc] = valid
    return valid


_PORT_CHECKED = {}


def _valid_port(netloc):
    """Is the port of C{netloc} (user info and IPv6 brackets allowed) empty or 0-65535?"""
    hostport = netloc.rpartition("@")[2]
    port = hostport.rpartition("]")[2] if hostport.startswith("[") else hostport
    if ":" not in port:
        return True
    port = port.rpartition(":")[2]
    return port == "" or (port.isdigit() and port.isascii() and int(port) <= 65535)


def url_extension(url):
    """The lower-cased extension of the last path segment of an absolute http(s) URL
    without fragment (without the dot), or ""."""
    path = url.partition("?")[0]
    slash = path.rfind("/")
    if slash < 8:  # the slashes of "http://" or "https://": no path
        return ""
    name, dot, extension = path[slash + 1:].rpartition(".")
    return extension.lower() if dot and name else ""


# Scrapy's helpers

def url_is_from_any_domain(url, domains):
    """
    Whether C{url}'s host is one of C{domains} or below one, in any case. The host is
    the URL's whole network location: a port (or credentials) in it must be in the
    domain too (C{192.169.0.15:8080}), as in Scrapy.

    @param url: C{str}, C{bytes} or a C{ParseResult}.
    """
    host = parse_url(url).netloc.lower()
    if not host:
        return False
    return any(host == domain or host.endswith("." + domain)
               for domain in (d.lower() for d in domains))


def url_is_from_spider(url, spider):
    """
    Whether C{url} is on the site of C{spider} (a spider class or instance): below its
    C{name} or one of its C{allowed_domains}. An C{allowed_domains} property cannot be
    read from a class: it is left out, with a warning.
    """
    return url_is_from_any_domain(url, _spider_domains(spider))


def _spider_domains(spider):
    yield spider.name
    domains = getattr(spider, "allowed_domains", None)
    if isinstance(domains, property):
        warnings.warn(f"{spider.__name__}.allowed_domains is a property. Properties cannot "
                      f"be evaluated on a spider class, only on a spider instance, so it "
                      f"will be ignored here. Define allowed_domains as a plain class "
                      f"attribute instead.", UserWarning, stacklevel=3)
        return
    yield from domains or ()


def url_has_any_extension(url, extensions):
    """Whether C{url}'s path ends, in any case, with one of C{extensions} (each with its
    dot: C{".pdf"})."""
    path = parse_url(url).path.lower()
    return any(path.endswith(extension) for extension in extensions)


_HAS_SCHEME = re.compile(r"^\w+://", re.IGNORECASE)


def add_http_if_no_scheme(url):
    """C{url} with C{http://} in front when it has no C{scheme://} (C{http:} before a
    network path, C{//host/})."""
    if _HAS_SCHEME.match(url):
        return url
    return ("http:" if urlparse(url).netloc else "http://") + url


# ".", "..", ".name" or "~", then "/" and something: a POSIX path; a drive or a UNC share
_POSIX_PATH = re.compile(r"^(?:\.(?:\.|[^/.]+)?|~)?/.")
_WINDOWS_PATH = re.compile(r"^(?:[a-z]:\\|\\\\)", re.IGNORECASE)


def _is_filesystem_path(text):
    return bool(_POSIX_PATH.match(text) or _WINDOWS_PATH.match(text))


def guess_scheme(url):
    """C{url} with a scheme: C{file://} for what looks like a file's path (C{./x},
    C{/tmp/x}, C{~/x}, C{C:\\x}), C{http://} for anything else that has none."""
    if _is_filesystem_path(url):
        from w3lib.url import any_to_uri
        return any_to_uri(url)
    return add_http_if_no_scheme(url)


_DEFAULT_PORTS_STRIPPED = {("http", 80), ("https", 443), ("ftp", 21)}


def strip_url(url, strip_credentials=True, strip_default_port=True, origin_only=False,
              strip_fragment=True):
    """
    C{url} without some of its parts, as Scrapy's C{strip_url} (the C{Referer} a request
    may send): C{strip_credentials} drops C{user:password@}; C{strip_default_port} drops
    C{:80}, C{:443} and C{:21} from http, https and ftp URLs; C{origin_only} keeps the
    scheme and the host (and port) only, with the path C{/}; C{strip_fragment} drops the
    C{#fragment}.
    """
    parts = urlparse(url)
    netloc = parts.netloc
    if (strip_credentials or origin_only) and (parts.username or parts.password):
        netloc = netloc.rpartition("@")[2]
    if strip_default_port and parts.port and \
            (parts.scheme, parts.port) in _DEFAULT_PORTS_STRIPPED:
        netloc = netloc.removesuffix(f":{parts.port}")
    if origin_only:
        return urlunparse((parts.scheme, netloc, "/", "", "", ""))
    return urlunparse((parts.scheme, netloc, parts.path, parts.params, parts.query,
                       "" if strip_fragment else parts.fragment))
