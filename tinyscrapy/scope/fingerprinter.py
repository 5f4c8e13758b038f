"""
The crawl's request fingerprinter, as Scrapy's API has it: C{crawler.request_fingerprinter}
is an object whose C{fingerprint(request)} returns C{bytes}, built from the class
C{REQUEST_FINGERPRINTER_CLASS} names (L{RequestFingerprinter} by default: 8 bytes,
L{tinyscrapy.scope.fingerprint.fingerprint}).

The duplicate filter keeps 64-bit integers; a project's own fingerprinter is read into one
(L{as_int}) only when the setting names one, so a crawl with the default pays nothing.
"""

from tinyscrapy.components import build, load_object
from tinyscrapy.scope.fingerprint import fingerprint, request_fingerprint


class RequestFingerprinter:
    """Scrapy's default fingerprinter, here: C{fingerprint(request)} is
    L{tinyscrapy.scope.fingerprint.fingerprint} (8 bytes of BLAKE2b)."""

    def __init__(self, crawler=None):
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def fingerprint(self, request):
        """@return: the identity of C{request}, C{bytes}."""
        return fingerprint(request)


def fingerprinter_for(crawler):
    """The fingerprinter C{crawler.settings["REQUEST_FINGERPRINTER_CLASS"]} names (a class or
    its dotted path), built as a component (C{from_crawler} when it has one)."""
    cls = load_object(crawler.settings.get("REQUEST_FINGERPRINTER_CLASS")
                      or RequestFingerprinter)
    return build(cls, crawler)


def as_int(fingerprinter):
    """
    The duplicate filter's fingerprint function for C{fingerprinter}: L{request_fingerprint}
    itself for the default one, else the first 8 bytes of its C{fingerprint(request)} as an
    integer.
    """
    if type(fingerprinter) is RequestFingerprinter:
        return request_fingerprint
    fingerprint_bytes = fingerprinter.fingerprint

    def custom_fingerprint(request):
        return int.from_bytes(fingerprint_bytes(request)[:8], "big")

    return custom_fingerprint
