"""
C{view URL}: download a page as the crawl would (downloader and middlewares), write its body
to a temporary file and open it in a web browser, as C{scrapy view} does; with no browser
to open, print the file's path. A C{<base href>} is added to an HTML page that has none, so
its relative links and styles still point at the site.
"""

import logging

from tinyscrapy.commands import ScrapyCommand, fetch
from tinyscrapy.exceptions import UsageError
from tinyscrapy.shell import open_or_print
from tinyscrapy.utils.response import open_in_browser


class Command(fetch.Command):
    """Scrapy's C{view}: C{fetch}, then a browser."""

    def short_desc(self):
        return "Open a page in a web browser, as the crawl downloaded it"

    def long_desc(self):
        return ("Download a page as the crawl would, write it to a temporary file (with a "
                "<base href> so its links still point at the site) and open it in a web "
                "browser, as Scrapy's view does; with no browser to open, print the file's "
                "path.")

    def add_options(self, parser):
        ScrapyCommand.add_options(self, parser)  # fetch's, but its --headers
        fetch.add_page_options(parser)

    def run(self, args, opts):
        if len(args) != 1:
            raise UsageError()
        response = fetch.fetch_once(self, args[0], opts)
        if response is None:
            self.exitcode = 1
            return
        if not response.is_text:  # an image, a PDF: a browser would not show the crawl's view
            content_type = response.headers.get("Content-Type") or "no Content-Type"
            logging.getLogger(__name__).error(
                "Cannot view a non-text response: %s (%s)", response.url,
                content_type.decode("latin-1") if isinstance(content_type, bytes)
                else content_type)
            self.exitcode = 1
            return
        open_in_browser(response, _openfunc=open_or_print)
