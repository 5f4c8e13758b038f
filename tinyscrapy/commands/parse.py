"""
C{parse URL [--spider NAME] [-c CALLBACK] [-d DEPTH]}: what a spider's callback yields
for one page, as Scrapy's C{parse} shows it: the items and the requests, printed on
stdout (with C{--verbose}, level by level); items go to no feed and no pipeline unless
C{-o}, C{-O} or C{--pipelines} ask.

The spider is C{--spider} (a name, or a dotted class path), else the project's spider
whose C{allowed_domains} cover the URL. The callback is C{--callback}, else with
C{--rules} the callback of the first C{CrawlSpider} rule whose links match the URL, else
C{parse}. Requests that a callback yields are followed, with their own callbacks, down to
C{--depth} levels. A spider, a callback or a rule that cannot be found is a usage error,
before anything is downloaded.
"""

import json

from tinyscrapy.commands import BaseRunSpiderCommand, spider_loader
from tinyscrapy.exceptions import UsageError

RECORDER = "tinyscrapy.commands.parse.ParseRecorder"


class Command(BaseRunSpiderCommand):
    """Scrapy's C{parse}."""

    def syntax(self):
        return "[options] <url>"

    def short_desc(self):
        return "Parse URL (using its spider) and print the results"

    def long_desc(self):
        return ("Download URL with the project's settings and print the items and the "
                "requests a spider's callback yields for it, as Scrapy's parse does (items go "
                "to no feed and no pipeline unless -o, -O or --pipelines). The spider is "
                "--spider, else the project's spider whose allowed_domains cover the URL; "
                "the callback is --callback, else with --rules the matching CrawlSpider "
                "rule's, else parse. Requests the callback yields are followed, with their "
                "own callbacks, down to --depth levels; --verbose prints each level.")

    def add_options(self, parser):
        super().add_options(parser)
        parser.add_argument("--spider", metavar="NAME",
                            help="the spider: a name, or a dotted class path (default: the "
                                 "project's spider for the URL's domain)")
        parser.add_argument("--pipelines", action="store_true",
                            help="send the items through the ITEM_PIPELINES too")
        parser.add_argument("--nolinks", action="store_true",
                            help="do not show the requests (links to follow)")
        parser.add_argument("--noitems", action="store_true", help="do not show the items")
        parser.add_argument("--nocolour", action="store_true",
                            help="do not colour the output with pygments")
        parser.add_argument("-r", "--rules", action="store_true",
                            help="take the callback from the CrawlSpider rule that matches "
                                 "the URL")
        parser.add_argument("-c", "--callback", metavar="NAME",
                            help="the spider method that parses the page (default: parse)")
        parser.add_argument("-m", "--meta", metavar="JSON",
                            help="meta for the first request, as a JSON object")
        parser.add_argument("--cbkwargs", metavar="JSON",
                            help="keyword arguments for the callback, as a JSON object")
        parser.add_argument("-d", "--depth", type=int, default=1, metavar="DEPTH",
                            help="how many levels of requests to follow (default: 1)")
        parser.add_argument("-v", "--verbose", action="store_true",
                            help="print each depth level one by one")

    def process_options(self, args, opts):
        """The run options, C{--meta} and C{--cbkwargs} read as JSON objects; no feed
        unless C{-o} or C{-O}.
        @raise UsageError: a value that is not a JSON object."""
        super().process_options(args, opts)
        if not (opts.output or opts.overwrite_output):
            self.settings.set("FEEDS", {}, "cmdline")
        opts.meta = _json_object(opts.meta, "-m/--meta", 'Example: --meta=\'{"foo" : "bar"}\'')
        opts.cbkwargs = _json_object(opts.cbkwargs, "--cbkwargs",
                                     'Example: --cbkwargs=\'{"foo" : "bar"}\'')

    def run(self, args, opts):
        from w3lib.url import is_url
        if len(args) != 1 or not is_url(args[0]):
            raise UsageError()
        url = args[0]
        if opts.depth < 1:
            raise UsageError(f"--depth must be 1 or more, got {opts.depth}")
        spidercls = _find_spider(self, url, opts.spider)
        callback = opts.callback or (_rule_callback(spidercls, url) if opts.rules else "parse")
        if not callable(getattr(spidercls, callback, None)):
            raise UsageError(f"Cannot find callback {callback!r} in spider: {spidercls.name} "
                             f"(--callback)")
        levels = {}
        parse_spider = _parse_spider_class(
            spidercls, url, callback, levels, opts,
            pipelines=opts.pipelines or bool(opts.output or opts.overwrite_output))
        middlewares = dict(self.settings.getdict("SPIDER_MIDDLEWARES"))
        middlewares[RECORDER] = 10_000  # nearest the spider: sees its output as it is
        self.settings.set("SPIDER_MIDDLEWARES", middlewares, "cmdline")
        self.exitcode = self.crawl([parse_spider], opts.spargs)
        _print_levels(levels, opts)


