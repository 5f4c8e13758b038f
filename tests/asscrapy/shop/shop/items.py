import scrapy
from itemloaders.processors import TakeFirst


class Product(scrapy.Item):
    name = scrapy.Field(output_processor=TakeFirst())
    price = scrapy.Field(output_processor=TakeFirst(), serializer=float)
    url = scrapy.Field(output_processor=TakeFirst())
