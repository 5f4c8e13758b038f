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
