"""
L{XmlRpcRequest}: a crawl calls a real XML-RPC server (twisted.web's) and reads its answer.
"""

import xmlrpc.client

from twisted.internet import defer
from twisted.trial import unittest
from twisted.web import xmlrpc as txmlrpc

from tinyscrapy import Spider
from tinyscrapy.http import XmlRpcRequest

from .helpers import crawl, serve


class Calculator(txmlrpc.XMLRPC):
    """An XML-RPC endpoint with one method."""

    def xmlrpc_add(self, a, b):
        return a + b

    def xmlrpc_greet(self, name):
        return f"hello {name}"


class Caller(Spider):
    """Calls C{add} three times and C{greet} once on one endpoint URL; keeps the answers."""

    name = "caller"
    endpoint = None

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.answers = []

    def start_requests(self):
        for a in (1, 2, 2):
            yield XmlRpcRequest(self.endpoint, params=(a, 10), methodname="add")
        yield XmlRpcRequest(self.endpoint, params=("Zoë",), methodname="greet",
                            encoding="latin-1")

    def parse(self, response):
        (answer,), _ = xmlrpc.client.loads(response.body)
        self.answers.append(answer)


class XmlRpcRequestTests(unittest.TestCase):
    """The request as Scrapy's XmlRpcRequest builds it."""

    def test_defaults(self):
        """POST, text/xml, dont_filter, and the body xmlrpc.client.dumps makes."""
        request = XmlRpcRequest("http://rpc.example/", params=("u", "p"), methodname="login")
        self.assertEqual(request.method, "POST")
        self.assertEqual(request.headers.get("Content-Type"), b"text/xml")
        self.assertTrue(request.dont_filter)
        self.assertEqual(request.body,
                         xmlrpc.client.dumps(("u", "p"), methodname="login").encode())

    def test_encoding_and_options(self):
        """encoding reaches both dumps and the request; allow_none is dumps'."""
        request = XmlRpcRequest("http://rpc.example/", params=("pas£",), encoding="latin1")
        self.assertEqual(request.encoding, "latin1")
        self.assertEqual(request.body, xmlrpc.client.dumps(("pas£",), encoding="latin1")
                         .encode("latin1"))
        self.assertRaises(TypeError, XmlRpcRequest, "http://rpc.example/", params=(None,))
        none = XmlRpcRequest("http://rpc.example/", params=(None,), allow_none=True)
        self.assertIn(b"<nil/>", none.body)

    def test_explicit_choices_win(self):
        """A given method, dont_filter or body is kept."""
        request = XmlRpcRequest("http://rpc.example/", body=b"<x/>", method="PUT",
                                dont_filter=False)
        self.assertEqual((request.method, request.body, request.dont_filter),
                         ("PUT", b"<x/>", False))


class XmlRpcCrawlTests(unittest.TestCase):
    """Calls to a real XML-RPC server."""

    def setUp(self):
        self.server = serve(self)

    @defer.inlineCallbacks
    def test_calls_answered(self):
        """Every call reaches the server, repeated ones too (dont_filter), and answers."""
        endpoint = self.server.add("/RPC2", Calculator())
        crawler = yield crawl(Caller, endpoint=endpoint)
        self.assertEqual(sorted(crawler.spider.answers, key=str),
                         [11, 12, 12, "hello Zoë"])
        self.assertEqual(self.server.hits["/RPC2"], 4)
