"""
C{view URL}: download a page as the crawl would (downloader and middlewares), write its body
to a temporary file and open it in a web browser, as C{scrapy view} does; with no browser
to open, print the file's path. A C{<base href>} is added to an HTML page that has none, so
its relative links and styles still point at the site.
"""

from tinyscrapy.commands.fetch import add_fetch_options, fetch_once
from tinyscrapy.exceptions import UsageError
from tinyscrapy.shell import open_or_print
from tinyscrapy.utils.response import open_in_browser

HELP = "open a page in a web browser, as the crawl downloaded it"
DESCRIPTION = """\
Download a page as the crawl would, write it to a temporary file (with a <base href> so
its links still point at the site) and open it in a web browser, as Scrapy's view does;
with no browser to open, print the file's path."""


def add_arguments(parser):
    parser.add_argument("url", metavar="URL", help="the page to open (http or https)")
    add_fetch_options(parser)


def run(command):
    response = fetch_once(command, command.args.url, command.args.no_redirect)
    if response is None:
        return 1
    try:
        open_in_browser(response, _openfunc=open_or_print)
    except TypeError as e:  # an image, a PDF: nothing a browser shows as the crawl saw it
        raise UsageError(f"view {command.args.url}: {e}") from None
    return 0
