"""
Redirects, as two built-in downloader middlewares: L{RedirectMiddleware} (301, 302, 303,
307 and 308 with a C{Location}) and L{MetaRefreshMiddleware} (an HTML page whose
C{<meta http-equiv="refresh">} points elsewhere).

Neither follows a redirect itself. Each returns the next hop as a new L{Request}; the engine
offers it to the frontier like any new request (L{tinyscrapy.core.engine.ExecutionEngine.crawl}):
allowed domains, depth, URL length, the duplicate filter, and robots.txt in the downloader
middlewares. Only http and https targets are hops: a C{Location} (or a refresh) to
C{file:}, C{data:}, C{ftp:} is not followed, and the response goes on as it is, as in
Scrapy (counted in C{redirect/refused_scheme}, C{metarefresh/refused_scheme}). The request
ledger keeps one entry for the whole chain. Along the way:

    - 303 after anything but a GET or HEAD, and 301 or 302 after a POST, become a GET
      without a body; 307 and 308 keep the method and body (as in Scrapy, a GET keeps its
      body on a 303 too);
    - C{Authorization} is dropped when the origin (scheme, host, port) changes, C{Cookie}
      when the host changes or the scheme goes anywhere but to https, as in Scrapy (the
      cookies middleware then sends what the jar holds for the new URL), and C{Referer} is
      the redirecting URL under the referrer policy (the request's C{meta}, the response's
      C{Referrer-Policy}, then C{REFERRER_POLICY}); with C{REFERER_ENABLED} off, a hop
      carries no C{Referer}, as in Scrapy;
    - the chain is kept in C{meta}: C{redirect_urls} (every URL before this one),
      C{redirect_reasons} (status codes, or C{"meta refresh"}), C{redirect_times}, and
      Scrapy's C{redirect_ttl} (the hops left; set it on a request to allow fewer);
    - more than C{REDIRECT_MAX_TIMES} hops (or C{redirect_ttl}) is L{TooManyRedirects}, in
      the errback, as Scrapy's C{IgnoreRequest("max redirections reached")};
    - a hop back to a URL already in the chain is returned like any hop, as in Scrapy, and
      counted in C{redirect/loop}: the duplicate filter drops it (the scheduler remembers
      every URL it queued, C{dont_filter} ones too), so a loop ends without a second fetch
      and the request's ledger entry ends as C{duplicate}. A hop back is let through the
      filter when the response set a cookie (a site checking that cookies work often
      answers the same URL differently the second time); the hop limit still bounds that.

A redirect target that is a new URL passes the duplicate filter even when the first request
had C{dont_filter} (unlike Scrapy, where the flag is inherited): C{dont_filter} is about the
URL the spider asked for, not the one a server chose.
"""

import logging
import re
from urllib.parse import urljoin, urlsplit

from tinyscrapy import signals
from tinyscrapy.exceptions import NotConfigured, TooManyRedirects
from tinyscrapy.http.headers import drop_header, header_bytes, header_text
from tinyscrapy.spidermiddlewares.referer import DEFAULT_POLICY, RefererMiddleware
from tinyscrapy.utils.request import request_fingerprint

logger = logging.getLogger(__name__)

REDIRECT_CODES = frozenset((301, 302, 303, 307, 308))
# headers that describe a body: dropped with it when a redirect turns a POST into a GET
_BODY_HEADERS = ("content-type", "content-length", "content-encoding", "content-language",
                 "content-location")
_META_REFRESH_MARK = re.compile(rb"http-equiv\s*=\s*[\"']?\s*refresh")  # on a lowered body
_META_REFRESH_SCAN = 4096  # characters after the marker's position still scanned
# the end of "http-equiv" in any case: a regex led by a literal scans a page fastest
_EQUIV = re.compile(rb"-[Ee][Qq][Uu][Ii][Vv]")


class _NoStats:
    """The stats of a middleware built without a crawl's (counts nothing)."""

    def inc_value(self, key, count=1, start=0):
        pass


