"""
L{SitemapSpider}: a spider that finds its pages in sitemaps, as Scrapy's does::

    class Shop(SitemapSpider):
        name = "shop"
        sitemap_urls = ["http://127.0.0.1:8800/robots.txt"]   # or sitemap URLs
        sitemap_rules = [("/product/", "parse_product"), ("", "parse")]
        sitemap_follow = ["/sitemap-products"]                # which index entries to follow

A sitemap URL may be a robots.txt (its C{Sitemap:} lines are followed), a sitemap index
(its entries are followed when a C{sitemap_follow} pattern matches), or a C{urlset}, whose
pages go to the callback of the first C{sitemap_rules} pattern that matches (searched
anywhere in the URL, C{re.search}). Sitemaps may be gzip-compressed (C{.xml.gz}, or any
body that starts as gzip does): they are decompressed within C{DOWNLOAD_MAXSIZE} (or the
spider's C{download_maxsize}, or C{meta["download_maxsize"]}) and within the ratio page
bodies are held to (C{DOWNLOAD_MAXRATIO} past C{DOWNLOAD_MAXRATIO_GRACE}), so a gzip bomb
is refused about a mebibyte in, and C{DOWNLOAD_WARNSIZE} warns as for pages.
"""

import logging
import re

from tinyscrapy.http.request import Request
from tinyscrapy.spiders import Spider
from tinyscrapy.utils.gz import GZIP_MAGIC, SizeExceeded, gunzip
from tinyscrapy.utils.sitemap import Sitemap, locations, sitemap_urls_from_robots

logger = logging.getLogger(__name__)


def _regex(pattern):
    return re.compile(pattern) if isinstance(pattern, str) else pattern


class SitemapSpider(Spider):
    """
    @cvar sitemap_urls: robots.txt, sitemap index or sitemap URLs to start from.
    @cvar sitemap_rules: C{(pattern, callback)} pairs; a page goes to the first whose
        pattern matches its URL; the callback is a method name or a callable.
    @cvar sitemap_follow: patterns of the sitemap index entries to follow.
    @cvar sitemap_alternate_links: also crawl each entry's C{<xhtml:link>} alternates.
    """

    sitemap_urls = ()
    sitemap_rules = [("", "parse")]
    sitemap_follow = [""]
    sitemap_alternate_links = False

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._cbs = []
        for pattern, callback in self.sitemap_rules:
            if isinstance(callback, str):
                callback = getattr(self, callback)
            self._cbs.append((_regex(pattern), callback))
        self._follow = [_regex(pattern) for pattern in self.sitemap_follow]

    def start_requests(self):
        """One request per C{sitemap_urls} entry, read by L{_parse_sitemap}."""
        for url in self.sitemap_urls:
            yield Request(url, callback=self._parse_sitemap)

    def sitemap_filter(self, entries):
        """Override to choose entries (dicts with C{loc}, C{lastmod}, C{alternate}, ...)
        before they are followed or crawled; yield those to keep."""
        yield from entries

    def _parse_sitemap(self, response):
        """A robots.txt, a sitemap index or a sitemap: the requests it leads to."""
        if response.url.endswith("/robots.txt"):
            for url in sitemap_urls_from_robots(response.text, base_url=response.url):
                yield Request(url, callback=self._parse_sitemap)
            return
        body = self._get_sitemap_body(response)
        if body is None:
            return
        try:
            sitemap = Sitemap(body)
        except ValueError:
            self._ignore(response, "not XML")
            return
        entries = self.sitemap_filter(sitemap)
        if sitemap.type == "sitemapindex":
            for loc in locations(entries, self.sitemap_alternate_links):
                if any(pattern.search(loc) for pattern in self._follow):
                    yield Request(loc, callback=self._parse_sitemap)
        elif sitemap.type == "urlset":
            for loc in locations(entries, self.sitemap_alternate_links):
                for pattern, callback in self._cbs:
                    if pattern.search(loc):
                        yield Request(loc, callback=callback)
                        break

    def _get_sitemap_body(self, response):
        """
        The sitemap's XML: a gzip body decompressed (within the size limit), an XML
        response's body, or the body of a C{.xml} / C{.xml.gz} URL (already decoded by
        the downloader when it came with C{Content-Encoding: gzip}).

        @return: bytes, or None when the response is not a sitemap (logged and counted).
        """
        body = response.body
        if body[:3] == GZIP_MAGIC:
            max_size, warn_size = self._size_limits(response)
            ratio, grace = self._ratio_limits()
            try:
                unzipped = gunzip(body, max_size, max_ratio=ratio, grace=grace)
            except SizeExceeded as e:
                self._ignore(response, str(e), "too_large")
                return None
            except Exception as e:  # zlib.error, EOFError: gzip in name only
                self._ignore(response, f"bad gzip data ({e})")
                return None
            if warn_size and len(body) < warn_size <= len(unzipped):
                logger.warning("%s: the sitemap is %d bytes once decompressed, more than "
                               "the warning size (%d bytes)", response.url, len(unzipped),
                               warn_size)
            return unzipped
        content_type = response.headers.get("Content-Type") or ""
        if isinstance(content_type, bytes):
            content_type = content_type.decode("latin-1")
        path = response.url.split("?", 1)[0].split("#", 1)[0]
        if "xml" in content_type.lower() or path.endswith((".xml", ".xml.gz")):
            return body
        self._ignore(response, f"not a sitemap (Content-Type {content_type or 'missing'})")
        return None

    def _size_limits(self, response):
        """(max size, warn size) for decompressing: the request's meta, then the spider's
        attributes, then the settings."""
        settings = self.settings
        max_size = getattr(self, "download_maxsize", None)
        warn_size = getattr(self, "download_warnsize", None)
        if max_size is None:
            max_size = settings.getint("DOWNLOAD_MAXSIZE") if settings is not None else 0
        if warn_size is None:
            warn_size = settings.getint("DOWNLOAD_WARNSIZE") if settings is not None else 0
        meta = response.meta
        return meta.get("download_maxsize", max_size), meta.get("download_warnsize", warn_size)

    def _ratio_limits(self):
        """(DOWNLOAD_MAXRATIO, DOWNLOAD_MAXRATIO_GRACE): the bound page bodies have."""
        settings = self.settings
        if settings is None:
            return 100.0, 1 << 20
        return (settings.getfloat("DOWNLOAD_MAXRATIO", 100.0),
                settings.getint("DOWNLOAD_MAXRATIO_GRACE", 1 << 20))

    def _ignore(self, response, why, kind="invalid"):
        """Count and log (once, with the URL) a sitemap that cannot be read."""
        if self.crawler is not None:
            self.crawler.stats.inc_value(f"sitemap/ignored_{kind}")
        logger.warning("Ignoring invalid sitemap %s: %s", response.url, why)
