from itemadapter import ItemAdapter
from scrapy.exceptions import DropItem

RATINGS = {"One": 1, "Two": 2, "Three": 3, "Four": 4, "Five": 5}


class PricePipeline:
    def process_item(self, item, spider):
        adapter = ItemAdapter(item)
        adapter["price_gbp"] = float(adapter["price"].lstrip("\u00a3"))
        adapter["rating"] = RATINGS[adapter["rating"]]
        return item


class DuplicatesPipeline:
    def __init__(self):
        self.titles_seen = set()

    def open_spider(self, spider):
        spider.logger.info("duplicates pipeline open")

    def process_item(self, item, spider):
        adapter = ItemAdapter(item)
        if adapter["title"] in self.titles_seen:
            raise DropItem(f"Duplicate item found: {item!r}")
        self.titles_seen.add(adapter["title"])
        return item
