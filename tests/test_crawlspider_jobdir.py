"""
A L{tinyscrapy.CrawlSpider} run with C{--jobdir} as a process against a twisted.web
server, paused with SIGINT and resumed (the pattern of C{test_jobdir_crawl}).
"""

import json
import os
import textwrap

from twisted.internet import defer, reactor
from twisted.trial import unittest

from .helpers import run_and_interrupt, serve
from .servers import Delay

SPIDER_FILE = """
from tinyscrapy import CrawlSpider, Rule
from tinyscrapy.linkextractors.lxmlhtml import LinkExtractor


class Pages(CrawlSpider):
    name = "pages"
    rules = (Rule(LinkExtractor(allow=r"/p\\d+$"), callback="parse_page", follow=True),)

    def parse_page(self, response):
        yield {"url": response.url}
"""

PAGES = 30


class PauseResumeTests(unittest.TestCase):
    """A CrawlSpider run with --jobdir, interrupted with SIGINT and run again."""

    timeout = 60

    @defer.inlineCallbacks
    def test_pause_then_resume_fetches_every_page_once(self):
        """Ctrl-C pauses; the same command resumes; every page is fetched and scraped once."""
        server = serve(self)
        half = PAGES // 2
        home = "".join(f'<a href="/p{i}">p{i}</a>' for i in range(half))
        server.add("/", Delay(0, home.encode()))
        for i in range(PAGES):
            child = f'<a href="/p{i + half}">next</a><a href="/">home</a>' if i < half else ""
            server.add(f"/p{i}", Delay(0.1, child.encode()))
        spider = os.path.abspath(self.mktemp() + ".py")
        with open(spider, "w") as f:
            f.write(textwrap.dedent(SPIDER_FILE))
        jobdir = os.path.abspath(self.mktemp())

        def run(feed, interrupt_after=None):
            args = ["runspider", spider, "-a", f"start_urls={server.url('/')}",
                    "--jobdir", jobdir, "-O", feed, "-s", "CONCURRENT_REQUESTS=2"]
            conditions = [] if interrupt_after is None else [
                lambda: sum(server.hits.values()) >= interrupt_after]
            return run_and_interrupt(reactor, args, conditions)

        feed1, feed2 = (os.path.abspath(self.mktemp() + ".jsonl") for _ in "12")
        code, _out, err = yield run(feed1, interrupt_after=6)
        self.assertEqual(code, 0, err)
        code, _out, err = yield run(feed2)
        self.assertEqual(code, 0, err)
        self.assertIn("resuming:", err)
        runs = []
        for feed in (feed1, feed2):
            with open(feed) as f:
                runs.append([json.loads(line)["url"] for line in f])
        self.assertLess(len(runs[0]), PAGES // 2, "the first run was not paused")
        urls = runs[0] + runs[1]
        self.assertEqual(sorted(urls), sorted(server.url(f"/p{i}") for i in range(PAGES)))
        # the start URL is fetched again by the second run (dont_filter, as in Scrapy)
        self.assertEqual(server.hits.pop("/"), 2)
        self.assertEqual(set(server.hits.values()), {1}, server.hits)
