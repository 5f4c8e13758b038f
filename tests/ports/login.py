"""A login spider: FormRequest.from_response fills the CSRF token, the session cookie does
the rest."""
import scrapy
from scrapy.http import FormRequest


class LoginSpider(scrapy.Spider):
    name = 'toscrape-login'
    login_url = 'http://quotes.toscrape.com/login'
    start_urls = [login_url]

    def parse(self, response):
        token = response.css('input[name="csrf_token"]::attr(value)').extract_first()
        yield FormRequest.from_response(
            response,
            formdata={'csrf_token': token, 'username': 'foobar', 'password': 'foobar'},
            callback=self.after_login,
        )

    def after_login(self, response):
        if "Logout" not in response.text:
            self.logger.error("Login failed")
            return
        for quote in response.css('div.quote'):
            yield {
                'author_name': quote.css('small.author::text').extract_first(),
                'author_url': quote.css('small.author ~ a[href*="goodreads.com"]::attr(href)')
                .extract_first(),
            }
        next_page = response.css('li.next a::attr(href)').get()
        if next_page:
            yield response.follow(next_page, self.after_login)
