"""
L{CrawlSpider} and L{Rule}: Scrapy's spider that follows links by rules.

    class Shop(CrawlSpider):
        name = "shop"
        start_urls = ["http://127.0.0.1:8800/books/"]
        rules = (
            Rule(LinkExtractor(allow=r"/books/(category/|page-)")),    # follow, no item
            Rule(LinkExtractor(allow=r"/books/item/"), callback="parse_book"),
        )

        def parse_book(self, response):
            yield {"title": response.css("h1::text").get()}

Every response that reaches L{CrawlSpider.parse} (the start URLs) or a rule's request goes
through the same steps (Scrapy's C{_parse_response}): the callback's output first (for the
start URLs, L{CrawlSpider.parse_start_url}), then, when the rule follows, the requests for
the page's links. Each rule extracts its links in turn; a link goes to the first rule that
extracted it, and a page asks for each URL once.

The requests it makes keep to what a persistent or shared frontier can store: their
callback is the spider method C{_callback} (and C{_errback}), and the rule is found again
by its index in C{meta["rule"]}, as in Scrapy. So the requests work with C{--jobdir}, and
changing the order of the rules between a pause and a resume changes which rule a waiting
request belongs to.

Links are followed with L{HttpResponse.follow_all}, whose early duplicate check makes no
Request for a link the crawl has already seen.
"""

import copy
import logging
from types import GeneratorType

from tinyscrapy.exceptions import UsageError
from tinyscrapy.http.request import Request, request_url
from tinyscrapy.spiders import Spider
from tinyscrapy.utils.url import HTML_SPACE

logger = logging.getLogger(__name__)


class Rule:
    """
    How a L{CrawlSpider} treats one kind of link.

    @param link_extractor: a L{LinkExtractor} (or anything with C{extract_links(response)});
        None: C{LinkExtractor()}, every link.
    @param callback: called with each response of this rule's links (and C{**cb_kwargs});
        a callable or the name of a spider method. Its output is handled like any
        callback's. None: no callback.
    @param cb_kwargs: keyword arguments for C{callback}; a request's own C{cb_kwargs} (set by
        C{process_request}) are added to them.
    @param follow: apply the rules to this rule's responses too. Default: True when there
        is no callback, else False.
    @param process_links: called with the list of L{Link}s extracted from a response;
        returns the ones to follow (it may change them). A callable or a method name.
    @param process_request: called as C{process_request(request, response)} with each
        request of this rule; returns the request to make (this one, or another), or None
        to drop it. A callable or a method name.
    @param errback: called with the failure of a request of this rule (a failed download,
        or a status the spider does not handle); a callable or a method name.
    """

    def __init__(self, link_extractor=None, callback=None, cb_kwargs=None, follow=None,
                 process_links=None, process_request=None, errback=None):
        if link_extractor is None:
            from tinyscrapy.linkextractors.lxmlhtml import LinkExtractor
            link_extractor = LinkExtractor()
        self.link_extractor = link_extractor
        self.callback = callback
        self.errback = errback
        self.cb_kwargs = dict(cb_kwargs or {})
        self.process_links = process_links
        self.process_request = process_request
        self.follow = follow if follow is not None else not callback

    def _compile(self, spider, index):
        """
        A copy whose method names are bound to C{spider}'s methods.

        @param index: the rule's position in C{spider.rules}, for the error message.
        @raise UsageError: a name that is not a method of the spider (a typo), so that the
            command line stops at start with one line.
        """
        rule = copy.copy(self)
        for attribute in ("callback", "errback", "process_links", "process_request"):
            setattr(rule, attribute,
                    _method(spider, getattr(self, attribute), attribute, index))
        rule._extractor = rule.link_extractor
        if rule.process_links is None and getattr(rule._extractor, "unique", False) \
                and not getattr(rule._extractor, "canonicalize", True):
            # during a crawl, follow_all's early check drops the repeats of a page (by
            # canonical URL) already: the extractor's own pass would canonicalise every
            # link twice. Used only when the response has that check (response._seen).
            rule._extractor = copy.copy(rule._extractor)
            rule._extractor.unique = False
        return rule

    def __repr__(self):
        return (f"Rule({self.link_extractor!r}, callback={self.callback!r}, "
                f"follow={self.follow!r})")


