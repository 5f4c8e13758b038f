"""
L{configure_logging}: logging set up as Scrapy sets it up (C{scrapy.utils.log}).

Twisted's own log is routed to Python's logging (once per process), and, with
C{install_root_handler}, one handler on the root logger writes records to stderr (or
C{LOG_FILE}) at C{LOG_LEVEL} in C{LOG_FORMAT}. Calling it again replaces that handler,
never adds a second one; handlers the user installed are left alone, as in Scrapy (a script
that sets up its own logging passes C{install_root_handler=False}).

What a crawl says in the log at its start and at its end, in words a Scrapy user reads.

    - L{log_start}: the settings a user changed, and the enabled components on three short
      lines (built-in ones by class name, a user's own by dotted path);
    - L{summary_line}: at the end, one line a person reads before the stats: pages, items,
      errors, time, pages per second, the finish reason, and where the items went;
    - L{nothing_fetched}: the line a crawl ends with when not one of its start requests
      was answered (the host refused or timed out, robots.txt forbade it): the command
      exits 1 then.

Also Scrapy's helpers of the module: L{failure_to_exc_info}, L{logformatter_adapter} (a
log formatter's dict as C{logger.log} arguments), L{SpiderLoggerAdapter} (C{spider.logger}),
L{TopLevelFormatter}, L{StreamLogger}, L{install_scrapy_root_handler} and
L{get_scrapy_root_handler}, L{log_scrapy_info}, L{log_reactor_info}, L{DEFAULT_LOGGING}.

The level is the process's: C{-L} or C{LOG_LEVEL} from the command line or the project,
or C{LOG_LEVEL} in a spider's C{custom_settings}, which, as in Scrapy, sets it for the
whole process, start-up lines included
(L{tinyscrapy.utils.log.update_root_handler}).
"""

import logging
import pprint
import re
import sys
import warnings
from collections.abc import MutableMapping

from tinyscrapy.exceptions import ScrapyDeprecationWarning, UsageError

_root_handler = None
_root_config = None
_twisted_routed = False


def configure_logging(settings=None, install_root_handler=None):
    """
    Route Twisted's log to Python's logging and, optionally, install the root handler.

    @param settings: a L{tinyscrapy.settings.Settings}, a dict of settings, or None (the
        defaults): C{LOG_ENABLED}, C{LOG_LEVEL}, C{LOG_FORMAT}, C{LOG_DATEFORMAT},
        C{LOG_FILE}, C{LOG_FILE_APPEND}, C{LOG_ENCODING}.
    @param install_root_handler: install (or replace) the root handler; None: as
        C{LOG_INSTALL_ROOT_HANDLER} says (True by default).
    @raise UsageError: C{LOG_LEVEL} is not a level name.
    """
    from tinyscrapy.settings import Settings
    if not isinstance(settings, Settings):
        settings = Settings(settings or {})
    if install_root_handler is None:
        install_root_handler = settings.getbool("LOG_INSTALL_ROOT_HANDLER", True)
    _route_twisted()
    if not install_root_handler:
        return
    global _root_handler, _root_config
    level = _level(settings.get("LOG_LEVEL"))
    config = (level, settings.getbool("LOG_ENABLED", True), settings.get("LOG_FILE"),
              settings.getbool("LOG_FILE_APPEND", True), settings.get("LOG_ENCODING"),
              settings.get("LOG_FORMAT"), settings.get("LOG_DATEFORMAT"))
    if _root_handler is not None and config == _root_config:
        return  # the same handler would be made again: keep it (and its filters)
    root = logging.getLogger()
    reopened = _root_config is not None and _root_config[2] == config[2]
    if _root_handler is not None:
        root.removeHandler(_root_handler)
        _root_handler.close()
        _root_handler = None
    level, enabled, path, append, encoding, fmt, datefmt = config
    if not enabled:
        handler = logging.NullHandler()
    elif path:
        # emptied once at most: the same file again (a crawl's LOG_LEVEL) appends
        handler = logging.FileHandler(path, mode="a" if append or reopened else "w",
                                      encoding=encoding or "utf-8")
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_get_formatter(handler, settings))
    handler.setLevel(level)
    root.setLevel(level)
    root.addHandler(handler)
    _root_handler, _root_config = handler, config
    # Twisted announces every connection factory at INFO: shown below DEBUG only (-L 5),
    # since at DEBUG it would drown the lines of each page
    logging.getLogger("twisted").setLevel(
        max(level, logging.WARNING) if level >= logging.DEBUG else level)


