"""
L{LogFormatter}: the lines a crawl logs about its pages and items, as Scrapy's
C{scrapy.logformatter}. C{LOG_FORMATTER} names the class; each method returns what to log
as C{{"level": ..., "msg": ..., "args": {...}}} (Scrapy's contract), or None to log
nothing, so a project changes a line's words or level by overriding one method:

    class Quiet(LogFormatter):
        def dropped(self, item, exception, response, spider):
            return {"level": logging.DEBUG, "msg": "Dropped: %(exception)s",
                    "args": {"exception": exception}}

The scraper and the item pipelines call it: C{crawled} for each page (only when DEBUG is
on: a crawl at INFO pays nothing), C{scraped} and C{dropped} for each item, C{item_error}
for a pipeline that raised, C{spider_error} for a callback that raised, C{download_error}
for a download that failed.
"""

import logging
import os

CRAWLEDMSG = "Crawled (%(status)s) %(request)s%(request_flags)s (referer: %(referer)s)" \
             "%(response_flags)s"
SCRAPEDMSG = "Scraped from %(src)s" + os.linesep + "%(item)s"
DROPPEDMSG = "Dropped: %(exception)s" + os.linesep + "%(item)s"
ITEMERRORMSG = "Error processing %(item)s"
SPIDERERRORMSG = "Spider error processing %(request)s (referer: %(referer)s)"
DOWNLOADERRORMSG_SHORT = "Error downloading %(request)s"
DOWNLOADERRORMSG_LONG = "Error downloading %(request)s: %(errmsg)s"


class LogFormatter:
    """What each of the crawl's lines says, and at which level (see the module)."""

    def __init__(self, dropped_level=logging.WARNING):
        self.dropped_level = dropped_level

    @classmethod
    def from_crawler(cls, crawler):
        level = crawler.settings.get("DEFAULT_DROPITEM_LOG_LEVEL", "WARNING")
        if isinstance(level, str):
            level = logging.getLevelName(level.upper())
        return cls(level if isinstance(level, int) else logging.WARNING)

    def crawled(self, request, response, spider):
        request_flags = f" {request.flags!s}" if getattr(request, "flags", None) else ""
        response_flags = f" {response.flags!s}" if getattr(response, "flags", None) else ""
        return {"level": logging.DEBUG, "msg": CRAWLEDMSG, "args": {
            "status": response.status, "request": request, "request_flags": request_flags,
            "referer": _referer(request), "response_flags": response_flags,
            "flags": response_flags}}

    def scraped(self, item, response, spider):
        src = response if response is not None else "the start"
        return {"level": logging.DEBUG, "msg": SCRAPEDMSG, "args": {"src": src, "item": item}}

    def dropped(self, item, exception, response, spider):
        """The C{Dropped:} line, at the exception's C{log_level}, else at the crawl's
        C{DEFAULT_DROPITEM_LOG_LEVEL} (read now, as Scrapy does)."""
        level = getattr(exception, "log_level", None)
        if level is None:
            crawler = getattr(spider, "crawler", None)
            level = (crawler.settings.get("DEFAULT_DROPITEM_LOG_LEVEL", self.dropped_level)
                     if crawler is not None else self.dropped_level)
        if isinstance(level, str):
            level = logging.getLevelName(level.upper())
            if not isinstance(level, int):  # not a level's name
                level = self.dropped_level
        return {"level": level, "msg": DROPPEDMSG,
                "args": {"exception": exception, "item": item}}

    def item_error(self, item, exception, response, spider):
        return {"level": logging.ERROR, "msg": ITEMERRORMSG, "args": {"item": item}}

    def spider_error(self, failure, request, response, spider):
        return {"level": logging.ERROR, "msg": SPIDERERRORMSG,
                "args": {"request": request, "referer": _referer(request)}}

    def download_error(self, failure, request, spider, errmsg=None):
        args = {"request": request}
        if errmsg:
            args["errmsg"] = errmsg
            return {"level": logging.ERROR, "msg": DOWNLOADERRORMSG_LONG, "args": args}
        return {"level": logging.ERROR, "msg": DOWNLOADERRORMSG_SHORT, "args": args}


def logformatter_adapter(logkws):
    """C{(level, message, args)} from a L{LogFormatter} answer, for C{logger.log}."""
    return logkws.get("level", logging.INFO), logkws.get("msg", ""), logkws.get("args", {})


def log_line(logger, logkws, **kwargs):
    """Log a L{LogFormatter} answer (None: nothing) on C{logger}; C{kwargs} go to
    C{logger.log} (C{exc_info})."""
    if logkws is None:
        return
    level, message, args = logformatter_adapter(logkws)
    if logger.isEnabledFor(level):
        logger.log(level, message, args, **kwargs)


def _referer(request):
    referer = request.headers.get("Referer")
    if isinstance(referer, bytes):
        referer = referer.decode("latin-1")
    return referer
