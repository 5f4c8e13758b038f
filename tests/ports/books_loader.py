"""Books with an Item and an ItemLoader: processors on the fields, the listing's item
carried to the product page in meta, a nested loader."""
import scrapy
from itemloaders.processors import Join, MapCompose, TakeFirst
from scrapy.loader import ItemLoader
from w3lib.html import remove_tags


def to_price(value):
    return float(value.replace("\u00a3", ""))


class BookItem(scrapy.Item):
    title = scrapy.Field(output_processor=TakeFirst())
    price = scrapy.Field(input_processor=MapCompose(str.strip, to_price),
                         output_processor=TakeFirst())
    upc = scrapy.Field(output_processor=TakeFirst())
    availability = scrapy.Field(input_processor=MapCompose(str.strip),
                                output_processor=Join(" "))
    description = scrapy.Field()
    category = scrapy.Field(output_processor=TakeFirst())
    url = scrapy.Field(output_processor=TakeFirst())
    listing_rating = scrapy.Field(output_processor=TakeFirst())
    listing_page = scrapy.Field(output_processor=TakeFirst())
    table = scrapy.Field(input_processor=MapCompose(remove_tags, str.strip))


class BookLoader(ItemLoader):
    default_item_class = BookItem
    default_input_processor = MapCompose(str.strip)
    description_out = Join()


class BooksLoaderSpider(scrapy.Spider):
    name = "books-loader"
    start_urls = ["http://books.toscrape.com/catalogue/page-1.html"]

    def parse(self, response):
        for pod in response.css("article.product_pod"):
            loader = BookLoader(selector=pod)
            loader.add_css("listing_rating", "p.star-rating::attr(class)",
                           MapCompose(lambda value: value.split()[-1]))
            loader.add_value("listing_page", response.url.split("/")[-1])
            href = pod.css("h3 a::attr(href)").get()
            yield response.follow(href, self.parse_book, meta={"item": loader.load_item()})
        next_page = response.css("li.next a::attr(href)").get()
        if next_page:
            yield response.follow(next_page, self.parse)

    def parse_book(self, response):
        loader = BookLoader(item=response.meta["item"], response=response)
        loader.add_css("title", "div.product_main h1::text")
        loader.add_css("price", "div.product_main p.price_color::text")
        loader.add_xpath("upc", "//table[contains(@class, 'table-striped')]"
                                "//th[text()='UPC']/following-sibling::td/text()")
        loader.add_css("availability", "p.availability::text")
        loader.add_css("description", "#product_description ~ p::text")
        loader.add_css("category", "ul.breadcrumb li:nth-child(3) a::text")
        loader.add_value("url", response.url)
        table = loader.nested_css("table.table-striped")
        table.add_xpath("table", ".//tr[position() > 5]/td")
        if loader.get_output_value("title") is None:
            return
        yield loader.load_item()
