"""follow_all with xpath= and cb_kwargs, SelectorList.attrib, list-returning callbacks,
self.settings in a callback, and the tag pages."""
import scrapy


class TagsSpider(scrapy.Spider):
    name = "tags"
    start_urls = ["http://quotes.toscrape.com/"]
    custom_settings = {"FEEDS": {"spider-feed.json": {"format": "json"}}, "BOT_NAME": "tagbot"}

    def parse(self, response):
        return list(response.follow_all(
            xpath="//div[@class='tags']/a[@class='tag'][1]", callback=self.parse_tag,
            cb_kwargs={"bot": self.settings.get("BOT_NAME")}))

    def parse_tag(self, response, bot):
        first = response.css("div.quote small.author")
        return [{
            "tag": response.url.split("/tag/")[1].split("/")[0],
            "bot": bot,
            "first_author": first.css("::text").get(),
            "first_author_class": first.attrib["class"],
            "count": len(response.css("div.quote")),
            "next": response.css("li.next a").attrib.get("href"),
        }]
