"""
L{DataURIDownloadHandler}: C{data:} URLs (RFC 2397), answered without a network, as
Scrapy's C{DATA} handler: the response's class from the media type, a text body decoded
by its C{charset}.
"""

from tinyscrapy.core.downloader.handlers.base import BaseDownloadHandler


class DataURIDownloadHandler(BaseDownloadHandler):
    """The C{data} scheme's handler (in C{DOWNLOAD_HANDLERS_BASE})."""

    async def download_request(self, request):
        """
        @return: (the coroutine's result) a response of status 200 whose C{Content-Type}
            is the URL's media type and parameters, its body the decoded data.
        @raise ValueError: the URL is not a valid C{data:} URL (w3lib's message).
        """
        from w3lib.url import parse_data_uri

        from tinyscrapy.responsetypes import response_for
        uri = parse_data_uri(request.url)
        content_type = uri.media_type
        for name, value in uri.media_type_parameters.items():
            content_type += f"; {name}={value}"
        return response_for(request.url, 200, {"Content-Type": content_type}, uri.data,
                            request)
