"""A plugin as a Scrapy user installs one: it imports scrapy.* itself."""
