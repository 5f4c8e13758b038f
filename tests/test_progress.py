"""
Scrapy's LogStats lines and tinyscrapy's live progress line: each, both, and neither.
"""

import io
import logging

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy.exceptions import UsageError
from tinyscrapy.extensions.logstats import LogStats, Progress, live_wanted

from .helpers import LinkSpider, crawl, serve
from .logs import capture_logs
from .servers import Delay


class FakeStream(io.StringIO):
    """A stream that says whether it is a terminal."""

    def __init__(self, tty=False):
        super().__init__()
        self.tty = tty

    def isatty(self):
        return self.tty


class StreamProgress(Progress):
    """The progress extension writing to C{stream} (set per test) instead of stderr."""

    stream_for_tests = None
    live_interval = 0.1

    @classmethod
    def from_crawler(cls, crawler, stream=None):
        return super().from_crawler(crawler, cls.stream_for_tests)


def progress_of(crawler, cls=Progress):
    return next((ext for ext in crawler.extensions.middlewares if isinstance(ext, cls)), None)


def logstats_lines(logs):
    """The LogStats lines logged (not the DEBUG "Crawled (200)" ones)."""
    return [m for m in logs.messages(logging.INFO) if m.startswith("Crawled ")
            and " pages (at " in m]


class Talkative(LinkSpider):
    """Logs a warning on each page, to see the live line step aside."""

    def parse(self, response):
        logging.getLogger("tinyscrapy.tests").warning("visited %s", response.url)
        return super().parse(response)


class ProgressTests(unittest.TestCase):
    """A slow site: four pages of 0.15 s, one at a time."""

    def setUp(self):
        self.server = serve(self)
        pages = [f"/p{i}" for i in range(4)]
        self.start = self.server.add_page("/", links=pages)
        for path in pages:
            self.server.add(path, Delay(0.15, b"<html>slow</html>"))
        self.stream = FakeStream()
        StreamProgress.stream_for_tests = self.stream
        self.addCleanup(setattr, StreamProgress, "stream_for_tests", None)
        self.logs = capture_logs(self)

    def _crawl(self, spidercls=LinkSpider, **settings):
        base = {"CONCURRENT_REQUESTS": 1,
                "EXTENSIONS": {"tinyscrapy.extensions.logstats.Progress": None,
                               StreamProgress: 0}}
        base.update(settings)
        return crawl(spidercls, base, start_urls=[self.start])

    @defer.inlineCallbacks
    def test_logstats_lines(self):
        """LOGSTATS_INTERVAL=0.2 on a non-terminal: "Crawled N pages" lines from the start,
        rising; no live line; the rates over the whole crawl in the stats."""
        crawler = yield self._crawl(LOGSTATS_INTERVAL=0.2, LOG_LEVEL="INFO")
        lines = logstats_lines(self.logs)
        self.assertGreaterEqual(len(lines), 2, lines)
        self.assertEqual(lines[0], "Crawled 0 pages (at 0 pages/min), scraped 0 items (at 0 "
                                   "items/min)")
        self.assertRegex(lines[1], r"^Crawled \d+ pages \(at \d+ pages/min\), "
                                   r"scraped \d+ items \(at \d+ items/min\)$")
        counts = [int(line.split()[1]) for line in lines]
        self.assertEqual(counts, sorted(counts))
        self.assertLessEqual(counts[-1], 5)
        self.assertIsNotNone(progress_of(crawler, LogStats))
        self.assertIsNone(progress_of(crawler))
        self.assertEqual(self.stream.getvalue(), "")
        self.assertIn("responses_per_minute", crawler.stats.get_stats())

    @defer.inlineCallbacks
    def test_forced_live_line(self):
        """PROGRESS=true: the line is rewritten with \\r, then cleared; the LogStats lines
        go to the log beside it, not into the line."""
        crawler = yield self._crawl(PROGRESS=True, LOGSTATS_INTERVAL=0.2, LOG_LEVEL="INFO")
        written = self.stream.getvalue()
        draws = written.split("\r")[1:]
        lines = [draw.strip() for draw in draws if draw.strip()]
        self.assertGreaterEqual(len(lines), 2, written)
        self.assertRegex(lines[0], r"^links: \d+ pages, \d+ items, \d+ in flight, "
                                   r"\d+ queued, \d+ errors, [\d.]+ pages/s$")
        self.assertTrue(written.endswith("\r"))
        self.assertEqual(draws[-2].strip(), "")  # blanked at the end
        self.assertIsNotNone(progress_of(crawler))
        self.assertTrue(logstats_lines(self.logs))
        self.assertNotIn("Crawled", written)

    @defer.inlineCallbacks
    def test_live_line_steps_aside_for_log_records(self):
        """A log record to the same stream clears the line before it is written."""
        handler = logging.StreamHandler(self.stream)
        root = logging.getLogger()
        root.addHandler(handler)
        self.addCleanup(root.removeHandler, handler)
        yield self._crawl(Talkative, PROGRESS=True)
        written = self.stream.getvalue()
        for chunk in written.split("visited ")[1:]:
            line = chunk.split("\n", 1)[0]
            self.assertNotIn("pages/s", line)
        self.assertIn("pages/s", written)
        for before in written.split("visited ")[:-1]:
            last_line = before.rsplit("\n", 1)[-1]
            self.assertNotIn("pages/s", last_line.rsplit("\r", 1)[-1])

    @defer.inlineCallbacks
    def test_auto_on_a_terminal_is_live(self):
        """PROGRESS="auto" draws the live line when the stream is a terminal."""
        self.stream.tty = True
        crawler = yield self._crawl()
        self.assertIsNotNone(progress_of(crawler))
        self.assertIn("\r", self.stream.getvalue())

    @defer.inlineCallbacks
    def test_disabled(self):
        """PROGRESS=false and LOGSTATS_INTERVAL=0: neither extension, nothing written or
        logged."""
        crawler = yield self._crawl(PROGRESS=False, LOGSTATS_INTERVAL=0, LOG_LEVEL="INFO")
        self.assertIsNone(progress_of(crawler))
        self.assertIsNone(progress_of(crawler, LogStats))
        self.assertEqual(self.stream.getvalue(), "")
        self.assertFalse(logstats_lines(self.logs))


