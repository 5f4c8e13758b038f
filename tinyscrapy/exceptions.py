"""
Every decision tinyscrapy makes about a request or an item, as a named exception.

Stats count failures by exception class name, so the class names below are also the keys
users see in the final summary (``ledger/dropped/OffsiteRequest``, ...).
"""

from twisted.internet.error import ConnectionRefusedError, DNSLookupError
from twisted.internet.error import TimeoutError as ConnectTimeoutError


class UsageError(Exception):
    """
    The command line or a setting is wrong; the command prints one line and exits 2.

    Raised without a message by a command's C{run} (as Scrapy's commands do for wrong
    arguments), it asks for the command's help on stdout too, unless
    C{print_help=False}.

    @ivar print_help: whether a message-less error prints the command's help.
    """

    def __init__(self, *args, print_help=True, **kwargs):
        super().__init__(*args, **kwargs)  # an ImportError's name=, for a subclass
        self.print_help = print_help


class _InvalidOutput(TypeError):
    """A middleware's hook returned what its contract does not allow (Scrapy's private
    name, which its tests expect; tinyscrapy raises its subclass
    L{tinyscrapy.middleware.MiddlewareError}, naming the hook)."""


class SpiderWithoutName(UsageError, ValueError):
    """A spider class sets no C{name} (a C{ValueError}, as Scrapy raises; on the command
    line, a usage error)."""


class StartError(Exception):
    """
    A component could not start: its C{from_crawler} or its C{open_spider} failed, or
    returned what it must not. The crawl stops before it begins; the command prints this
    one line (the traceback at DEBUG level) and exits 1. tinyscrapy's own: Scrapy lets
    the error itself through, traceback and all.
    """


class NotConfigured(Exception):
    """Raised by a component's C{from_crawler} to switch itself off."""


class ConfigurationError(UsageError, NotConfigured):
    """
    A component that was asked for cannot work as set up (a feed format or storage that
    nothing provides, a media pipeline without its store or Pillow): the start stops with
    one line. It is also the L{NotConfigured} Scrapy raises there (Scrapy then switches
    the component off).
    """


class NotSupported(Exception):
    """An operation this object does not support (Scrapy's C{NotSupported}): selecting in
    a response that is not text."""


class IgnoreRequest(Exception):
    """A request is dropped on purpose. Subclasses name the rule that dropped it."""


class DuplicateRequest(IgnoreRequest):
    """The request's fingerprint was seen before."""


class InvalidUrl(IgnoreRequest):
    """The URL cannot be downloaded: no host, or a scheme that is not http(s)."""


class OffsiteRequest(IgnoreRequest):
    """
    The request's host is outside the spider's C{allowed_domains}; its message is
    Scrapy's (C{Filtered offsite request to 'example.org'}).

    @ivar host: the host.
    """

    def __init__(self, host=""):
        super().__init__(f"Filtered offsite request to {host!r}")
        self.host = host


class DepthExceeded(IgnoreRequest):
    """The request is deeper than C{DEPTH_LIMIT}."""


class RobotsDisallowed(IgnoreRequest):
    """robots.txt forbids the request."""


class UrlTooLong(IgnoreRequest):
    """The URL is longer than C{URLLENGTH_LIMIT}."""


class NotCached(IgnoreRequest):
    """C{HTTPCACHE_IGNORE_MISSING} is on and the HTTP cache holds no answer for the request."""


class UnserializableRequest(IgnoreRequest):
    """
    A persistent or shared frontier (C{--jobdir}, C{--scheduler}) cannot store the request:
    its callback or errback is not a method of the spider, or its C{meta} or C{cb_kwargs}
    cannot be pickled. It is dropped rather than kept in memory only, where a pause or
    another process would lose it.
    """


class HttpError(IgnoreRequest):
    """
    The response status is outside 200-299 and the spider did not ask for it.

    @ivar response: the L{tinyscrapy.http.HttpResponse} that was refused.
    """

    def __init__(self, response, message=None):
        self.response = response
        super().__init__(message or f"Ignoring non-2xx response {response.status} {response.url}")


class ScrapyDeprecationWarning(Warning):
    """The warning for a feature that still works but is on its way out (Scrapy's
    category, shown by default where C{DeprecationWarning} is not)."""

    __module__ = "tinyscrapy.exceptions"


# Scrapy 2.19's download failures. The downloader turns twisted's errors into these
# (L{scrapy_download_error}); each is also a kind of the twisted error it replaces, so code
# written against either catches it. Their module is the public face, so stats keys read
# tinyscrapy.exceptions.<Name>, as Scrapy's read scrapy.exceptions.<Name>.


class CannotResolveHostError(DNSLookupError):
    """The host name has no address (or the lookup failed)."""

    __module__ = "tinyscrapy.exceptions"


class DownloadConnectionRefusedError(ConnectionRefusedError):
    """The server refused the connection."""

    __module__ = "tinyscrapy.exceptions"


class DownloadTimeoutError(Exception):
    """The download (or connecting for it) took too long."""

    __module__ = "tinyscrapy.exceptions"


class ConnectTimeout(DownloadTimeoutError, ConnectTimeoutError):
    """Connecting took longer than C{DOWNLOAD_TIMEOUT} (twisted's C{TimeoutError})."""


class DownloadFailedError(Exception):
    """The response could not be received whole (twisted's C{ResponseFailed}, whose
    C{reasons} it keeps)."""

    __module__ = "tinyscrapy.exceptions"


