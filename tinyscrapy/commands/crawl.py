"""
C{crawl URL [URL ...]}: follow same-site links from URLs, one item per page, no code; inside
a project, C{crawl NAME} runs the project's spider of that name, as Scrapy's C{crawl} does.

L{SiteCrawler} is the spider behind C{crawl URL ...}. Unlike Scrapy's C{crawl}, which
takes a spider's name, it takes URLs and needs no code: from each start URL it follows
every link that stays on the origin (scheme, host and port) of the page it was found on,
and records one item per page: C{url}, C{status}, C{title}, C{depth} and
C{redirect_urls}.

HTTP redirects are followed (a start URL C{/} that redirects to C{/en/} is crawled from
C{/en/}): the item is the page the chain ended on, its C{url} the final URL and its
C{redirect_urls} the URLs before it (empty when there was no redirect). Every other status,
404 and 500 included, is recorded as an item too, and a 3xx that is not followed (no
C{Location}, or C{REDIRECT_ENABLED} off) is recorded as it is.

L{check_start_url} refuses, before anything starts, a start URL that cannot be fetched in
principle: not http or https, malformed, or a bare word (for which it suggests C{run NAME}
when a spider of that name is in C{./spiders}).

It is a polite crawler by default (C{command_settings}, below a user's C{-s}): it obeys
robots.txt, and stops at depth 20 (as Heritrix's default C{maxHops}) so that an endless
calendar or a session id in every link cannot keep it going for ever. Links are found by
a L{LinkExtractor} (so C{<base href>} counts, and images, archives, media and other files
that are not pages are never fetched), and followed with C{follow_all}, whose early
duplicate check drops links already seen before any Request is made. Its
C{allowed_domains} are the hosts of the start URLs, so a redirect cannot take it off the
site either.

Its spider is always named C{crawl}, so with C{--scheduler redis://} it names its shared
crawl by its start URLs (L{SiteCrawler.frontier_key}): processes started with the same
URLs share one crawl, others do not.
"""

import hashlib
import os
from urllib.parse import urlsplit

from tinyscrapy.commands import BaseRunSpiderCommand, spider_loader
from tinyscrapy.downloadermiddlewares.redirect import REDIRECT_CODES
from tinyscrapy.exceptions import HttpError, UsageError
from tinyscrapy.http.request import Request
from tinyscrapy.http.response.html import compiled_xpath
from tinyscrapy.linkextractors.lxmlhtml import LinkExtractor
from tinyscrapy.spiders import Spider
from tinyscrapy.utils.url import url_origin


class Command(BaseRunSpiderCommand):
    """C{crawl URL ...} (L{SiteCrawler}); in a project, C{crawl NAME ...}, Scrapy's."""

    def syntax(self):
        return "[options] <URL|spider> [...]"

    def short_desc(self):
        return "Follow same-host links from URLs, no code (in a project: crawl a spider)"

    def long_desc(self):
        return ("Crawl a site without writing a spider: from each URL, follow every link that "
                "stays on the same origin (scheme, host and port), follow redirects, and "
                "record one item per page (url, status, title, depth, redirect_urls), 404s "
                "and 500s included. robots.txt is obeyed and the depth limit is 20 (override "
                "with -s). It takes http or https URLs; a URL that cannot be fetched is a "
                "usage error (exit 2). Exit 1 when no start URL could be fetched at all. "
                "Inside a project (tinyscrapy.cfg), crawl NAME runs the project's spider "
                "NAME, as Scrapy's crawl does.")

    def run(self, args, opts):
        from tinyscrapy.utils.project import inside_project
        if not args:
            raise UsageError()
        if inside_project() and not any("://" in url for url in args):
            from tinyscrapy.spiderloader import resolve_spider
            loader = spider_loader(self)
            self.exitcode = self.crawl([resolve_spider(name, loader) for name in args],
                                       opts.spargs)
            return
        for url in args:
            check_start_url(url)
        self.settings.update(SiteCrawler.command_settings, "project")
        self.exitcode = self.crawl([SiteCrawler], opts.spargs,
                                   extra_args={"start_urls": list(args)})


