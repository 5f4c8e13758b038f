"""
L{Trace}: C{--trace FILE} records every engine step of a crawl and, at the end, draws it
as a timeline in one self-contained HTML file (inline CSS and SVG: no script, no external
asset, nothing fetched).

What is recorded, from signals only (the engine is not instrumented by hand), each with
the reactor's time:

    - C{engine_started} and C{spider_closed}: the crawl's open and close;
    - C{request_scheduled}: a request entered the frontier (its URL is kept once);
    - C{request_reached_downloader}: its download started (its slot, i.e. its host, and
      the slot's delay then; a robots.txt fetch too, drawn but not counted in flight);
    - C{request_left_downloader}: the download ended: a response (its status), a request
      that continues it (a redirect or a retry), or a failure (its class);
    - C{request_done}: its callback's output was handled, it left the engine's flight;
    - C{engine_turn}: one turn of the loop, with the requests in flight and queued then,
      and the causes that asked for it since the turn before (the engine keeps them only
      while a trace listens: C{ExecutionEngine.wake_causes}).

A request's phases follow from its events: I{queued} from C{scheduled} to C{start} (for a
retry, that is its C{not_before} wait, holding no slot: the scheduler hands out only what
may start now, so a slot's delay is waited out here too), I{downloading} from C{start} to
C{end} (the middlewares and the transfer), I{scraping} from C{end} to C{done} (the
callback and the pipelines).

C{TRACE_FILE = "-"} (C{--trace -}) draws nothing: it prints one line per event on standard
error, among the log lines (time, event, request id, slot, in flight, queued, detail), to
follow a small crawl step by step; standard output stays for items.

Memory is bounded: after C{TRACE_MAX_EVENTS} events nothing more is recorded (a few
counters go on) and the page says so. With several spiders in one process and one
C{TRACE_FILE}, they are drawn on one page, a section each on one shared time axis (0 is
when the first opened), written when the last of them closes: a reader sees them share
the reactor. With C{%(name)s} in C{TRACE_FILE}, each spider gets a page of its own (a
second spider of the same name writes C{STEM-NAME.EXT} beside it, logged).
"""

import logging
import os
import sys

from tinyscrapy import signals
from tinyscrapy.core.engine import pending_count
from tinyscrapy.exceptions import IgnoreRequest, NotConfigured
from tinyscrapy.http.request import Request
from tinyscrapy.responsetypes import HttpResponse
from tinyscrapy.trace.timeline import write_html
from tinyscrapy.utils.misc import check_output_path

logger = logging.getLogger(__name__)

# TRACE_FILE paths claimed by the traces of this process (released once written)
_CLAIMED = set()
# TRACE_FILE paths without %(name)s: the traces of this process drawn on each one's page
_PAGES = {}


def claim_path(template, name):
    """
    The file this spider's trace goes to, claimed for this process.

    @param template: C{TRACE_FILE}; C{%(name)s} in it is replaced by C{name}.
    @return: an absolute path no other trace of this process has claimed.
    """
    path = os.path.abspath(template % {"name": name} if "%(" in template else template)
    stem, ext = os.path.splitext(path)
    candidate, n = path, 1
    while candidate in _CLAIMED:
        candidate = f"{stem}-{name}{ext}" if n == 1 else f"{stem}-{name}-{n}{ext}"
        n += 1
    if candidate != path:
        logger.info("%s: TRACE_FILE %s is another spider's; this trace goes to %s",
                    name, path, candidate)
    _CLAIMED.add(candidate)
    return candidate