def update_root_handler(settings):
    """A crawl's own settings (a spider's C{custom_settings} C{LOG_LEVEL}, say) remake the
    root handler, as Scrapy's crawler does, when L{configure_logging} installed one."""
    if _root_handler is not None:
        configure_logging(settings, install_root_handler=True)


def _level(name):
    value = logging.getLevelName(str(name).upper()) if not isinstance(name, int) else name
    if not isinstance(value, int):
        raise UsageError(f"unknown log level {name!r}")
    return value


def _route_twisted():
    """Twisted's log goes through Python's logging: once, or every line comes twice."""
    global _twisted_routed
    if not _twisted_routed:
        from twisted.python import log
        log.PythonLoggingObserver().start()
        _twisted_routed = True


class LogCounterHandler(logging.Handler):
    """
    Counts the records that reach it in the crawl's stats, by level: C{log_count/INFO},
    C{log_count/ERROR}, ... (Scrapy's handler and stats). One dictionary look-up and one
    stats increment a record: no formatting, no lock (records come from the reactor
    thread), no filters.
    """

    def __init__(self, crawler, level=logging.NOTSET):
        super().__init__(_level(level))
        self.crawler = crawler
        self._keys = {}  # level name -> stats key, made once a level

    def handle(self, record):
        key = self._keys.get(record.levelname)
        if key is None:
            key = self._keys[record.levelname] = "log_count/" + record.levelname
        self.crawler.stats.inc_value(key)
        return True

    def emit(self, record):
        self.handle(record)


def failure_to_exc_info(failure):
    """C{(type, value, traceback)} of a Twisted C{Failure}, for C{logger.error(...,
    exc_info=...)}; None for anything else."""
    from twisted.python.failure import Failure
    if isinstance(failure, Failure):
        return failure.type, failure.value, failure.getTracebackObject()
    return None


class TopLevelFormatter(logging.Filter):
    """A filter that names a record of a logger below one of C{loggers} by its top-level
    name only (C{scrapy.core.engine} as C{scrapy}), as Scrapy's C{LOG_SHORT_NAMES}."""

    def __init__(self, loggers=None):
        super().__init__()
        self.loggers = loggers or []

    def filter(self, record):
        if any(record.name.startswith(name + ".") for name in self.loggers):
            record.name = record.name.split(".", 1)[0]
        return True


# Scrapy's logging.config dictionary, for a script that sets logging up itself
DEFAULT_LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "loggers": {
        "filelock": {"level": "ERROR"},
        "hpack": {"level": "ERROR"},
        "httpcore": {"level": "ERROR"},
        "httpx": {"level": "WARNING"},
        "parso": {"level": "ERROR"},
        "scrapy": {"level": "DEBUG"},
        "tinyscrapy": {"level": "DEBUG"},
        "twisted": {"level": "ERROR"},
    },
}


def install_scrapy_root_handler(settings):
    """Install (or replace) the root handler L{configure_logging} installs, from
    C{settings}."""
    configure_logging(settings, install_root_handler=True)


def get_scrapy_root_handler():
    """The root handler L{configure_logging} installed, or None."""
    return _root_handler


def _uninstall_scrapy_root_handler():
    """Remove and close the root handler L{configure_logging} installed, if any (Scrapy's
    private name, which its tests call between cases)."""
    global _root_handler, _root_config
    if _root_handler is None:
        return
    logging.getLogger().removeHandler(_root_handler)
    _root_handler.close()
    _root_handler = _root_config = None


def _get_formatter(handler, settings):
    """The formatter of the root handler: C{LOG_FORMAT} and C{LOG_DATEFORMAT} (Scrapy's
    private name; tinyscrapy has no colour)."""
    return logging.Formatter(settings.get("LOG_FORMAT"), settings.get("LOG_DATEFORMAT"))


