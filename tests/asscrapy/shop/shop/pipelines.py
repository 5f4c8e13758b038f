from itemadapter import ItemAdapter
from scrapy.exceptions import DropItem


class PricePipeline:
    def process_item(self, item, spider):
        adapter = ItemAdapter(item)
        if not adapter.get("price"):
            raise DropItem(f"no price: {adapter.get('url')}")
        adapter["price"] = float(adapter["price"])
        return item
