"""Built-in downloader middleware: default request headers and the User-Agent."""

import tinyscrapy


class DefaultHeadersMiddleware:
    """
    Set C{DEFAULT_REQUEST_HEADERS} and C{User-Agent} on every request that lacks them.

    C{USER_AGENT} defaults to one naming tinyscrapy, its version and its project URL, so
    a site's operator can find out who is crawling.
    """

    def __init__(self, headers, user_agent):
        self.headers = list(headers.items())
        if user_agent:
            self.headers.append(("User-Agent", user_agent))

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        user_agent = settings.get("USER_AGENT") or (
            f"tinyscrapy/{tinyscrapy.__version__} (+{tinyscrapy.PROJECT_URL})")
        return cls(settings.getdict("DEFAULT_REQUEST_HEADERS"), user_agent)

    def process_request(self, request, spider):
        headers = request.headers
        for name, value in self.headers:
            if name not in headers:
                headers[name] = value
