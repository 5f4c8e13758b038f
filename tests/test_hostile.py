"""
Hostile servers: what they send is bounded, and what goes wrong is said once, by name.
"""

import logging

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy.core.downloader.handlers.http11 import HeaderLineTooLong

from .helpers import crawl, serve
from .logs import capture_logs
from .recording import Recorder
from .servers import Page


class LongHeaderLineTests(unittest.TestCase):
    """A response header line longer than twisted reads."""

    def setUp(self):
        self.server = serve(self)

    @defer.inlineCallbacks
    def test_named_and_not_retried(self):
        """A 20,000-byte header line fails once, as HeaderLineTooLong naming the limit."""
        start = self.server.add("/big", Page(b"x", headers={"x-big": "a" * 20000}))
        self.server.add_page("/fine")
        logs = capture_logs(self)
        crawler = yield crawl(Recorder, start_urls=[start, self.server.url("/fine")])
        spider = crawler.spider
        self.assertEqual(self.server.hits["/big"], 1)
        failure, = spider.failures
        self.assertTrue(failure.check(HeaderLineTooLong))
        self.assertIn("longer than 16384 bytes", failure.getErrorMessage())
        self.assertEqual([r.url for r in spider.responses], [self.server.url("/fine")])
        self.assertIsNone(crawler.stats.get_value("retry/count"))
        self.assertEqual(crawler.stats.get_value(
            "downloader/exception_type_count/"
            "tinyscrapy.core.downloader.handlers.http11.HeaderLineTooLong"), 1)
        errors = [m for m in logs.messages(logging.WARNING) if "HeaderLineTooLong" in m]
        self.assertEqual(len(errors), 1)
        self.assertIn(start, errors[0])


class DeepNestingTests(unittest.TestCase):
    """A page nested deeper than libxml2 parses."""

    def setUp(self):
        self.server = serve(self)

    @defer.inlineCallbacks
    def test_cut_tree_is_said_once_per_page(self):
        """3,000 nested <div>s: one WARNING naming the page, however often it is queried."""
        deep = ("<html><body><a href='/before'>b</a>" + "<div>" * 3000 + "</div>" * 3000
                + "<a href='/after'>a</a></body></html>")
        start = self.server.add("/deep", Page(deep))
        self.server.add_page("/before")
        logs = capture_logs(self, "tinyscrapy.http.response.html")
        crawler = yield crawl(Recorder, start_urls=[start], follow=True)
        self.assertEqual(sorted(self.server.hits), ["/before", "/deep"])
        response = crawler.spider.responses[0]
        response.css("a")
        response.xpath("//a")
        warnings = logs.messages(logging.WARNING)
        self.assertEqual(len(warnings), 1)
        self.assertIn(start, warnings[0])
        self.assertIn("deeper than 2048", warnings[0])

    def test_flags_mark_a_cut_tree(self):
        """parse_html marks a cut tree in the flags it is given, and only a cut one."""
        from tinyscrapy.http.response.html import parse_html
        flags = []
        parse_html("<p>" + "<b>" * 2100, "http://127.0.0.1/", flags)
        self.assertEqual(flags, ["html_depth_truncated"])
        flags = []
        parse_html("<p>broken<i></p></b>" + "<b>" * 2000, "http://127.0.0.1/", flags)
        self.assertEqual(flags, [])

    def test_reused_parser_keeps_pages_apart(self):
        """One parser per thread, reused: each page's tree stays its own, and a page
        parsed in another thread (the shell's) gets that thread's parser."""
        import threading

        from tinyscrapy.http.response import html as htmltree
        first = htmltree.parse_html("<title>one</title>", "http://127.0.0.1/1")
        parser = htmltree._PARSERS.parser
        second = htmltree.parse_html("<title>two</title>", "http://127.0.0.1/2")
        self.assertIs(htmltree._PARSERS.parser, parser)
        self.assertEqual([first.findtext(".//title"), second.findtext(".//title")],
                         ["one", "two"])
        self.assertEqual(first.getroottree().docinfo.URL, "http://127.0.0.1/1")
        other = []

        def parse_elsewhere():
            htmltree.parse_html("<title>three</title>", "http://127.0.0.1/3")
            other.append(htmltree._PARSERS.parser)

        thread = threading.Thread(target=parse_elsewhere)
        thread.start()
        thread.join(10)
        self.assertEqual(len(other), 1)
        self.assertIsNot(other[0], parser)
