"""An ItemLoader with default processors and re=, selectors' .re(), normalize-space, and
pages numbered from the URL, with cb_kwargs through response.follow."""
import scrapy
from itemloaders.processors import Identity, TakeFirst
from scrapy.loader import ItemLoader


class AuthorLoader(ItemLoader):
    default_item_class = dict
    default_output_processor = TakeFirst()
    tags_out = Identity()


class AuthorQuotesSpider(scrapy.Spider):
    name = "author-quotes"
    allowed_domains = ["quotes.toscrape.com"]
    start_urls = ["http://quotes.toscrape.com/page/1/"]

    def parse(self, response):
        page = int(response.url.rstrip("/").split("/")[-1])
        for quote in response.css("div.quote"):
            loader = AuthorLoader(selector=quote)
            loader.add_css("author", "small.author::text")
            loader.add_xpath("first_word", "normalize-space(span[@class='text'])",
                             re=r"\u201c(\w+)")
            loader.add_css("tags", "a.tag::text")
            loader.add_value("page", page)
            href = quote.css("span a::attr(href)").get()
            yield response.follow(href, self.parse_author,
                                  cb_kwargs={"quote": loader.load_item()}, dont_filter=True)
        words = response.css("li.next a::attr(href)").re(r"/page/(\d+)/")
        if words:
            yield response.follow(f"/page/{words[0]}/", self.parse)

    def parse_author(self, response, quote):
        quote["born_year"] = response.css(".author-born-date::text").re_first(r"\d{4}")
        quote["title"] = response.xpath("normalize-space(//h3)").get()
        yield quote
