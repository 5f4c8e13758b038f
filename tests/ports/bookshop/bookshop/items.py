import scrapy


class BookItem(scrapy.Item):
    title = scrapy.Field()
    price = scrapy.Field()
    price_gbp = scrapy.Field()
    rating = scrapy.Field()
    category = scrapy.Field()
