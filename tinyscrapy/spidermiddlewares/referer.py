"""
L{RefererMiddleware}: a spider middleware that sets C{Referer} on the requests a page
yields, and the referrer policies it follows (https://www.w3.org/TR/referrer-policy/), with
Scrapy's classes and its results to the character: L{ReferrerPolicy} and one subclass per
policy, the C{POLICY_*} names, and how a setting's, a meta's or a header's value names a
class (L{policy_class}, L{policy_of}).

The policy is C{REFERRER_POLICY} for the crawl (a policy name, or a L{ReferrerPolicy}
class or its dotted path), replaced by a page's C{Referrer-Policy} header, replaced by a
request's C{meta["referrer_policy"]}; C{REFERRER_POLICIES} adds, replaces or removes names.
The default, C{scrapy-default} (L{DefaultReferrerPolicy}), is C{no-referrer-when-downgrade}
that never sends a C{file:} or C{s3:} page: it sends the page's URL (never its fragment or
credentials) except from https to http. On a redirect the redirect middleware asks
L{referrer_for} again, with the hop's new URL, so a policy holds across hosts.

Pages yield dozens of links: the default policy looks only at the schemes of each link, a
page's header is read once for all of them, and the source URL is stripped once
(L{_strip} keeps the last results).
"""

import warnings
from functools import lru_cache
from urllib.parse import urlsplit, urlunsplit

from tinyscrapy.exceptions import NotConfigured, ScrapyDeprecationWarning, UsageError
from tinyscrapy.http.headers import header_text
from tinyscrapy.http.request import Request


