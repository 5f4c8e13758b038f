"""
Example spiders for the embedded demo site, written the way Scrapy projects often write
them: a C{CrawlSpider} with rules (L{spiders.books}) and declared items filled by an
C{ItemLoader} (L{spiders.quotes}). They scrape what the package's own demo spiders
(C{tinyscrapy/demo/spiders/}) scrape, the plain way; C{python -m tinyscrapy run} from
this folder's parent runs these.
"""
