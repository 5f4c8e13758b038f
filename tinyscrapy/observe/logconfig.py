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
_twisted_routed = False


def configure_logging(settings=None, install_root_handler=True):
    """
    Route Twisted's log to Python's logging and, optionally, install the root handler.

    @param settings: a L{tinyscrapy.settings.Settings}, a dict of settings, or None (the
        defaults): C{LOG_ENABLED}, C{LOG_LEVEL}, C{LOG_FORMAT}, C{LOG_DATEFORMAT},
        C{LOG_FILE}, C{LOG_FILE_APPEND}.
    @param install_root_handler: install (or replace) the root handler.
    @raise UsageError: C{LOG_LEVEL} is not a level name.
    """
    from tinyscrapy.settings import Settings
    if not isinstance(settings, Settings):
        settings = Settings(settings or {})
    _route_twisted()
    if not install_root_handler:
        return
    global _root_handler
    root = logging.getLogger()
    if _root_handler is not None:
        root.removeHandler(_root_handler)
        _root_handler.close()
        _root_handler = None
    level = _level(settings.get("LOG_LEVEL"))
    if not settings.getbool("LOG_ENABLED", True):
        handler = logging.NullHandler()
    elif settings.get("LOG_FILE"):
        mode = "a" if settings.getbool("LOG_FILE_APPEND", True) else "w"
        handler = logging.FileHandler(settings.get("LOG_FILE"), mode=mode,
                                      encoding=settings.get("LOG_ENCODING") or "utf-8")
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(settings.get("LOG_FORMAT"),
                                           settings.get("LOG_DATEFORMAT")))
    handler.setLevel(level)
    root.setLevel(level)
    root.addHandler(handler)
    _root_handler = handler
    # Twisted announces every connection factory at INFO; keep that for DEBUG runs
    logging.getLogger("twisted").setLevel(
        max(level, logging.WARNING) if level > logging.DEBUG else level)


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