class RefererMiddleware:
    """
    Set C{Referer} on each request a callback yields, from the page it was found on.

    A request that already has a C{Referer} keeps it.

    @ivar default_policy: the crawl's L{ReferrerPolicy} class.
    @ivar policies: policy name to class: the W3C's and Scrapy's, changed by
        C{REFERRER_POLICIES} (a name mapped to None is no policy any more).
    """

    def __init__(self, settings=None):
        """
        @param settings: the crawl's settings (Scrapy's signature: C{REFERRER_POLICY},
            C{REFERRER_POLICIES}), or a policy name, class or dotted path; None (the default
            policy) is deprecated, as in Scrapy.
        """
        self.policies = dict(_BY_NAME)
        policy = settings
        if settings is None:
            warnings.warn("Instantiating RefererMiddleware without a 'settings' argument is "
                          "deprecated.", ScrapyDeprecationWarning, stacklevel=2)
            policy = DEFAULT_POLICY
        elif hasattr(settings, "getdict"):
            for name, path in settings.getdict("REFERRER_POLICIES").items():
                if path is None:
                    self.policies.pop(name, None)
                else:
                    self.policies[name] = policy_class(path) or _unknown(path)
            policy = settings.get("REFERRER_POLICY") or DEFAULT_POLICY
        self.default_policy = self._load_policy_class(policy, allow_import_path=True)

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        if not settings.getbool("REFERER_ENABLED"):
            raise NotConfigured("REFERER_ENABLED is off")
        return cls(settings)

    def _load_policy_class(self, policy, warning_only=False, *, allow_import_path=False):
        """
        The L{ReferrerPolicy} class C{policy} names: a class, a name in L{policies}, a
        comma-separated list of names (the last known one wins, as in a header) or, with
        C{allow_import_path}, a dotted path.

        @raise UnknownReferrerPolicy: it names none (with C{warning_only}: a
            C{RuntimeWarning}, and None is returned).
        """
        if isinstance(policy, type) or (allow_import_path and isinstance(policy, str)
                                        and "." in policy and "," not in policy):
            found = policy_class(policy)
            if found is not None:
                return found
        if isinstance(policy, str):
            for token in reversed(policy.lower().split(",")):
                found = self.policies.get(token.strip())
                if found is not None:
                    return found
        if not warning_only:
            _unknown(policy)
        message = f"Could not load referrer policy {policy!r}"
        if not allow_import_path and _looks_like_path(policy):
            message += " (import paths from the response Referrer-Policy header are not allowed)"
        warnings.warn(message, RuntimeWarning, stacklevel=3)
        return None

    def policy(self, response=None, request=None, **kwargs):
        """
        The L{ReferrerPolicy} (an instance) for C{request} found on C{response}, as
        Scrapy's: the request's C{meta["referrer_policy"]} (a name, class or path), else
        the page's C{Referrer-Policy} header (names only), else the crawl's. One that names
        nothing warns (C{RuntimeWarning}) and the crawl's is used.

        @param response: the page (a URL is deprecated: no header to read then).
        @raise TypeError: C{response} or C{request} is missing.
        """
        if "resp_or_url" in kwargs:
            if response is not None:
                raise TypeError("Cannot pass both 'response' and 'resp_or_url'")
            response = kwargs.pop("resp_or_url")
            warnings.warn("Passing 'resp_or_url' is deprecated, use 'response' instead.",
                          ScrapyDeprecationWarning, stacklevel=2)
        if response is None:
            raise TypeError("Missing required argument: 'response'")
        if request is None:
            raise TypeError("Missing required argument: 'request'")
        if isinstance(response, str):
            warnings.warn("Passing a response URL to RefererMiddleware.policy() instead of "
                          "a Response object is deprecated.", ScrapyDeprecationWarning,
                          stacklevel=2)
            response = None
        meta = request._meta
        if meta and meta.get("referrer_policy") is not None:
            found = self._load_policy_class(meta["referrer_policy"], warning_only=True,
                                            allow_import_path=True)
            return _instance(found or self.default_policy)
        header = response.headers.get("Referrer-Policy") if response is not None else None
        if header is not None:
            found = self._load_policy_class(header_text(header), warning_only=True)
            return _instance(found or self.default_policy)
        return _instance(self.default_policy)

    # tinyscrapy's earlier name
    policy_for = policy

    def process_spider_output(self, response, result, spider=None):
        if response is None:  # an errback's output: no page to refer from
            return result
        return self._set_referer(response, result)

    async def process_spider_output_async(self, response, result, spider=None):
        """L{process_spider_output} for an asynchronous iterable of results."""
        async for each in result:
            if response is not None and isinstance(each, Request) and (
                    each._headers is None or "Referer" not in each.headers):
                referer = self.policy(response, each).referrer(response.url, each.url)
                if referer is not None:
                    each.headers["Referer"] = referer
            yield each

    def _set_referer(self, response, result):
        header = response.headers.get("Referrer-Policy")
        page_policy = self.default_policy
        if header is not None:  # read once for the page (a bad one warns once)
            page_policy = self._load_policy_class(header_text(header), warning_only=True) \
                or self.default_policy
        page = _instance(page_policy)
        source = response.url
        # the default policies decide on the link's scheme alone: decide the rest once
        downgrade_only = type(page) in (DefaultReferrerPolicy, NoReferrerWhenDowngradePolicy)
        if downgrade_only:
            full = page.stripped_referrer(source)
            tls = page.tls_protected(source)
        for each in result:
            if isinstance(each, Request) and (each._headers is None
                                              or "Referer" not in each.headers):
                if each._meta and each._meta.get("referrer_policy") is not None:
                    referer = self.policy(response, each).referrer(source, each.url)
                elif downgrade_only:
                    referer = full if not tls or each.url[:6].lower() == "https:" or \
                        each.url[:5].lower() == "ftps:" else None
                else:
                    referer = page.referrer(source, each.url)
                if referer is not None:
                    each.headers["Referer"] = referer
            yield each


def _unknown(policy):
    """@raise UnknownReferrerPolicy: for C{policy}, a setting's value."""
    raise UnknownReferrerPolicy(f"Could not load referrer policy {policy!r} "
                                f"(REFERRER_POLICY): one of {', '.join(POLICIES)}, "
                                f"or a ReferrerPolicy class")


def _looks_like_path(value):
    """Is C{value} (a header's) a dotted Python path, which only settings may name?"""
    parts = value.strip().split(".")
    return len(parts) > 1 and all(part.isidentifier() for part in parts)

LOCAL_SCHEMES = ("about", "blob", "data", "filesystem")

# the policies' names, as Scrapy's module has them
POLICY_NO_REFERRER = "no-referrer"
POLICY_NO_REFERRER_WHEN_DOWNGRADE = "no-referrer-when-downgrade"
POLICY_SAME_ORIGIN = "same-origin"
POLICY_ORIGIN = "origin"
POLICY_STRICT_ORIGIN = "strict-origin"
POLICY_ORIGIN_WHEN_CROSS_ORIGIN = "origin-when-cross-origin"
POLICY_STRICT_ORIGIN_WHEN_CROSS_ORIGIN = "strict-origin-when-cross-origin"
POLICY_UNSAFE_URL = "unsafe-url"
POLICY_SCRAPY_DEFAULT = "scrapy-default"
_DEFAULT_PORTS = frozenset((("http", 80), ("https", 443), ("ftp", 21)))


