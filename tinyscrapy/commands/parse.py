"""
C{parse URL [--spider NAME] [-c CALLBACK] [-d DEPTH]}: what a spider's callback yields
for one page, as Scrapy's C{parse} shows it: the items and the requests of each depth
level, printed on stdout (items are not sent to feeds or pipelines).

The spider is C{--spider} (a name, or a dotted class path), else the project's spider
whose C{allowed_domains} cover the URL. The callback is C{--callback}, else the callback
of the first C{CrawlSpider} rule whose links match the URL, else C{parse}. Requests that
a callback yields are followed, with their own callbacks, down to C{--depth} levels.
"""

import pprint

HELP = "show what a spider's callback yields for one page"
DESCRIPTION = """\
Download URL with the project's settings and print, level by level, the items and the
requests a spider's callback yields for it, as Scrapy's parse does (items go to no feed
and no pipeline). The spider is --spider, else the project's spider whose allowed_domains
cover the URL; the callback is --callback, else the matching CrawlSpider rule's, else
parse."""

RECORDER = "tinyscrapy.commands.parse.ParseRecorder"


def add_arguments(parser):
    parser.add_argument("url", metavar="URL", help="the page to parse (http or https)")
    parser.add_argument("--spider", metavar="NAME",
                        help="the spider: a name, or a dotted class path (default: the "
                             "project's spider for the URL's domain)")
    parser.add_argument("-c", "--callback", metavar="NAME",
                        help="the spider method that parses the page (default: parse, or "
                             "the matching CrawlSpider rule's)")
    parser.add_argument("-d", "--depth", type=int, default=1, metavar="DEPTH",
                        help="how many levels of requests to follow (default: 1)")
    parser.add_argument("--meta", "-m", metavar="JSON",
                        help="meta for the first request, as a JSON object")
    parser.add_argument("-r", "--rules", action="store_true",
                        help="pick the callback from the CrawlSpider rules (the default "
                             "without --callback; accepted as Scrapy's option)")
    parser.add_argument("--pipelines", action="store_true",
                        help="send the items through the ITEM_PIPELINES too")
    parser.add_argument("--noitems", action="store_true", help="do not show the items")
    parser.add_argument("--nolinks", action="store_true", help="do not show the requests")
    parser.add_common_options()


def run(command):
    import json

    from tinyscrapy.exceptions import UsageError
    args = command.args
    if args.depth < 1:
        raise UsageError(f"--depth must be 1 or more, got {args.depth}")
    meta = {}
    if args.meta:
        try:
            meta = json.loads(args.meta)
        except ValueError as e:
            raise UsageError(f"--meta is not JSON: {e}") from None
        if not isinstance(meta, dict):
            raise UsageError("--meta must be a JSON object")
    spidercls = _find_spider(command, args.url)
    callback = args.callback or _rule_callback(spidercls, args.url) or "parse"
    if not callable(getattr(spidercls, callback, None)):
        raise UsageError(f"spider {spidercls.__name__} has no method {callback!r} "
                         "(--callback)")
    levels = {}
    parse_spider = _parse_spider_class(spidercls, args.url, callback, meta, levels,
                                       args.depth, args.pipelines)
    command.settings.set("FEEDS", {}, "cmdline")
    middlewares = dict(command.settings.getdict("SPIDER_MIDDLEWARES"))
    middlewares[RECORDER] = 10_000  # nearest the spider: sees its output as it is
    command.settings.set("SPIDER_MIDDLEWARES", middlewares, "cmdline")
    status = command.crawl([parse_spider])
    _print_levels(levels, args)
    return status


def _find_spider(command, url):
    from tinyscrapy.exceptions import UsageError
    from tinyscrapy.http.request import Request
    from tinyscrapy.spiderloader import project_loader, resolve_spider
    loader = project_loader(command.settings)
    if command.args.spider:
        return resolve_spider(command.args.spider, loader)
    names = loader.find_by_request(Request(url)) if loader is not None else []
    if len(names) == 1:
        return loader.load(names[0])
    if not names:
        raise UsageError(f"no spider for {url} (none lists its domain in allowed_domains):"
                         " name one with --spider")
    raise UsageError(f"several spiders for {url} ({', '.join(names)}): choose one with "
                     "--spider")


def _rule_callback(spidercls, url):
    """The callback name of the first rule of a CrawlSpider whose links match C{url}."""
    for rule in getattr(spidercls, "rules", None) or ():
        matches = getattr(rule.link_extractor, "matches", None)
        if rule.callback and matches is not None and matches(url):
            return rule.callback if isinstance(rule.callback, str) else rule.callback.__name__
    return None


def _parse_spider_class(spidercls, url, callback, meta, levels, depth, pipelines=False):
    """A subclass of C{spidercls} whose only start request is C{url}, to C{callback};
    what each level yields is recorded into C{levels}."""
    from tinyscrapy.http.request import Request

    def first_request(spider):
        return Request(url, callback=getattr(spider, callback), dont_filter=True,
                       meta=dict(meta, _parse_level=1))

    def start_requests(self):
        yield first_request(self)

    async def start(self):
        yield first_request(self)

    return type(spidercls.__name__, (spidercls,), {
        "start_requests": start_requests, "start": start, "parse_levels": levels,
        "parse_max_depth": depth, "parse_pipelines": pipelines,
        "__module__": spidercls.__module__, "__qualname__": spidercls.__qualname__,
    })


class ParseRecorder:
    """
    A spider middleware (nearest the spider) that records what each callback yields, by
    depth level, into the spider's C{parse_levels}: items are kept there and go no
    further (on to the pipelines with C{--pipelines}; FEEDS is empty); requests go on only
    while their level is below the spider's C{parse_max_depth}.
    """

    def process_spider_output(self, response, result, spider):
        from tinyscrapy.http.request import Request
        level = response.request.meta.get("_parse_level", 1) if response.request else 1
        record = spider.parse_levels.setdefault(level, {"status": response.status,
                                                        "items": [], "requests": []})
        for element in result:
            if isinstance(element, Request):
                record["requests"].append(element)
                if level < spider.parse_max_depth:
                    element.meta["_parse_level"] = level + 1
                    yield element
            else:
                record["items"].append(element)
                if spider.parse_pipelines:  # --pipelines: on to ITEM_PIPELINES too
                    yield element


def _print_levels(levels, args):
    for level in sorted(levels):
        record = levels[level]
        print(f"\n>>> STATUS DEPTH LEVEL {level} <<<")
        if not args.noitems:
            print("# Scraped Items  " + "-" * 60)
            print(pprint.pformat([_plain(item) for item in record["items"]]))
        if not args.nolinks:
            print("\n# Requests  " + "-" * 65)
            print(pprint.pformat(record["requests"]))
    if not levels:
        print("\n>>> nothing was parsed: the page was not fetched (see the log) <<<")


def _plain(item):
    """An item as a dict for printing (dicts, Items, dataclass and attrs items)."""
    if isinstance(item, dict):
        return item
    try:
        from itemadapter import ItemAdapter
        return ItemAdapter(item).asdict()
    except (ImportError, TypeError):
        return item
