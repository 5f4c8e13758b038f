"""
L{CookiesMiddleware}: cookies kept per crawl, in the standard library's
L{http.cookiejar.CookieJar}, and sent back by its domain, path, expiry and C{Secure} rules.

One crawl (one spider) has its own jars; C{meta["cookiejar"]} names a jar, so one spider can
keep several sessions apart (requests without it share the default jar). A site can only set
cookies for itself and its parent domains, never for another host, and a cookie goes only to
the hosts its domain covers: a redirect to another host carries none of the first host's.

Cookies a spider gives go into the jar as Scrapy puts them there:

    - C{Request(cookies={"name": "value"})}, or a list of dicts with C{name}, C{value} and
      optionally C{domain}, C{path} and C{secure} (C{secure} defaults to "the request is
      https"). Values may be C{str}, numbers, booleans or bytes (UTF-8, else latin-1); they
      are sent UTF-8 encoded. A dict without C{name} or C{value} is logged and skipped.
    - A C{Cookie} header the spider sets itself is taken into the jar for the request's host,
      so it follows the same rules (it is not sent on to another host after a redirect;
      Scrapy drops such a header instead, see docs/middlewares.md).

C{meta["dont_merge_cookies"]} leaves the request (its C{Cookie} header; its C{cookies=} are
not sent, as in Scrapy) and its response's C{Set-Cookie} alone.

The jar is bounded, as browsers bound theirs (RFC 6265, section 6.1, gives the minimums):
a cookie larger than C{COOKIES_MAX_SIZE} bytes (its C{Set-Cookie} line, or name and value),
more than C{COOKIES_MAX_PER_DOMAIN} cookies for one domain, or more than
C{COOKIES_MAX_PER_JAR} in one jar, are refused; a cookie replacing one already kept is always
taken. Each refusal is counted (C{cookies/dropped/<reason>}) and each response or request
that had some is logged once.

Strings in the jar are the wire's bytes read as latin-1, and the C{Cookie} header is set so
that the wire carries those bytes (L{set_raw}), whether L{Headers} holds C{str} or C{bytes}.
"""

import logging
import re
import time
from collections import Counter, defaultdict
from http.cookiejar import Cookie, CookieJar

from tinyscrapy.exceptions import NotConfigured
from tinyscrapy.http.cookies import WrappedRequest, WrappedResponse, hostname_of
from tinyscrapy.http.headers import drop_header, header_text, header_wire, set_raw
from tinyscrapy.utils.request import left_its_origin

logger = logging.getLogger(__name__)

_IPV4 = re.compile(r"^\d+\.\d+\.\d+\.\d+$")
MAX_SIZE, MAX_PER_DOMAIN, MAX_PER_JAR = 4096, 50, 3000


