"""
L{SiteCrawler}: the spider behind C{python -m tinyscrapy crawl URL ...}.

Unlike Scrapy's C{crawl}, which takes a spider's name, this one takes URLs and needs no
code: from each start URL it follows every link that stays on the origin (scheme, host and
port) of the page it was found on, and records one item per page: C{url}, C{status},
C{title}, C{depth}.

It is a polite crawler by default (C{command_settings}, below a user's C{-s}): it obeys
robots.txt, and stops at depth 20 (as Heritrix's default C{maxHops}) so that an endless
calendar or a session id in every link cannot keep it going for ever. Links are found by
a L{LinkExtractor} (so C{<base href>} counts, and images, archives, media and other files
that are not pages are never fetched), and followed with C{follow_all}, whose early
duplicate check drops links already seen before any Request is made. Its
C{allowed_domains} are the hosts of the start URLs, so a redirect cannot take it off the
site either.

Its spider is always named C{crawl}, so with C{--scheduler redis://} it names its shared
crawl by its start URLs (L{SiteCrawler.frontier_key}): processes started with the same
URLs share one crawl, others do not.
"""

import hashlib

from tinyscrapy.http import Request
from tinyscrapy.scope.fingerprint import url_origin
from tinyscrapy.scope.links import LinkExtractor
from tinyscrapy.spider import Spider


class SiteCrawler(Spider):
    """Follow same-origin links; one item per page."""

    name = "crawl"
    # settings the crawl command applies (a user's -s still wins)
    command_settings = {"ROBOTSTXT_OBEY": True, "DEPTH_LIMIT": 20}
    handle_httpstatus_list = tuple(range(300, 600))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.allowed_domains:
            self.allowed_domains = _start_domains(self.start_urls)
        self.links = LinkExtractor(unique=False)  # follow_all drops the repeats

    def frontier_key(self):
        """The key prefix of this crawl in a shared frontier: C{tinyscrapy:crawl:} and
        the first 12 hex digits of the SHA-1 of the sorted start URLs."""
        digest = hashlib.sha1("\n".join(sorted(self.start_urls)).encode()).hexdigest()
        return f"tinyscrapy:{self.name}:{digest[:12]}:"

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
        origin = url_origin(response.url)
        prefix = origin + "/"
        urls = [url for url in self.links.extract_urls(response)
                if url.startswith(prefix) or url_origin(url) == origin]
        yield from response.follow_all(urls, callback=self.parse)

    @staticmethod
    def _title(response):
        if not response.is_text:
            return None
        title = response.root.xpath("string(//title)")  # in C: no element proxies
        return title.strip() or None


def _start_domains(urls):
    """
    The C{allowed_domains} of a site crawl: each start URL's host with its port (when the
    URL names one), and the host without C{www.} too, since sites redirect between them.
    """
    domains = []
    for url in urls:
        origin = url_origin(url)
        if origin is None:
            continue
        host_port = origin.partition("://")[2]
        if host_port.startswith("["):  # IPv6: the offsite filter compares it unbracketed
            host_port = host_port[1:].replace("]", "", 1)
        domains.append(host_port)
        if host_port.startswith("www."):
            domains.append(host_port[4:])
    return domains