class BaseRedirectMiddleware:
    """
    What both redirect middlewares share, at Scrapy's name and path (its base of both):
    the hop limit, loops, building the hop, L{handle_referer}. Subclass it to write a
    redirect middleware of your own: give it a C{process_response} that returns
    C{self._redirect(request, response, url, reason, to_get)} (tinyscrapy's signature;
    Scrapy's private helpers differ), and C{enabled_setting} the setting that switches it
    on (C{REDIRECT_ENABLED} by default). Built with Scrapy's C{cls(settings)}; the crawl's
    stats are set by L{from_crawler}.
    """

    enabled_setting = "REDIRECT_ENABLED"

    def __init__(self, settings, stats=None):
        self.max_redirect_times = settings.getint("REDIRECT_MAX_TIMES")  # Scrapy's name
        self.priority_adjust = settings.getint("REDIRECT_PRIORITY_ADJUST")
        self.referer_enabled = settings.getbool("REFERER_ENABLED")
        # what sets a hop's Referer (Scrapy's attribute): None sends none
        self._referer_spider_middleware = None
        if self.referer_enabled:
            self._referer_spider_middleware = RefererMiddleware(
                settings.get("REFERRER_POLICY") or DEFAULT_POLICY)
        self.stats = stats if stats is not None else _NoStats()

    crawler = None

    @classmethod
    def from_crawler(cls, crawler):
        """Built for a crawl: as in Scrapy, hops carry the C{Referer} the crawl's
        L{RefererMiddleware} gives them, found when the engine starts."""
        if not crawler.settings.getbool(cls.enabled_setting):
            raise NotConfigured(f"{cls.enabled_setting} is off")
        middleware = cls(crawler.settings)  # Scrapy's constructor, for subclasses
        middleware.stats = crawler.stats
        middleware.crawler = crawler
        middleware._referer_spider_middleware = None
        crawler.signals.connect(middleware._engine_started, signals.engine_started)
        return middleware

    def _engine_started(self, **_):
        """C{engine_started}: find the crawl's L{RefererMiddleware} (or a subclass) among
        the spider middlewares; without one, hops carry no C{Referer} (a warning, unless
        C{REFERER_ENABLED} is off)."""
        crawler = self.crawler
        find = getattr(crawler, "get_spider_middleware", None)
        if find is not None:
            found = find(RefererMiddleware)
        else:
            scraper = getattr(getattr(crawler, "engine", None), "scraper", None)
            chain = getattr(getattr(scraper, "spidermw", None), "middlewares", ())
            found = next((each for _, each in chain if isinstance(each, RefererMiddleware)),
                         None)  # (path, middleware) pairs
        self._referer_spider_middleware = found
        if found is None and self.referer_enabled:
            logger.warning("%s found no RefererMiddleware: redirects will carry no Referer "
                           "header (enable RefererMiddleware, or override handle_referer())",
                           type(self).__name__)

    def handle_referer(self, request, response):
        """
        Set the C{Referer} of the hop C{request} from the C{response} that redirected
        (Scrapy's hook, to override): the URL of C{response} under the referrer policy (the
        hop's C{meta}, the response's C{Referrer-Policy}, then the crawl's), or none.
        """
        drop_header(request.headers, "Referer")
        referer_middleware = self._referer_spider_middleware
        if referer_middleware is None:
            return
        policy = referer_middleware.policy_for(response, request)
        referer = policy.referrer(response.url, request.url)
        if referer is not None:
            request.headers["Referer"] = referer

    def _allowed(self, request, response, spider):
        """False when the spider or the request asked to see this response as it is."""
        meta = request._meta
        status = response.status
        if meta and (meta.get("dont_redirect") or meta.get("handle_httpstatus_all")
                     or status in meta.get("handle_httpstatus_list", ())):
            return False
        if spider is None and self.crawler is not None:
            spider = self.crawler.spider
        return status not in getattr(spider, "handle_httpstatus_list", ())

    def _redirect(self, request, response, url, reason, to_get):
        """
        The next hop of C{request}, redirected to C{url}.

        @param reason: the status code, or C{"meta refresh"}.
        @param to_get: make the hop a GET without a body.
        @raise TooManyRedirects: this hop would be one more than C{REDIRECT_MAX_TIMES}, or
            the request's C{redirect_ttl} is spent.
        """
        meta = dict(request.meta)
        chain = list(meta.get("redirect_urls", ())) + [request.url]
        times = meta.get("redirect_times", 0) + 1
        ttl = meta.get("redirect_ttl", self.max_redirect_times)  # Scrapy's hop budget
        if times > self.max_redirect_times or not ttl:
            self.stats.inc_value("redirect/max_reached")
            logger.debug("Discarding %r: max redirections reached", request)
            raise TooManyRedirects(f"max redirections reached: more than REDIRECT_MAX_TIMES="
                                   f"{self.max_redirect_times} redirects (or meta "
                                   f"redirect_ttl), from {chain[0]}")
        seen = list(meta.get("_redirect_fingerprints", ())) + [request_fingerprint(request)]
        for key in ("retry_times", "not_before"):  # a new URL gets its own retries
            meta.pop(key, None)
        meta.update(redirect_times=times, redirect_urls=chain, _redirect_fingerprints=seen,
                    redirect_reasons=list(meta.get("redirect_reasons", ())) + [reason],
                    redirect_ttl=ttl - 1)
        changes = {}
        if request._extra.get("cookies"):  # not request.cookies, which would make a {}
            changes["cookies"] = None  # in the jar already, for the host that was asked
        hop = request.replace(url=url, method="GET" if to_get else request.method,
                              body=b"" if to_get else request.body, meta=meta,
                              dont_filter=False, priority=request.priority + self.priority_adjust,
                              **changes)
        if request_fingerprint(hop) in seen:
            if "Set-Cookie" in response.headers:
                hop.dont_filter = True  # the same URL again, but with a new cookie
            elif not meta.get("_redirect_looped"):  # counted and logged once a chain
                hop.meta["_redirect_looped"] = True
                self.stats.inc_value("redirect/loop")
                logger.info("Redirect loop: %s (a crawl's duplicate filter drops the hop "
                            "back)", " -> ".join(chain + [url]))
        self._adjust_headers(request, response, hop, to_get)
        self.stats.inc_value("redirect/count")
        self.stats.inc_value(f"redirect/reason_count/{reason}")
        logger.debug("Redirecting (%s) to %r from %r", reason, hop, request)
        return hop

    def _adjust_headers(self, request, response, hop, to_get):
        """Drop what must not follow the hop: body headers, credentials across origins; set
        C{Referer} to the redirecting URL (L{handle_referer}), as Scrapy does."""
        headers = hop.headers
        if to_get:
            for name in _BODY_HEADERS:
                drop_header(headers, name)
        old, new = _origin(request.url), _origin(hop.url)
        if old != new or new is None:
            drop_header(headers, "Authorization")
        # as Scrapy: a Cookie header follows the same host, and an upgrade to https
        if new is None or old is None or old[1] != new[1] or new[0] not in (old[0], "https"):
            drop_header(headers, "Cookie")
        if (new is None or old[0] != new[0]) and hop.meta.pop("_scheme_proxy", None):
            # the proxy came from the environment for the old scheme: choose again
            hop.meta.pop("proxy", None)
            hop.meta.pop("_auth_proxy", None)
            drop_header(headers, "Proxy-Authorization")
        self.handle_referer(hop, response)


