"""
C{--trace} shows the loop: each request's phases in causal order, never more than C{max} in
flight, retries apart from redirects, the turns with their causes; C{--trace -} prints the
events as text lines on stderr and writes no file.
"""

import os
import re

import lxml.etree
import lxml.html
from twisted.internet import defer, reactor
from twisted.trial import unittest

from tinyscrapy.trace import Trace
from tinyscrapy.trace.charts import LABEL_W, PLOT_W, series_svg
from tinyscrapy.trace.timeline import downloads_of, element_ids

from .helpers import LinkSpider, crawl, run_command, serve
from .logs import capture_logs
from .servers import Delay, Redirect, Sequence, Status
from .test_trace import extension

TIMELINE = "//*[local-name()='svg'][@class='timeline']"
SERIES = "//*[local-name()='svg'][@class='series']"


class LoopTraceTests(unittest.TestCase):
    """The recorded trace of a small crawl with a redirect, a retry and slow pages."""

    def setUp(self):
        self.server = serve(self)
        links = [f"/p{n}" for n in range(8)] + ["/moved", "/flaky"]
        self.start = self.server.add_page("/", links=links)
        for n in range(8):
            self.server.add(f"/p{n}", Delay(0.02, b"<html><title>p</title></html>"))
        self.server.add("/moved", Redirect("/p0?again"))
        self.server.add_page("/p0?again")
        self.server.add("/flaky", Sequence([Status(503), Delay(0, b"<html>ok</html>")]))
        self.path = os.path.join(self.mktemp(), "trace.html")
        capture_logs(self)

    @defer.inlineCallbacks
    def test_phases_in_order_and_never_more_than_max(self):
        """scheduled <= start <= end <= done per request; in flight never above max."""
        crawler = yield crawl(LinkSpider, {
            "TRACE_FILE": self.path, "CONCURRENT_REQUESTS": 3, "RETRY_BACKOFF_BASE": 0.05},
            start_urls=[self.start])
        trace = extension(crawler, Trace)
        downloads, in_flight, _, turns = downloads_of(trace)
        self.assertGreaterEqual(len(downloads), 12)
        for d in downloads:
            if d.slot is None or "robots.txt" in d.url:
                continue
            self.assertLessEqual(d.scheduled, d.start, d.url)
            self.assertLessEqual(d.start, d.end, d.url)
            self.assertLessEqual(d.end, d.done, d.url)
        self.assertLessEqual(max(n for _, n in in_flight), 3)
        self.assertEqual(in_flight[-1][1], 0)
        by_url = {}
        for d in downloads:
            by_url.setdefault(d.url, []).append(d)
        first, retry = by_url[self.server.url("/flaky")]
        self.assertEqual(first.detail.split()[0], "retry")
        self.assertEqual(retry.continues, "retry")
        self.assertEqual(by_url[self.server.url("/moved")][0].detail.split()[0], "redirect")
        self.assertEqual(by_url[self.server.url("/p0?again")][0].continues, "redirect")
        self.assertGreaterEqual(retry.start - retry.scheduled, 0.04)  # its backoff
        causes = {cause for _, text in turns for cause in text.split(", ") if cause}
        self.assertTrue({"open", "enqueue", "download finished", "request done"} <= causes,
                        causes)

    @defer.inlineCallbacks
    def test_page_shows_the_loop(self):
        """The page has a viewBox, the max line, one tick per turn, phases in tooltips."""
        crawler = yield crawl(LinkSpider, {
            "TRACE_FILE": self.path, "CONCURRENT_REQUESTS": 3, "RETRY_BACKOFF_BASE": 0.05},
            start_urls=[self.start])
        page = lxml.html.parse(self.path).getroot()
        svgs = page.xpath("//*[local-name()='svg']")
        self.assertTrue(all(svg.get("viewbox") or svg.get("viewBox") for svg in svgs))
        self.assertEqual(len(page.xpath(f"{SERIES}//*[local-name()='line'][@class='limit']")),
                         1)
        ticks = page.xpath("//*[@class='turns']/*")
        self.assertEqual(len(ticks), extension(crawler, Trace).turns)
        labels = [tick.text_content() for tick in ticks]
        self.assertTrue(labels[0].startswith("turn at "), labels[0])
        self.assertTrue(any("request done" in label for label in labels))
        tips = page.xpath(f"{TIMELINE}//*[local-name()='g']/*[local-name()='title']/text()")
        self.assertTrue(any("downloading" in tip and "scraping" in tip for tip in tips))
        self.assertTrue(any("retry backoff" in tip for tip in tips))
        self.assertEqual(len(page.xpath(f"{TIMELINE}//*[local-name()='line'][@class='backoff']")),
                         1)
        phases = page.xpath(f"{TIMELINE}//*[local-name()='rect' or local-name()='line']"
                            f"[not(@class='grid')]")
        self.assertGreater(len(phases), 12)
        untitled = [(p.tag, p.get("class")) for p in phases  # its own, or its group's
                    if not p.xpath("(*|../*)[local-name()='title']/text()")]
        self.assertEqual(untitled, [])  # every bar and phase line has its tooltip


