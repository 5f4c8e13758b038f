"""
The files C{startproject} and C{genspider} write, as Python format strings.

Project files take C{{project}}; spider files take C{{name}}, C{{classname}},
C{{domain}} and C{{url}}.

Also Scrapy's helpers of C{scrapy.utils.template}, for a plugin's own templates:
L{render_templatefile} (a C{string.Template} file filled in place) and
L{string_camelcase}.
"""

import re
import string
from pathlib import Path


def render_templatefile(path, **kwargs):
    """
    Fill the C{string.Template} file C{path} with C{kwargs}, in place; a C{NAME.tmpl}
    becomes C{NAME}.

    @raise KeyError: the template names a value C{kwargs} lacks.
    """
    path = Path(path)
    content = string.Template(path.read_text("utf8")).substitute(**kwargs)
    if path.suffix == ".tmpl":
        path = path.rename(path.with_suffix(""))
    path.write_text(content, "utf8")


CAMELCASE_INVALID_CHARS = re.compile(r"[^a-zA-Z\d]")


def string_camelcase(text):
    """C{"lost-pound"} as C{"LostPound"}: each word capitalised, the rest dropped."""
    return CAMELCASE_INVALID_CHARS.sub("", text.title())



CONFIG = '''\
# The project's configuration, in the format of Scrapy's scrapy.cfg.
# python -m tinyscrapy finds it in the current directory or a parent.

[settings]
default = {project}.settings
'''

SETTINGS = '''\
"""Settings of the {project} project: the "project" layer, above tinyscrapy's defaults
and below a spider's custom_settings and -s NAME=VALUE. Every setting and its default:
python -m tinyscrapy settings."""

BOT_NAME = "{project}"

SPIDER_MODULES = ["{project}.spiders"]
NEWSPIDER_MODULE = "{project}.spiders"

# Obey robots.txt rules
ROBOTSTXT_OBEY = True

# Requests at once, in all and per host, and the delay between two to one host (s)
# CONCURRENT_REQUESTS = 16
# CONCURRENT_REQUESTS_PER_DOMAIN = 8
# DOWNLOAD_DELAY = 0

# Identify the crawler to the sites it visits
# USER_AGENT = "{project} (+https://www.example.com)"

# Item pipelines, lowest number first
# ITEM_PIPELINES = {{
#     "{project}.pipelines.{classname}Pipeline": 300,
# }}

# Downloader and spider middlewares of the project
# DOWNLOADER_MIDDLEWARES = {{
#     "{project}.middlewares.{classname}DownloaderMiddleware": 543,
# }}
# SPIDER_MIDDLEWARES = {{
#     "{project}.middlewares.{classname}SpiderMiddleware": 543,
# }}

# Feeds (the same as -O items.jsonl on the command line)
# FEEDS = {{"items.jsonl": {{"format": "jsonlines"}}}}
FEED_EXPORT_ENCODING = "utf-8"
'''

ITEMS = '''\
"""The items of the {project} project: what its spiders scrape."""

# import tinyscrapy
#
#
# class {classname}Item(tinyscrapy.Item):
#     title = tinyscrapy.Field()
#     price = tinyscrapy.Field()
'''

PIPELINES = '''\
"""Item pipelines of the {project} project: enable them in ITEM_PIPELINES (settings.py)."""

from tinyscrapy.exceptions import DropItem


class {classname}Pipeline:
    """Every scraped item passes here: return it (maybe changed), or raise DropItem."""

    def open_spider(self, spider):
        pass

    def process_item(self, item, spider):
        if not item:
            raise DropItem("an empty item")
        return item

    def close_spider(self, spider):
        pass
'''

MIDDLEWARES = '''\
"""Middlewares of the {project} project: enable them in DOWNLOADER_MIDDLEWARES or
SPIDER_MIDDLEWARES (settings.py)."""


class {classname}DownloaderMiddleware:
    """Around every download: return None to go on, a Response to skip the download, or
    a Request to send that instead."""

    def process_request(self, request, spider):
        return None

    def process_response(self, request, response, spider):
        return response

    def process_exception(self, request, exception, spider):
        return None


class {classname}SpiderMiddleware:
    """Around every callback: what the spider yields passes through here."""

    def process_spider_output(self, response, result, spider):
        for element in result:
            yield element
'''

SPIDERS_INIT = '''\
"""The spiders of the {project} project: every Spider subclass with a name in this
package is found by `run NAME`, `crawl NAME` and `list`."""
'''

SPIDER_BASIC = '''\
import tinyscrapy


class {classname}(tinyscrapy.Spider):
    name = "{name}"
    allowed_domains = ["{domain}"]
    start_urls = ["{url}"]

    def parse(self, response):
        yield {{"url": response.url, "title": response.css("title::text").get()}}
'''

SPIDER_CRAWL = '''\
from tinyscrapy.linkextractors import LinkExtractor
from tinyscrapy.spiders import CrawlSpider, Rule


class {classname}(CrawlSpider):
    name = "{name}"
    allowed_domains = ["{domain}"]
    start_urls = ["{url}"]

    rules = (
        Rule(LinkExtractor(allow=r"Items/"), callback="parse_item", follow=True),
    )

    def parse_item(self, response):
        yield {{"url": response.url, "title": response.css("title::text").get()}}
'''

SPIDER_SITEMAP = '''\
from tinyscrapy.spiders import SitemapSpider


class {classname}(SitemapSpider):
    name = "{name}"
    allowed_domains = ["{domain}"]
    sitemap_urls = ["{url}robots.txt"]
    sitemap_rules = [
        ("", "parse_item"),
    ]

    def parse_item(self, response):
        yield {{"url": response.url, "title": response.css("title::text").get()}}
'''

SPIDERS = {"basic": SPIDER_BASIC, "crawl": SPIDER_CRAWL, "sitemap": SPIDER_SITEMAP}
