"""
L{close_parts}: the end of a crawl, one part after the other.

The order matters: the item pipelines close first (they may still be writing the last
items), then the frontier (a persistent one saves what is left), then the downloader (its
pooled connections), then C{spider_closed} receivers (the feeds close their files), the
spider's own C{closed(reason)}, the stats, which log the summary, and last
C{engine_stopped}. A part that fails is logged and the next one still closes.
"""

import logging

from twisted.internet.defer import maybeDeferred

from tinyscrapy import signals

logger = logging.getLogger(__name__)


def close_parts(engine, reason):
    """
    Close every part of C{engine}'s crawl in order.

    @return: a Deferred that fires with None when the last part has closed; it never
        errbacks (each failure is logged where it happens).
    """
    crawler, spider = engine.crawler, engine.spider
    steps = [
        (engine.scraper.close_spider, (spider, reason), {}),
        (engine.scheduler.close, (reason,), {}),
        (engine.downloader.close, (), {}),
        (crawler.signals.send_deferred, (signals.spider_closed,),
         {"spider": spider, "reason": reason}),
        (spider.closed, (reason,), {}),
        (crawler.stats.close_spider, (spider, reason), {}),
        (crawler.signals.send_deferred, (signals.engine_stopped,), {}),
    ]
    d = maybeDeferred(_first_step)
    for step, args, kwargs in steps:
        d.addBoth(_cb_next_step, spider, step, args, kwargs)
    d.addBoth(_cb_next_step, spider, _first_step, (), {})
    return d


def _first_step():
    return None


def _cb_next_step(previous, spider, step, args, kwargs):
    """Log the previous step's failure (if any), then run C{step}."""
    if hasattr(previous, "check"):
        logger.error("error while closing %s", spider, exc_info=(
            previous.type, previous.value, previous.getTracebackObject()))
    return maybeDeferred(step, *args, **kwargs)
