"""
Scrapy's C{scrapy.utils.benchserver}: L{Root}, the endless site of Scrapy's C{bench}
command: each page links to C{show} random pages among C{total}. (tinyscrapy's own C{bench}
command crawls the demo site: L{tinyscrapy.commands.bench}.)
"""

import random
from urllib.parse import urlencode

from twisted.web.resource import Resource


class Root(Resource):
    """Every path is a page of C{show} (10) links to C{/follow?...&n=N}, N random up to
    C{total} (100), from the query's arguments."""

    isLeaf = True

    def getChild(self, path, request):  # noqa: N802 (twisted's name)
        return self

    def render(self, request):
        total = _argument(request, b"total", 100)
        show = _argument(request, b"show", 10)
        args = dict(request.args or {})
        links = []
        for n in (random.randint(1, total) for _ in range(show)):  # noqa: S311
            args["n"] = n
            links.append(f"<a href='/follow?{urlencode(args, doseq=True)}'>follow {n}</a><br>")
        return ("<html><head></head><body>" + "".join(links) + "</body></html>").encode()


def _argument(request, name, default):
    values = (request.args or {}).get(name)
    return int(values[0]) if values else default
