"""
Debugging a running crawl from outside, as Scrapy's extensions, on the signals Scrapy uses
(POSIX only; neither is in C{EXTENSIONS_BASE}: enable them in C{EXTENSIONS}):

    - L{StackTraceDump}: C{kill -USR2 <pid>} (or C{-QUIT}, Ctrl-\\ in a terminal) logs, at
      INFO, the engine's status (L{format_engine_status}), the live references
      (L{tinyscrapy.utils.trackref}, switched on when it is built) and every thread's
      stack;
    - L{Debugger}: C{kill -USR2 <pid>} stops the process in C{pdb} where it was (run it in
      a terminal).

L{engine_status} is also the telnet console's C{est()} and the engine part of
C{MEMUSAGE_NOTIFY_MAIL}'s report.
"""

import logging
import signal
import sys
import threading
import traceback
from datetime import datetime, timezone
from pdb import Pdb

from tinyscrapy import signals
from tinyscrapy.utils.trackref import format_live_refs, start_tracking

logger = logging.getLogger(__name__)


def _elapsed(engine):
    start = engine.crawler.stats.get_value("start_time")
    return (datetime.now(tz=timezone.utc) - start).total_seconds()


def _pipelines_waiting(engine):
    return engine.scraper.itemproc.statistics().waiting


# what the status shows, each as the expression it stands for
_CHECKS = (
    ("time()-engine.start_time", _elapsed),
    ("engine.spider.name", lambda engine: engine.spider.name),
    ("len(engine.in_flight)", lambda engine: len(engine.in_flight)),
    ("engine.max", lambda engine: engine.max),
    ("engine.closing_reason", lambda engine: engine.closing_reason),
    ("engine.scheduler.size()", lambda engine: engine.scheduler.size()),
    ("engine.scheduler.has_pending_requests()",
     lambda engine: engine.scheduler.has_pending_requests()),
    ("engine.downloader.active", lambda engine: engine.downloader.active),
    ("len(engine.downloader.slots)", lambda engine: len(engine.downloader.slots)),
    ("engine.scraper.itemproc.statistics().waiting", _pipelines_waiting),
)


def engine_status(engine):
    """
    @return: a list of C{(expression, value)} pairs: how the engine is doing now; a value
        that cannot be read is C{"<ExceptionClass> (exception)"}.
    """
    checks = []
    for label, read in _CHECKS:
        try:
            value = read(engine)
        except Exception as e:  # a part missing or not running: say so, go on
            value = f"{type(e).__name__} (exception)"
        checks.append((label, value))
    return checks


def format_engine_status(engine):
    """@return: L{engine_status} as Scrapy prints it, one C{expression : value} a line."""
    text = "Execution engine status\n\n"
    for label, value in engine_status(engine):
        text += f"{label:<47} : {value}\n"
    return text + "\n"


def print_engine_status(engine):
    """Print L{format_engine_status} (the telnet console's C{est()})."""
    print(format_engine_status(engine))


def _install(signums, handler):
    """
    Install C{handler} for each of C{signums} (names in L{signal}) this platform has.

    @return: C{{signal number: previous handler}} of those installed (none outside the
        main thread, where Python cannot install one).
    """
    previous = {}
    for name in signums:
        signum = getattr(signal, name, None)
        if signum is None:  # win32 has no SIGUSR2 nor SIGQUIT
            continue
        try:
            previous[signum] = signal.signal(signum, handler)
        except ValueError:  # not the main thread (the shell's reactor thread, say)
            logger.debug("cannot handle %s outside the main thread", name)
    return previous


def _restore(previous, handler):
    """Put back the handlers L{_install} replaced, where C{handler} is still in place."""
    for signum, old in previous.items():
        try:
            if signal.getsignal(signum) == handler:
                signal.signal(signum, old)
        except ValueError:
            pass


class StackTraceDump:
    """
    Logs the engine's status, the live references and the threads' stacks on SIGUSR2 and
    SIGQUIT; the handlers are put back when the engine stops.
    """

    def __init__(self, crawler):
        self.crawler = crawler
        start_tracking(crawler.spider)
        self._previous = _install(("SIGUSR2", "SIGQUIT"), self.dump_stacktrace)
        crawler.signals.connect(self.engine_stopped, signal=signals.engine_stopped)

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def dump_stacktrace(self, signum, frame):
        """The signal handler: one INFO record with the three reports."""
        logger.info("Dumping stack trace and engine status\n"
                    "%(enginestatus)s\n%(liverefs)s\n%(stackdumps)s",
                    {"stackdumps": self._thread_stacks(),
                     "enginestatus": format_engine_status(self.crawler.engine),
                     "liverefs": format_live_refs()},
                    extra={"crawler": self.crawler})

    def _thread_stacks(self):
        names = {thread.ident: thread.name for thread in threading.enumerate()}
        dumps = ""
        for ident, frame in sys._current_frames().items():
            dump = "".join(traceback.format_stack(frame))
            dumps += f"# Thread: {names.get(ident, '')}({ident})\n{dump}\n"
        return dumps

    def engine_stopped(self):
        _restore(self._previous, self.dump_stacktrace)


class Debugger:
    """Enters C{pdb} on SIGUSR2, in the frame the signal interrupted."""

    def __init__(self):
        self._previous = _install(("SIGUSR2",), self._enter_debugger)

    def _enter_debugger(self, signum, frame):
        Pdb().set_trace(frame.f_back)
