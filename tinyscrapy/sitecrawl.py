"""
L{SiteCrawler}: the spider behind C{python -m tinyscrapy crawl URL ...}.

Unlike Scrapy's C{crawl}, which takes a spider's name, this one takes URLs and needs no
code: from each start URL it follows every link that stays on the host of the page it was
found on, and records one item per page: C{url}, C{status}, C{title}, C{depth}.
"""

from urllib.parse import urlsplit

from tinyscrapy.http import Request
from tinyscrapy.spider import Spider


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
        yield {
            "url": response.url,
            "status": response.status,
            "title": self._title(response),
            "depth": response.request.depth,
        }
        if response.status >= 300 or not response.is_text:
            return
        prefix = _origin(response.url)
        for href in response.xpath("//a/@href").getall():
            url = response.urljoin(href)
            if _origin(url) == prefix:
                yield response.follow(url, callback=self.parse)

    @staticmethod
    def _title(response):
        if not response.is_text:
            return None
        title = response.xpath("//title/text()").get()
        return title.strip() if title else None


def _origin(url):
    """C{scheme://host:port} in lower case, or None for a URL that has no host."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    return f"{parts.scheme}://{parts.netloc}".lower() if parts.netloc else None
