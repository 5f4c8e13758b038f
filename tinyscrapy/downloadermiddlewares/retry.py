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
in Scrapy 2.10+), imported once when the middleware is built. Giving up is logged at
C{RETRY_GIVE_UP_LOG_LEVEL} (C{meta["give_up_log_level"]} for one request).

L{get_retry_request} is Scrapy's function for a callback that wants a page again (an empty
answer, a ban page): the retry it returns goes at once, counted as the middleware counts.
"""

import logging
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from http.client import responses

from tinyscrapy.exceptions import NotConfigured, TunnelError, UsageError
from tinyscrapy.http.headers import header_text
from tinyscrapy.utils.misc import load_object

logger = logging.getLogger(__name__)


def get_retry_request(request, *, spider, reason="unspecified", max_retry_times=None,
                      priority_adjust=None, logger=logger, give_up_log_level=None,
                      stats_base_key="retry"):
    """
    A copy of C{request} to download again, or None when it has been retried enough, as
    Scrapy's C{get_retry_request}.

    @param spider: the spider asking (its crawler's settings and stats are used).
    @param reason: a text, an exception or an exception class; an exception counts under
        its class's dotted name (C{retry/reason_count/<reason>}).
    @param max_retry_times: the retries allowed; None: C{meta["max_retry_times"]}, else
        C{RETRY_TIMES}.
    @param priority_adjust: added to the priority; None: C{RETRY_PRIORITY_ADJUST}.
    @param logger: where C{Retrying ...} (DEBUG) and C{Gave up retrying ...} go.
    @param give_up_log_level: the level of the give-up line (a number or a name); None:
        C{RETRY_GIVE_UP_LOG_LEVEL}.
    @param stats_base_key: the stats prefix (C{<key>/count}, C{<key>/reason_count/...},
        C{<key>/max_reached}).
    @raise ValueError: C{give_up_log_level} names no logging level.
    """
    crawler = spider.crawler
    settings, stats = crawler.settings, crawler.stats
    retry_times = request.meta.get("retry_times", 0) + 1
    if max_retry_times is None:
        max_retry_times = request.meta.get("max_retry_times")
        if max_retry_times is None:
            max_retry_times = settings.getint("RETRY_TIMES")
    context = {"request": request, "retry_times": retry_times, "reason": reason}
    if retry_times > max_retry_times:
        level = log_level(settings.get("RETRY_GIVE_UP_LOG_LEVEL")
                          if give_up_log_level is None else give_up_log_level)
        stats.inc_value(f"{stats_base_key}/max_reached")
        logger.log(level, "Gave up retrying %(request)s (failed %(retry_times)d times): "
                   "%(reason)s", context, extra={"spider": spider})
        return None
    logger.debug("Retrying %(request)s (failed %(retry_times)d times): %(reason)s", context,
                 extra={"spider": spider})
    if priority_adjust is None:
        priority_adjust = settings.getint("RETRY_PRIORITY_ADJUST")
    retry = request.replace(dont_filter=True, priority=request.priority + priority_adjust,
                            meta={**request.meta, "retry_times": retry_times})
    stats.inc_value(f"{stats_base_key}/count")
    stats.inc_value(f"{stats_base_key}/reason_count/{_reason_name(reason)}")
    return retry


def _reason_name(reason):
    """A retry reason for the stats: an exception (or its class) by its class's path."""
    if isinstance(reason, type) and issubclass(reason, BaseException):
        reason = reason.__module__ + "." + reason.__qualname__
    elif isinstance(reason, BaseException):
        reason = type(reason).__module__ + "." + type(reason).__qualname__
    return reason


def log_level(value):
    """
    A logging level from a number or a name (C{"ERROR"}).

    @raise ValueError: C{value} names no level.
    """
    if isinstance(value, str):
        level = logging.getLevelName(value.upper())
        if not isinstance(level, int):
            raise ValueError(f"Invalid give-up log level: {value!r}")
        return level
    return int(value)


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
        self.give_up_log_level = log_level(settings.get("RETRY_GIVE_UP_LOG_LEVEL"))
        self.stats = stats
        self.clock = clock

    @classmethod
    def from_crawler(cls, crawler):
        if not crawler.settings.getbool("RETRY_ENABLED"):
            raise NotConfigured("RETRY_ENABLED is off")
        settings = crawler.settings
        return cls(settings, crawler.stats, crawler.reactor, exception_classes(settings))

    def process_response(self, request, response, spider=None):
        if response.status not in self.http_codes or _dont_retry(request):
            return response
        reason = f"{response.status} {responses.get(response.status, 'Unknown Status')}"
        wait = None
        retry_after = header_text(response.headers.get("Retry-After"))
        if retry_after is not None:
            wait = retry_after_seconds(retry_after, header_text(response.headers.get("Date")))
            if wait is not None and wait > self.retry_after_max:
                self.stats.inc_value("retry/retry_after_too_long")
                logger.info("Not retrying %r: Retry-After %s is more than RETRY_AFTER_MAX=%s",
                            request, retry_after, self.retry_after_max)
                return response
        return self._retry(request, reason, wait) or response

    def process_exception(self, request, exception, spider=None):
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
            level = meta.get("give_up_log_level")
            logger.log(self.give_up_log_level if level is None else log_level(level),
                       "Gave up retrying %r (failed %d times): %s", request, retry_times,
                       reason)
            return None
        delay = self.backoff(retry_times)
        if wait is not None:
            delay = max(delay, wait)
        retry = request.replace(
            dont_filter=True,
            priority=request.priority + meta.get("priority_adjust", self.priority_adjust),
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