class CrawlSpider(Spider):
    """
    A spider that follows links by its L{rules} (see the module docstring).

    Do not override L{parse}: it is what applies the rules to the start URLs. Give the
    start pages a callback of their own with L{parse_start_url}.

    @cvar rules: the L{Rule}s, in order of precedence.
    """

    rules = ()
    _follow_links = True  # CRAWLSPIDER_FOLLOW_LINKS, set by from_crawler

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        """The spider, following links by its rules unless C{CRAWLSPIDER_FOLLOW_LINKS} is
        False (then only the callbacks run, on the start URLs)."""
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider._follow_links = crawler.settings.getbool("CRAWLSPIDER_FOLLOW_LINKS", True)
        return spider

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if type(self).parse is not CrawlSpider.parse:
            logger.warning("%s overrides parse(), which a CrawlSpider uses to apply its "
                           "rules: the rules will not run on the start URLs; use "
                           "parse_start_url() instead", type(self).__name__)
        self._compile_rules()

    def _compile_rules(self):
        self._rules = [rule._compile(self, index) for index, rule in enumerate(self.rules)]

    def parse(self, response, **kwargs):
        """The start URLs' callback: L{parse_start_url}, then the rules' requests."""
        return self._parse_response(response, self.parse_start_url, kwargs, follow=True)

    def parse_start_url(self, response, **kwargs):
        """The start URLs' own output (items or requests); none by default."""
        return ()

    def process_results(self, response, results):
        """Called with each rule callback's output (and L{parse_start_url}'s); returns the
        output to use. The output unchanged by default."""
        return results

    # the callbacks of the rules' requests: methods, so a frontier can store them by name

    def _callback(self, response, **cb_kwargs):
        rule = self._rules[response.meta["rule"]]
        return self._parse_response(response, rule.callback, {**rule.cb_kwargs, **cb_kwargs},
                                    rule.follow)

    def _errback(self, failure):
        rule = self._rules[failure.request.meta["rule"]]
        if rule.errback is None:
            return None
        return rule.errback(failure)

    def _parse_response(self, response, callback, cb_kwargs, follow=True):
        """
        The callback's output, then (when C{follow}) the requests for the page's links.

        @return: a generator; or, when the callback returned a Deferred or is C{async def},
            a Deferred firing with a list.
        """
        result = callback(response, **cb_kwargs) if callback is not None else None
        if result is None or isinstance(result, (GeneratorType, list, tuple, dict, Request)):
            return self._chain(response, result, follow)
        # imported here: "import tinyscrapy" stays free of twisted.internet.defer
        import inspect

        from twisted.internet.defer import Deferred, ensureDeferred
        if inspect.isasyncgen(result):
            result = ensureDeferred(_collect_async(result))
        elif inspect.iscoroutine(result):
            result = ensureDeferred(result)
        if isinstance(result, Deferred):
            result.addCallback(self._cb_chain, response, follow)
            return result
        return self._chain(response, result, follow)

    def _cb_chain(self, result, response, follow):
        return list(self._chain(response, result, follow))

    def _chain(self, response, result, follow):
        if result is not None:
            yield from _iterate(self.process_results(response, result))
        if follow and self._follow_links:
            yield from self._requests_to_follow(response)

    def _requests_to_follow(self, response):
        """
        The requests for the links of C{response}, rule after rule. A URL goes to the first
        rule that extracted it (even if that rule's C{process_request} drops it), and a URL
        the crawl has seen gets no Request (L{HttpResponse.follow_all}). Only HTML pages
        are followed (L{HttpResponse.is_html}), as Scrapy follows only C{HtmlResponse}s.
        """
        if not response.is_html:
            return
        taken = set()
        early_check = getattr(response, "_seen", None) is not None
        for index, rule in enumerate(self._rules):
            extractor = rule._extractor if early_check else rule.link_extractor
            # each link keyed by the URL as its Request holds it (percent-encoded), not as
            # the link has it ("/p q.html", "/café.html", or made relative by
            # process_links); given so to follow_all, which neither joins nor encodes again
            keyed = [(_request_url(response, link), link)
                     for link in extractor.extract_links(response)]
            if taken:
                keyed = [(url, link) for url, link in keyed if url not in taken]
            if rule.process_links is not None:
                keyed = [(_request_url(response, link), link)
                         for link in rule.process_links([link for _, link in keyed])]
            by_url = {}
            for url, link in keyed:
                by_url.setdefault(url, link)
            taken.update(by_url)
            requests = response.follow_all(
                list(by_url), callback=self._callback,
                errback=self._errback if rule.errback is not None else None,
                meta={"rule": index})
            for request in requests:
                link = by_url.get(request.url)
                request.meta["link_text"] = link.text if link is not None else ""
                if rule.process_request is not None:
                    request = rule.process_request(request, response)
                    if request is None:
                        continue
                yield request


def _request_url(response, link):
    """The URL of the Request that C{response.follow(link)} makes."""
    url = link.url
    if not (url.startswith(("http://", "https://")) and "/." not in url):  # as follow_all
        url = response.urljoin(url.strip(HTML_SPACE))
    return request_url(url)


def _method(spider, value, attribute, index):
    """C{value} itself, or the method of C{spider} it names.
    @raise UsageError: C{spider} has no such method."""
    if not isinstance(value, str):
        return value
    method = getattr(spider, value, None)
    if not callable(method):
        name = getattr(spider, "name", None) or type(spider).__name__
        raise UsageError(f"rule {index} of spider {name!r}: {attribute} {value!r} is not a "
                         f"method of the spider")
    return method


def _iterate(result):
    """One output (an item, a Request) as it is; anything else iterable, item by item."""
    if isinstance(result, (Request, dict, str, bytes)) or not hasattr(result, "__iter__"):
        yield result
    else:
        yield from result


async def _collect_async(agen):
    return [each async for each in agen]
