# Scrapy settings for bookshop project
BOT_NAME = "bookshop"

SPIDER_MODULES = ["bookshop.spiders"]
NEWSPIDER_MODULE = "bookshop.spiders"

ROBOTSTXT_OBEY = True
CONCURRENT_REQUESTS = 8

DOWNLOADER_MIDDLEWARES = {
    "scrapy.downloadermiddlewares.useragent.UserAgentMiddleware": None,
}
DEFAULT_REQUEST_HEADERS = {
    "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
    "Accept-Language": "en",
}
ITEM_PIPELINES = {
    "bookshop.pipelines.PricePipeline": 300,
    "bookshop.pipelines.DuplicatesPipeline": 400,
}
FEED_EXPORT_ENCODING = "utf-8"