class DownloadCancelledError(Exception):
    """The download was cancelled."""

    __module__ = "tinyscrapy.exceptions"


class ResponseDataLossError(Exception):
    """The response ended before the length it announced."""

    __module__ = "tinyscrapy.exceptions"


class UnsupportedURLSchemeError(Exception):
    """No download handler serves the URL's scheme (tinyscrapy refuses such URLs before
    downloading, with L{InvalidUrl})."""

    __module__ = "tinyscrapy.exceptions"


_SCRAPY_KINDS = ((ConnectionRefusedError, DownloadConnectionRefusedError),
                 (DNSLookupError, CannotResolveHostError),
                 (ConnectTimeoutError, ConnectTimeout))


def scrapy_download_error(exception):
    """
    C{exception} as Scrapy 2.19 raises it: twisted's C{ConnectionRefusedError},
    C{DNSLookupError}, C{ResponseFailed} and C{TimeoutError} become
    L{DownloadConnectionRefusedError}, L{CannotResolveHostError}, L{DownloadFailedError}
    and L{ConnectTimeout} (a L{DownloadTimeoutError}), with the same attributes and
    message; anything else is returned as it is.
    """
    from twisted.web.client import ResponseFailed  # loaded by then: a download failed

    for twisted_kind, kind in _SCRAPY_KINDS + ((ResponseFailed, DownloadFailedError),):
        if isinstance(exception, twisted_kind):
            if isinstance(exception, kind):
                return exception
            converted = kind.__new__(kind)
            converted.__dict__.update(exception.__dict__)
            converted.args = exception.args
            converted.__cause__ = exception
            converted.__traceback__ = exception.__traceback__
            return converted
    return exception


class DownloadTimeout(DownloadTimeoutError):
    """The whole download took longer than C{DOWNLOAD_TIMEOUT}."""


class DnsLookupTimeout(CannotResolveHostError):
    """Looking a host name up took longer than C{DNS_TIMEOUT}. A kind of twisted's
    C{DNSLookupError}, so it is retried as one."""

    MESSAGE = "DNS lookup timed out"  # twisted's __str__ starts with it


class ResponseTooLarge(Exception):
    """The body (or its decompressed form) is larger than C{DOWNLOAD_MAXSIZE}."""


class DecompressionBomb(ResponseTooLarge):
    """The decoded body grew past C{DOWNLOAD_MAXRATIO} times its compressed size."""


class ContentDecodingError(Exception):
    """The body does not decode as its C{Content-Encoding} says, or that encoding is
    unsupported."""


class TlsError(Exception):
    """The TLS handshake failed."""


class CertificateError(TlsError):
    """The server's certificate was not trusted (self-signed, expired, unknown CA, or
    issued for another host). C{DOWNLOAD_CA_BUNDLE} trusts more CAs;
    C{DOWNLOAD_VERIFY_CERTIFICATES = False} stops checking."""


class ContractFail(AssertionError):
    """A spider contract that failed (an C{AssertionError}, as in Scrapy: C{check} reports
    it as a failure, L{tinyscrapy.contracts})."""


class DropItem(Exception):
    """
    Raised by an item pipeline to drop an item; counted in C{item_dropped_count}.

    @ivar log_level: the level of its C{Dropped:} line (a name or a number), or None for
        C{DEFAULT_DROPITEM_LOG_LEVEL}.
    """

    def __init__(self, message="", log_level=None):
        super().__init__(message)
        self.log_level = log_level


class CloseSpider(Exception):
    """
    Raised from a callback to stop the crawl cleanly.

    @ivar reason: the finish reason recorded in the stats.
    """

    def __init__(self, reason="cancelled"):
        super().__init__(reason)
        self.reason = reason


class DontCloseSpider(Exception):
    """Raised by a C{spider_idle} handler to keep an idle crawl open."""


class StopDownload(Exception):
    """
    Raised by a C{headers_received} or C{bytes_received} receiver to stop a download.

    @ivar fail: True (the default): the request's errback gets this exception, with the
        partial response as C{response}; False: its callback gets the partial response.
    @ivar response: the response as far as it was received (set when the download stops).
    """

    def __init__(self, *, fail=True):
        super().__init__()
        self.fail = fail
        self.response = None


def describe_failure(failure):
    """
    A one-line account of a download failure. Twisted wraps connection errors in lists
    (C{ResponseNeverReceived([Failure(ConnectionLost)])}); this names the inner one.
    """
    value = failure.value
    reasons = getattr(value, "reasons", None)
    if reasons:
        inner = reasons[0]
        return f"{type(value).__name__}: {type(inner.value).__name__}: " \
            f"{inner.getErrorMessage()}"
    message = failure.getErrorMessage()
    return f"{type(value).__name__}: {message}" if message else type(value).__name__


class TooManyRedirects(IgnoreRequest):
    """A request was redirected more than C{REDIRECT_MAX_TIMES} times (an
    L{IgnoreRequest}, as in Scrapy: the errback gets it, the ledger counts it as dropped)."""


class RedirectLoop(Exception):
    """A redirect pointed back to a URL already visited in the same chain."""


class TunnelError(Exception):
    """
    The proxy did not open the C{CONNECT} tunnel an https request needs.

    @ivar status: the proxy's HTTP status (407: credentials refused), or None when it did not
        answer in HTTP.
    """

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status
