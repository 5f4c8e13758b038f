"""
The site C{python -m tinyscrapy bench} crawls: C{/p/N.html} for N in 0..pages-1, about
10 KB and 30 links each (neighbours, pseudo-random pages, fragments, duplicates and
off-site links), rendered on demand and the same every time.

Only C{bench} imports it (twisted.web's server is slow to import: docs/performance.md).
"""

import random

from twisted.web.resource import Resource
from twisted.web.server import Site


def bench_site(pages):
    """@return: a quiet L{Site} serving a L{BenchSite} of C{pages} pages."""
    site = Site(BenchSite(pages))
    site.noisy = False
    site.log = _no_access_log
    return site


FILLER = ("Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor "
          "incididunt ut labore et dolore magna aliqua. ") * 60


class BenchSite(Resource):
    """C{/p/N.html} for N in 0..pages-1; each page rendered on demand, deterministically."""

    isLeaf = True

    def __init__(self, pages, seed=7):
        super().__init__()
        self.pages = pages
        self.seed = seed

    def render_GET(self, request):
        path = request.path.decode("latin-1")
        if not (path.startswith("/p/") and path.endswith(".html")):
            request.setResponseCode(404)
            return b"not found"
        try:
            number = int(path[3:-5])
        except ValueError:
            number = -1
        if not 0 <= number < self.pages:
            request.setResponseCode(404)
            return b"not found"
        request.setHeader(b"content-type", b"text/html; charset=utf-8")
        return self.page(number).encode("utf-8")

    def page(self, number):
        rng = random.Random(self.seed * 1_000_003 + number)
        targets = [(number + step) % self.pages for step in (1, 2, 3, 5, 8)]
        targets += [rng.randrange(self.pages) for _ in range(20)]
        links = [f'<a href="/p/{t}.html">page {t}</a>' for t in targets]
        links += [f'<a href="{(number + 1) % self.pages}.html#top">next</a>',
                  '<a href="http://offsite.invalid/">elsewhere</a>',
                  '<a href="mailto:bench@example.invalid">mail</a>',
                  f'<a href="/p/{number}.html">self</a>']
        return (f"<!DOCTYPE html><html><head><title>Page {number}</title></head><body>"
                f"<h1>Page {number}</h1><p>{FILLER}</p><ul><li>"
                + "</li><li>".join(links) + "</li></ul></body></html>")


def _no_access_log(request):
    return None
