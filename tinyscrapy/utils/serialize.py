"""Scrapy's C{scrapy.utils.serialize}: L{ScrapyJSONEncoder}, JSON for what a crawl holds."""

import datetime
import decimal
import json

from twisted.internet.defer import Deferred


class ScrapyJSONEncoder(json.JSONEncoder):
    """
    A C{json.JSONEncoder} that also writes sets (as lists), dates and times (ISO 8601),
    decimals (as strings), Deferreds, requests (C{<Request GET url>}), responses
    (C{<HtmlResponse 200 url>}) and items of any kind (their fields, through itemadapter).
    """

    def default(self, o):
        from tinyscrapy.http.request import Request
        from tinyscrapy.http.response import Response
        if isinstance(o, set):
            return list(o)
        if isinstance(o, (datetime.datetime, datetime.date, datetime.time)):
            return o.isoformat()
        if isinstance(o, decimal.Decimal):
            return str(o)
        if isinstance(o, Deferred):
            return str(o)
        if isinstance(o, Request):
            return f"<{type(o).__name__} {o.method} {o.url}>"
        if isinstance(o, Response):
            return f"<{type(o).__name__} {o.status} {o.url}>"
        from itemadapter import ItemAdapter, is_item
        if is_item(o):
            return ItemAdapter(o).asdict()
        return super().default(o)