def _json_object(text, option, example):
    """C{text} read as a JSON object (None stays None). @raise UsageError: it is not one
    (Scrapy's message)."""
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise UsageError(f"Invalid {option} value, pass a valid json string to {option}. "
                         f"{example}", print_help=False)
    return value


def _find_spider(command, url, name):
    """
    The spider class: C{name} (C{--spider}: a name, or a dotted class path), else the
    spider whose C{allowed_domains} cover C{url}.

    @raise UsageError: there is no such spider, or none (or several) for C{url}.
    """
    from tinyscrapy.http.request import Request
    from tinyscrapy.spiderloader import resolve_spider
    loader = spider_loader(command)
    if name:
        try:
            return resolve_spider(name, loader)
        except UsageError as e:
            raise UsageError(f"Unable to find spider: {name} ({e})") from None
    names = loader.find_by_request(Request(url))
    if len(names) == 1:
        return loader.load(names[0])
    if not names:
        raise UsageError(f"Unable to find spider for: {url} (none lists its domain in "
                         f"allowed_domains): name one with --spider")
    raise UsageError(f"several spiders for {url} ({', '.join(names)}): choose one with "
                     "--spider")


def _rule_callback(spidercls, url):
    """
    C{--rules}: the callback name of the first C{CrawlSpider} rule whose link extractor
    matches C{url} (C{parse} for a rule without one).

    @raise UsageError: the spider has no rules, or none matches (Scrapy's messages).
    """
    rules = getattr(spidercls, "rules", None)
    if not rules:
        raise UsageError(f"No CrawlSpider rules found in spider {spidercls.name!r}, please "
                         f"specify a callback to use for parsing")
    for rule in rules:
        matches = getattr(rule.link_extractor, "matches", None)
        if matches is not None and matches(url):
            if not rule.callback:
                return "parse"
            return rule.callback if isinstance(rule.callback, str) else rule.callback.__name__
    raise UsageError(f"Cannot find a rule that matches {url!r} in spider: {spidercls.name}")


def _parse_spider_class(spidercls, url, callback, levels, opts, pipelines=False):
    """A subclass of C{spidercls} whose only start request is C{url} (with C{--meta} and
    C{--cbkwargs}), to C{callback}; what each level yields is recorded into C{levels}."""
    from tinyscrapy.http.request import Request

    def first_request(spider):
        return Request(url, callback=getattr(spider, callback), dont_filter=True,
                       meta=dict(opts.meta or {}, _parse_level=1),
                       cb_kwargs=dict(opts.cbkwargs or {}))

    def start_requests(self):
        yield first_request(self)

    async def start(self):
        yield first_request(self)

    return type(spidercls.__name__, (spidercls,), {
        "start_requests": start_requests, "start": start, "parse_levels": levels,
        "parse_max_depth": opts.depth, "parse_pipelines": pipelines,
        "__module__": spidercls.__module__, "__qualname__": spidercls.__qualname__,
    })


class ParseRecorder:
    """
    A spider middleware (nearest the spider) that records what each callback yields, by
    depth level, into the spider's C{parse_levels}: items are kept there and go no
    further (on to the pipelines and the feeds with C{--pipelines}, C{-o} or C{-O});
    requests go on only while their level is below the spider's C{parse_max_depth}.
    """

    def process_spider_output(self, response, result, spider):
        from tinyscrapy.http.request import Request
        level = response.request.meta.get("_parse_level", 1) if response.request else 1
        record = spider.parse_levels.setdefault(level, {"items": [], "requests": []})
        for element in result:
            if isinstance(element, Request):
                record["requests"].append(element)
                if level < spider.parse_max_depth:
                    element.meta["_parse_level"] = level + 1
                    yield element
            else:
                record["items"].append(element)
                if spider.parse_pipelines:
                    yield element


def _print_levels(levels, opts):
    """
    What Scrapy's C{parse} prints: with C{--verbose}, each level's items and requests;
    else the items of every level and the requests of the deepest, under the deepest
    level's number.
    """
    deepest = max(levels, default=0)
    if opts.verbose:
        for level in range(1, deepest + 1):
            record = levels.get(level, {"items": [], "requests": []})
            print(f"\n>>> DEPTH LEVEL: {level} <<<")
            _print_record(record["items"], record["requests"], opts)
        return
    print(f"\n>>> STATUS DEPTH LEVEL {deepest} <<<")
    items = [item for level in sorted(levels) for item in levels[level]["items"]]
    requests = levels[deepest]["requests"] if levels else []
    _print_record(items, requests, opts)


def _print_record(items, requests, opts):
    from tinyscrapy.utils.display import pprint
    if not opts.noitems:
        print("# Scraped Items ", "-" * 60)
        pprint([_plain(item) for item in items], colorize=not opts.nocolour)
    if not opts.nolinks:
        print("# Requests ", "-" * 65)
        pprint(requests, colorize=not opts.nocolour)


def _plain(item):
    """An item as a dict for printing (dicts, Items, dataclass and attrs items)."""
    if isinstance(item, dict):
        return item
    try:
        from itemadapter import ItemAdapter
        return ItemAdapter(item).asdict()
    except (ImportError, TypeError):
        return item
