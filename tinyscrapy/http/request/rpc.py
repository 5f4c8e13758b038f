"""
L{XmlRpcRequest}: a request that calls an XML-RPC method, as Scrapy's: the body is
C{xmlrpc.client.dumps(params, methodname=..., methodresponse=..., encoding=...,
allow_none=...)}, sent with POST (the protocol's only method) and C{Content-Type:
text/xml}, and C{dont_filter} is on by default, since one endpoint URL answers every call.
"""

import inspect
import xmlrpc.client

from tinyscrapy.http.request import Request

# the keyword arguments of xmlrpc.client.dumps (params, methodname, ...)
_DUMPS_ARGS = tuple(inspect.signature(xmlrpc.client.dumps).parameters)


class XmlRpcRequest(Request):
    """
    A L{Request} whose body is an XML-RPC call.

    @param params: the call's arguments (a tuple), or a L{xmlrpc.client.Fault}; with
        C{methodname} (the method called), C{methodresponse} (a response, not a call) and
        C{allow_none}, as C{xmlrpc.client.dumps} takes them. No C{params}: the body is
        C{body}, as for a plain L{Request}.
    @param encoding: the body's encoding (utf-8 by default), for C{dumps} and the request.
    """

    __slots__ = ()

    def __init__(self, *args, encoding=None, **kwargs):
        if "body" not in kwargs and "params" in kwargs:
            dumps = {name: kwargs.pop(name) for name in _DUMPS_ARGS if name in kwargs}
            if encoding is not None:
                dumps["encoding"] = encoding
            kwargs["body"] = xmlrpc.client.dumps(**dumps)
        kwargs.setdefault("method", "POST")
        kwargs.setdefault("dont_filter", True)
        if encoding is not None:
            kwargs["encoding"] = encoding
        super().__init__(*args, **kwargs)
        self.headers.setdefault("Content-Type", "text/xml")
