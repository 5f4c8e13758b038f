"""
The objects a crawl is made of, at Scrapy's path C{scrapy.http}: L{Request} and its kinds
L{FormRequest}, L{JsonRequest} and L{XmlRpcRequest}; L{Response} and its kinds L{TextResponse},
L{HtmlResponse}, L{XmlResponse} and L{JsonResponse}, with C{HttpResponse}, TinyScrapy's
name for any of them (L{tinyscrapy.http.response}); L{Headers}.

This module only re-exports, each name on first use (L{__getattr__}): the kernel imports
C{tinyscrapy.http.request} without loading the responses' selectors or the form parser.
"""

import importlib

_WHERE = {
    "Headers": "tinyscrapy.http.headers",
    "Request": "tinyscrapy.http.request",
    "FormRequest": "tinyscrapy.http.request.form",
    "JsonRequest": "tinyscrapy.http.request.json_request",
    "XmlRpcRequest": "tinyscrapy.http.request.rpc",
    "Response": "tinyscrapy.http.response",
    "HttpResponse": "tinyscrapy.responsetypes",
    "NotTextResponse": "tinyscrapy.http.response",
    "response_for": "tinyscrapy.responsetypes",
    "TextResponse": "tinyscrapy.http.response.text",
    "HtmlResponse": "tinyscrapy.http.response.html",
    "XmlResponse": "tinyscrapy.http.response.xml",
    "JsonResponse": "tinyscrapy.http.response.json",
}

__all__ = sorted(_WHERE)


def __getattr__(name):
    """A public name of C{tinyscrapy.http}, imported on first use."""
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'tinyscrapy.http' has no attribute {name!r}")
    return getattr(importlib.import_module(where), name)
