"""
Scrapy's C{scrapy.core.downloader.contextfactory}: the TLS context factories Scrapy 2.19
keeps for old projects, each deprecated there as here. The crawl's TLS policy is
L{tinyscrapy.core.downloader.tls.https_policy}, chosen by C{DOWNLOAD_VERIFY_CERTIFICATES},
C{DOWNLOAD_CA_BUNDLE}, C{DOWNLOAD_TLS_MIN_VERSION} and C{DOWNLOAD_TLS_MAX_VERSION};
C{DOWNLOADER_CLIENTCONTEXTFACTORY} is not read (docs/differences.md, "downloads").
"""

import warnings

from tinyscrapy.core.downloader.tls import (
    UnverifiedPolicy,
    VerifiedPolicy,
    https_policy,
    tls_version_options,
)
from tinyscrapy.exceptions import ScrapyDeprecationWarning


def _options(crawler, method):
    """The version keywords of C{crawler}'s settings (none without a crawler)."""
    if method is not None:
        warnings.warn("the method argument of a context factory is ignored: use "
                      "DOWNLOAD_TLS_MIN_VERSION and DOWNLOAD_TLS_MAX_VERSION",
                      ScrapyDeprecationWarning, stacklevel=4)
    return tls_version_options(crawler.settings) if crawler is not None else {}


class ScrapyClientContextFactory(UnverifiedPolicy):
    """Scrapy's context factory that accepts any certificate (deprecated: set
    C{DOWNLOAD_VERIFY_CERTIFICATES = False} instead)."""

    def __init__(self, method=None, tls_verbose_logging=False, tls_ciphers=None, *,
                 crawler=None):
        warnings.warn("ScrapyClientContextFactory is deprecated: set "
                      "DOWNLOAD_VERIFY_CERTIFICATES = False for a crawl that accepts any "
                      "certificate", ScrapyDeprecationWarning, stacklevel=2)
        super().__init__(_options(crawler, method))

    @classmethod
    def from_crawler(cls, crawler, method=None, *args, **kwargs):
        return cls(method, *args, crawler=crawler, **kwargs)


class BrowserLikeContextFactory(VerifiedPolicy):
    """Scrapy's context factory that verifies certificates as a browser does (deprecated:
    C{DOWNLOAD_VERIFY_CERTIFICATES = True}, tinyscrapy's default, does it)."""

    def __init__(self, method=None, tls_verbose_logging=False, tls_ciphers=None, *,
                 crawler=None):
        warnings.warn("BrowserLikeContextFactory is deprecated. You can set "
                      "DOWNLOAD_VERIFY_CERTIFICATES=True to enable certificate verification "
                      "instead of using it.", ScrapyDeprecationWarning, stacklevel=2)
        super().__init__(None, _options(crawler, method))

    @classmethod
    def from_crawler(cls, crawler, method=None, *args, **kwargs):
        return cls(method, *args, crawler=crawler, **kwargs)


def load_context_factory_from_settings(settings, crawler):
    """
    The crawl's TLS policy, as its settings choose it (deprecated, as in Scrapy).

    @return: an C{IPolicyForHTTPS}.
    @raise UsageError: a TLS setting is wrong.
    """
    warnings.warn("load_context_factory_from_settings() is deprecated.",
                  ScrapyDeprecationWarning, stacklevel=2)
    return https_policy(settings)