def log_scrapy_info(settings):
    """Log the start line (C{tinyscrapy 0.1.0 started (bot: NAME)}) and, for the names
    C{LOG_VERSIONS} lists (none by default), their versions."""
    import tinyscrapy
    logger.info("tinyscrapy %(version)s started (bot: %(bot)s)",
                {"version": tinyscrapy.__version__, "bot": settings.get("BOT_NAME")})
    software = settings.getlist("LOG_VERSIONS")
    if software:
        from tinyscrapy.utils.versions import get_versions
        versions = pprint.pformat(dict(get_versions(software)), sort_dicts=False)
        logger.info("Versions:\n%s", versions)


def log_reactor_info():
    """Log (at DEBUG) the installed reactor's class, and asyncio's loop under it."""
    from twisted.internet import reactor
    logger.debug("Using reactor: %s.%s", type(reactor).__module__, type(reactor).__name__)
    loop = getattr(reactor, "_asyncioEventloop", None)
    if loop is not None:
        logger.debug("Using asyncio event loop: %s.%s", type(loop).__module__,
                     type(loop).__name__)


class StreamLogger:
    """A file-like object whose writes go to C{logger}, a record a line, at
    C{log_level} (Scrapy's C{LOG_STDOUT}: C{sys.stdout} into the log)."""

    def __init__(self, logger, log_level=logging.INFO):
        self.logger = logger
        self.log_level = log_level
        self.linebuf = ""

    def write(self, buf):
        for line in buf.rstrip().splitlines():
            self.logger.log(self.log_level, line.rstrip())

    def flush(self):
        for handler in self.logger.handlers:
            handler.flush()


_MAPPING_PLACEHOLDER = re.compile(r"%\(\w+\)")


def logformatter_adapter(logkws):
    """
    What a log formatter's method returns (C{{"level": ..., "msg": ..., "args": ...}}) as
    the positional arguments of C{logger.log}: C{(level, msg, *args)}, a dict of C{args}
    as one argument. A C{msg} with C{%(name)s} placeholders and no C{args} is read
    against the dict itself, with Scrapy's deprecation warning.
    """
    level = logkws.get("level", logging.INFO)
    message = logkws.get("msg") or ""
    args = logkws.get("args")
    if not args:
        if _MAPPING_PLACEHOLDER.search(message):
            warnings.warn(f"A log formatter method returned msg {message!r} with %(name)s "
                          f"placeholders and no args. Interpolating msg with the returned "
                          f"dict is deprecated, return those values under args instead.",
                          ScrapyDeprecationWarning, stacklevel=1)
            return level, message, logkws
        return level, message
    if isinstance(args, tuple):
        return (level, message, *args)
    return level, message, args


class SpiderLoggerAdapter(logging.LoggerAdapter):
    """C{spider.logger}: a spider's logger whose records carry the adapter's C{extra}
    (the spider) merged into the caller's own C{extra}."""

    def process(self, msg, kwargs):
        if isinstance(kwargs.get("extra"), MutableMapping):
            kwargs["extra"].update(self.extra)
        else:
            kwargs["extra"] = self.extra
        return msg, kwargs


logger = logging.getLogger("tinyscrapy.crawler")

# the userinfo of a URL (user:secret@, or a Redis URL's lone secret@), kept out of logs:
# up to the authority's last @, where the host starts (a password may hold an unescaped @)
_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://)([^/?#\s]*)@")
_SECRET_PARTS = frozenset(("PASS", "PASSWD", "PASSWORD", "SECRET", "TOKEN"))
_NOT_SECRET = frozenset(("SCHEDULER_REDIS_KEY",))  # a key prefix, not a key to anything
_CREDENTIAL_HEADERS = frozenset(("authorization", "cookie", "proxy-authorization"))
MASK = "***"


def redact_url(text):
    """
    C{text} with the credentials of every URL in it hidden: C{scheme://user:***@host},
    and a lone userinfo (a Redis URL's password, a token) as C{scheme://***@host}.
    """
    if "@" not in text:
        return text
    return _USERINFO.sub(_hide_userinfo, text)


