"""
L{SiteCrawler}: the spider behind C{python -m tinyscrapy crawl URL ...}.

Unlike Scrapy's C{crawl}, which takes a spider's name, this one takes URLs and needs no
code: from each start URL it follows every link that stays on the host of the page it was
found on, and records one item per page: C{url}, C{status}, C{title}, C{depth}.

It is also the benchmark's spider, so its per-link path is lean: hrefs come straight from
lxml (no parsel selector per link), and L{LinkBase} resolves them without C{urljoin}.
"""

from tinyscrapy.http import Request
from tinyscrapy.spider import Spider
from tinyscrapy.urls import LinkBase


class SiteCrawler(Spider):
    """Follow same-host links; one item per page."""

    name = "crawl"
    # settings the crawl command applies (a user's -s still wins)
    command_settings = {"ROBOTSTXT_OBEY": True}
    handle_httpstatus_list = tuple(range(300, 600))

    def start_requests(self):
        for url in self.start_urls:
            yield Request(url, callback=self.parse)

    def parse(self, response):
        html = response.status < 300 and response.is_text
        root = response.selector.root if html else None
        yield {
            "url": response.url,
            "status": response.status,
            "title": _title(root),
            "depth": response.request.depth,
        }
        if root is None:
            return
        base = LinkBase(response.urljoin(""))
        depth = response.request.depth + 1
        parse = self.parse
        for href in root.xpath("//a/@href"):
            url = base.join(href)
            if base.same_origin(url):
                yield Request(url, callback=parse, depth=depth)


def _title(root):
    if root is None:
        return None
    title = root.findtext(".//title")
    return title.strip() if title else None
