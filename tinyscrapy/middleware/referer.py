"""
L{RefererMiddleware}: a spider middleware that sets C{Referer} on the requests a page yields.

The value follows a referrer policy, as browsers do, with Scrapy's policy classes
(L{tinyscrapy.middleware.referrerpolicies}, re-exported here, Scrapy's path
C{scrapy.spidermiddlewares.referer}): C{REFERRER_POLICY} for the crawl (a policy name, or a
L{ReferrerPolicy} class or its dotted path), replaced by a page's C{Referrer-Policy} header,
replaced by a request's C{meta["referrer_policy"]}; C{REFERRER_POLICIES} adds, replaces or
removes names. The default, C{scrapy-default} (L{DefaultReferrerPolicy}), is
C{no-referrer-when-downgrade} that never sends a C{file:} or C{s3:} page: it sends the
page's URL (never its fragment or credentials) except from https to http. On a redirect the
redirect middleware asks L{referrer_for} again, with the hop's new URL, so a policy holds
across hosts.

Pages yield dozens of links: the default policy looks only at the schemes of each link, and
a page's header is read once for all of them.
"""

import warnings

from tinyscrapy.errors import NotConfigured, ScrapyDeprecationWarning
from tinyscrapy.http import Request
from tinyscrapy.middleware.headertext import header_text
from tinyscrapy.middleware.referrerpolicies import (  # noqa: F401 (Scrapy's path re-exports them)
    _BY_NAME,
    DEFAULT_POLICY,
    LOCAL_SCHEMES,
    POLICIES,
    POLICY_NO_REFERRER,
    POLICY_NO_REFERRER_WHEN_DOWNGRADE,
    POLICY_ORIGIN,
    POLICY_ORIGIN_WHEN_CROSS_ORIGIN,
    POLICY_SAME_ORIGIN,
    POLICY_SCRAPY_DEFAULT,
    POLICY_STRICT_ORIGIN,
    POLICY_STRICT_ORIGIN_WHEN_CROSS_ORIGIN,
    POLICY_UNSAFE_URL,
    DefaultReferrerPolicy,
    NoReferrerPolicy,
    NoReferrerWhenDowngradePolicy,
    OriginPolicy,
    OriginWhenCrossOriginPolicy,
    ReferrerPolicy,
    SameOriginPolicy,
    StrictOriginPolicy,
    StrictOriginWhenCrossOriginPolicy,
    UnknownReferrerPolicy,
    UnsafeUrlPolicy,
    _instance,
    known_policy,
    policy_class,
    policy_of,
    referrer_for,
)


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