def _origin(url):
    """C{(scheme, host, port)} of C{url}, or None when it does not parse."""
    try:
        parts = urlsplit(url)
        return parts.scheme, parts.hostname, parts.port or {"http": 80, "https": 443}.get(
            parts.scheme)
    except ValueError:
        return None


def _location_url(request, response):
    """
    The absolute URL of the C{Location} header, or None when there is none (or it is not a
    URL). As in Scrapy: the bytes sent are percent-encoded as they are (a latin-1 C{\\xe7}
    stays C{%E7}, UTF-8 stays UTF-8), C{//host/path} and C{///host/path} take the request's
    scheme, and a target without a C{#fragment} keeps the request's.
    """
    location = response.headers.get("Location")
    if location is None:
        return None
    location = header_bytes(location).strip()
    if not location:
        return None
    from w3lib.url import safe_url_string
    try:
        url = safe_url_string(location)
        if location.startswith(b"//"):
            url = urlsplit(request.url).scheme + "://" + url.lstrip("/")
        url = urljoin(request.url, url)
        if "#" not in url:
            fragment = urlsplit(request.url).fragment
            if fragment:
                url = f"{url}#{fragment}"
    except ValueError:  # "http://[bad": the 3xx goes on, to the HTTP-error rule
        return None
    return url


