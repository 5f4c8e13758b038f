"""
Unit tests of the loop: L{ExecutionEngine} on a C{task.Clock}, with a fake downloader.
"""

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy import Request, Spider
from tinyscrapy.core.scheduler import Scheduler

from .helpers import make_engine


class ListSpider(Spider):
    """Starts from C{urls} (a spider argument); links nowhere."""

    name = "list"
    urls = ()

    def start_requests(self):
        for url in self.urls:
            yield Request(url)

    def parse(self, response):
        return None


def urls(n):
    return [f"http://127.0.0.1/{i}" for i in range(n)]


class LoopTests(unittest.TestCase):
    """The faithful loop: max in flight, lazy start requests, closing, wake-ups."""

    def test_never_more_than_max_in_flight(self):
        """With more work than places, exactly C{max} downloads run at once."""
        engine, clock, downloader, _ = make_engine(
            ListSpider, {"CONCURRENT_REQUESTS": 3}, urls=urls(10))
        clock.advance(0)
        self.assertEqual(len(downloader.pending), 3)
        for _ in range(10):
            if downloader.pending:
                downloader.answer()
            clock.advance(0)
        self.assertEqual(downloader.peak, 3)
        self.assertEqual(len(downloader.fetched), 10)

    def test_closes_by_itself(self):
        """Empty frontier and nothing in flight fires C{_close} with "finished"."""
        engine, clock, downloader, _ = make_engine(ListSpider, urls=urls(2))
        reasons = []
        engine.start().addCallback(reasons.append)
        clock.advance(0)
        downloader.answer_all()
        self.assertEqual(reasons, [])
        clock.advance(0)
        self.assertEqual(reasons, ["finished"])
        self.assertFalse(clock.getDelayedCalls())

    def test_no_start_requests_closes(self):
        """A spider with nothing to do closes on the first turn."""
        engine, clock, _, _ = make_engine(ListSpider, urls=[])
        clock.advance(0)
        self.assertTrue(engine.start().called)

    def test_start_requests_are_lazy(self):
        """Start requests are pulled as places free up, never all at once."""
        pulled = []

        def endless():
            for i in range(10**9):
                pulled.append(i)
                yield Request(f"http://127.0.0.1/{i}")

        class Endless(ListSpider):
            def start_requests(self):
                return endless()

        engine, clock, downloader, _ = make_engine(Endless, {"CONCURRENT_REQUESTS": 2})
        clock.advance(0)
        self.assertEqual(len(pulled), 2)
        downloader.answer()
        clock.advance(0)
        self.assertEqual(len(pulled), 3)
        engine.close_spider("test")
        downloader.answer_all()
        clock.advance(0)

    def test_wakeups_collapse(self):
        """Many new requests at once schedule a single turn of the loop."""
        engine, clock, downloader, _ = make_engine(ListSpider, urls=[])
        clock.advance(0)
        engine._close = defer.Deferred()  # reopen for the test
        engine.closing_reason = None
        engine._closing_started = False
        engine._heartbeat.start(5, now=False)
        for url in urls(5):
            engine.crawl(Request(url))
        turns = [c for c in clock.getDelayedCalls() if c.getTime() == clock.seconds()]
        self.assertEqual(len(turns), 1)
        engine.close_spider("test")
        clock.advance(0)

    def test_heartbeat_unsticks_frontier(self):
        """A frontier that says "pending" but answers None is asked again by the heartbeat."""

        class Sticky(Scheduler):
            stuck = True

            def next_request(self):
                if self.stuck:
                    return None
                return super().next_request()

        scheduler = Sticky()
        engine, clock, downloader, _ = make_engine(
            ListSpider, {"ENGINE_HEARTBEAT": 5}, scheduler=scheduler, urls=urls(1))
        clock.advance(0)
        self.assertEqual(downloader.pending, [])
        self.assertFalse(engine.start().called)
        scheduler.stuck = False
        clock.advance(5)
        self.assertEqual(len(downloader.pending), 1)
        downloader.answer()
        clock.advance(0)
        self.assertTrue(engine.start().called)

    def test_duplicates_are_fetched_once(self):
        """Two spellings of one URL (fragment, query order) are fetched once."""
        engine, clock, downloader, crawler = make_engine(ListSpider, urls=[
            "http://127.0.0.1/a?x=1&y=2", "http://127.0.0.1/a?y=2&x=1#top",
            "HTTP://127.0.0.1:80/a?x=1&y=2"])
        clock.advance(0)
        downloader.answer_all()
        clock.advance(0)
        self.assertEqual(len(downloader.fetched), 1)
        self.assertEqual(crawler.stats.get_value("dupefilter/filtered"), 2)
        self.assertEqual(crawler.ledger.closed["duplicate"], 2)

    def test_dont_filter_bypasses_dedup(self):
        """C{dont_filter=True} fetches a URL again."""

        class Again(ListSpider):
            def start_requests(self):
                yield Request("http://127.0.0.1/a")
                yield Request("http://127.0.0.1/a", dont_filter=True)

        engine, clock, downloader, _ = make_engine(Again)
        clock.advance(0)
        self.assertEqual(len(downloader.fetched), 2)
        downloader.answer_all()
        clock.advance(0)

    def test_priority_order(self):
        """Higher priority requests leave the scheduler first."""
        scheduler = Scheduler()
        for priority in (0, 5, -1, 5):
            scheduler.enqueue_request(Request(f"http://h/{priority}", priority=priority,
                                              dont_filter=True))
        order = [scheduler.next_request().priority for _ in range(4)]
        self.assertEqual(order, [5, 5, 0, -1])
        self.assertIsNone(scheduler.next_request())
        self.assertFalse(scheduler.has_pending_requests())


