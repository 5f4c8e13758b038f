"""
C{shell [URL|FILE]}: an interactive Python prompt to try selectors on a page, as C{scrapy
shell} (the prompt itself is L{tinyscrapy.shell.Shell}).
"""

from tinyscrapy.commands import ScrapyCommand
from tinyscrapy.commands.fetch import add_page_options, page_spider


class Command(ScrapyCommand):
    """Scrapy's C{shell}."""

    default_settings = {"FEEDS": {}}

    def syntax(self):
        return "[url|file]"

    def short_desc(self):
        return "An interactive prompt to try selectors on a page"

    def long_desc(self):
        return ("An interactive Python prompt to try selectors on a page (a URL, or a local "
                "file: ./page.html or its full path), as Scrapy's shell: response, request, "
                "item, spider, crawler, settings, scrapy, fetch(url_or_request), "
                "view(response) and shelp(). -c CODE evaluates CODE, prints its value and "
                "exits. The reactor runs in a thread of its own while the prompt waits for "
                "input (docs/twisted/threads.md). Exit 1 when URL cannot be downloaded.")

    def add_options(self, parser):
        super().add_options(parser)
        parser.add_argument("-c", dest="code", metavar="CODE",
                            help="evaluate CODE with the page fetched, print the result, exit")
        add_page_options(parser)

    def update_vars(self, vars):  # noqa: A002 (Scrapy's name)
        """Add names to the prompt's namespace (a subclass's hook; nothing here)."""

    def run(self, args, opts):
        from tinyscrapy.crawler import Crawler
        from tinyscrapy.exceptions import UsageError
        from tinyscrapy.shell import ReactorThread, Shell
        from tinyscrapy.utils.spider import DefaultSpider
        from tinyscrapy.utils.url import guess_scheme
        if len(args) > 1:
            raise UsageError()
        url = guess_scheme(args[0]) if args else None
        crawler = Crawler(page_spider(self, url, opts) or DefaultSpider, self.settings)
        thread = ReactorThread(crawler.reactor)
        thread.start()
        shell = Shell(crawler, update_vars=self.update_vars, code=opts.code)
        try:
            shell.start(url=url, redirect=not opts.no_redirect)
        finally:
            try:
                shell.close()
            finally:
                thread.stop()
        if url and shell.failed is not None:
            self.exitcode = 1
