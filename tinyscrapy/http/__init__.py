"""
The objects a crawl is made of, at Scrapy's path C{scrapy.http}: L{Request} and its kinds
(L{tinyscrapy.http.request}), L{HttpResponse} (L{tinyscrapy.http.response}) and
L{Headers} (L{tinyscrapy.http.headers}).

This module only re-exports.
"""

from tinyscrapy.http.headers import Headers
from tinyscrapy.http.request import FormRequest, JsonRequest, Request
from tinyscrapy.http.response import HttpResponse, NotTextResponse

__all__ = ["FormRequest", "Headers", "HttpResponse", "JsonRequest", "NotTextResponse",
           "Request"]
