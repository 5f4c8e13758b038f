"""
C{--trace}: the recorder of engine steps and the HTML timeline it writes at close.
"""

import os
import tempfile

import lxml.html
from twisted.internet import defer, reactor
from twisted.trial import unittest

from tinyscrapy import signals
from tinyscrapy import trace as trace_module
from tinyscrapy.crawler import Crawler
from tinyscrapy.downloadermiddlewares.retry import get_retry_request
from tinyscrapy.settings import Settings
from tinyscrapy.trace import Trace, claim_path

from .helpers import LinkSpider, crawl, run_command, serve
from .logs import capture_logs
from .servers import Delay, Drop, Redirect

# the bars of the lanes, and the in-flight line of the counts (the legends draw samples)
BARS = "//*[local-name()='svg'][@class='timeline']//*[local-name()='rect']"
IN_FLIGHT = "//*[local-name()='polyline'][@class='in-flight']"


def extension(crawler, cls):
    """The built extension of class C{cls}, or None."""
    return next((ext for ext in crawler.extensions.middlewares if isinstance(ext, cls)), None)


class TraceTests(unittest.TestCase):
    """A crawl of a small site with TRACE_FILE set, and without."""

    def setUp(self):
        self.server = serve(self)
        self.tmp = tempfile.mkdtemp()
        self.path = os.path.join(self.tmp, "trace.html")
        self.query = "/q?a=1&b=<2>"
        self.start = self.server.add_page(
            "/", links=["/a", "/slow", "/missing", "/gone", "/moved", self.query])
        self.server.add_page("/a")
        self.server.add_page("/q")
        self.server.add("/slow", Delay(0.1, b"<html>slow</html>"))
        self.server.add("/gone", Drop())
        self.server.add("/moved", Redirect("/a?moved"))
        self.server.add_page("/a?moved")
        capture_logs(self)

    def _crawl(self, **settings):
        base = {"TRACE_FILE": self.path, "RETRY_ENABLED": False, "CONCURRENT_REQUESTS": 4}
        base.update(settings)
        return crawl(LinkSpider, base, start_urls=[self.start])

    def _page(self):
        with open(self.path, encoding="utf-8") as f:
            raw = f.read()
        return raw, lxml.html.document_fromstring(raw)

    @defer.inlineCallbacks
    def test_timeline_of_a_small_site(self):
        """Every URL (escaped), each outcome, the in-flight series and the summary."""
        crawler = yield self._crawl()
        raw, page = self._page()
        text = page.text_content()
        for path in ("/", "/a", "/slow", "/missing", "/gone", "/moved"):
            self.assertIn(self.server.url(path), text)
        self.assertIn("a=1&amp;b=", raw)  # escaped in the file...
        self.assertNotIn("a=1&b=", raw)
        self.assertIn("a=1&b=", text)     # ...and the URL itself once parsed
        outcomes = {rect.get("class") for rect in page.xpath(BARS)
                    if rect.get("class") != "scraping"}
        self.assertEqual(outcomes, {"ok", "http-error", "failed", "continued"})
        rows = {row.xpath("td")[-1].text: row.get("class")
                for row in page.xpath("//table[@class='downloads']/tr[td]")}
        self.assertEqual(rows[self.server.url("/missing")], "http-error")
        self.assertEqual(rows[self.server.url("/gone")], "failed")
        self.assertEqual(rows[self.server.url("/moved")], "continued")
        self.assertEqual(rows[self.server.url("/slow")], "ok")
        series = page.xpath(IN_FLIGHT + "/@data-series")[0].split()
        counts = [int(point.split(":")[1]) for point in series]
        self.assertEqual(counts[-1], 0)
        self.assertGreater(max(counts), 1)
        self.assertLessEqual(max(counts), 4)
        self.assertEqual(len(counts), 1 + 2 * len(rows))  # each download in and out
        summary = {row.xpath("th")[0].text: row.xpath("td")[0].text
                   for row in page.xpath("//table[@class='summary']/tr")}
        pages = crawler.stats.get_value("response_received_count")
        self.assertEqual(summary["pages (responses)"], str(pages))
        self.assertEqual(summary["finish reason"], "finished")
        self.assertEqual(page.xpath("//*[@class='note truncated']"), [])
        self.assertNotIn("<script", raw)
        self.assertNotIn("src=", raw)

    @defer.inlineCallbacks
    def test_every_step_is_recorded(self):
        """Open, scheduled, start, end, done and turns; close last."""
        crawler = yield self._crawl()
        trace = extension(crawler, Trace)
        kinds = [event[0] for event in trace.events]
        self.assertEqual(kinds[0], "open")
        self.assertEqual(trace.reason, "finished")
        self.assertGreater(trace.turns, 0)
        starts = sum(kind == "start" for kind in kinds)
        self.assertEqual(starts, sum(kind == "end" for kind in kinds))
        self.assertEqual(starts, sum(kind == "done" for kind in kinds))
        self.assertEqual(starts, crawler.stats.get_value("downloader/request_count"))
        times = [event[1] for event in trace.events]
        self.assertEqual(times, sorted(times))

    @defer.inlineCallbacks
    def test_max_events_caps_memory_and_says_so(self):
        """With TRACE_MAX_EVENTS=6, six events are kept and the page says it is truncated."""
        crawler = yield self._crawl(TRACE_MAX_EVENTS=6)
        trace = extension(crawler, Trace)
        self.assertEqual(len(trace.events), 6)
        self.assertGreater(trace.not_recorded, 0)
        self.assertLessEqual(len(trace.urls), 6)
        _, page = self._page()
        note = page.xpath("//*[@class='note truncated']")[0].text_content()
        self.assertIn("TRACE_MAX_EVENTS=6", note)
        self.assertIn(f"{trace.not_recorded} later events", note)

    @defer.inlineCallbacks
    def test_off_without_trace_file(self):
        """No TRACE_FILE: no extension, no listener on the new signals, no file."""
        crawler = yield self._crawl(TRACE_FILE=None)
        self.assertIsNone(extension(crawler, Trace))
        for signal in (signals.request_reached_downloader, signals.request_left_downloader,
                       signals.request_done, signals.engine_turn):
            self.assertFalse(crawler.signals.listened(signal), signal)
        self.assertEqual(os.listdir(self.tmp), [])

    @defer.inlineCallbacks
    def test_name_in_path(self):
        """%(name)s in TRACE_FILE is the spider's name."""
        self.path = os.path.join(self.tmp, "sub", "%(name)s.html")
        yield self._crawl()
        self.assertTrue(os.path.exists(os.path.join(self.tmp, "sub", "links.html")))