class Trace:
    """
    The recorder, as an extension: on only when C{TRACE_FILE} is set.

    @ivar events: the recorded events, tuples whose first two items are the kind and the
        time in seconds since the crawl opened.
    @ivar max_events: C{TRACE_MAX_EVENTS}.
    @ivar not_recorded: how many events came after the cap.
    @ivar path: where the HTML goes.
    """

    def __init__(self, crawler, path, max_events, text=None):
        """@param text: a file to print each event to as a line (C{--trace -}); then no
        HTML is written."""
        self.crawler = crawler
        self.text = text
        self.page = [self]     # the traces drawn on this one's page, itself included
        self.name = None
        self.opened_at = None  # the reactor time the crawl opened
        self.clock = crawler.reactor
        self.path = path
        self.max_events = max_events
        self.events = []
        self.not_recorded = 0
        self.turns = 0
        self.urls = []        # request id -> URL
        self._ids = {}        # request -> id, while it is scheduled or in flight
        self._continuing = {}  # request -> "retry"/"redirect"/...: returned by a download
        self._slots = {}      # request id -> slot, for the text lines
        self._t0 = self.clock.seconds()
        self._closed_at = None
        self.reason = None
        bus = crawler.signals
        for signal, receiver in ((signals.engine_started, self.engine_started),
                                 (signals.request_scheduled, self.request_scheduled),
                                 (signals.request_reached_downloader, self.download_started),
                                 (signals.request_left_downloader, self.download_ended),
                                 (signals.request_done, self.request_done),
                                 (signals.engine_turn, self.engine_turn),
                                 (signals.spider_closed, self.spider_closed)):
            bus.connect(receiver, signal)

    @classmethod
    def from_crawler(cls, crawler):
        template = crawler.settings.get("TRACE_FILE")
        if not template:
            raise NotConfigured("TRACE_FILE is not set")
        max_events = crawler.settings.getint("TRACE_MAX_EVENTS")
        if template == "-":
            return cls(crawler, "-", max_events, text=sys.stderr)
        name = crawler.spider.name if crawler.spider is not None else "spider"
        if "%(" in template:
            path = claim_path(template, name)
            check_output_path(path, "--trace")  # now, not after the crawl
            trace = cls(crawler, path, max_events)
            trace.page = [trace]
            return trace
        path = os.path.abspath(template)
        check_output_path(path, "--trace")
        trace = cls(crawler, path, max_events)
        trace.page = _PAGES.setdefault(trace.path, [])  # shared with the other spiders
        trace.page.append(trace)
        return trace

    # recording

    def _now(self):
        return self.clock.seconds() - self._t0

    def _record(self, event):
        """Keep C{event} unless the cap is reached. @return: whether it was kept."""
        if len(self.events) >= self.max_events:
            self.not_recorded += 1
            return False
        if self.text is not None:  # printed, not kept: memory stays flat
            self._print(event)
        else:
            self.events.append(event)
        return True

    def _print(self, event):
        """One line for C{event}: time, spider, kind, request id, slot, in flight, queued,
        detail (the spider's name, since spiders of one process share stderr and each
        numbers its requests from 0)."""
        engine = self.crawler.engine
        in_flight = len(engine.in_flight) if engine is not None else 0
        queued = (pending_count(engine.scheduler) or 0) if engine is not None else 0
        kind, t = event[0], event[1]
        rid, slot, detail = "-", "-", ""
        if kind in ("scheduled", "start", "end", "done"):
            rid = f"#{event[2]}"
            slot = self._slots.get(event[2], "-")
        if kind == "scheduled":
            detail = f"{event[3]} {self.urls[event[2]]}" if event[3] else self.urls[event[2]]
        elif kind == "start":
            slot = self._slots[event[2]] = event[3]
            detail = self.urls[event[2]]
        elif kind == "end":
            detail = f"{event[3]} {event[4]}"
        elif kind == "turn":
            detail = "causes: " + (event[4] or "-")
        self.text.write(f"{t:9.4f} trace {self._spider_name():<10} {kind:<9} {rid:>5}"
                        f" {slot:<16} in flight {in_flight:>3}  queued {queued:>4}  {detail}\n")

    def _spider_name(self):
        spider = self.crawler.spider
        return spider.name if spider is not None else "-"

    def _id(self, request):
        """The id of C{request}, given one (with its URL) on first sight."""
        rid = self._ids.get(request)
        if rid is None:
            rid = self._ids[request] = len(self.urls)
            self.urls.append(request.url)
        return rid

    def engine_started(self, **_):
        self._t0 = self.opened_at = self.clock.seconds()
        engine = self.crawler.engine
        if engine is not None:
            engine.wake_causes = set()  # the engine notes why each turn was asked for
        self._record(("open", 0.0))

    def request_scheduled(self, request, **_):
        if len(self.events) < self.max_events:
            kind = self._continuing.pop(request, None) if self._continuing else None
            if kind is None:
                kind = _continues(request)
            self._record(("scheduled", self._now(), self._id(request), kind))
        else:
            self.not_recorded += 1

    def download_started(self, request, **_):
        if len(self.events) < self.max_events:
            slots = self.crawler.slots
            key = slots.key_for(request) if slots else "?"
            delay = slots.slot(key).delay if slots else None  # in force now (AutoThrottle)
            self._record(("start", self._now(), self._id(request), key,
                          self._in_engine(request), delay))
        else:
            self.not_recorded += 1

    def _in_engine(self, request):
        """Whether C{request} is in the engine's flight (robots.txt, say, is not)."""
        engine = self.crawler.engine
        return engine is not None and request in engine.in_flight

    def download_ended(self, request, result, **_):
        rid = self._ids.get(request)
        if rid is None:
            self.not_recorded += 1
            return
        if not self._in_engine(request):  # no request_done will come for it
            del self._ids[request]
        outcome = describe_result(result, request)
        if outcome[0] == "continued" and len(self.events) < self.max_events:
            self._continuing[result] = outcome[1].split(" ", 1)[0]
        self._record(("end", self._now(), rid) + outcome)

    def request_done(self, request, **_):
        rid = self._ids.pop(request, None)
        if rid is None:
            self.not_recorded += 1
            return
        self._record(("done", self._now(), rid))

    def engine_turn(self, causes=None, **_):
        self.turns += 1
        engine = self.crawler.engine
        if engine is None or len(self.events) >= self.max_events:
            self.not_recorded += 1
            return
        self._record(("turn", self._now(), engine.statistics().in_flight,
                      pending_count(engine.scheduler) or 0, ", ".join(sorted(causes or ()))))

    def spider_closed(self, spider, reason, **_):
        self._closed_at = self._now()
        self.reason = reason
        self._ids.clear()
        self._continuing.clear()
        if self.text is not None:
            self._record(("close", self._closed_at))
            self.text.write(f"{self._closed_at:9.4f} trace {spider.name:<10} "
                            f"closed ({reason})\n")
            return
        self.name = spider.name
        if any(trace.reason is None and trace.opened_at is not None for trace in self.page):
            logger.info("%s: trace kept for %s, drawn once the other spiders close",
                        spider.name, self.path)
            return
        if _PAGES.get(self.path) is self.page:
            del _PAGES[self.path]
        drawn = [(trace, trace.name) for trace in self.page if trace.opened_at is not None]
        try:
            write_html(self.path, drawn)
        except OSError as e:
            logger.error("cannot write TRACE_FILE %s: %s", self.path, e)
        else:
            logger.info("%s: trace written to %s", ", ".join(name for _, name in drawn),
                        self.path)
        finally:
            _CLAIMED.discard(self.path)

    @property
    def duration(self):
        """Seconds from the open to the close (or to the last event)."""
        if self._closed_at is not None:
            return self._closed_at
        return self.events[-1][1] if self.events else 0.0