class SiteCrawler(Spider):
    """Follow same-origin links; one item per page."""

    name = "crawl"
    # settings the crawl command applies (a user's -s still wins)
    command_settings = {"ROBOTSTXT_OBEY": True, "DEPTH_LIMIT": 20}
    # every status reaches parse but the redirects, which the redirect middleware follows
    handle_httpstatus_list = tuple(code for code in range(300, 600)
                                   if code not in REDIRECT_CODES)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.allowed_domains:
            self.allowed_domains = _start_domains(self.start_urls)
        self.links = LinkExtractor(unique=False)  # follow_all drops the repeats

    def frontier_key(self):
        """The key prefix of this crawl in a shared frontier: C{tinyscrapy:crawl:} and
        the first 12 hex digits of the SHA-1 of the sorted start URLs."""
        digest = hashlib.sha1("\n".join(sorted(self.start_urls)).encode()).hexdigest()
        return f"tinyscrapy:{self.name}:{digest[:12]}:"

    def start_requests(self):
        for url in self.start_urls:
            yield Request(url, callback=self.parse, errback=self.record_refused)

    def parse(self, response):
        request = response.request
        meta = request._meta
        yield {
            "url": response.url,
            "status": response.status,
            "title": self._title(response),
            "depth": request.depth,
            "redirect_urls": list(meta.get("redirect_urls", ())) if meta else [],
        }
        if response.status >= 300 or not response.is_text:
            return
        origin = url_origin(response.url)
        prefix = origin + "/"
        urls = [url for url in self.links.extract_urls(response)
                if url.startswith(prefix) or url_origin(url) == origin]
        yield from response.follow_all(urls, callback=self.parse, errback=self.record_refused)

    def record_refused(self, failure):
        """A redirect status that was not followed (no C{Location}, redirects off) is a
        page too: record it, without following its links. Other failures are in the
        stats and the log already."""
        if failure.check(HttpError):
            yield from self.parse(failure.value.response)

    @staticmethod
    def _title(response):
        if not response.is_text:
            return None
        # string(//title), the first <title> in document order: the head's when it has
        # one (found without walking the page), else any other
        root = response.root
        title = compiled_xpath("string(/html/head/title)")(root) \
            or compiled_xpath("string(//title)")(root)
        return title.strip() or None


def _start_domains(urls):
    """
    The C{allowed_domains} of a site crawl: each start URL's host with its port (when the
    URL names one), and the host without C{www.} too, since sites redirect between them.
    """
    domains = []
    for url in urls:
        origin = url_origin(url)
        if origin is None:
            continue
        host_port = origin.partition("://")[2]
        if host_port.startswith("["):  # IPv6: the offsite filter compares it unbracketed
            host_port = host_port[1:].replace("]", "", 1)
        domains.append(host_port)
        if host_port.startswith("www."):
            domains.append(host_port[4:])
    return domains


def check_start_url(url):
    """
    Refuse a start URL that cannot be fetched in principle, before anything starts.

    @raise UsageError: C{url} is not an http or https URL with a host (a bare word gets a
        hint: C{run NAME} when a spider of that name is in C{./spiders}, else the URL it
        may have meant).
    """
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises ValueError for a port that is not a number in range)
    except ValueError as e:
        raise UsageError(f"crawl: {url!r} is not a valid URL ({e})") from None
    scheme = parts.scheme.lower()
    if not scheme and not parts.netloc:
        raise UsageError(f"crawl: {url!r} is not a URL: {_bare_word_hint(url)}")
    if scheme not in ("http", "https"):
        raise UsageError(f"crawl: cannot fetch {url!r}: only http and https URLs are crawled")
    if not parts.hostname:
        raise UsageError(f"crawl: {url!r} has no host")


def _bare_word_hint(word):
    """What a bare word on the C{crawl} command line probably meant."""
    if word in _project_spider_names():
        return f"did you mean `run {word}`? (crawl takes URLs; run takes spider names)"
    return f"crawl takes URLs, such as http://{word.strip('/')}/"


def _project_spider_names():
    """The names of the spiders in C{./spiders}, or an empty set when there is none (or
    one does not import: the hint is not worth a second error)."""
    if not os.path.isdir("spiders"):
        return set()
    from tinyscrapy.spiderloader import find_spiders, load_spider_class
    try:
        return {load_spider_class(path).name for path in find_spiders()}
    except Exception:
        return set()