class RedirectMiddleware(BaseRedirectMiddleware):
    """Follow HTTP redirects: 301, 302, 303, 307 and 308 with a C{Location} header."""

    def process_response(self, request, response, spider=None):
        if response.status not in REDIRECT_CODES or not self._allowed(request, response,
                                                                       spider):
            return response
        url = _location_url(request, response)
        if url is None:
            return response
        scheme = url.partition(":")[0].lower()
        if scheme not in ("http", "https"):
            # file:, data:, ftp:...: never followed; the 3xx goes on, as in Scrapy (to the
            # HTTP-error rule, or to a spider that handles the status)
            self.stats.inc_value("redirect/refused_scheme")
            logger.info("Not following the redirect of <%s> to %s: only http and https "
                        "targets are followed", response.url, url[:200])
            return response
        status = response.status
        to_get = (status == 303 and request.method not in ("GET", "HEAD")) or \
            (status in (301, 302) and request.method == "POST")
        return self._redirect(request, response, url, status, to_get)


class MetaRefreshMiddleware(BaseRedirectMiddleware):
    """
    Follow C{<meta http-equiv="refresh" content="N; url=...">} in HTML pages, when N is at
    below C{METAREFRESH_MAXDELAY}, from an http(s) page (a C{file:} or C{data:} page is
    kept as it is, as in Scrapy). A page that refreshes to itself is a hop back to a URL of
    the chain, as in Scrapy: the duplicate filter drops it (see the module docstring).
    """

    enabled_setting = "METAREFRESH_ENABLED"

    def __init__(self, settings, stats=None):
        super().__init__(settings, stats)
        self.max_delay = settings.getfloat("METAREFRESH_MAXDELAY")
        self.ignore_tags = tuple(settings.getlist("METAREFRESH_IGNORE_TAGS"))

    def process_response(self, request, response, spider=None):
        if request.method == "HEAD" or (request._meta and request._meta.get("dont_redirect")):
            return response
        if request.url[:5].lower() != "http:" and request.url[:6].lower() != "https:":
            return response  # as Scrapy: only an http(s) page is refreshed from
        url = self._refresh_url(response)
        if url is None:
            return response
        scheme = url.partition(":")[0].lower()
        if scheme not in ("http", "https"):
            # file:, data:, javascript:...: never followed, and the page itself is kept
            self.stats.inc_value("metarefresh/refused_scheme")
            self.stats.inc_value(f"metarefresh/refused_scheme/{scheme[:16] or 'none'}")
            logger.info("Ignoring the meta refresh of <%s> to %s: only http and https "
                        "targets are followed", response.url, url[:200])
            return response
        return self._redirect(request, response, url, "meta refresh", to_get=True)

    def _refresh_url(self, response):
        """The URL a refresh within C{max_delay} points to, or None."""
        content_type = (header_text(response.headers.get("Content-Type"))
                        or "text/html").lower()
        if "html" not in content_type:
            return None
        body = response.body
        if _EQUIV.search(body) is None:  # most pages: no http-equiv at all, in any case
            return None
        lowered = body.lower()  # a copy, but ~6x faster than a re.I search
        start = lowered.find(b"http-equiv")
        mark = _META_REFRESH_MARK.search(lowered, start) if start >= 0 else None
        if mark is None or not response.is_text:
            return None
        from w3lib.html import get_meta_refresh
        text = response.text[:mark.end() + _META_REFRESH_SCAN]
        try:
            delay, url = get_meta_refresh(text, response.url, response.encoding,
                                          ignore_tags=self.ignore_tags)
        except ValueError:  # a refresh URL that does not parse: the page is a page
            return None
        if url is None or delay >= self.max_delay:  # as Scrapy: below the maximum
            return None
        return url