class SlotReferenceTests(unittest.TestCase):
    """The slots' own limits on the page."""

    @defer.inlineCallbacks
    def test_delay_windows_and_parallelism(self):
        """With DOWNLOAD_DELAY each send's window is shaded; the slot shows its max."""
        server = serve(self)
        start = server.add_page("/", links=["/a", "/b"])
        server.add_page("/a")
        server.add_page("/b")
        path = os.path.join(self.mktemp(), "trace.html")
        capture_logs(self)
        yield crawl(LinkSpider, {"TRACE_FILE": path, "DOWNLOAD_DELAY": 0.02,
                                 "RANDOMIZE_DOWNLOAD_DELAY": False,
                                 "CONCURRENT_REQUESTS_PER_DOMAIN": 3}, start_urls=[start])
        page = lxml.html.parse(path).getroot()
        windows = page.xpath(f"{TIMELINE}//*[local-name()='rect'][@class='delay']")
        self.assertEqual(len(windows), 3)
        self.assertIn("(delay 0.020 s from ", windows[0].xpath("*")[0].text)
        labels = page.xpath("//*[local-name()='text'][@class='slot']/text()")
        self.assertIn("127.0.0.1 (max 3)", labels)
        series = page.xpath(SERIES)[0]
        references = series.xpath(".//*[local-name()='text'][starts-with(@class, 'ref')]")
        self.assertEqual([r.text for r in references],
                         ["CONCURRENT_REQUESTS 16", "per slot 3 (127.0.0.1)"])


class ScaleTests(unittest.TestCase):
    """The in-flight and queued counts, each on its own scale."""

    def test_each_count_has_its_own_axis(self):
        """16 in flight and 10000 queued: each reaches the top of its own labelled axis."""
        in_flight = [(0.0, 0), (1.0, 16), (2.0, 3), (3.0, 0)]
        queued = [(0.0, 0), (1.0, 10000), (2.0, 40), (3.0, 0)]
        svg = lxml.etree.fromstring(series_svg(
            in_flight, queued, 3.0, 3.0, limit=16, limits={"a": (8, 0), "b": (8, 0)}))
        ns = {"s": "http://www.w3.org/2000/svg"}
        ticks = [(float(t.get("y")), t.text) for t in svg.findall("s:text[@class='ytick']", ns)]
        labels = [label for _, label in sorted(ticks)]
        self.assertEqual(labels, ["20", "15", "10", "5", "0",  # in flight, on top
                                  "10000", "5000", "0"])
        y_of = {}
        for y, label in ticks:
            y_of.setdefault(label, []).append(y - 3.5)  # a label sits 3.5 below its tick

        def top_of(polyline_class):
            line = svg.find(f"s:polyline[@class='{polyline_class}']", ns)
            return min(float(p.split(",")[1]) for p in line.get("points").split())

        self.assertAlmostEqual(top_of("queued"), y_of["10000"][0], places=1)
        limit_y = float(svg.find("s:line[@class='limit']", ns).get("y1"))
        self.assertAlmostEqual(top_of("in-flight"), limit_y, places=1)  # 16, at the max
        self.assertLess(y_of["20"][0], limit_y)  # 16: between the ticks 20 and 15
        self.assertLess(limit_y, y_of["15"][0])
        refs = [t.text for t in svg.findall("s:text", ns) if t.get("class", "").startswith("ref")]
        self.assertEqual(refs, ["CONCURRENT_REQUESTS 16", "per slot 8 (2 slots)"])


    def test_lines_stop_where_the_spider_closed(self):
        """A spider that closed at 1 s on a 4 s page: its lines stop there, the rest veiled."""
        svg = lxml.etree.fromstring(series_svg([(0.0, 0), (0.5, 1), (0.9, 0)],
                                               [(0.0, 0), (0.4, 1)], 4.0, 1.0, limit=2))
        ns = {"s": "http://www.w3.org/2000/svg"}
        ends = [max(float(p.split(",")[0]) for p in line.get("points").split())
                for line in svg.findall("s:polyline", ns)]
        self.assertEqual(ends, [LABEL_W + PLOT_W / 4] * 2)
        veil = svg.find("s:rect[@class='closed']", ns)
        self.assertEqual(float(veil.get("x")), LABEL_W + PLOT_W / 4)


class OtherLinkSpider(LinkSpider):
    """The same, under another name."""

    name = "other"


