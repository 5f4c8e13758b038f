"""
The objects a crawl is made of, at Scrapy's path C{scrapy.http}: L{Request} and its kinds
L{FormRequest}, L{JsonRequest} and L{XmlRpcRequest}; L{Response} and its kinds L{TextResponse},
L{HtmlResponse}, L{XmlResponse} and L{JsonResponse}, with C{HttpResponse}, TinyScrapy's
name for any of them (L{tinyscrapy.http.response}); L{Headers}.

This module only re-exports; L{XmlRpcRequest} (L{tinyscrapy.http.xmlrpc}) is imported on
first use, as C{xmlrpc.client} costs some 3 ms of start-up that few crawls need.
"""

from tinyscrapy.http.form import FormRequest
from tinyscrapy.http.headers import Headers
from tinyscrapy.http.jsonrequest import JsonRequest
from tinyscrapy.http.request import Request
from tinyscrapy.http.response import HttpResponse, NotTextResponse, Response, response_for
from tinyscrapy.http.textresponse import HtmlResponse, JsonResponse, TextResponse, XmlResponse

__all__ = ["FormRequest", "Headers", "HtmlResponse", "HttpResponse", "JsonRequest",
           "JsonResponse", "NotTextResponse", "Request", "Response", "TextResponse",
           "XmlResponse", "XmlRpcRequest", "response_for"]


def __getattr__(name):
    """C{tinyscrapy.http.XmlRpcRequest}, imported on first use."""
    if name == "XmlRpcRequest":
        from tinyscrapy.http.xmlrpc import XmlRpcRequest
        return XmlRpcRequest
    raise AttributeError(f"module 'tinyscrapy.http' has no attribute {name!r}")
