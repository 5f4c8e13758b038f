"""
Scrapy's C{scrapy.utils.ssl}: what a log says of TLS. L{get_openssl_version} is the one in
use (pyOpenSSL's and the system library's version); the others are Scrapy's deprecated
helpers, kept with their warnings. The crawl's TLS policy itself is in
L{tinyscrapy.core.downloader.tls}.
"""

import warnings

from tinyscrapy.exceptions import ScrapyDeprecationWarning


def get_openssl_version():
    """C{"26.4.0 (OpenSSL 3.0.13 30 Jan 2024)"}: pyOpenSSL's version and OpenSSL's."""
    import OpenSSL.SSL
    import OpenSSL.version
    system = OpenSSL.SSL.SSLeay_version(OpenSSL.SSL.SSLEAY_VERSION)
    return f"{OpenSSL.version.__version__} ({system.decode('ascii', errors='replace')})"


def _ffi_text(buf):
    from OpenSSL._util import ffi
    return ffi.string(buf).decode("utf-8", errors="replace")


def ffi_buf_to_string(buf):
    """A C buffer of pyOpenSSL's as text (deprecated, as in Scrapy)."""
    warnings.warn("ffi_buf_to_string() is deprecated.", ScrapyDeprecationWarning,
                  stacklevel=2)
    return _ffi_text(buf)


def x509name_to_string(x509name):
    """A certificate's name as OpenSSL writes it on one line (deprecated, as in Scrapy)."""
    warnings.warn("x509name_to_string() is deprecated.", ScrapyDeprecationWarning,
                  stacklevel=2)
    from OpenSSL._util import ffi, lib
    buf = ffi.new("char[]", 512)
    lib.X509_NAME_oneline(x509name._name, buf, len(buf))
    return _ffi_text(buf)


def get_temp_key_info(ssl_object):
    """None: the ephemeral key cannot be read with cryptography 40 and later (deprecated,
    as in Scrapy)."""
    warnings.warn("get_temp_key_info() is deprecated. It's also a no-op with cryptography "
                  "40.0.0+.", ScrapyDeprecationWarning, stacklevel=2)
    return None


def _get_cert_options_version_kwargs(min_version, max_version):
    """
    The keywords of Twisted's C{CertificateOptions} that hold a connection between two
    TLS versions (Scrapy's private helper, which its test servers import).

    @param min_version: a C{twisted.internet.ssl.TLSVersion}, or None for Twisted's default.
    @param max_version: a C{TLSVersion}, or None for no upper bound.
    @return: a dict of C{lowerMaximumSecurityTo} and C{raiseMinimumTo} or
        C{insecurelyLowerMinimumTo}, as the bounds need.
    @raise ValueError: the maximum cannot be set on this Twisted.
    """
    from twisted.internet.ssl import CertificateOptions, TLSVersion
    kwargs = {}
    if max_version is not None:
        if _twisted_lowers_maximum_by_one():  # before 26.4.0 Twisted caps one version lower
            versions = list(TLSVersion.iterconstants())
            following = versions.index(max_version) + 1
            if following >= len(versions):
                raise ValueError(f"this Twisted cannot cap TLS at {max_version.name}")
            max_version = versions[following]
        kwargs["lowerMaximumSecurityTo"] = max_version
    if min_version is not None:
        default = CertificateOptions._defaultMinimumTLSVersion  # no public name for it
        if min_version < default:
            kwargs["insecurelyLowerMinimumTo"] = min_version
        elif min_version > default:
            kwargs["raiseMinimumTo"] = min_version
    return kwargs


def _twisted_lowers_maximum_by_one():
    from twisted import version
    return (version.major, version.minor) < (26, 4)
