"""
Scrapy's C{scrapy.utils.request}, importable as C{tinyscrapy.utils.request} (an entry in
C{sys.modules}: a module named C{request.py} here would share its name with
L{tinyscrapy.http.request}): C{fingerprint} (L{tinyscrapy.scope.fingerprint}, 8 bytes, not
Scrapy's SHA-1), L{RequestFingerprinter} (L{tinyscrapy.scope.fingerprinter}, the default
C{REQUEST_FINGERPRINTER_CLASS}) and C{request_to_curl} (L{tinyscrapy.http.curl}).

This module only re-exports.
"""

from tinyscrapy.http.curl import request_to_curl
from tinyscrapy.scope.fingerprint import fingerprint
from tinyscrapy.scope.fingerprinter import RequestFingerprinter

__all__ = ["RequestFingerprinter", "fingerprint", "request_to_curl"]