def _hide_userinfo(match):
    user, colon, _ = match.group(2).partition(":")
    return f"{match.group(1)}{user}:{MASK}@" if colon else f"{match.group(1)}{MASK}@"


def is_secret_name(name):
    """Whether setting C{name} holds a credential by its name: a part between underscores
    is PASS, PASSWD, PASSWORD, SECRET or TOKEN, or it ends in KEY (not
    C{SCHEDULER_REDIS_KEY}); any case."""
    upper = name.upper()
    if upper in _NOT_SECRET:
        return False
    return upper.endswith("KEY") or not _SECRET_PARTS.isdisjoint(upper.split("_"))


def masked(name, value):
    """
    Setting C{name}'s C{value} as logs and printouts show it: a credential by its name as
    C{***}; inside any value (dicts and lists included, keys too) the credentials of
    URLs, the values of entries named like credentials, and C{Authorization}, C{Cookie}
    and C{Proxy-Authorization} headers.
    """
    if isinstance(name, str) and is_secret_name(name) and value not in (None, "", b""):
        return MASK
    return _masked_value(value, 0)


def _masked_value(value, depth):
    if isinstance(value, str):
        return redact_url(value)
    if isinstance(value, bytes):
        return redact_url(value.decode("latin-1")).encode("latin-1")
    if depth > 20:
        return value
    if isinstance(value, dict):
        return {_masked_value(key, depth + 1): _masked_entry(key, item, depth + 1)
                for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return type(value)(_masked_value(item, depth + 1) for item in value)
    return value


def _masked_entry(key, value, depth):
    if isinstance(key, bytes):
        key = key.decode("latin-1")
    if isinstance(key, str) and (key.lower() in _CREDENTIAL_HEADERS or is_secret_name(key)) \
            and value not in (None, "", b""):
        return MASK
    return _masked_value(value, depth)


def log_start(crawler):
    """Log what a crawl runs with: overridden settings, the setting names nothing has
    read (a typo, or a setting of the user's own), and the enabled components."""
    name = crawler.spider.name
    settings = crawler.settings
    overridden = settings.overridden()
    if overridden and logger.isEnabledFor(logging.INFO):
        logger.info("%s: settings: %s", name, ", ".join(
            f"{key}={masked(key, value)!r}" for key, value in sorted(overridden.items())))
    for setting, reason in getattr(settings, "unsupported_set", list)():
        logger.warning("%s: setting %s is Scrapy's, and tinyscrapy does not act on it: %s",
                       name, setting, reason)
    unread = settings.unread_unknown()
    # a name close to a known one is likely a typo; any other may be the project's own
    # (an API key a callback reads later), so it is only mentioned at DEBUG
    typos = [(setting, guess) for setting, guess in unread if guess]
    if typos:
        logger.warning("%s: settings that nothing has read (a typo?): %s", name, ", ".join(
            f"{setting} (did you mean {guess}?)" for setting, guess in typos))
    own = [setting for setting, guess in unread if not guess]
    if own:
        logger.debug("%s: settings tinyscrapy does not know, not read so far (your own?): "
                     "%s", name, ", ".join(own))
    log_components(crawler)


def log_components(crawler):
    """Log, at INFO, the enabled components of a crawl."""
    if not logger.isEnabledFor(logging.INFO):
        return
    name = crawler.spider.name
    engine = crawler.engine
    logger.info("%s: downloader middlewares: %s", name,
                _names(engine.downloader.middleware.components))
    logger.info("%s: spider middlewares: %s; item pipelines: %s", name,
                _names(engine.scraper.spidermw.components),
                _names(getattr(engine.scraper.itemproc, "components", ())))
    logger.info("%s: extensions: %s", name, _names(crawler.extensions.components))


def _names(parts):
    """C{Retry, Redirect, myproject.middlewares.Cache}: built-in components by class name
    (without C{Middleware}), a user's own by dotted path."""
    names = []
    for path, _ in parts:
        if not isinstance(path, str):
            path = f"{path.__module__}.{path.__qualname__}"
        if path.startswith("tinyscrapy."):
            path = path.rpartition(".")[2]
            if path.endswith("Middleware") and path != "Middleware":
                path = path[:-len("Middleware")]
        names.append(path)
    return ", ".join(names) or "none"


def summary_line(crawler, stats, reason):
    """
    One line for a person: C{books: 250 pages, 200 items, 0 errors in 3.2 s (78 pages/s);
    finished; items in items.jsonl}.

    @param stats: the crawl's stats at close (a dict).
    """
    name = crawler.spider.name if crawler.spider is not None else crawler.spidercls.name
    pages = stats.get("response_received_count", 0)
    items = stats.get("item_scraped_count", 0)
    errors = stats.get("ledger/failed", 0) + sum(
        value for key, value in stats.items()
        if key.startswith(("spider_exceptions/", "pipeline_exceptions/")))
    seconds = stats.get("elapsed_time_seconds", 0) or 0
    rate = f"{pages / seconds:.0f} pages/s" if seconds > 0 else "-"
    return (f"{name}: {pages} pages, {items} items, {errors} "
            f"{'error' if errors == 1 else 'errors'} in {seconds:.{2 if seconds < 10 else 0}f} s "
            f"({rate}); {reason}; "
            f"{_feeds(crawler, name)}")


def _feeds(crawler, name):
    feeds = crawler.settings.getdict("FEEDS")
    if not feeds:
        return "items not stored (no feed)"
    if not _feed_exporter_running(crawler):
        return "items not stored (the feed exporter is switched off)"
    paths = ["stdout" if path == "-" else (path % {"name": name} if "%(" in path else path)
             for path in feeds]
    return "items in " + ", ".join(paths)


def _feed_exporter_running(crawler):
    from tinyscrapy.extensions.feedexport import FeedExporter
    try:
        return crawler.get_extension(FeedExporter) is not None
    except RuntimeError:  # the crawl never got as far as its extensions
        return False


# why a request failed or was dropped, in words (the ledger counts by class name)
_REASONS = {
    "ConnectionRefusedError": "connection refused",
    "ConnectError": "could not connect",
    "TCPTimedOutError": "connection timed out",
    "TimeoutError": "timed out",
    "DownloadTimeout": "timed out",
    "DNSLookupError": "host not found",
    "DnsLookupTimeout": "host lookup timed out",
    "RobotsDisallowed": "forbidden by robots.txt",
    "OffsiteRequest": "off-site",
    "InvalidUrl": "not a valid http(s) URL",
    "ConnectionLost": "connection lost",
    "ResponseNeverReceived": "no response",
    "ConnectionDone": "connection closed",
    # Scrapy 2.19's names for twisted's (tinyscrapy.exceptions.scrapy_download_error)
    "DownloadConnectionRefusedError": "connection refused",
    "CannotResolveHostError": "host not found",
    "ConnectTimeout": "connection timed out",
    "DownloadFailedError": "no complete response",
}


def nothing_fetched(crawler):
    """
    The line to end a crawl with when not one of its requests was answered though some
    were made, each of them failed or dropped (refused, timed out, forbidden by
    robots.txt), and the crawl ran to its end; else None. A page that answered, even with
    a 404, counts as fetched.
    """
    stats = crawler.stats.get_stats()
    if stats.get("finish_reason") != "finished" or stats.get("response_received_count"):
        return None
    opened = stats.get("ledger/opened", 0)
    ended_badly = stats.get("ledger/failed", 0) + stats.get("ledger/dropped", 0)
    if not opened or ended_badly != opened:
        return None
    reasons = []
    for key, count in sorted(stats.items()):
        state, _, kind = key[len("ledger/"):].partition("/")
        if key.startswith("ledger/") and state in ("failed", "dropped") and kind:
            reasons.append(f"{_REASONS.get(kind, kind)}" + (f" ({count})" if count > 1 else ""))
    what = "the start request" if opened == 1 else f"all {opened} requests"
    urls = list(getattr(crawler.spider, "start_urls", None) or ())
    where = ""
    if urls:
        where = f" of {urls[0]}" + (f" (and {len(urls) - 1} more)" if len(urls) > 1 else "")
    return (f"{crawler.spider.name}: nothing was fetched: {what}{where} failed: "
            f"{', '.join(reasons) or 'see the errors above'}")
