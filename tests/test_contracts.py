"""
Spider contracts (C{tinyscrapy.contracts}) and the C{check} command: the sample request
a callback's docstring makes, each check reported as a test, and C{check}'s output and exit
status against a real server.
"""

import os
import textwrap
import unittest as pyunit
import warnings

from twisted.internet import defer, reactor
from twisted.python.failure import Failure
from twisted.trial import unittest

from tinyscrapy import Request, Spider
from tinyscrapy.contracts import Contract, ContractsManager
from tinyscrapy.contracts.default import (
    BodyContract,
    CallbackKeywordArgumentsContract,
    CookieContract,
    HeaderContract,
    MetadataContract,
    MethodContract,
    ReturnsContract,
    ScrapesContract,
    UrlContract,
)
from tinyscrapy.exceptions import ScrapyDeprecationWarning
from tinyscrapy.http.response.html import HtmlResponse

from .helpers import crawl, run_command, serve

DEFAULTS = [UrlContract, CallbackKeywordArgumentsContract, MetadataContract, MethodContract,
            BodyContract, HeaderContract, CookieContract, ReturnsContract, ScrapesContract]


class Shop(Spider):
    name = "shop"

    def books(self, response):
        """
        @url http://127.0.0.1/books
        @returns items 2 2
        @returns requests 1
        @scrapes title price
        """
        yield {"title": "a", "price": 1}
        yield {"title": "b", "price": 2}
        yield Request("http://127.0.0.1/next")

    def shaped(self, response, page):
        """
        @url http://127.0.0.1/form
        @method POST
        @body q=books&page=2
        @header X-Test one two
        @cookie session abc
        @meta {"key": "value"}
        @cb_kwargs {"page": 2}
        @ scrapy is great (not a contract)
        """
        return {"page": page, "key": response.meta["key"]}

    def no_url(self, response):
        """
        @returns items 1
        """

    def too_few(self, response):
        """
        @url http://127.0.0.1/few
        @returns items 3
        @scrapes title price
        """
        return [{"title": "x"}]

    def raises(self, response):
        """
        @url http://127.0.0.1/raises
        """
        raise ValueError("broken callback")

    def not_async_def(self, response):
        """
        @url http://127.0.0.1/coro
        @returns items 1
        """
        return self.an_async_one(response)

    async def an_async_one(self, response):
        """
        @url http://127.0.0.1/async
        @returns items 1 1
        """
        yield {"title": "async"}


def respond(request):
    """Answer C{request} as a server would, and run its (wrapped) callback."""
    response = HtmlResponse(request.url, body=b"<html></html>", request=request)
    return request.callback(response, **request.cb_kwargs)