class OutputSpider(Spider):
    """Each start URL's path names the kind of value its callback returns."""

    name = "output"
    kinds = ()

    def start_requests(self):
        for kind in self.kinds:
            yield Request(f"http://127.0.0.1/{kind}", callback=getattr(self, kind))

    def none(self, response):
        return None

    def item(self, response):
        return {"kind": "item"}

    def request(self, response):
        return Request("http://127.0.0.1/next", callback=self.item)

    def generator(self, response):
        yield {"kind": "generator"}
        yield Request("http://127.0.0.1/from-generator", callback=self.none)

    def deferred(self, response):
        return defer.succeed([{"kind": "deferred"}])

    async def coroutine(self, response):
        return {"kind": "coroutine"}

    async def asyncgen(self, response):
        yield {"kind": "asyncgen"}


class CallbackOutputTests(unittest.TestCase):
    """Every kind of callback return value is handled."""

    def run_kinds(self, *kinds):
        engine, clock, downloader, crawler = make_engine(OutputSpider, kinds=kinds)
        items = []
        from tinyscrapy import signals
        crawler.signals.connect(lambda item, **kw: items.append(item), signals.item_scraped)
        for _ in range(10):
            clock.advance(0)
            downloader.answer_all()
        clock.advance(0)
        self.assertTrue(engine.start().called)
        return items, downloader.fetched

    def test_none(self):
        """A callback returning None produces nothing."""
        items, fetched = self.run_kinds("none")
        self.assertEqual(items, [])

    def test_item_and_request(self):
        """A single item, and a single request that is then fetched."""
        items, fetched = self.run_kinds("item", "request")
        self.assertEqual([i["kind"] for i in items], ["item", "item"])
        self.assertIn("http://127.0.0.1/next", fetched)

    def test_generator(self):
        """A generator's items and requests both arrive."""
        items, fetched = self.run_kinds("generator")
        self.assertEqual(items, [{"kind": "generator"}])
        self.assertIn("http://127.0.0.1/from-generator", fetched)

    def test_deferred_coroutine_asyncgen(self):
        """A Deferred, an C{async def} and an async generator all deliver their items."""
        items, _ = self.run_kinds("deferred", "coroutine", "asyncgen")
        self.assertEqual(sorted(i["kind"] for i in items), ["asyncgen", "coroutine", "deferred"])