class AgainMiddleware:
    """A user's middleware: a page saying "again" is retried with C{get_retry_request};
    C{/swap} is replaced by C{/b} with nothing else changed."""

    def process_response(self, request, response, spider):
        if b"<title>again" in response.body:
            return get_retry_request(request, spider=spider, reason="again",
                                     max_retry_times=1) or response
        if response.url.endswith("/swap"):
            return request.replace(url=response.url[:-len("swap")] + "b")
        return response


class ContinuedKindTests(unittest.TestCase):
    """What a request returned by a download is called: told from what changed."""

    @defer.inlineCallbacks
    def test_retry_redirect_and_other(self):
        """get_retry_request in process_response: retry; a 302: redirect; else: continued."""
        server = serve(self)
        start = server.add_page("/", links=["/again", "/moved", "/swap"])
        server.add_page("/again", title="again")
        server.add("/moved", Redirect("/a"))
        server.add_page("/a")
        server.add_page("/swap")
        server.add_page("/b")
        capture_logs(self)
        crawler = yield crawl(LinkSpider, {
            "TRACE_FILE": os.path.join(tempfile.mkdtemp(), "t.html"), "RETRY_ENABLED": False,
            "DOWNLOADER_MIDDLEWARES": {AgainMiddleware: 950}}, start_urls=[start])
        trace = extension(crawler, Trace)
        ends = {trace.urls[event[2]]: event[4] for event in trace.events
                if event[0] == "end" and event[3] == "continued"}
        self.assertEqual(ends[server.url("/again")].split(" -> ")[0], "retry")
        self.assertEqual(ends[server.url("/moved")], "redirect -> " + server.url("/a"))
        self.assertEqual(ends[server.url("/swap")], "continued -> " + server.url("/b"))
        scheduled = [event[3] for event in trace.events if event[0] == "scheduled"]
        self.assertEqual(sorted(kind for kind in scheduled if kind),
                         ["continued", "redirect", "retry"])