class SharedPageTests(unittest.TestCase):
    """Two spiders of one process, one TRACE_FILE."""

    @defer.inlineCallbacks
    def test_one_page_one_time_axis(self):
        """Both spiders are drawn on one page, written once both have closed."""
        server = serve(self)
        start = server.add_page("/", links=["/a"])
        server.add("/a", Delay(0.05, b"<html>a</html>"))
        path = os.path.join(self.mktemp(), "both.html")
        capture_logs(self)
        first = crawl(LinkSpider, {"TRACE_FILE": path}, start_urls=[start])
        second = crawl(OtherLinkSpider, {"TRACE_FILE": path}, start_urls=[start + "?b"])
        yield first
        if not second.called:  # the first to close waits for the other
            self.assertFalse(os.path.exists(path))
        yield second
        self.assertEqual(os.listdir(os.path.dirname(path)), ["both.html"])
        page = lxml.html.parse(path).getroot()
        sections = page.xpath("//section[@class='spider']/h2/text()")
        self.assertEqual(sorted(sections), ["links", "other"])
        ticks = page.xpath("//*[@class='series']//*[local-name()='text'][@class='tick']/text()")
        axes = [tuple(ticks[i:i + 3]) for i in range(0, len(ticks), len(ticks) // 2)]
        self.assertEqual(axes[0], axes[1])  # one time axis for both

    @defer.inlineCallbacks
    def test_ids_unique_and_references_resolve(self):
        """On a two-spider page every id is unique and every #reference names one."""
        server = serve(self)
        start = server.add_page("/", links=["/a"])
        server.add_page("/a")
        path = os.path.join(self.mktemp(), "both.html")
        capture_logs(self)
        yield defer.gatherResults([
            crawl(LinkSpider, {"TRACE_FILE": path}, start_urls=[start]),
            crawl(OtherLinkSpider, {"TRACE_FILE": path, "TRACE_MAX_EVENTS": 5},
                  start_urls=[start])])
        with open(path, encoding="utf-8") as f:
            raw = f.read()
        page = lxml.html.document_fromstring(raw)
        ids = page.xpath("//@id")
        self.assertGreater(len(ids), 10)
        self.assertEqual(sorted(ids), sorted(set(ids)))
        references = [value[1:] for value in page.xpath("//@href") if value.startswith("#")]
        references += re.findall(r"url\(#([^)]+)\)", raw)
        self.assertEqual(sorted(references), ["links", "other"])  # the sections' links
        self.assertEqual(set(references) - set(ids), set())
        for section in page.xpath("//section[@class='spider']"):
            inner = section.xpath("./descendant::*/@id")
            self.assertTrue(all(i.startswith(section.get("id") + "--") for i in inner), inner)

    def test_element_ids_of_awkward_names(self):
        """Repeated names and characters an id cannot hold still give distinct ids."""
        self.assertEqual(element_ids(["books", "books", "a b/c", "", "--"]),
                         ["books", "books-2", "a-b-c", "spider", "spider-2"])


SPIDER_NAME = "crawl"  # the spider "crawl URL" makes
LINE = re.compile(r" *(\d+\.\d{4}) trace (\S+) +(\w+) +(#\d+|-) (\S+) +in flight +(\d+)"
                  r"  queued +(\d+)  (.*)")


class TextTraceTests(unittest.TestCase):
    """python -m tinyscrapy crawl URL --trace -."""

    @defer.inlineCallbacks
    def test_lines_on_stderr_in_order(self):
        """One line per event on stderr, in order; items alone on stdout; no file "-"."""
        server = serve(self)
        start = server.add_page("/", links=["/a", "/b"])
        server.add_page("/a")
        server.add_page("/b")
        cwd = self.mktemp()
        os.makedirs(cwd)
        code, out, err = yield run_command(
            reactor, ["crawl", start, "--trace", "-", "-s", "CONCURRENT_REQUESTS=2",
                      "-L", "WARNING"], cwd=cwd)
        self.assertEqual(code, 0, err)
        self.assertEqual(os.listdir(cwd), [])
        self.assertEqual(len(out.splitlines()), 3)  # the items, as JSON lines
        lines = [LINE.fullmatch(line) for line in err.splitlines()
                 if " trace " in line and " closed (" not in line]
        self.assertNotIn(None, lines, err)
        self.assertEqual({m.group(2) for m in lines}, {SPIDER_NAME})  # each line names it
        times = [float(m.group(1)) for m in lines]
        self.assertEqual(times, sorted(times))
        seen = {}
        for m in lines:
            kind, rid, in_flight = m.group(3), m.group(4), int(m.group(6))
            self.assertLessEqual(in_flight, 2)
            if rid != "-" and kind in ("scheduled", "start", "end", "done"):
                seen.setdefault(rid, []).append(kind)
        pages = [kinds for kinds in seen.values() if "done" in kinds]
        self.assertEqual(len(pages), 3)
        for kinds in pages:
            self.assertEqual(kinds, ["scheduled", "start", "end", "done"])
        self.assertIn(f"trace {SPIDER_NAME:<10} closed (finished)", err)