def _continues(request):
    """What a scheduled request continues when no download of this trace returned it:
    C{"retry"} (it waits for its C{not_before}), or C{""} for a new request."""
    meta = request._meta
    return "retry" if meta and "not_before" in meta else ""


def continuation(previous, following):
    """
    What the request C{following}, returned by the download of C{previous} (a middleware's
    C{process_response} or C{process_exception}), is, told from what changed between them:
    C{"retry"} when C{meta["retry_times"]} grew (C{get_retry_request}, the retry
    middleware), C{"redirect"} when C{meta["redirect_times"]} grew, else C{"continued"}.
    Without C{previous}, a C{not_before} in its meta means a retry.
    """
    after = following._meta or {}
    if previous is None:
        return "retry" if "not_before" in after else "continued"
    before = previous._meta or {}
    if after.get("retry_times", 0) > before.get("retry_times", 0):
        return "retry"
    if after.get("redirect_times", 0) > before.get("redirect_times", 0):
        return "redirect"
    return "continued"


def describe_result(result, request=None):
    """@param request: the request whose download ended with C{result}, if known.
    @return: C{(outcome, detail)} for what a download ended with (the outcomes are
        L{tinyscrapy.trace.timeline.OUTCOMES})."""
    if isinstance(result, HttpResponse):
        return ("ok" if result.status < 400 else "http-error", str(result.status))
    if isinstance(result, Request):
        return ("continued", f"{continuation(request, result)} -> {result.url}")
    failure_type = getattr(result, "type", type(result))
    if isinstance(failure_type, type) and issubclass(failure_type, IgnoreRequest):
        return ("ignored", failure_type.__name__)
    return ("failed", getattr(failure_type, "__name__", str(failure_type)))
