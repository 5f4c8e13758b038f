"""
C{run [SPIDER ...]}: run spiders by name (in a project, or from ./spiders/) or by dotted
class path, together in one process. With none named: every spider of the project inside
a project, else every spider of ./spiders/, else the demo spiders the package ships
(L{tinyscrapy.demo.spiders}); the ones that crawl the demo site get it served in the same
reactor.
"""

import os
import sys

from tinyscrapy.commands import BaseRunSpiderCommand, spider_loader

DEMO_SPIDERS = ("tinyscrapy.demo.spiders.books.BooksSpider",
                "tinyscrapy.demo.spiders.quotes.QuotesSpider")


class Command(BaseRunSpiderCommand):
    """TinyScrapy's entry point: the spiders named, in one L{CrawlerProcess}."""

    def syntax(self):
        return "[options] [SPIDER ...]"

    def short_desc(self):
        return "Run spiders by name or dotted class path (default: the demo spiders)"

    def long_desc(self):
        return ("Run spiders, named by their name (inside a project, or in ./spiders/: run "
                "books) or by dotted class path (spiders.books.BooksSpider), together in one "
                "process. With none named: every spider of the project, else of ./spiders/, "
                "else the two demo spiders the package ships; spiders of the demo site get "
                "it served in the same process. Exit 0 when the crawls ran to their end, 1 "
                "when one could not go on or fetched nothing at all, 2 for a usage error.")

    def run(self, args, opts):
        from tinyscrapy.exceptions import UsageError
        from tinyscrapy.spiderloader import resolve_spider
        loader = spider_loader(self)  # the project's, ./spiders/, else the demo's
        if not args:
            names = loader.list()
            if not names:
                raise UsageError("no spiders found here to run (`list` shows them; name a "
                                 "spider class by its dotted path: run package.module.Class)")
            self.exitcode = self.crawl([loader.load(name) for name in names], opts.spargs)
            return
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        self.exitcode = self.crawl([resolve_spider(name, loader) for name in args],
                                   opts.spargs)
