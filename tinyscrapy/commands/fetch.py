"""
C{fetch URL}: download one page through the downloader and its middlewares, and print its
body (or, with C{--headers}, the request's and the response's headers), as C{scrapy
fetch} does. Redirects are followed unless C{--no-redirect}; any status is printed. The
log goes to standard error, the page to standard output.

L{PageFetcher} is the part C{view} and C{shell} share: one crawler's downloader, without an
engine, that follows the requests a middleware answers with (a redirect, a retry).
"""

import sys

from tinyscrapy.shell import PageFetcher, check_url

HELP = "download a page and print it (as the crawl's downloader sees it)"
DESCRIPTION = """\
Download one page through the crawl's downloader and middlewares and print its body on
standard output (with --headers, the request's and the response's headers), as Scrapy's
fetch does. Redirects are followed unless --no-redirect; any status is printed."""



def add_arguments(parser):
    parser.add_argument("url", metavar="URL", help="the page to download (http or https)")
    add_fetch_options(parser)
    parser.add_argument("--headers", action="store_true",
                        help="print the request's and the response's headers, not the body")


def add_fetch_options(parser):
    """The options C{fetch} and C{view} share."""
    parser.add_argument("--no-redirect", action="store_true",
                        help="do not follow redirects: print the 3xx response itself")
    parser.add_argument("-s", dest="settings", action="append", default=[],
                        metavar="NAME=VALUE", help="set a setting (repeatable)")
    parser.add_argument("-L", dest="loglevel", metavar="LEVEL", help="log level")
    add_log_options(parser)


def add_log_options(parser):
    """Scrapy's C{--nolog} and C{--logfile FILE}, for the page commands."""
    parser.add_argument("--nolog", action="store_true",
                        help="log nothing (the LOG_ENABLED setting)")
    parser.add_argument("--logfile", metavar="FILE",
                        help="log to FILE instead of stderr (the LOG_FILE setting)")


def run(command):
    response = fetch_once(command, command.args.url, command.args.no_redirect)
    if response is None:
        return 1
    out = sys.stdout.buffer
    if command.args.headers:
        for name, values in response.request.header_items():
            for value in values:
                out.write(b"> " + _bytes(name) + b": " + _bytes(value) + b"\n")
        out.write(b">\n")
        for name, values in response.headers.items():
            for value in values if isinstance(values, list) else [values]:
                out.write(b"< " + _bytes(name) + b": " + _bytes(value) + b"\n")
    else:
        out.write(response.body)
    out.flush()
    return 0


def _bytes(value):
    return value if isinstance(value, bytes) else str(value).encode("latin-1", "replace")


def fetch_once(command, url, no_redirect=False):
    """
    Run the reactor for one download of C{url}. @return: the L{HttpResponse}, or None
    when it failed (logged, with the URL).
    """
    from twisted.internet import reactor
    check_url(url)
    fetcher = PageFetcher(command_settings(command), reactor)
    result = []
    d = fetcher.fetch(fetcher.request(url, no_redirect))
    d.addCallbacks(result.append, fetcher.log_failure, errbackArgs=(url,))
    d.addBoth(_cb_close, fetcher)
    d.addBoth(_cb_stop, reactor)
    if not d.called:
        reactor.run()
    return result[0] if result else None


def _cb_close(_, fetcher):
    return fetcher.close()


def _cb_stop(_, reactor):
    if reactor.running:
        reactor.stop()


def command_settings(command):
    """The settings of a one-page command: C{-s} and C{-L}, no feed, logging set up."""
    command.args.append, command.args.overwrite = [], []
    command.settings.set("FEEDS", {}, "project")
    command.apply_options()
    return command.settings