@lru_cache(maxsize=256)
def _strip(url, origin_only=False):
    """C{url} for use as a referrer: no credentials, fragment or default port (with
    C{origin_only}, no path or query either: C{scheme://host[:port]/})."""
    if not origin_only and url.startswith(("http://", "https://")) and "#" not in url \
            and "@" not in url and " " not in url and url[-1] != "?" and url.isascii() \
            and url.isprintable():
        # most pages: nothing to strip unless the authority names a port
        start = url.find("//") + 2
        slash = url.find("/", start)
        authority = url[start:slash if slash != -1 else len(url)]
        host, colon, port = authority.partition(":")
        if host and "[" not in authority and "?" not in authority and (
                not colon or (port.isdigit() and port.isascii() and port[0] != "0"
                              and int(port) <= 65535 and int(port) not in (80, 443))):
            return url
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    netloc = parts.netloc
    if origin_only or parts.username is not None or parts.password is not None:
        netloc = netloc.rpartition("@")[2]
    if port and (parts.scheme, port) in _DEFAULT_PORTS:
        netloc = netloc.removesuffix(f":{port}")
    if origin_only:
        return urlunsplit((parts.scheme, netloc, "/", "", ""))
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))


def _scheme(url):
    """The scheme of C{url}, lower-cased, as C{urlparse} finds it ("" when there is none)."""
    scheme, colon, _ = url.partition(":")
    if colon and scheme[:1].isalpha() and all(c.isalnum() or c in "+-." for c in scheme):
        return scheme.lower()
    return ""


class ReferrerPolicy:
    """
    What a policy decides: the C{Referer} of a request to C{request_url} made from the page
    C{response_url}. Subclass it and name the class in C{REFERRER_POLICY} for a policy of
    your own, as in Scrapy.

    @cvar NOREFERRER_SCHEMES: pages of these schemes are never sent as a referrer.
    @cvar name: the policy's name in C{Referrer-Policy} headers and settings.
    """

    NOREFERRER_SCHEMES = LOCAL_SCHEMES
    name = None

    def referrer(self, response_url, request_url):
        """@return: the C{Referer} value (C{str}), or None to send none."""
        raise NotImplementedError

    def stripped_referrer(self, url):
        if _scheme(url) not in self.NOREFERRER_SCHEMES:
            return self.strip_url(url)
        return None

    def origin_referrer(self, url):
        if _scheme(url) not in self.NOREFERRER_SCHEMES:
            return self.origin(url)
        return None

    def strip_url(self, url, origin_only=False):
        return _strip(url, origin_only) if url else None

    def origin(self, url):
        return self.strip_url(url, origin_only=True)

    def potentially_trustworthy(self, url):
        return _scheme(url) != "data" and self.tls_protected(url)

    def tls_protected(self, url):
        return _scheme(url) in ("https", "ftps")


class NoReferrerPolicy(ReferrerPolicy):
    """Never a C{Referer}."""

    name = POLICY_NO_REFERRER

    def referrer(self, response_url, request_url):
        return None


class NoReferrerWhenDowngradePolicy(ReferrerPolicy):
    """The page's URL, except from a TLS page to a non-TLS URL."""

    name = POLICY_NO_REFERRER_WHEN_DOWNGRADE

    def referrer(self, response_url, request_url):
        if not self.tls_protected(response_url) or self.tls_protected(request_url):
            return self.stripped_referrer(response_url)
        return None


class SameOriginPolicy(ReferrerPolicy):
    """The page's URL to its own origin, nothing elsewhere."""

    name = POLICY_SAME_ORIGIN

    def referrer(self, response_url, request_url):
        if self.origin(response_url) == self.origin(request_url):
            return self.stripped_referrer(response_url)
        return None


class OriginPolicy(ReferrerPolicy):
    """The page's origin (C{scheme://host/}) everywhere."""

    name = POLICY_ORIGIN

    def referrer(self, response_url, request_url):
        return self.origin_referrer(response_url)


class StrictOriginPolicy(ReferrerPolicy):
    """The page's origin, except from a TLS page to a non-TLS URL."""

    name = POLICY_STRICT_ORIGIN

    def referrer(self, response_url, request_url):
        if not self.tls_protected(response_url) or self.potentially_trustworthy(request_url):
            return self.origin_referrer(response_url)
        return None


class OriginWhenCrossOriginPolicy(ReferrerPolicy):
    """The page's URL to its own origin, its origin elsewhere."""

    name = POLICY_ORIGIN_WHEN_CROSS_ORIGIN

    def referrer(self, response_url, request_url):
        origin = self.origin(response_url)
        if origin == self.origin(request_url):
            return self.stripped_referrer(response_url)
        return origin


