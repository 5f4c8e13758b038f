"""
What a crawl says in the log at its start and at its end, in words a Scrapy user reads.

    - L{log_start}: the settings a user changed, and the enabled components on three short
      lines (built-in ones by class name, a user's own by dotted path);
    - L{summary_line}: at the end, one line a person reads before the stats: pages, items,
      errors, time, pages per second, the finish reason, and where the items went;
    - L{nothing_fetched}: the line a crawl ends with when not one of its start requests
      was answered (the host refused or timed out, robots.txt forbade it): the command
      exits 1 then.

The level is the process's: C{-L} or C{LOG_LEVEL} from the command line or the project,
or C{LOG_LEVEL} in a spider's C{custom_settings}, which, as in Scrapy, sets it for the
whole process, start-up lines included
(L{tinyscrapy.observe.logconfig.update_root_handler}).
"""

import logging
import re

logger = logging.getLogger("tinyscrapy.crawler")

# the password of a URL in a setting (redis://:secret@host/0), kept out of the log
_CREDENTIALS = re.compile(r"(://[^/@:]*:)[^/@]*@")

def log_start(crawler):
    """Log what a crawl runs with: overridden settings, the setting names nothing has
    read (a typo, or a setting of the user's own), and the enabled components."""
    name = crawler.spider.name
    settings = crawler.settings
    overridden = settings.overridden()
    if overridden and logger.isEnabledFor(logging.INFO):
        logger.info("%s: settings: %s", name, ", ".join(
            f"{key}={_show(value)}" for key, value in sorted(overridden.items())))
    unread = settings.unread_unknown()
    # a name close to a known one is likely a typo; any other may be the project's own
    # (an API key a callback reads later), so it is only mentioned at DEBUG
    typos = [(setting, guess) for setting, guess in unread if guess]
    if typos:
        logger.warning("%s: settings that nothing has read (a typo?): %s", name, ", ".join(
            f"{setting} (did you mean {guess}?)" for setting, guess in typos))
    own = [setting for setting, guess in unread if not guess]
    if own:
        logger.debug("%s: settings tinyscrapy does not know, not read so far (your own?): "
                     "%s", name, ", ".join(own))
    if not logger.isEnabledFor(logging.INFO):
        return
    engine = crawler.engine
    logger.info("%s: downloader middlewares: %s", name,
                _names(engine.downloader.middleware.middlewares))
    logger.info("%s: spider middlewares: %s; item pipelines: %s", name,
                _names(engine.scraper.spidermw.middlewares),
                _names(engine.scraper.pipelines.pipelines))
    logger.info("%s: extensions: %s", name, _names(crawler.extensions))


def _show(value):
    if isinstance(value, str):
        value = _CREDENTIALS.sub(r"\1***@", value)
    return repr(value)


def _names(parts):
    """C{Retry, Redirect, myproject.middlewares.Cache}: built-in components by class name
    (without C{Middleware}), a user's own by dotted path."""
    names = []
    for path, _ in parts:
        if not isinstance(path, str):
            path = f"{path.__module__}.{path.__qualname__}"
        if path.startswith("tinyscrapy."):
            path = path.rpartition(".")[2]
            if path.endswith("Middleware") and path != "Middleware":
                path = path[:-len("Middleware")]
        names.append(path)
    return ", ".join(names) or "none"


def summary_line(crawler, stats, reason):
    """
    One line for a person: C{books: 250 pages, 200 items, 0 errors in 3.2 s (78 pages/s);
    finished; items in items.jsonl}.

    @param stats: the crawl's stats at close (a dict).
    """
    name = crawler.spider.name if crawler.spider is not None else crawler.spidercls.name
    pages = stats.get("response_received_count", 0)
    items = stats.get("item_scraped_count", 0)
    errors = stats.get("ledger/failed", 0) + sum(
        value for key, value in stats.items()
        if key.startswith(("spider_exceptions/", "pipeline_exceptions/")))
    seconds = stats.get("elapsed_time_seconds", 0) or 0
    rate = f"{pages / seconds:.0f} pages/s" if seconds > 0 else "-"
    return (f"{name}: {pages} pages, {items} items, {errors} "
            f"{'error' if errors == 1 else 'errors'} in {seconds:.{2 if seconds < 10 else 0}f} s "
            f"({rate}); {reason}; "
            f"{_feeds(crawler, name)}")


def _feeds(crawler, name):
    feeds = crawler.settings.getdict("FEEDS")
    if not feeds:
        return "items not stored (no feed)"
    paths = ["stdout" if path == "-" else (path % {"name": name} if "%(" in path else path)
             for path in feeds]
    return "items in " + ", ".join(paths)


# why a request failed or was dropped, in words (the ledger counts by class name)
_REASONS = {
    "ConnectionRefusedError": "connection refused",
    "ConnectError": "could not connect",
    "TCPTimedOutError": "connection timed out",
    "TimeoutError": "timed out",
    "DownloadTimeout": "timed out",
    "DNSLookupError": "host not found",
    "DnsLookupTimeout": "host lookup timed out",
    "RobotsDisallowed": "forbidden by robots.txt",
    "OffsiteRequest": "off-site",
    "InvalidUrl": "not a valid http(s) URL",
    "ConnectionLost": "connection lost",
    "ResponseNeverReceived": "no response",
    "ConnectionDone": "connection closed",
    # Scrapy 2.19's names for twisted's (tinyscrapy.errors.scrapy_download_error)
    "DownloadConnectionRefusedError": "connection refused",
    "CannotResolveHostError": "host not found",
    "ConnectTimeout": "connection timed out",
    "DownloadFailedError": "no complete response",
}


def nothing_fetched(crawler):
    """
    The line to end a crawl with when not one of its requests was answered though some
    were made, each of them failed or dropped (refused, timed out, forbidden by
    robots.txt), and the crawl ran to its end; else None. A page that answered, even with
    a 404, counts as fetched.
    """
    stats = crawler.stats.get_stats()
    if stats.get("finish_reason") != "finished" or stats.get("response_received_count"):
        return None
    opened = stats.get("ledger/opened", 0)
    ended_badly = stats.get("ledger/failed", 0) + stats.get("ledger/dropped", 0)
    if not opened or ended_badly != opened:
        return None
    reasons = []
    for key, count in sorted(stats.items()):
        state, _, kind = key[len("ledger/"):].partition("/")
        if key.startswith("ledger/") and state in ("failed", "dropped") and kind:
            reasons.append(f"{_REASONS.get(kind, kind)}" + (f" ({count})" if count > 1 else ""))
    what = "the start request" if opened == 1 else f"all {opened} requests"
    urls = list(getattr(crawler.spider, "start_urls", None) or ())
    where = ""
    if urls:
        where = f" of {urls[0]}" + (f" (and {len(urls) - 1} more)" if len(urls) > 1 else "")
    return (f"{crawler.spider.name}: nothing was fetched: {what}{where} failed: "
            f"{', '.join(reasons) or 'see the errors above'}")