class CookiesMiddleware:
    """
    Send the jar's cookies with each request; keep each response's C{Set-Cookie}.

    @ivar jars: L{CookieJar} by C{meta["cookiejar"]} key (None: the default jar).
    @ivar stats: where refused cookies are counted (None: nowhere).
    """

    crawler = None

    def __init__(self, debug=False, max_size=MAX_SIZE, max_per_domain=MAX_PER_DOMAIN,
                 max_per_jar=MAX_PER_JAR, stats=None):
        self.debug = debug
        self.jars = defaultdict(CookieJar)
        self.max_size = max_size
        self.max_per_domain = max_per_domain
        self.max_per_jar = max_per_jar
        self.stats = stats
        self._counts = Counter()  # cookies kept, by jar key (recounted when it nears the cap)

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        if not settings.getbool("COOKIES_ENABLED"):
            raise NotConfigured("COOKIES_ENABLED is off")
        middleware = cls(settings.getbool("COOKIES_DEBUG"),
                         settings.getint("COOKIES_MAX_SIZE", MAX_SIZE),
                         settings.getint("COOKIES_MAX_PER_DOMAIN", MAX_PER_DOMAIN),
                         settings.getint("COOKIES_MAX_PER_JAR", MAX_PER_JAR),
                         crawler.stats)
        middleware.crawler = crawler
        return middleware

    def process_request(self, request, spider=None):
        meta = request._meta
        if meta and meta.get("dont_merge_cookies"):
            return None
        key = meta.get("cookiejar") if meta else None
        jar = self.jars[key]
        given = request._extra.get("cookies")  # not request.cookies: it would make a {}
        if not jar._cookies and not given and not request._headers:
            return None  # nothing to send, nothing to adopt: no dicts made
        headers = request.headers
        current = headers.get("Cookie")
        if given or current is not None:  # cookies to take into the jar first
            dropped = Counter()
            if given:
                self._keep(key, jar, _given_cookies(jar, request, given), request, dropped)
            if current is not None:
                current = header_wire(current).decode("latin-1")
                # the spider's, not ours: taken into the jar, unless the request is a
                # redirect's hop on another origin (then it was meant for the first one)
                if current != request.meta.get("_jar_cookie") and \
                        not left_its_origin(request):
                    self._keep(key, jar, _header_cookies(request.url, current), request,
                               dropped)
                drop_header(headers, "Cookie")
            if +dropped:
                self._report(+dropped, request.url)
        value = _cookie_header(jar, request)
        if value:
            request.meta["_jar_cookie"] = value
            set_raw(headers, "Cookie", value.encode("latin-1"))
            if self.debug:
                logger.debug("Sending cookies to: %s\nCookie: %s\n", request,
                             _readable(value))
        elif request._meta:
            request._meta.pop("_jar_cookie", None)
        return None

    def process_response(self, request, response, spider=None):
        meta = request._meta
        if meta and meta.get("dont_merge_cookies"):
            return response
        set_cookies = response.headers.getlist("Set-Cookie")
        if not set_cookies:
            return response
        key = meta.get("cookiejar") if meta else None
        jar = self.jars[key]
        lines = [header_text(line) for line in set_cookies]
        dropped = Counter()
        kept = [line for line in lines if len(line) <= self.max_size]
        dropped["too_large"] = len(lines) - len(kept)
        jar._policy._now = jar._now = int(time.time())
        cookies = jar.make_cookies(WrappedResponse(kept), WrappedRequest(request))
        self._keep(key, jar, cookies, request, dropped)
        if +dropped:
            self._report(+dropped, response.url)
        if self.debug:
            logger.debug("Received cookies from: %s\n%s", response,
                         "\n".join(f"Set-Cookie: {_readable(line)}\n" for line in lines))
        return response

    def _keep(self, key, jar, cookies, request, dropped):
        """Put each of C{cookies} that the jar's policy and the bounds allow in C{jar}."""
        wrapped = WrappedRequest(request)
        policy = jar._policy
        policy._now = jar._now = int(time.time())
        for cookie in cookies:
            if not policy.set_ok(cookie, wrapped):
                continue
            reason = self._refusal(key, jar, cookie)
            if reason is not None:
                dropped[reason] += 1
                continue
            jar.set_cookie(cookie)

    def _refusal(self, key, jar, cookie):
        """Why C{cookie} may not join C{jar} (a bound it would pass), or None."""
        if len(cookie.name) + len(cookie.value or "") > self.max_size:
            return "too_large"
        paths = jar._cookies.get(cookie.domain, {})
        if cookie.name in paths.get(cookie.path, ()):
            return None  # a replacement: the jar does not grow
        if sum(len(names) for names in paths.values()) >= self.max_per_domain:
            return "domain_full"
        self._counts[key] += 1
        if self._counts[key] > self.max_per_jar:
            self._counts[key] = len(jar) + 1  # expiry and deletions shrink it: count again
            if self._counts[key] > self.max_per_jar:
                self._counts[key] -= 1
                return "jar_full"
        return None

    def _report(self, dropped, url):
        """Count the refused cookies by reason; one log line for this URL."""
        if self.stats is not None:
            for reason, count in dropped.items():
                self.stats.inc_value(f"cookies/dropped/{reason}", count)
            self.stats.inc_value("cookies/dropped", sum(dropped.values()))
        logger.warning("Dropped %d cookies of <%s>: %s (a cookie holds %d bytes at most, a "
                       "domain %d cookies, a jar %d)", sum(dropped.values()), url,
                       ", ".join(f"{n} {reason.replace('_', ' ')}"
                                 for reason, n in sorted(dropped.items())),
                       self.max_size, self.max_per_domain, self.max_per_jar)


