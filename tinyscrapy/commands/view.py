"""
C{view URL}: download a page as the crawl would (downloader and middlewares), write its body
to a temporary file and open it in a web browser, as C{scrapy view} does; with no browser
to open, print the file's path. A C{<base href>} is added to an HTML page that has none, so
its relative links and styles still point at the site.
"""

import re

from tinyscrapy.commands.fetch import add_fetch_options, fetch_once

HELP = "open a page in a web browser, as the crawl downloaded it"
DESCRIPTION = """\
Download a page as the crawl would, write it to a temporary file (with a <base href> so
its links still point at the site) and open it in a web browser, as Scrapy's view does;
with no browser to open, print the file's path."""

_HEAD = re.compile(rb"<head[^>]*>", re.I)


def add_arguments(parser):
    parser.add_argument("url", metavar="URL", help="the page to open (http or https)")
    add_fetch_options(parser)


def run(command):
    response = fetch_once(command, command.args.url, command.args.no_redirect)
    if response is None:
        return 1
    open_in_browser(response)
    return 0


def open_in_browser(response, opener=None):
    """
    Write C{response}'s body to a temporary file and open it with C{webbrowser}.

    @param opener: C{webbrowser.open}, or a stand-in.
    @return: the file's path.
    """
    import tempfile
    import webbrowser

    body = response.body
    is_html = response.is_html
    if is_html and b"<base " not in body[:4096].lower():
        base = b'<base href="' + response.url.encode("utf-8").replace(b'"', b"%22") + b'">'
        match = _HEAD.search(body)
        body = body[:match.end()] + base + body[match.end():] if match else base + body
    suffix = ".html" if is_html else ".txt"
    with tempfile.NamedTemporaryFile("wb", suffix=suffix, prefix="tinyscrapy-view-",
                                     delete=False) as f:
        f.write(body)
    opened = (opener or webbrowser.open)("file://" + f.name)
    if not opened:  # no browser here: say where the page is
        print(f.name, flush=True)
    return f.name