class ContractsManagerTests(unittest.TestCase):
    """The sample requests, and each check reported to a unittest result."""

    def setUp(self):
        self.manager = ContractsManager(DEFAULTS)
        self.results = pyunit.TestResult()
        self.spider = Shop()

    def request(self, name):
        return self.manager.from_method(getattr(self.spider, name), self.results)

    def test_tested_methods(self):
        """The callables whose docstring has a contract line, by name."""
        self.assertEqual(self.manager.tested_methods_from_spidercls(Shop),
                         ["an_async_one", "books", "no_url", "not_async_def", "raises",
                          "shaped", "too_few"])

    def test_passing_contracts(self):
        """@returns and @scrapes that hold: successes only; the output goes no further."""
        request = self.request("books")
        self.assertTrue(request.dont_filter)
        self.assertIsNone(respond(request))
        self.assertEqual((self.results.testsRun, self.results.failures, self.results.errors),
                         (3, [], []))

    def test_request_contracts(self):
        """@method, @body, @header, @cookie, @meta and @cb_kwargs shape the request; a
        line whose @ is not followed by a word is not a contract."""
        request = self.request("shaped")
        self.assertEqual((request.method, request.body), ("POST", b"q=books&page=2"))
        self.assertEqual(request.headers.get("X-Test"), b"one two")
        self.assertEqual(request.cookies, {"session": "abc"})
        self.assertEqual(request.meta["key"], "value")
        self.assertEqual(request.cb_kwargs, {"page": 2})
        respond(request)
        self.assertEqual((self.results.failures, self.results.errors), ([], []))

    def test_no_url_no_request(self):
        """A callback without @url is not tried."""
        self.assertIsNone(self.request("no_url"))

    def test_failing_contracts(self):
        """A @returns out of bounds and a missing field: failures with Scrapy's words."""
        respond(self.request("too_few"))
        messages = [text for _, text in self.results.failures]
        self.assertEqual(len(messages), 2)
        self.assertIn("ContractFail: Returned 1 items, expected 3..inf", messages[0])
        self.assertIn("ContractFail: Missing fields: price", messages[1])
        self.assertEqual(str(self.results.failures[0][0]), "[shop] too_few (@returns post-hook)")

    def test_callback_error(self):
        """A callback that raises is an error of the callback, not a crash."""
        respond(self.request("raises"))
        self.assertEqual(len(self.results.errors), 1)
        case, text = self.results.errors[0]
        self.assertEqual(str(case), "[shop] raises (callback)")
        self.assertIn("ValueError: broken callback", text)

    def test_errback_is_an_error(self):
        """A download that failed is an error of the errback."""
        request = self.request("books")
        request.errback(Failure(ConnectionError("refused")))
        self.assertEqual(str(self.results.errors[0][0]), "[shop] books (errback)")

    def test_coroutine_from_a_plain_callback(self):
        """A plain callback that returns a coroutine is an error: its checks cannot wait."""
        respond(self.request("not_async_def"))
        self.assertIn("must be defined with async def", self.results.errors[0][1])

    @defer.inlineCallbacks
    def test_async_generator_callback(self):
        """An async generator callback is awaited and its output checked."""
        yield defer.ensureDeferred(respond(self.request("an_async_one")))
        self.assertEqual((self.results.testsRun, self.results.failures, self.results.errors),
                         (1, [], []))

    def test_returns_arguments(self):
        """@returns needs 1 to 3 words and a kind it knows; its bounds default to 1..inf."""
        contract = ReturnsContract(self.spider.books, "items")
        self.assertEqual((contract.min_bound, contract.max_bound), (1, float("inf")))
        error = self.assertRaises(ValueError, ReturnsContract, self.spider.books)
        self.assertIn("expected 1, 2 or 3, got 0", str(error))
        self.assertRaises(ValueError, ReturnsContract, self.spider.books, "pages")

    def test_unknown_contract_is_an_error(self):
        """A @name no contract has is reported as an error of the contract, naming it."""

        class Typo(Spider):
            name = "typo"

            def parse(self, response):
                """
                @url http://127.0.0.1/
                @retruns items 1
                """

        requests = self.manager.from_spider(Typo(), self.results)
        self.assertEqual(requests, [])
        self.assertIn("unknown contract @retruns", self.results.errors[0][1])

    def test_custom_contract(self):
        """A contract of one's own: its request class, arguments and pre-hook."""
        seen = []

        class Tagged(Request):
            pass

        class Tag(Contract):
            name = "tag"
            request_cls = Tagged

            def adjust_request_args(self, args):
                args["meta"] = {"tag": self.args[0]}
                return args

            def pre_process(self, response):
                seen.append(response.meta["tag"])

        class Custom(Spider):
            name = "custom"

            def parse(self, response):
                """
                @url http://127.0.0.1/
                @tag blue
                """

        (request,) = ContractsManager([UrlContract, Tag]).from_spider(Custom(), self.results)
        self.assertIsInstance(request, Tagged)
        respond(request)
        self.assertEqual(seen, ["blue"])
        self.assertTrue(self.results.wasSuccessful())

    def test_overriding_a_hook_is_deprecated(self):
        """A contract that overrides add_pre_hook is warned about."""

        class Legacy(Contract):
            name = "legacy"

            def add_pre_hook(self, request, results):
                return request

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ContractsManager([Legacy])
        self.assertEqual([w.category for w in caught], [ScrapyDeprecationWarning])
        self.assertIn("overrides Contract.add_pre_hook()", str(caught[0].message))

    @defer.inlineCallbacks
    def test_crawled_for_real(self):
        """Two callbacks with the same @url are both tried in a real crawl (the sample
        requests are not filtered as duplicates)."""
        server = serve(self)
        url = server.add_page("/", title="page")
        manager, results = self.manager, self.results

        class Twice(Spider):
            name = "twice"
            visited = []

            async def start(self):
                for request in manager.from_spider(self, results):
                    yield request

            def first(self, response):
                self.visited.append("first")
                return {"title": response.css("title::text").get()}

            def second(self, response):
                self.visited.append("second")
                return {"title": response.css("title::text").get()}

        doc = f"@url {url}\n@returns items 1 1\n@scrapes title"
        Twice.first.__doc__ = Twice.second.__doc__ = doc
        yield crawl(Twice)
        self.assertEqual(sorted(Twice.visited), ["first", "second"])
        self.assertEqual((results.testsRun, results.failures, results.errors), (4, [], []))


SPIDER = '''
import os

import tinyscrapy


class Pipeline:
    def open_spider(self, spider):
        open("pipeline-opened", "w").close()

    def process_item(self, item):
        return item


class BooksSpider(tinyscrapy.Spider):
    name = "books"
    custom_settings = {{"ITEM_PIPELINES": {{Pipeline: 100}},
                        "FEEDS": {{"items.jsonl": {{"format": "jsonlines"}}}}}}

    def parse(self, response):
        """
        @url {url}
        @returns items 1 1
        @returns requests 1
        @scrapes title check
        """
        yield {{"title": response.css("title::text").get(),
               "check": os.environ.get("SCRAPY_CHECK"), "who": getattr(self, "who", None)}}
        yield response.follow("/next")

    def parse_failing(self, response):
        """
        @url {url}
        @returns items 2
        """
        yield {{"title": "one"}}


class NoContracts(tinyscrapy.Spider):
    name = "plain"

    def parse(self, response):
        pass
'''


