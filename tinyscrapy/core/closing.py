"""
L{close_parts}: the end of a crawl, one part after the other.

The order matters: the item pipelines close first (they may still be writing the last
items), then the feeds (their files closed, the last bytes written), then the frontier (a
persistent one saves what is left, and commits its last acknowledgements only now, after
every item of those pages is in a file), then the downloader (its pooled connections),
then the spider's own C{closed(reason)} and the C{spider_closed} receivers (in that order,
as in Scrapy, whose spider connects its C{closed} first), the Deferreds nobody
waited for (what receivers of signals sent without waiting returned, a hook's wrong
result: their failures are logged before the summary), the stats, which log the summary,
and last C{engine_stopped}. Each part starts after the previous one has
finished; every pipeline's C{close_spider} is called together (as in Scrapy) and each of
them has finished or failed before the feeds close. A part that fails is logged and the
next one still closes.

The close is bounded: the parts have C{CLOSE_GRACE_PERIOD} seconds, together, to close.
A part still closing then (a user's Deferred that never fires) is logged and cancelled,
and the next one closes at once; a part that starts after that time still gets one turn of
the reactor.

Each part gets the engine's finish reason as it is when that part closes: a feed that
cannot be closed turns it into C{feed_error} for the frontier and everything after.
"""

import logging

from twisted.internet.defer import gatherResults, maybeDeferred

from tinyscrapy import signals
from tinyscrapy.utils.defer import Waiting

logger = logging.getLogger(__name__)


def close_parts(engine, grace_period=0):
    """
    Close every part of C{engine}'s crawl in order, with C{engine.closing_reason}.

    @param grace_period: the seconds the parts have, together, to close (0: no bound).
    @return: a Deferred that fires with None when the last part has closed (or was given
        up); it never errbacks (each failure is logged where it happens).
    """
    deadline = engine.reactor.seconds() + grace_period if grace_period > 0 else None
    d = maybeDeferred(_first_step)
    for step, what in _STEPS:
        d.addBoth(_cb_next_step, engine, step, what, deadline, grace_period)
    d.addBoth(_cb_last_step, engine.spider)
    return d


def _first_step():
    return None


def _cb_next_step(previous, engine, step, what, deadline, grace_period):
    """Log the previous step's failure (if any), then run C{step} with the reason; while
    it has not finished, give it until C{deadline} (reactor time) at most."""
    _log_failure(previous, engine.spider)
    d = maybeDeferred(step, engine, engine.closing_reason)
    if deadline is None:
        return d
    waiting = Waiting(d, f"closing {engine.spider}: {what}")
    if not waiting.done.called:
        reactor = engine.reactor
        timer = reactor.callLater(max(0.0, deadline - reactor.seconds()), _give_up_step,
                                  waiting, grace_period)
        waiting.done.addBoth(_cb_stop_timer, timer)
    return waiting.done


def _give_up_step(waiting, grace_period):
    logger.warning("%s: not finished within CLOSE_GRACE_PERIOD (%g s), cancelled",
                   waiting.what, grace_period)
    waiting.give_up()


def _cb_stop_timer(result, timer):
    if timer.active():
        timer.cancel()
    return result


def _cb_last_step(previous, spider):
    _log_failure(previous, spider)


def _log_failure(previous, spider):
    if hasattr(previous, "check"):
        logger.error("error while closing %s", spider, exc_info=(
            previous.type, previous.value, previous.getTracebackObject()))


# the steps, in order: each is called with the engine and the reason at that moment

def _close_pipelines(engine, reason):
    return engine.scraper.close_spider(engine.spider, reason)


def _close_feeds(engine, reason):
    """Close (and store) the files of the extensions that write output (the feed
    exporter's C{close_feeds}, which may return a Deferred), before the frontier's last
    write."""
    extensions = engine.crawler.extensions  # None for a crawler never crawled (a script's)
    closing = [maybeDeferred(extension.close_feeds)
               for extension in (extensions.middlewares if extensions is not None else ())
               if hasattr(extension, "close_feeds")]
    return gatherResults(closing, consumeErrors=True) if closing else None


def _close_frontier(engine, reason):
    close = getattr(engine.scheduler, "close", None)  # optional in Scrapy's interface
    return close(reason) if close is not None else None


def _close_downloader(engine, reason):
    return engine.downloader.close()


def _send_spider_closed(engine, reason):
    return engine.crawler.signals.send_deferred(signals.spider_closed, spider=engine.spider,
                                                reason=reason)


def _spider_closed(engine, reason):
    return engine.spider.closed(reason) if engine.closes_spider else None


def _settle_unwaited(engine, reason):
    """What nobody waited for (a receiver's Deferred, a hook's wrong result): its failure
    is logged before the stats close, never lost as the reactor stops."""
    unwaited = getattr(engine.crawler, "unwaited", None)
    return unwaited.settled() if unwaited is not None else None


def _close_stats(engine, reason):
    from tinyscrapy.statscollectors import call_with_spider_if_required
    return call_with_spider_if_required(engine.crawler.stats.close_spider, engine.spider,
                                        reason=reason)


def _send_engine_stopped(engine, reason):
    return engine.crawler.signals.send_deferred(signals.engine_stopped)


_STEPS = ((_close_pipelines, "the item pipelines' close_spider"),
          (_close_feeds, "the feeds"),
          (_close_frontier, "the frontier"),
          (_close_downloader, "the downloader"),
          (_spider_closed, "the spider's closed()"),
          (_send_spider_closed, "the spider_closed receivers"),
          (_settle_unwaited, "the Deferreds nobody waited for"),
          (_close_stats, "the stats"),
          (_send_engine_stopped, "the engine_stopped receivers"))