def _given_cookies(jar, request, given):
    """The L{Cookie}s of C{Request(cookies=...)}, made as if the request's URL set them."""
    secure_default = request.url[:6].lower() == "https:"
    entries = ([{"name": k, "value": v} for k, v in given.items()] if isinstance(given, dict)
               else list(given))
    lines = []
    for entry in entries:
        line = _set_cookie_line(entry, secure_default, request)
        if line is not None:
            lines.append(line)
    jar._policy._now = jar._now = int(time.time())
    return jar.make_cookies(WrappedResponse(lines), WrappedRequest(request))


def _set_cookie_line(entry, secure_default, request):
    """One C{Set-Cookie} line (latin-1 text of its UTF-8 bytes) for a cookie dict, or None."""
    parts = {}
    for field in ("name", "value", "path", "domain"):
        value = entry.get(field)
        if value is None:
            if field in ("name", "value"):
                logger.warning("Invalid cookie found in request %s: %r (%r is missing)",
                               request, entry, field)
                return None
            continue
        if isinstance(value, bytes):
            try:
                value = value.decode("utf-8")
            except UnicodeDecodeError:
                logger.warning("Non UTF-8 encoded cookie found in request %s: %r",
                               request, entry)
                value = value.decode("latin-1")
        parts[field] = str(value)
    domain = parts.get("domain")
    if domain is not None:
        host = hostname_of(request.url)
        if domain.lstrip(".").lower() == host and (_IPV4.match(host) or ":" in host):
            del parts["domain"]  # an IP address's own cookie: host-only, as the jar keeps it
    line = f"{parts.pop('name')}={parts.pop('value')}"
    for field, value in parts.items():
        line += f"; {field.capitalize()}={value}"
    if entry.get("secure", secure_default):
        line += "; Secure"
    return line.encode("utf-8").decode("latin-1")


def _header_cookies(url, header):
    """The cookies of a spider's own C{Cookie} header, host-only for C{url}'s host."""
    host = hostname_of(url)
    if not host:
        return []
    if "." not in host:  # how the jar itself keys a dotless host (RFC 2965's rule)
        host += ".local"
    cookies = []
    for pair in header.split(";"):
        name, sep, value = pair.strip().partition("=")
        if not sep or not name:
            continue
        cookies.append(Cookie(
            version=0, name=name, value=value, port=None, port_specified=False,
            domain=host, domain_specified=False, domain_initial_dot=False, path="/",
            path_specified=True, secure=False, expires=None, discard=True, comment=None,
            comment_url=None, rest={}))
    return cookies


def _cookie_header(jar, request):
    """
    The C{Cookie} value the jar holds for C{request}, or None.

    L{CookieJar.add_cookie_header} looks at every domain in the jar, which grows with a
    broad crawl; as in Scrapy, only the domains that can match the request's host are read
    (through the jar's own C{_cookies_for_domain} and C{_cookie_attrs}).
    """
    if not jar._cookies:
        return None
    host = hostname_of(request.url)
    if not host:
        return None
    wrapped = WrappedRequest(request)
    jar._policy._now = jar._now = int(time.time())
    cookies = []
    for domain in _candidate_domains(host):
        if domain in jar._cookies:
            cookies.extend(jar._cookies_for_domain(domain, wrapped))
    attrs = jar._cookie_attrs(cookies)
    return "; ".join(attrs) if attrs else None


def _candidate_domains(host):
    """The jar keys a cookie for C{host} can be stored under: C{a.b.c}, C{.a.b.c}, C{.b.c}..."""
    if _IPV4.match(host) or ":" in host:
        return [host]
    if "." not in host:
        return [host, host + ".local", "." + host + ".local"]
    candidates = [host]
    labels = host.split(".")
    for start in range(len(labels) - 1):
        candidates.append("." + ".".join(labels[start:]))
    return candidates


def _readable(text):
    """A jar string (latin-1 text of the wire's bytes) as a person reads it."""
    try:
        return text.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return text