class LogStatsTests(unittest.TestCase):
    """Scrapy's LogStats arithmetic, on its own."""

    def setUp(self):
        from tinyscrapy.statscollectors import StatsCollector
        self.stats = StatsCollector()

    def test_rates_per_interval(self):
        """The rates are the growth over the last interval, per minute."""
        logstats = LogStats(self.stats, interval=30.0)
        logstats.pagesprev = logstats.itemsprev = 0
        self.stats.set_value("response_received_count", 10)
        self.stats.set_value("item_scraped_count", 4)
        logstats.calculate_stats()
        self.assertEqual((logstats.pages, logstats.prate, logstats.items, logstats.irate),
                         (10, 20.0, 4, 8.0))
        logstats.calculate_stats()
        self.assertEqual((logstats.prate, logstats.irate), (0.0, 0.0))

    def test_final_rates_need_both_times(self):
        """Without a start or finish time, or with no second between them, the final
        rates are None."""
        from datetime import datetime, timedelta
        logstats = LogStats(self.stats)
        self.assertEqual(logstats.calculate_final_stats(None), (None, None))
        start = datetime(2026, 1, 1, 12, 0, 0)
        self.stats.set_value("start_time", start)
        self.stats.set_value("finish_time", start)
        self.assertEqual(logstats.calculate_final_stats(None), (None, None))
        self.stats.set_value("finish_time", start + timedelta(minutes=2))
        self.stats.set_value("response_received_count", 30)
        self.assertEqual(logstats.calculate_final_stats(None), (15.0, 0.0))


class LiveWantedTests(unittest.TestCase):
    """PROGRESS values."""

    def test_values(self):
        """auto follows isatty; booleans and their words force it; anything else is refused."""
        self.assertTrue(live_wanted("auto", FakeStream(tty=True)))
        self.assertFalse(live_wanted("auto", FakeStream(tty=False)))
        self.assertFalse(live_wanted("auto", object()))
        # items printed on the same terminal would land in the middle of the line
        self.assertFalse(live_wanted("auto", FakeStream(tty=True), items_on_terminal=True))
        self.assertTrue(live_wanted("true", FakeStream(), items_on_terminal=True))
        for value in (True, "true", "on", 1):
            self.assertTrue(live_wanted(value, FakeStream()))
        for value in (False, "false", "off", 0):
            self.assertFalse(live_wanted(value, FakeStream(tty=True)))
        self.assertRaises(UsageError, live_wanted, "sometimes", FakeStream())
