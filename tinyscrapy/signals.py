"""
Signals: named moments of a crawl that user code can listen to.

    crawler.signals.connect(my_function, signal=signals.item_scraped)

A receiver gets, as keyword arguments, only the ones it accepts, as Scrapy's dispatcher
does: C{def spider_closed(self, spider)} works although C{reason} is sent too, and a
receiver with C{**kwargs} gets them all. (It may also name C{signal} and C{sender}: the
signal, and the crawler.) Which arguments a receiver accepts is read from its signature
once, when it connects. Sending to a signal nobody listens to costs one dictionary lookup.
A receiver that raises is logged and does not stop the crawl. L{SignalBus.send_deferred}
waits for receivers that return Deferreds or are C{async def} (used for C{spider_opened},
C{spider_closed} and C{engine_stopped}, as in Scrapy); L{SignalBus.send_waiting} does for
C{item_scraped}, and makes nothing when no receiver answers with one.

docs/items.md lists the signals, what each sends and when.
"""

import logging

logger = logging.getLogger(__name__)


class Signal:
    """A signal's identity; compared by identity, printed by name."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<signal {self.name}>"


# the arguments each signal sends; a receiver takes the ones it names
engine_started = Signal("engine_started")          # (spider)
engine_stopped = Signal("engine_stopped")          # (): the crawl is over, stats closed
spider_opened = Signal("spider_opened")            # (spider): before the first request
scheduler_empty = Signal("scheduler_empty")        # (): nothing ready in the frontier
request_scheduled = Signal("request_scheduled")    # (request, spider)
request_dropped = Signal("request_dropped")        # (request, reason, spider)
request_reached_downloader = Signal("request_reached_downloader")  # (request, spider)
request_left_downloader = Signal("request_left_downloader")  # (request, result, spider)
request_done = Signal("request_done")              # (request, spider): out of flight
engine_turn = Signal("engine_turn")                # (spider, causes): a turn ended
headers_received = Signal("headers_received")      # (headers, body_length, request, spider)
bytes_received = Signal("bytes_received")          # (data, request, spider): each body read
#   (a receiver of these two may raise StopDownload to stop the download)
response_downloaded = Signal("response_downloaded")  # (response, request, spider): off
#                                                    the wire, before the middlewares
response_received = Signal("response_received")    # (response, request, spider)
item_scraped = Signal("item_scraped")              # (item, response, spider)
item_dropped = Signal("item_dropped")              # (item, response, exception, spider)
item_error = Signal("item_error")                  # (item, response, spider, failure)
spider_error = Signal("spider_error")              # (failure, response, spider): a callback raised
download_error = Signal("download_error")          # (failure, request, spider): failed for good
spider_idle = Signal("spider_idle")                # (spider); raise DontCloseSpider to stay
spider_closed = Signal("spider_closed")            # (spider, reason)
feed_slot_closed = Signal("feed_slot_closed")      # (slot): a feed file was stored
feed_exporter_closed = Signal("feed_exporter_closed")  # (): every feed was stored
memusage_warning_reached = Signal("memusage_warning_reached")  # (): MEMUSAGE_WARNING_MB


# what a receiver of these signals raises to decide something, not because it broke: such
# an exception is handed back in the results, not logged
_DECISIONS = {"spider_idle": ("DontCloseSpider", "CloseSpider"),
              "headers_received": ("StopDownload",), "bytes_received": ("StopDownload",)}
