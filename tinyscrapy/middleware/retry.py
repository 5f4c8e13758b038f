"""
L{RetryMiddleware}: try again after a connection error, a timeout, or a status in
C{RETRY_HTTP_CODES}, up to C{RETRY_TIMES} more times.

A TLS failure (a certificate we do not trust) and a proxy refusing a tunnel (407, 403) are
not retried: the next try would fail the same way.

A retry never sleeps and holds nothing while it waits. The middleware returns a copy of the
request with C{meta["not_before"]} set to a time on the reactor's clock; the engine sends it
back to the scheduler, which keeps it aside, out of every download slot and engine place,
until that time. Other requests keep flowing meanwhile.

The wait grows exponentially: C{RETRY_BACKOFF_BASE * 2 ** (n - 1)} seconds before the n-th
retry, at most C{RETRY_BACKOFF_MAX}. A C{Retry-After} header (seconds, or an HTTP date)
makes it longer, never shorter; one longer than C{RETRY_AFTER_MAX} means the server will
not be ready in any time we are willing to wait, so the response goes on as a failure
instead of being retried early.

When the retries run out, the last response (to the HTTP-error rule, then the errback) or
the last exception (to the errback) goes on, counted in C{retry/max_reached}.

Which exceptions are retried is the setting C{RETRY_EXCEPTIONS} (classes or dotted paths, as
in Scrapy 2.10+), imported once when the middleware is built.
"""

import logging
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from http.client import responses

from tinyscrapy.components import load_object
from tinyscrapy.errors import NotConfigured, TunnelError, UsageError

logger = logging.getLogger(__name__)


class RetryMiddleware:
    """
    Retry failed downloads later, with exponential backoff.

    Per request: C{meta["dont_retry"]} switches it off, C{meta["max_retry_times"]} replaces
    C{RETRY_TIMES}; C{meta["retry_times"]} counts the retries so far.
    """

    def __init__(self, settings, stats, clock, exceptions=None):
        """
        @param exceptions: the exception classes to retry (a tuple); None reads them from
            C{RETRY_EXCEPTIONS} (L{exception_classes}).
        """
        if exceptions is None:
            exceptions = exception_classes(settings)
        self.exceptions = exceptions
        self.max_retry_times = settings.getint("RETRY_TIMES")
        self.http_codes = frozenset(int(code) for code in settings.getlist("RETRY_HTTP_CODES"))
        self.priority_adjust = settings.getint("RETRY_PRIORITY_ADJUST")
        self.backoff_base = settings.getfloat("RETRY_BACKOFF_BASE")
        self.backoff_max = settings.getfloat("RETRY_BACKOFF_MAX")
        self.retry_after_max = settings.getfloat("RETRY_AFTER_MAX")
        self.stats = stats
        self.clock = clock

    @classmethod
    def from_crawler(cls, crawler):
        if not crawler.settings.getbool("RETRY_ENABLED"):
            raise NotConfigured("RETRY_ENABLED is off")
        settings = crawler.settings
        return cls(settings, crawler.stats, crawler.reactor, exception_classes(settings))

    def process_response(self, request, response, spider):
        if response.status not in self.http_codes or _dont_retry(request):
            return response
        reason = f"{response.status} {responses.get(response.status, 'Unknown Status')}"
        wait = None
        retry_after = response.headers.get("Retry-After")
        if retry_after is not None:
            retry_after = retry_after.decode("latin-1")
            date = response.headers.get("Date")
            wait = retry_after_seconds(retry_after, date.decode("latin-1") if date else None)
            if wait is not None and wait > self.retry_after_max:
                self.stats.inc_value("retry/retry_after_too_long")
                logger.info("Not retrying %r: Retry-After %s is more than RETRY_AFTER_MAX=%s",
                            request, retry_after, self.retry_after_max)
                return response
        return self._retry(request, reason, wait) or response

    def process_exception(self, request, exception, spider):
        if not isinstance(exception, self.exceptions) or _dont_retry(request):
            return None
        if isinstance(exception, TunnelError) and (exception.status or 500) < 500:
            return None  # the proxy refused us (407, 403): trying again changes nothing
        if _certificate_refused(exception):
            return None
        kind = type(exception)
        return self._retry(request, f"{kind.__module__}.{kind.__name__}")

    def _retry(self, request, reason, wait=None):
        """
        The retry of C{request}, or None when it has been retried enough.

        @param wait: the seconds the server asked for (C{Retry-After}), or None.
        """
        meta = request.meta
        retry_times = meta.get("retry_times", 0) + 1
        max_retry_times = meta.get("max_retry_times", self.max_retry_times)
        if retry_times > max_retry_times:
            self.stats.inc_value("retry/max_reached")
            logger.debug("Gave up retrying %r (failed %d times): %s",
                         request, retry_times, reason)
            return None
        delay = self.backoff(retry_times)
        if wait is not None:
            delay = max(delay, wait)
        retry = request.replace(
            dont_filter=True, priority=request.priority + self.priority_adjust,
            meta={**meta, "retry_times": retry_times,
                  "not_before": self.clock.seconds() + delay})
        self.stats.inc_value("retry/count")
        self.stats.inc_value(f"retry/reason_count/{reason}")
        logger.debug("Retrying %r in %.2fs (failed %d times): %s",
                     request, delay, retry_times, reason)
        return retry

    def backoff(self, retry_times):
        """Seconds to wait before retry number C{retry_times} (1 for the first)."""
        return min(self.backoff_max, self.backoff_base * 2 ** (retry_times - 1))


def exception_classes(settings):
    """
    The exception classes C{RETRY_EXCEPTIONS} names, imported.

    @return: a tuple, ready for C{isinstance}.
    @raise UsageError: an entry does not import, or is not an exception class.
    """
    classes = []
    for entry in settings.getlist("RETRY_EXCEPTIONS"):
        try:
            cls = load_object(entry)
        except UsageError as e:
            raise UsageError(f"setting RETRY_EXCEPTIONS: {e}") from None
        if not (isinstance(cls, type) and issubclass(cls, BaseException)):
            raise UsageError(f"setting RETRY_EXCEPTIONS: {entry!r} is not an exception class")
        classes.append(cls)
    return tuple(classes)


def _certificate_refused(exception):
    """True when TLS failed (a certificate we do not trust): the next try fails the same."""
    reasons = getattr(exception, "reasons", None)  # ResponseNeverReceived and its kin
    if not reasons:
        return False
    try:
        from OpenSSL.SSL import Error as TLSError
    except ImportError:
        return False
    return all(reason.check(TLSError) for reason in reasons)


def _dont_retry(request):
    return bool(request._meta and request._meta.get("dont_retry"))


def retry_after_seconds(value, date=None):
    """
    The seconds a C{Retry-After} header asks for, or None when it is malformed.

    @param value: delta-seconds (C{"120"}) or an HTTP date.
    @param date: the response's C{Date} header: an HTTP date is read against the server's
        own clock when it sent one, else against ours.
    """
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    now = None
    if date:
        try:
            now = parsedate_to_datetime(date)
        except (TypeError, ValueError, IndexError):
            now = None
    if now is None or now.tzinfo is None:
        now = datetime.now(timezone.utc)
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - now).total_seconds())
