"""
L{configure_logging}: logging set up as Scrapy sets it up (C{scrapy.utils.log}).

Twisted's own log is routed to Python's logging (once per process), and, with
C{install_root_handler}, one handler on the root logger writes records to stderr (or
C{LOG_FILE}) at C{LOG_LEVEL} in C{LOG_FORMAT}. Calling it again replaces that handler,
never adds a second one; handlers the user installed are left alone, as in Scrapy (a script
that sets up its own logging passes C{install_root_handler=False}).
"""

import logging
import sys

from tinyscrapy.errors import UsageError

_root_handler = None
_root_config = None
_twisted_routed = False


def configure_logging(settings=None, install_root_handler=True):
    """
    Route Twisted's log to Python's logging and, optionally, install the root handler.

    @param settings: a L{tinyscrapy.settings.Settings}, a dict of settings, or None (the
        defaults): C{LOG_ENABLED}, C{LOG_LEVEL}, C{LOG_FORMAT}, C{LOG_DATEFORMAT},
        C{LOG_FILE}, C{LOG_FILE_APPEND}, C{LOG_ENCODING}.
    @param install_root_handler: install (or replace) the root handler.
    @raise UsageError: C{LOG_LEVEL} is not a level name.
    """
    from tinyscrapy.settings import Settings
    if not isinstance(settings, Settings):
        settings = Settings(settings or {})
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
    handler.setFormatter(logging.Formatter(fmt, datefmt))
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


class LogCount:
    """
    Scrapy's C{LogCount} extension (in C{EXTENSIONS_BASE}): from C{spider_opened} to
    C{spider_closed}, a L{LogCounterHandler} on the root logger counts every record at or
    above the crawl's C{LOG_LEVEL}, whatever logger it comes from (a user's, Twisted's,
    tinyscrapy's). With several crawls in one process each counts every record, as in
    Scrapy.
    """

    def __init__(self, crawler):
        self.crawler = crawler
        self.handler = None

    @classmethod
    def from_crawler(cls, crawler):
        from tinyscrapy import signals
        extension = cls(crawler)
        crawler.signals.connect(extension.spider_opened, signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signals.spider_closed)
        return extension

    def spider_opened(self, **_):
        """Install the handler on the root logger."""
        self.handler = LogCounterHandler(self.crawler,
                                         self.crawler.settings.get("LOG_LEVEL") or "DEBUG")
        logging.getLogger().addHandler(self.handler)

    def spider_closed(self, **_):
        """Remove it: a closed crawl counts nothing more."""
        if self.handler is not None:
            logging.getLogger().removeHandler(self.handler)
            self.handler = None