class StrictOriginWhenCrossOriginPolicy(ReferrerPolicy):
    """The page's URL to its own origin, its origin elsewhere, nothing on a downgrade."""

    name = POLICY_STRICT_ORIGIN_WHEN_CROSS_ORIGIN

    def referrer(self, response_url, request_url):
        if self.origin(response_url) == self.origin(request_url):
            return self.stripped_referrer(response_url)
        if not self.tls_protected(response_url) or self.potentially_trustworthy(request_url):
            return self.origin_referrer(response_url)
        return None


class UnsafeUrlPolicy(ReferrerPolicy):
    """The page's URL everywhere (its name does not lie)."""

    name = POLICY_UNSAFE_URL

    def referrer(self, response_url, request_url):
        return self.stripped_referrer(response_url)


class DefaultReferrerPolicy(NoReferrerWhenDowngradePolicy):
    """Scrapy's default: C{no-referrer-when-downgrade}, and never a C{file:} or C{s3:}
    page."""

    NOREFERRER_SCHEMES = (*LOCAL_SCHEMES, "file", "s3")
    name = POLICY_SCRAPY_DEFAULT


_CLASSES = (NoReferrerPolicy, NoReferrerWhenDowngradePolicy, SameOriginPolicy, OriginPolicy,
            StrictOriginPolicy, OriginWhenCrossOriginPolicy, StrictOriginWhenCrossOriginPolicy,
            UnsafeUrlPolicy, DefaultReferrerPolicy)
_BY_NAME = {cls.name: cls for cls in _CLASSES}
# the W3C's empty policy (an empty header): the user agent's default, which Scrapy takes as
# no-referrer-when-downgrade
_BY_NAME[""] = NoReferrerWhenDowngradePolicy
_BY_CLASS_NAME = {cls.__name__: cls for cls in _CLASSES}
POLICIES = tuple(cls.name for cls in _CLASSES)
DEFAULT_POLICY = DefaultReferrerPolicy.name
_INSTANCES = {}


class UnknownReferrerPolicy(UsageError, RuntimeError):
    """C{REFERRER_POLICY} names no policy (Scrapy raises C{RuntimeError}; this is both)."""


def known_policy(name):
    """The L{ReferrerPolicy} class C{name} names (a header's token or a setting's name),
    or None when it names none."""
    return _BY_NAME.get(name.strip().lower())


def policy_class(policy, allow_import_path=True):
    """
    The L{ReferrerPolicy} class for a setting or meta value: a class, a policy name, a
    comma-separated list of names (the last known one wins, as in a header), or, with
    C{allow_import_path}, a dotted path (Scrapy's own paths,
    C{scrapy.spidermiddlewares.referer.OriginPolicy}, name the classes here).

    @return: the class, or None when C{policy} names none.
    """
    if isinstance(policy, type):
        return policy if issubclass(policy, ReferrerPolicy) else None
    if not isinstance(policy, str):
        return None
    if allow_import_path and "." in policy and "," not in policy:
        module, _, name = policy.rpartition(".")
        if module.endswith("spidermiddlewares.referer") and name in _BY_CLASS_NAME:
            return _BY_CLASS_NAME[name]
        from tinyscrapy.utils.misc import load_object
        try:
            loaded = load_object(policy)
        except Exception:
            return None
        return policy_class(loaded, allow_import_path=False)
    for token in reversed(policy.split(",")):
        found = known_policy(token)
        if found is not None:
            return found
    return None


def _instance(cls):
    """One instance per policy class (they hold no state)."""
    policy = _INSTANCES.get(cls)
    if policy is None:
        policy = _INSTANCES[cls] = cls()
    return policy


def referrer_for(policy, source, target):
    """
    The C{Referer} a request to C{target} carries when it comes from the page C{source}.

    @param policy: a policy name, class or dotted path; an unknown one counts as
        L{DEFAULT_POLICY}.
    @return: C{str}, or None when no C{Referer} is to be sent.
    """
    cls = policy_class(policy) or DefaultReferrerPolicy
    return _instance(cls).referrer(source, target)


def policy_of(value, default):
    """
    The policy a C{Referrer-Policy} header names: its last token that is a policy (an empty
    token, as in an empty header, is the W3C's empty policy: C{no-referrer-when-downgrade}),
    else C{default}. No dotted paths: a header never loads code.

    @return: a policy name.
    """
    if value is None:
        return default
    cls = policy_class(header_text(value), allow_import_path=False)
    return cls.name if cls is not None else default
