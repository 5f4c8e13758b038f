"""
The engine's wake-ups: every source goes through C{wake}, so at most one turn is queued,
and each turn knows (when traced) which sources asked for it.
"""

from twisted.internet import task
from twisted.trial import unittest

from tinyscrapy import Request, signals
from tinyscrapy.core.scheduler import Scheduler

from .helpers import make_engine
from .test_engine import ListSpider


class WaitingFrontier(Scheduler):
    """Says "pending" and hands nothing out; names t=5 as the moment one may be ready."""

    def next_request(self):
        return None

    def has_pending_requests(self):
        return True

    def next_ready_time(self):
        return 5.0 if self.clock.seconds() < 5 else None


class WakeTests(unittest.TestCase):
    """The wake-up collapse is strict, and its causes are recorded for --trace."""

    def _engine(self, scheduler=None):
        engine, clock, downloader, crawler = make_engine(
            ListSpider, {"ENGINE_HEARTBEAT": 5}, scheduler=scheduler, urls=[])
        turns = []

        def on_turn(causes, **_):
            turns.append((clock.seconds(), None if causes is None else sorted(causes)))
        crawler.signals.connect(on_turn, signals.engine_turn)
        return engine, clock, turns

    def test_heartbeat_and_slot_timer_make_one_turn(self):
        """A heartbeat and the slot-ready timer due at the same time cost one turn."""
        scheduler = WaitingFrontier()
        engine, clock, turns = self._engine(scheduler)
        scheduler.clock = clock
        engine.wake_causes = set()
        clock.advance(0)
        self.assertEqual(engine._ready_call.getTime(), 5.0)
        clock.advance(5)
        self.assertEqual(turns, [(0, []), (5, ["heartbeat", "slot ready"])])
        engine.close_spider("test")
        clock.advance(0)
        self.assertTrue(engine.start().called)

    def test_never_two_turns_queued(self):
        """However many wake-ups come, at most one turn of the loop is pending."""
        engine, clock, turns = self._engine(WaitingFrontier())
        engine.scheduler.clock = clock
        for url in ("http://127.0.0.1/a", "http://127.0.0.1/b"):
            engine.crawl(Request(url))
        engine.wake("heartbeat")
        queued = [call for call in clock.getDelayedCalls()
                  if getattr(call.func, "__name__", "") == "_next_request"]
        self.assertEqual(len(queued), 1)
        engine.close_spider("test")
        clock.advance(0)

    def test_causes_not_kept_untraced(self):
        """Without a tracer the engine keeps no causes (no per-request cost)."""
        engine, clock, turns = self._engine()
        clock.advance(0)
        self.assertIsNone(engine.wake_causes)
        self.assertEqual(turns, [(0, None)])

    def test_an_error_stop_is_its_own_cause(self):
        """A feed or frontier that cannot be written wakes the loop as "error", stops
        acknowledging, and the crawl closes with that reason."""
        scheduler = WaitingFrontier()
        engine, clock, turns = self._engine(scheduler)
        scheduler.clock = clock
        engine.wake_causes = set()
        clock.advance(0)
        engine.stop_for_error("feed_error")
        clock.advance(0)
        self.assertEqual(turns[-1], (0, ["error"]))
        self.assertFalse(engine.acknowledging)
        self.assertEqual(self.successResultOf(engine.start()), "feed_error")


class SlowStart(ListSpider):
    """An C{async def start()} that waits a second before each of two requests, then
    yields an item that a pipeline holds for a second."""

    async def start(self):
        for url in ("http://127.0.0.1/a", "http://127.0.0.1/b"):
            await task.deferLater(self.crawler.reactor, 1, str, url)
            yield Request(url)
        yield {"from": "start"}


class HoldingPipeline:
    """Holds each item for a second of the crawl's clock."""

    @classmethod
    def from_crawler(cls, crawler):
        pipeline = cls()
        pipeline.clock = crawler.reactor
        return pipeline

    def process_item(self, item):
        return task.deferLater(self.clock, 1, dict, item)


class StartCauseTests(unittest.TestCase):
    """The start requests' wake-ups have causes of their own, never the default."""

    def test_async_start_and_start_item_causes(self):
        """An async start() that awaits wakes the loop as "start", a start item that left
        the pipelines as "start item"; no turn is labelled "frontier"."""
        settings = {"ITEM_PIPELINES": {HoldingPipeline: 100}}
        engine, clock, downloader, crawler = make_engine(SlowStart, settings)
        engine.wake_causes = set()
        turns = []

        def on_turn(causes, **_):
            turns.append(sorted(causes))
        crawler.signals.connect(on_turn, signals.engine_turn)
        for _ in range(10):
            clock.advance(1)
        causes = {cause for turn in turns for cause in turn}
        self.assertIn("start", causes)
        self.assertIn("start item", causes)
        self.assertNotIn("frontier", causes)
        engine.close_spider("test")
        clock.advance(0)


class BareCrawlerCloseTests(unittest.TestCase):
    """An engine run on a crawler that was never crawled (a script's, a test's)."""

    def test_closes_without_extensions(self):
        """The close has no extensions' feeds to close, and logs no error for it."""
        from .logs import capture_logs
        logs = capture_logs(self, "tinyscrapy.core.closing")
        engine, clock, downloader, crawler = make_engine(ListSpider)
        self.assertIsNone(crawler.extensions)
        clock.advance(0)
        self.assertEqual(self.successResultOf(engine.start()), "finished")
        self.assertEqual([r.getMessage() for r in logs.records], [])
