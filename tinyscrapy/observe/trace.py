"""
L{Trace}: C{--trace FILE} records every engine step of a crawl and, at the end, draws it
as a timeline in one self-contained HTML file (inline CSS and SVG: no script, no external
asset, nothing fetched).

What is recorded, from signals only (the engine is not instrumented by hand), each with
the reactor's time:

    - C{engine_started} and C{spider_closed}: the crawl's open and close;
    - C{request_scheduled}: a request entered the frontier (its URL is kept once);
    - C{request_reached_downloader}: its download started (its slot, i.e. its host; a
      robots.txt fetch too, which is drawn but not counted in flight);
    - C{request_left_downloader}: the download ended: a response (its status), a request
      that continues it (a redirect or a retry), or a failure (its class);
    - C{request_done}: its callback's output was handled, it left the engine's flight;
    - C{engine_turn}: one turn of the loop, with the requests in flight and queued then.

Memory is bounded: after C{TRACE_MAX_EVENTS} events nothing more is recorded (a few
counters go on) and the page says so. With several spiders in one process, C{%(name)s} in
C{TRACE_FILE} is the spider's name; without it, the first spider to claim a path writes
it and a later one writes C{STEM-NAME.EXT} beside it (logged), so no trace overwrites
another.
"""

import logging
import os

from tinyscrapy import signals
from tinyscrapy.errors import IgnoreRequest, NotConfigured, UsageError
from tinyscrapy.http import HttpResponse, Request
from tinyscrapy.observe.outputs import check_output_path
from tinyscrapy.observe.timeline import write_html

logger = logging.getLogger(__name__)

# TRACE_FILE paths claimed by the traces of this process (released once written)
_CLAIMED = set()



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

    def __init__(self, crawler, path, max_events):
        self.crawler = crawler
        self.clock = crawler.reactor
        self.path = path
        self.max_events = max_events
        self.events = []
        self.not_recorded = 0
        self.turns = 0
        self.urls = []        # request id -> URL
        self._ids = {}        # request -> id, while it is scheduled or in flight
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
        name = crawler.spider.name if crawler.spider is not None else "spider"
        if template == "-":  # the page on stdout, not a file named "-"
            if "-" in (crawler.settings.getdict("FEEDS") or {}):
                raise UsageError("--trace - and the items would both go to stdout: give "
                                 "-o FILE for the items, or --trace FILE")
            return cls(crawler, "-", max_events)
        path = claim_path(template, name)
        check_output_path(path, "--trace")  # now, not after the crawl
        return cls(crawler, path, max_events)

    # recording

    def _now(self):
        return self.clock.seconds() - self._t0

    def _record(self, event):
        """Keep C{event} unless the cap is reached. @return: whether it was kept."""
        if len(self.events) >= self.max_events:
            self.not_recorded += 1
            return False
        self.events.append(event)
        return True

    def _id(self, request):
        """The id of C{request}, given one (with its URL) on first sight."""
        rid = self._ids.get(request)
        if rid is None:
            rid = self._ids[request] = len(self.urls)
            self.urls.append(request.url)
        return rid

    def engine_started(self, **_):
        self._t0 = self.clock.seconds()
        self._record(("open", 0.0))

    def request_scheduled(self, request, **_):
        if len(self.events) < self.max_events:
            self._record(("scheduled", self._now(), self._id(request)))
        else:
            self.not_recorded += 1

    def download_started(self, request, **_):
        if len(self.events) < self.max_events:
            key = self.crawler.slots.key_for(request) if self.crawler.slots else "?"
            self._record(("start", self._now(), self._id(request), key,
                          self._in_engine(request)))
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
        self._record(("end", self._now(), rid) + describe_result(result))

    def request_done(self, request, **_):
        rid = self._ids.pop(request, None)
        if rid is None:
            self.not_recorded += 1
            return
        self._record(("done", self._now(), rid))

    def engine_turn(self, **_):
        self.turns += 1
        engine = self.crawler.engine
        if engine is None or len(self.events) >= self.max_events:
            self.not_recorded += 1
            return
        self._record(("turn", self._now(), engine.statistics().in_flight,
                      engine.scheduler.size()))

    def spider_closed(self, spider, reason, **_):
        self._closed_at = self._now()
        self.reason = reason
        self._ids.clear()
        try:
            write_html(self, spider.name)
        except OSError as e:
            logger.error("cannot write TRACE_FILE %s: %s", self.path, e)
        else:
            logger.info("%s: trace written to %s", spider.name, self.path)
        finally:
            _CLAIMED.discard(self.path)

    @property
    def duration(self):
        """Seconds from the open to the close (or to the last event)."""
        if self._closed_at is not None:
            return self._closed_at
        return self.events[-1][1] if self.events else 0.0


def describe_result(result):
    """@return: C{(outcome, detail)} for what a download ended with (the outcomes are
        L{tinyscrapy.observe.timeline.OUTCOMES})."""
    if isinstance(result, HttpResponse):
        return ("ok" if result.status < 400 else "http-error", str(result.status))
    if isinstance(result, Request):
        return ("continued", "-> " + result.url)
    failure_type = getattr(result, "type", type(result))
    if isinstance(failure_type, type) and issubclass(failure_type, IgnoreRequest):
        return ("ignored", failure_type.__name__)
    return ("failed", getattr(failure_type, "__name__", str(failure_type)))
