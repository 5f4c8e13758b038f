import os

import scrapy
from itemadapter import ItemAdapter
from scrapy.exceptions import DropItem
from scrapy.utils.project import data_path
from scrapy.utils.request import fingerprint


class SeenPipeline:
    """Drops items whose URL an earlier run stored, remembering them under the project's
    data directory (as scrapy-deltafetch keeps its database)."""

    def __init__(self, path):
        self.path = path
        self.seen = set()

    @classmethod
    def from_crawler(cls, crawler):
        return cls(os.path.join(data_path("seen", createdir=True), "urls.txt"))

    def open_spider(self, spider):
        if os.path.exists(self.path):
            with open(self.path, encoding="utf-8") as stream:
                self.seen = set(stream.read().split())

    def process_item(self, item, spider):
        adapter = ItemAdapter(item)
        key = fingerprint(scrapy.Request(adapter["url"])).hex()
        if key in self.seen:
            raise DropItem(f"seen in an earlier run: {adapter['url']}")
        self.seen.add(key)
        return item

    def close_spider(self, spider):
        with open(self.path, "w", encoding="utf-8") as stream:
            stream.write("\n".join(sorted(self.seen)))
