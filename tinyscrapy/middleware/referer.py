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
from tinyscrapy.middleware.headertext import header_text

logger = logging.getLogger(__name__)

DEFAULT_POLICY = "no-referrer-when-downgrade"
POLICIES = (
    "no-referrer", "no-referrer-when-downgrade", "same-origin", "origin", "strict-origin",
    "origin-when-cross-origin", "strict-origin-when-cross-origin", "unsafe-url",
)


def referrer_for(policy, source, target):
    """
    The C{Referer} a request to C{target} carries when it comes from the page C{source}.

    @param policy: one of L{POLICIES} (or an alias L{known_policy} reads); an unknown one
        counts as L{DEFAULT_POLICY}.
    @return: C{str}, or None when no C{Referer} is to be sent.
    """
    return _Source.of(source).referrer(known_policy(policy) or DEFAULT_POLICY, target)


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


class UnknownReferrerPolicy(UsageError, RuntimeError):
    """C{REFERRER_POLICY} names no policy (Scrapy raises C{RuntimeError}; this is both)."""


# "scrapy-default", Scrapy's own default, is no-referrer-when-downgrade that never sends a
# non-http(s) page: what every policy here does anyway. The empty string is the W3C's
# "empty" policy, the user agent's default, which Scrapy takes as no-referrer-when-downgrade.
_ALIASES = {"scrapy-default": DEFAULT_POLICY, "": DEFAULT_POLICY}


def known_policy(name):
    """C{name} as one of L{POLICIES}, or None when it names none."""
    name = name.strip().lower()
    return name if name in _KNOWN else _ALIASES.get(name)


_KNOWN = frozenset(POLICIES)


def policy_of(value, default):
    """
    The policy a C{Referrer-Policy} header names: its last token that is a policy (an empty
    token, as in an empty header, is the W3C's empty policy: C{no-referrer-when-downgrade}),
    else C{default}.
    """
    if value is None:
        return default
    for token in reversed(header_text(value).split(",")):
        policy = known_policy(token)
        if policy is not None:
            return policy
    return default


class RefererMiddleware:
    """
    Set C{Referer} on each request a callback yields, from the page it was found on.

    A request that already has a C{Referer} keeps it.
    """

    def __init__(self, policy=DEFAULT_POLICY):
        known = known_policy(policy) if isinstance(policy, str) else None
        if known is None:
            raise UnknownReferrerPolicy(f"Could not load referrer policy {policy!r} "
                                        f"(REFERRER_POLICY): one of {', '.join(POLICIES)}")
        self.policy = known

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        if not settings.getbool("REFERER_ENABLED"):
            raise NotConfigured("REFERER_ENABLED is off")
        return cls(settings.get("REFERRER_POLICY") or DEFAULT_POLICY)

    def process_spider_output(self, response, result, spider=None):
        if response is None:  # an errback's output: no page to refer from
            return result
        return self._set_referer(response, result)

    def _set_referer(self, response, result):
        page_policy = policy_of(response.headers.get("Referrer-Policy"), self.policy)
        source = _Source.of(response.url)
        for each in result:
            if isinstance(each, Request) and (each._headers is None
                                              or "Referer" not in each._headers):
                policy = page_policy
                if each._meta and each._meta.get("referrer_policy") is not None:
                    # a policy the meta names wrongly falls back to the crawl's, as in Scrapy
                    policy = known_policy(str(each._meta["referrer_policy"])) or self.policy
                referer = source.referrer(policy, each.url)
                if referer is not None:
                    each.headers["Referer"] = referer
            yield each
