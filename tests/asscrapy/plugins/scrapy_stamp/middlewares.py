from scrapy.exceptions import NotConfigured
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.url import url_is_from_any_domain


class StampMiddleware:
    """Sends X-Stamp (the STAMP_VALUE setting) to the hosts of STAMP_DOMAINS."""

    def __init__(self, value, domains):
        self.value = value
        self.domains = domains

    @classmethod
    def from_crawler(cls, crawler):
        value = crawler.settings.get("STAMP_VALUE")
        if not value:
            raise NotConfigured("no STAMP_VALUE")
        return cls(value, crawler.settings.getlist("STAMP_DOMAINS"))

    def process_request(self, request, spider):
        host = urlparse_cached(request).hostname
        if url_is_from_any_domain(f"http://{host}/", self.domains):
            request.headers["X-Stamp"] = self.value
