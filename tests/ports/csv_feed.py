"""A CSVFeedSpider: rows as dicts from the header line, a broken row skipped,
process_results."""
from scrapy.spiders import CSVFeedSpider


class ProductsCsvSpider(CSVFeedSpider):
    name = "products-csv"
    start_urls = ["http://sitemap.toscrape.com/products.csv"]
    delimiter = ","
    quotechar = '"'

    def parse_row(self, response, row):
        return {"slug": row["slug"], "name": row["name"], "price": float(row["price"])}

    def process_results(self, response, results):
        for item in results:
            item["cheap"] = item["price"] < 14
            yield item
