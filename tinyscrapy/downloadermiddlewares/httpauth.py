"""
L{HttpAuthMiddleware}: HTTP Basic authentication, as Scrapy's, sent only to one domain.

Credentials come from, in order of precedence:

    - a request's C{meta["http_user"]} and C{meta["http_pass"]} (with
      C{meta["http_auth_domain"]}: none means this request's URL, whatever its host);
    - the spider's C{http_user}, C{http_pass} and C{http_auth_domain} attributes (Scrapy's
      older way, still honoured);
    - the settings C{HTTPAUTH_USER}, C{HTTPAUTH_PASS} and C{HTTPAUTH_DOMAIN}.

A domain covers itself and its subdomains (C{example.com} covers C{www.example.com}, never
C{notexample.com}); a domain with a port (C{127.0.0.1:8080}) covers that port only. Setting a
user or a password without saying the domain is refused at start: the domain must be given,
and C{None} (written explicitly) means every host, as in Scrapy. A request that already has
an C{Authorization} header keeps it. The redirect middleware drops the header when a hop
changes origin, so a redirect never carries the credentials to another host; the header
this middleware sets is marked with its origin (C{meta["_auth_origin"]}), so the fetcher
lets it reach that origin only, and a stored copy of the request (C{--jobdir}, Redis)
leaves it out: it is added again when the request is loaded.
"""

from urllib.parse import urlsplit

from tinyscrapy.exceptions import UsageError
from tinyscrapy.utils.url import url_origin


class AuthDomainMissing(UsageError, ValueError):
    """A user or password is configured, but not the domain it is for."""


_UNSET = object()


def basic_auth(user, password):
    """The C{Authorization} value for C{user} and C{password} (encoded as latin-1, as
    Scrapy does), as C{str}."""
    from w3lib.http import basic_auth_header
    return basic_auth_header(user or "", password or "").decode("ascii")


def covers(domain, url):
    """True when C{url}'s host is C{domain} or one of its subdomains (with C{host:port},
    that port only)."""
    domain = domain.lower().strip().rstrip(".")
    if not domain:
        return False
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").rstrip(".")
        netloc = parts.netloc.rpartition("@")[2].lower()
    except ValueError:
        return False
    with_port = "]:" in domain if domain.startswith("[") else domain.count(":") == 1
    name = netloc if with_port else host
    return name == domain or name.endswith("." + domain)


class HttpAuthMiddleware:
    """
    Set C{Authorization: Basic ...} on the requests to the configured domain.

    @ivar auth: the header value, or None for no credentials.
    @ivar domain: the domain it is sent to; None sends it everywhere.
    """

    def __init__(self, user="", password="", domain=_UNSET):
        self.auth = None
        self.domain = None
        if user or password:
            if domain is _UNSET:
                raise AuthDomainMissing(
                    "HTTPAUTH_DOMAIN must be set with HTTPAUTH_USER or HTTPAUTH_PASS: the "
                    "domain the credentials are for (e.g. example.com), or None for every host")
            self.auth = basic_auth(user, password)
            self.domain = domain

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        user = settings.get("HTTPAUTH_USER") or ""
        password = settings.get("HTTPAUTH_PASS") or ""
        domain = _UNSET
        if settings.priority("HTTPAUTH_DOMAIN") not in (None, "default"):
            domain = settings.get("HTTPAUTH_DOMAIN")
        middleware = cls(user, password, domain)
        if crawler.spider is not None:
            middleware.spider_opened(crawler.spider)
        return middleware

    def spider_opened(self, spider):
        """Take the spider's C{http_user}, C{http_pass} and C{http_auth_domain}, if set.

        @raise AuthDomainMissing: a user or password without C{http_auth_domain}.
        """
        user = getattr(spider, "http_user", "")
        password = getattr(spider, "http_pass", "")
        if user or password:
            domain = getattr(spider, "http_auth_domain", _UNSET)
            if domain is _UNSET:
                raise AuthDomainMissing(
                    f"spider {getattr(spider, 'name', '?')!r} sets http_user or http_pass "
                    "without http_auth_domain: the domain the credentials are for (e.g. "
                    "example.com), or None for every host")
            self.auth = basic_auth(user, password)
            self.domain = domain

    def process_request(self, request, spider=None):
        meta = request._meta
        if meta and (meta.get("http_user") or meta.get("http_pass")):
            domain = meta.get("http_auth_domain")
            auth = basic_auth(meta.get("http_user"), meta.get("http_pass"))
        elif self.auth is not None:
            domain, auth = self.domain, self.auth
        else:
            return None  # the common crawl: nothing to do, no headers made
        if (not domain or covers(domain, request.url)) and "Authorization" not in request.headers:
            request.headers["Authorization"] = auth
            # whose header it is, and for where: a stored copy leaves it out (this
            # middleware adds it again), a redirect elsewhere does not carry it
            request.meta["_auth_origin"] = url_origin(request.url)
        return None
