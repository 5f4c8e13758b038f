"""Testing time with task.Clock under trial: no sleeps, no real seconds."""
import sys
import unittest as pyunit

from twisted.internet import task
from twisted.internet.defer import CancelledError
from twisted.trial import unittest


def fetch_with_timeout(clock, d, timeout):
    """Cancel C{d} (CancelledError) if it has not fired after C{timeout} seconds."""
    timer = clock.callLater(timeout, d.cancel)
    d.addBoth(_cb_stop_timer, timer)
    return d


def _cb_stop_timer(result, timer):
    if timer.active():
        timer.cancel()
    return result


class TimeoutTests(unittest.TestCase):
    """The timeout, on a clock the test moves."""

    def test_times_out(self):
        """No answer within the timeout: the Deferred fails with CancelledError."""
        clock = task.Clock()
        d = fetch_with_timeout(clock, task.deferLater(clock, 60, str, "late"), 5)
        clock.advance(5)
        self.failureResultOf(d, CancelledError)

    def test_answer_in_time(self):
        """An answer in time wins, and no timer is left behind."""
        clock = task.Clock()
        d = fetch_with_timeout(clock, task.deferLater(clock, 1, str, "page"), 5)
        clock.advance(1)
        self.assertEqual(self.successResultOf(d), "page")
        self.assertEqual(clock.getDelayedCalls(), [])


suite = pyunit.defaultTestLoader.loadTestsFromTestCase(TimeoutTests)
result = pyunit.TestResult()
suite.run(result)
print(f"ran {result.testsRun}, failures {len(result.failures)}, errors {len(result.errors)}")
sys.exit(not result.wasSuccessful())