class NewSignalsTests(unittest.TestCase):
    """The signals the trace listens to arrive in the order things happen."""

    @defer.inlineCallbacks
    def test_order_for_one_page(self):
        """Per page: scheduled, reached, left (with the response), done; a turn after."""
        server = serve(self)
        start = server.add_page("/")
        crawler = Crawler(LinkSpider, Settings({"LOG_LEVEL": "WARNING", "FEEDS": {}}), reactor)
        events = []

        def record(name):
            def receive(**kwargs):
                result = kwargs.get("result")
                events.append((name, getattr(result, "status", None)))
            return receive

        for name in ("request_scheduled", "request_reached_downloader",
                     "request_left_downloader", "request_done", "engine_turn"):
            crawler.signals.connect(record(name), getattr(signals, name))
        yield crawler.crawl(start_urls=[start])
        steps = [event for event in events if event[0] != "engine_turn"]
        self.assertEqual(steps, [("request_scheduled", None),
                                 ("request_reached_downloader", None),
                                 ("request_left_downloader", 200),
                                 ("request_done", None)])
        turns = [i for i, event in enumerate(events) if event[0] == "engine_turn"]
        self.assertGreater(turns[-1], events.index(("request_done", None)))


class ClaimPathTests(unittest.TestCase):
    """Several spiders of one process and one TRACE_FILE."""

    def test_second_claim_gets_the_spider_name(self):
        """The first spider keeps the path; the next ones write beside it, by name."""
        base = os.path.abspath("claims.html")
        claimed = [claim_path("claims.html", name) for name in ("one", "two", "two")]
        for path in claimed:
            self.addCleanup(trace_module._CLAIMED.discard, path)
        self.assertEqual(claimed, [base, base[:-5] + "-two.html", base[:-5] + "-two-2.html"])

    def test_name_template(self):
        """%(name)s is replaced; no suffix is needed."""
        path = claim_path("out/%(name)s.html", "books")
        self.addCleanup(trace_module._CLAIMED.discard, path)
        self.assertEqual(path, os.path.abspath("out/books.html"))


class TraceCommandTests(unittest.TestCase):
    """python -m tinyscrapy crawl URL --trace FILE."""

    @defer.inlineCallbacks
    def test_crawl_writes_the_trace(self):
        """The command exits 0 and writes the timeline, with the URLs in it."""
        server = serve(self)
        start = server.add_page("/", links=["/a"])
        server.add_page("/a")
        tmp = tempfile.mkdtemp()
        path = os.path.join(tmp, "out.html")
        code, _, err = yield run_command(reactor, ["crawl", start, "--trace", path,
                                                   "-L", "WARNING"], cwd=tmp)
        self.assertEqual(code, 0, err)
        page = lxml.html.parse(path).getroot()
        text = page.text_content()
        for url in (start, server.url("/a"), server.url("/robots.txt")):
            self.assertIn(url, text)
        self.assertEqual(len(page.xpath(BARS + "[@class!='scraping']")), 3)
        series = page.xpath(IN_FLIGHT + "/@data-series")[0].split()
        self.assertEqual(series[-1].split(":")[1], "0")  # robots.txt is not in flight
