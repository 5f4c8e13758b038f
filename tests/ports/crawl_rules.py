"""A CrawlSpider over the quotes: rules with cb_kwargs, process_request, errback and
LinkExtractor options (tags, attrs, process_value, restrict_text, canonicalize, unique),
and an ItemLoader whose processors read the loader context."""
from itemloaders.processors import MapCompose, TakeFirst
from scrapy.linkextractors import LinkExtractor
from scrapy.loader import ItemLoader
from scrapy.spiders import CrawlSpider, Rule


def absolute(value, loader_context):
    return loader_context["response"].urljoin(value)


class AuthorLoader(ItemLoader):
    default_item_class = dict
    default_output_processor = TakeFirst()
    link_in = MapCompose(absolute)


def only_pages(value):
    return value if "/page/" in value or "/author/" in value else None


class QuotesCrawlSpider(CrawlSpider):
    name = "quotes-crawl"
    allowed_domains = ["quotes.toscrape.com"]
    start_urls = ["http://quotes.toscrape.com/"]

    rules = (
        Rule(LinkExtractor(restrict_css="li.next", process_value=only_pages,
                           canonicalize=True),
             follow=True, process_request="mark"),
        Rule(LinkExtractor(allow=r"/author/", restrict_text=r"about", tags=("a",),
                           attrs=("href",)),
             callback="parse_author", cb_kwargs={"kind": "author"}, errback="failed"),
    )

    def mark(self, request, response):
        request.meta["from_page"] = response.url.rsplit("/", 2)[-2] or "home"
        return request

    def parse_author(self, response, kind):
        loader = AuthorLoader(response=response)
        loader.add_css("name", "h3.author-title::text", MapCompose(str.strip))
        loader.add_xpath("link", "//a[contains(@href, 'login')]/@href")
        loader.add_value("kind", kind)
        loader.add_value("via", response.meta.get("from_page", "start"))
        loader.add_value("first_link", response.css("a").attrib["href"])
        yield loader.load_item()

    def failed(self, failure):
        self.logger.error("failed: %s", failure.request.url)
