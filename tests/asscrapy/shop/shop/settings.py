# Scrapy settings for shop project, as `scrapy startproject` writes them (trimmed)

from scrapy import version_info as scrapy_version  # read at import, as plugins do

BOT_NAME = "shop"

SPIDER_MODULES = ["shop.spiders"]
NEWSPIDER_MODULE = "shop.spiders"

ROBOTSTXT_OBEY = False
LOG_LEVEL = "INFO"

DOWNLOADER_MIDDLEWARES = {
    "scrapy_stamp.middlewares.StampMiddleware": 543,
    "scrapy.downloadermiddlewares.useragent.UserAgentMiddleware": None,
}
EXTENSIONS = {
    "scrapy_stamp.extensions.ClosedReport": 500,
}
ITEM_PIPELINES = {
    "shop.pipelines.PricePipeline": 300,
    "scrapy_seen.pipelines.SeenPipeline": 400,
}

STAMP_DOMAINS = ["127.0.0.1"]
STAMP_VALUE = "shop-1" if scrapy_version >= (2, 13) else "old-scrapy"