class CheckCommandTests(unittest.TestCase):
    """python -m tinyscrapy check in a project, against a real server."""

    def setUp(self):
        self.server = serve(self)
        self.url = self.server.add_page("/", title="home", links=["/next"])
        self.project = os.path.abspath(self.mktemp())
        os.makedirs(os.path.join(self.project, "shop", "spiders"))
        files = {"tinyscrapy.cfg": "[settings]\ndefault = shop.settings\n",
                 "shop/__init__.py": "", "shop/spiders/__init__.py": "",
                 "shop/settings.py": 'SPIDER_MODULES = ["shop.spiders"]\n',
                 "shop/spiders/books.py": SPIDER.format(url=self.url)}
        for name, text in files.items():
            with open(os.path.join(self.project, name), "w") as f:
                f.write(textwrap.dedent(text))

    def check(self, *args):
        return run_command(reactor, ["check", *args], cwd=self.project)

    @defer.inlineCallbacks
    def test_list(self):
        """check -l lists each spider's tested callbacks (-v: the untested spiders too)."""
        code, out, err = yield self.check("-l")
        self.assertEqual((code, out), (0, "books\n  * parse\n  * parse_failing\n"), err)
        code, out, err = yield self.check("-l", "-v")
        self.assertEqual(out, "books\n  * parse\n  * parse_failing\nplain\n")

    @defer.inlineCallbacks
    def test_failing_contract(self):
        """A contract that fails: F, its message, FAILED (failures=1), exit 1; nothing
        reaches the pipelines or the feeds of the spider's settings."""
        code, out, err = yield self.check()
        self.assertEqual(code, 1, err)
        self.assertEqual(out, "")
        self.assertIn("FAIL: [books] parse_failing (@returns post-hook)", err)
        self.assertIn("ContractFail: Returned 1 items, expected 2..inf", err)
        self.assertIn("Ran 4 contracts in", err)
        self.assertIn("FAILED (failures=1)", err)
        self.assertFalse(os.path.exists(os.path.join(self.project, "pipeline-opened")))
        self.assertFalse(os.path.exists(os.path.join(self.project, "items.jsonl")))

    @defer.inlineCallbacks
    def test_passing_contracts(self):
        """Only the passing spider's callback (a -a argument and SCRAPY_CHECK set): OK,
        exit 0; -v names each check."""
        with open(os.path.join(self.project, "shop", "spiders", "books.py"), "a") as f:
            f.write(textwrap.dedent(f'''
                class Checked(BooksSpider):
                    name = "checked"
                    parse_failing = None

                    def parse(self, response):
                        """
                        @url {self.url}
                        @returns items 1 1
                        """
                        if self.who == "me" and os.environ.get("SCRAPY_CHECK") == "true":
                            yield {{"title": "ok"}}
                '''))
        code, out, err = yield self.check("checked", "-a", "who=me", "-v")
        self.assertEqual(code, 0, err)
        self.assertIn("[checked] parse (@returns post-hook) ... ok", err)
        self.assertIn("Ran 1 contract in", err)
        self.assertTrue(err.rstrip().endswith("OK"), err)

    @defer.inlineCallbacks
    def test_unreachable_url_is_an_error(self):
        """A sample request that cannot be downloaded is an error of the errback."""
        self.server.add_page("/", status=500)
        code, _, err = yield self.check("books", "-s", "RETRY_ENABLED=False")
        self.assertEqual(code, 1, err)
        self.assertIn("ERROR: [books] parse (errback)", err)
        self.assertIn("FAILED (errors=2)", err)

    @defer.inlineCallbacks
    def test_dropped_sample_request_is_an_error(self):
        """A sample request the crawl drops before its download (offsite) is an error,
        not a silent OK."""
        with open(os.path.join(self.project, "shop", "spiders", "books.py"), "a") as f:
            f.write(textwrap.dedent(f'''
                class Elsewhere(tinyscrapy.Spider):
                    name = "elsewhere"
                    allowed_domains = ["shop.example"]

                    def parse(self, response):
                        """
                        @url {self.url}
                        @returns items 1
                        """
                '''))
        code, _, err = yield self.check("elsewhere")
        self.assertEqual(code, 1, err)
        self.assertIn("ERROR: [elsewhere] parse (request)", err)
        self.assertIn("the @url request of parse was not downloaded", err)
        self.assertEqual(self.server.hits, {})
