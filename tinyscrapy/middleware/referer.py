"""
L{RefererMiddleware}: a spider middleware that sets C{Referer} on the requests a page yields.

The value follows a referrer policy, as browsers do (https://www.w3.org/TR/referrer-policy/):
C{REFERRER_POLICY} for the crawl, replaced by a page's C{Referrer-Policy} header, replaced by
a request's C{meta["referrer_policy"]}. The default, C{no-referrer-when-downgrade}, sends the
page's URL (never its fragment or credentials) except from https to http. Only http and https
pages are ever sent as a referrer. On a redirect the redirect middleware asks
L{referrer_for} again, with the hop's new URL, so a policy holds across hosts.
"""

import logging
from urllib.parse import urlsplit, urlunsplit

from tinyscrapy.errors import NotConfigured, UsageError
from tinyscrapy.http import Request

logger = logging.getLogger(__name__)

DEFAULT_POLICY = "no-referrer-when-downgrade"
POLICIES = (
    "no-referrer", "no-referrer-when-downgrade", "same-origin", "origin", "strict-origin",
    "origin-when-cross-origin", "strict-origin-when-cross-origin", "unsafe-url",
)


def referrer_for(policy, source, target):
    """
    The C{Referer} a request to C{target} carries when it comes from the page C{source}.

    @param policy: one of L{POLICIES}; an unknown one counts as L{DEFAULT_POLICY}.
    @return: C{str}, or None when no C{Referer} is to be sent.
    """
    return _Source.of(source).referrer(policy, target)


class _Source:
    """
    A page's URL split once (a page yields dozens of links), and the referrer each policy
    gives its links.

    @ivar full: the URL without fragment or credentials; None for a page that is not http(s).
    @ivar origin: C{scheme://host[:port]/}.
    """

    __slots__ = ("full", "origin", "scheme", "netloc")

    @classmethod
    def of(cls, url):
        source = cls()
        source.full = None
        try:
            parts = urlsplit(url)
        except ValueError:
            return source
        if parts.scheme not in ("http", "https"):
            return source
        source.scheme, source.netloc = parts.scheme, _netloc(parts)
        source.full = urlunsplit((parts.scheme, source.netloc, parts.path or "/",
                                  parts.query, ""))
        source.origin = f"{parts.scheme}://{source.netloc}/"
        return source

    def referrer(self, policy, target):
        if self.full is None or policy == "no-referrer":
            return None
        if policy == "unsafe-url":
            return self.full
        if policy == "origin":
            return self.origin
        downgrade = self.scheme == "https" and target[:6].lower() != "https:"
        if policy == "strict-origin":
            return None if downgrade else self.origin
        if policy not in _CROSS_ORIGIN_POLICIES:  # no-referrer-when-downgrade
            return None if downgrade else self.full
        same_origin = self._same_origin(target)
        if policy == "same-origin":
            return self.full if same_origin else None
        if policy == "origin-when-cross-origin":
            return self.full if same_origin else self.origin
        return self.full if same_origin else None if downgrade else self.origin

    def _same_origin(self, target):
        try:
            parts = urlsplit(target)
        except ValueError:
            return False
        return (parts.scheme, _netloc(parts)) == (self.scheme, self.netloc)


_CROSS_ORIGIN_POLICIES = frozenset(("same-origin", "origin-when-cross-origin",
                                    "strict-origin-when-cross-origin"))


def _netloc(parts):
    """C{host[:port]}, lower-case, without credentials or a default port."""
    try:
        host, port = parts.hostname or "", parts.port
    except ValueError:
        return ""
    if ":" in host:
        host = f"[{host}]"
    if port is None or (parts.scheme, port) in (("http", 80), ("https", 443)):
        return host
    return f"{host}:{port}"


def policy_of(value, default):
    """The last policy named in a C{Referrer-Policy} header that we know, else C{default}."""
    for token in reversed((value or "").split(",")):
        token = token.strip().lower()
        if token in POLICIES:
            return token
    return default


class RefererMiddleware:
    """
    Set C{Referer} on each request a callback yields, from the page it was found on.

    A request that already has a C{Referer} keeps it.
    """

    def __init__(self, policy=DEFAULT_POLICY):
        if policy not in POLICIES:
            raise ValueError(f"REFERRER_POLICY: unknown policy {policy!r}; "
                             f"one of {', '.join(POLICIES)}")
        self.policy = policy

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        if not settings.getbool("REFERER_ENABLED"):
            raise NotConfigured("REFERER_ENABLED is off")
        try:
            return cls(settings.get("REFERRER_POLICY") or DEFAULT_POLICY)
        except ValueError as e:
            raise UsageError(str(e)) from None

    def process_spider_output(self, response, result, spider):
        if response is None:  # an errback's output: no page to refer from
            return result
        return self._set_referer(response, result)

    def _set_referer(self, response, result):
        page_policy = response.headers.get("Referrer-Policy")
        if page_policy is not None:
            page_policy = page_policy.decode("latin-1")
        page_policy = policy_of(page_policy, self.policy)
        source = _Source.of(response.url)
        for each in result:
            if isinstance(each, Request) and not each.has_header("Referer"):
                policy = each._meta.get("referrer_policy", page_policy) if each._meta \
                    else page_policy
                referer = source.referrer(policy, each.url)
                if referer is not None:
                    each.headers["Referer"] = referer
            yield each