class ErrorRuleTests(unittest.TestCase):
    """Errbacks, the HTTP error rule and exceptions in callbacks."""

    def make(self, spidercls):
        engine, clock, downloader, crawler = make_engine(spidercls)
        clock.advance(0)
        return engine, clock, downloader, crawler

    def test_non_2xx_goes_to_errback(self):
        """A 404 reaches the errback (with the request on the failure), not the callback."""
        seen = []

        class S(Spider):
            name = "s"

            def start_requests(self):
                yield Request("http://127.0.0.1/x", callback=self.ok, errback=self.bad)

            def ok(self, response):
                seen.append("callback")

            def bad(self, failure):
                seen.append(("errback", failure.request.url, failure.value.response.status))

        engine, clock, downloader, crawler = self.make(S)
        downloader.answer(status=404)
        clock.advance(0)
        self.assertEqual(seen, [("errback", "http://127.0.0.1/x", 404)])
        self.assertEqual(crawler.stats.get_value("httperror/response_ignored_count"), 1)

    def test_handle_httpstatus_list(self):
        """A status the spider lists goes to the callback."""
        seen = []

        class S(Spider):
            name = "s"
            handle_httpstatus_list = [404]
            start_urls = ["http://127.0.0.1/x"]

            def parse(self, response):
                seen.append(response.status)

        engine, clock, downloader, _ = self.make(S)
        downloader.answer(status=404)
        self.assertEqual(seen, [404])

    def test_request_status_list_wins_over_the_spider(self):
        """A request's meta handle_httpstatus_list, even empty, replaces the spider's."""
        seen = []

        class S(Spider):
            name = "s"
            handle_httpstatus_list = [404]

            def start_requests(self):
                yield Request("http://127.0.0.1/x", meta={"handle_httpstatus_list": []},
                              errback=self.bad)

            def parse(self, response):
                seen.append("callback")

            def bad(self, failure):
                seen.append(("errback", failure.value.response.status))

        engine, clock, downloader, _ = self.make(S)
        downloader.answer(status=404)
        clock.advance(0)
        self.assertEqual(seen, [("errback", 404)])

    def test_httperror_settings(self):
        """HTTPERROR_ALLOWED_CODES serves a spider that lists none; HTTPERROR_ALLOW_ALL all."""
        for settings, status, spider_list in (({"HTTPERROR_ALLOWED_CODES": [404]}, 404, None),
                                              ({"HTTPERROR_ALLOW_ALL": True}, 503, [404])):
            class S(Spider):
                name = "s"
                start_urls = ["http://127.0.0.1/x"]
                seen = []

                def parse(self, response):
                    self.seen.append(response.status)

            if spider_list is not None:
                S.handle_httpstatus_list = spider_list
            engine, clock, downloader, _ = make_engine(S, settings)
            clock.advance(0)
            downloader.answer(status=status)
            clock.advance(0)
            self.assertEqual(S.seen, [status], settings)

    def test_callback_exception_counted_crawl_goes_on(self):
        """A callback that raises is counted and the other pages are still crawled."""

        class S(Spider):
            name = "s"
            start_urls = ["http://127.0.0.1/boom", "http://127.0.0.1/fine"]

            def parse(self, response):
                if response.url.endswith("boom"):
                    raise ValueError("boom")
                yield {"ok": True}

        engine, clock, downloader, crawler = self.make(S)
        downloader.answer_all()
        clock.advance(0)
        self.flushLoggedErrors(ValueError)
        self.assertEqual(crawler.stats.get_value("spider_exceptions/ValueError"), 1)
        self.assertEqual(crawler.stats.get_value("item_scraped_count"), 1)
        self.assertTrue(engine.start().called)

    def test_download_failure_to_errback(self):
        """A failed download reaches the errback and is counted in the ledger."""
        failures = []

        class S(Spider):
            name = "s"

            def start_requests(self):
                yield Request("http://127.0.0.1/x", errback=failures.append)

        engine, clock, downloader, crawler = self.make(S)
        downloader.fail(ConnectionRefusedError("nope"))
        clock.advance(0)
        self.assertEqual(len(failures), 1)
        self.assertTrue(failures[0].check(ConnectionRefusedError))
        self.assertEqual(crawler.ledger.closed["failed"], 1)
        self.assertTrue(engine.start().called)

    def test_non_http_urls_dropped(self):
        """mailto:, javascript: and hostless URLs never reach the downloader."""

        class S(Spider):
            name = "s"
            start_urls = ["mailto:a@b.c", "javascript:void(0)", "http:///nohost",
                          "http://127.0.0.1/ok"]

            def parse(self, response):
                pass

        engine, clock, downloader, crawler = self.make(S)
        self.assertEqual(downloader.fetched, ["http://127.0.0.1/ok"])
        self.assertEqual(crawler.stats.get_value("ledger/dropped/InvalidUrl"), 3)
        downloader.answer_all()
        clock.advance(0)


class AcknowledgementTests(unittest.TestCase):
    """C{scheduler.request_done(request)}: what a persistent frontier waits for before it
    forgets a request. It must come after the callback's output is in the frontier, never
    when the request is handed out."""

    def test_done_only_after_the_output_is_enqueued(self):
        events = []

        class Recording(Scheduler):
            def next_request(self):
                request = super().next_request()
                if request is not None:
                    events.append(("handed out", request.url))
                return request

            def enqueue_request(self, request):
                events.append(("enqueued", request.url))
                return super().enqueue_request(request)

            def request_done(self, request):
                events.append(("done", request.url))

        class OneLink(ListSpider):
            def parse(self, response):
                if response.url.endswith("/0"):
                    yield Request("http://127.0.0.1/child")

        engine, clock, downloader, _ = make_engine(OneLink, scheduler=Recording(),
                                                   urls=urls(1))
        clock.advance(0)
        self.assertEqual(events, [("enqueued", "http://127.0.0.1/0"),
                                  ("handed out", "http://127.0.0.1/0")])
        downloader.answer()
        self.assertEqual(events[2:], [("enqueued", "http://127.0.0.1/child"),
                                      ("done", "http://127.0.0.1/0")])
        clock.advance(0)
        downloader.fail(ConnectionRefusedError("no"))  # a failed download is done too
        clock.advance(0)
        self.assertEqual(events[-2:], [("handed out", "http://127.0.0.1/child"),
                                       ("done", "http://127.0.0.1/child")])
