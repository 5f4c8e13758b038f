"""
A large in-memory frontier is frozen out of the full garbage collections while it is
large, and thawed when it drains, so that nothing frozen is kept for good
(L{tinyscrapy.utils.gc}). C{STEP} is patched small; no timing.
"""

import gc
import weakref

from twisted.trial import unittest

from tinyscrapy.core.scheduler import Scheduler
from tinyscrapy.http import Request
from tinyscrapy.spiders import Spider
from tinyscrapy.utils import gc as frozen


class ManySpider(Spider):
    name = "many"

    def parse(self, response):
        pass


class _Cycle:
    """An object that refers to itself: only the cyclic collector frees it."""

    def __init__(self):
        self.me = self


class FreezeTests(unittest.TestCase):
    """What is frozen, when it is thawed, and that a thawed cycle is collected."""

    def setUp(self):
        if gc.get_freeze_count():
            raise unittest.SkipTest("the heap was frozen before this test")
        self.patch(frozen, "STEP", 50)
        self.patch(frozen, "_holders", set())
        self.patch(frozen, "_theirs", [False])
        self.addCleanup(gc.unfreeze)
        self.spider = ManySpider()

    def _fill(self, scheduler, count, start=0):
        for i in range(start, start + count):
            scheduler.enqueue_request(Request(f"http://example.com/{i}",
                                              callback=self.spider.parse))

    def _drain_to(self, scheduler, left):
        for _ in range(10000):  # bounded
            if scheduler.size() <= left:
                return
            scheduler.next_request()

    def test_waiting_requests_are_frozen_past_a_step(self):
        """Below STEP waiting nothing is frozen; at STEP the requests are."""
        scheduler = Scheduler()
        self._fill(scheduler, 49)
        self.assertEqual(gc.get_freeze_count(), 0)
        self._fill(scheduler, 1, start=49)
        self.assertGreaterEqual(gc.get_freeze_count(), 50 * 2)  # each request and callback
        scheduler.close("finished")

    def test_garbage_is_collected_not_frozen(self):
        """A garbage cycle that exists when the frontier freezes is freed, not frozen."""
        scheduler = Scheduler()
        self._fill(scheduler, 49)
        cycle = _Cycle()
        garbage = weakref.ref(cycle)
        gc.collect()  # now in the oldest generation, which only a full collection visits
        del cycle
        self.assertIsNotNone(garbage())
        self._fill(scheduler, 1, start=49)
        self.assertGreater(gc.get_freeze_count(), 0)
        self.assertIsNone(garbage())
        scheduler.close("finished")

    def test_draining_thaws_and_frozen_cycles_are_then_collected(self):
        """A cycle alive at the freeze and dropped after it is freed once the frontier
        drains below STEP // 2: nothing is kept for good."""
        scheduler = Scheduler()
        held = _Cycle()
        dropped = weakref.ref(held)
        self._fill(scheduler, 60)
        self.assertGreater(gc.get_freeze_count(), 0)
        del held
        gc.collect()
        self.assertIsNotNone(dropped())  # frozen: no collection sees it
        self._drain_to(scheduler, 25)
        self.assertGreater(gc.get_freeze_count(), 0)  # 25 is not below 50 // 2
        self._drain_to(scheduler, 24)
        self.assertEqual(gc.get_freeze_count(), 0)
        gc.collect()
        self.assertIsNone(dropped())
        scheduler.close("finished")

    def test_close_thaws(self):
        """A scheduler closed with its frontier full lets go of its freeze."""
        scheduler = Scheduler()
        self._fill(scheduler, 60)
        self.assertGreater(gc.get_freeze_count(), 0)
        scheduler.close("shutdown")
        self.assertEqual(gc.get_freeze_count(), 0)

    def test_the_last_holder_thaws(self):
        """Two frontiers in one process: the heap stays frozen until both let go."""
        first, second = Scheduler(), Scheduler()
        self._fill(first, 50)
        self._fill(second, 50, start=1000)
        first.close("finished")
        self.assertGreater(gc.get_freeze_count(), 0)
        second.close("finished")
        self.assertEqual(gc.get_freeze_count(), 0)

    def test_each_step_freezes_once(self):
        """The next freeze waits for STEP more requests, not one more."""
        scheduler = Scheduler()
        self._fill(scheduler, 50)
        self.addCleanup(scheduler.close, "finished")
        gc.unfreeze()
        self._fill(scheduler, 49, start=50)
        self.assertEqual(gc.get_freeze_count(), 0)
        self._fill(scheduler, 1, start=99)
        self.assertGreater(gc.get_freeze_count(), 0)

    def test_a_disabled_collector_is_left_alone(self):
        """With gc.disable() (the program's own policy) nothing is frozen."""
        gc.disable()
        self.addCleanup(gc.enable)
        scheduler = Scheduler()
        self._fill(scheduler, 60)
        self.assertEqual(gc.get_freeze_count(), 0)
        scheduler.close("finished")

    def test_a_heap_the_program_froze_stays_frozen(self):
        """A program that called gc.freeze() itself is never unfrozen by a frontier."""
        gc.freeze()
        scheduler = Scheduler()
        self._fill(scheduler, 60)
        scheduler.close("finished")
        self.assertGreater(gc.get_freeze_count(), 0)
