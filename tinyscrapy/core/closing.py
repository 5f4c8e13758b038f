"""
L{close_parts}: the end of a crawl, one part after the other.

The order matters: the item pipelines close first (they may still be writing the last
items), then the feeds (their files closed, the last bytes written), then the frontier (a
persistent one saves what is left, and commits its last acknowledgements only now, after
every item of those pages is in a file), then the downloader (its pooled connections),
then C{spider_closed} receivers, the spider's own C{closed(reason)}, the stats, which
log the summary, and last C{engine_stopped}. A part that fails is logged and the next one
still closes.

Each part gets the engine's finish reason as it is when that part closes: a feed that
cannot be closed turns it into C{feed_error} for the frontier and everything after.
"""

import logging

from twisted.internet.defer import gatherResults, maybeDeferred

from tinyscrapy import signals

logger = logging.getLogger(__name__)


def close_parts(engine):
    """
    Close every part of C{engine}'s crawl in order, with C{engine.closing_reason}.

    @return: a Deferred that fires with None when the last part has closed; it never
        errbacks (each failure is logged where it happens).
    """
    d = maybeDeferred(_first_step)
    for step in (_close_pipelines, _close_feeds, _close_frontier, _close_downloader,
                 _send_spider_closed, _spider_closed, _close_stats, _send_engine_stopped):
        d.addBoth(_cb_next_step, engine, step)
    d.addBoth(_cb_last_step, engine.spider)
    return d


def _first_step():
    return None


def _cb_next_step(previous, engine, step):
    """Log the previous step's failure (if any), then run C{step} with the reason."""
    _log_failure(previous, engine.spider)
    return maybeDeferred(step, engine, engine.closing_reason)


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
    closing = [maybeDeferred(extension.close_feeds)
               for _path, extension in engine.crawler.extensions
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
    return engine.spider.closed(reason)


def _close_stats(engine, reason):
    return engine.crawler.stats.close_spider(engine.spider, reason)


def _send_engine_stopped(engine, reason):
    return engine.crawler.signals.send_deferred(signals.engine_stopped)
