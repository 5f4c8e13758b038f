"""
L{ScrapyJSONEncoder}: the JSON encoder of Scrapy's JSON feeds (C{scrapy.utils.serialize}),
for the values JSON has no type for.
"""

import datetime
import decimal
import json


class ScrapyJSONEncoder(json.JSONEncoder):
    """
    A C{json.JSONEncoder} that also writes sets (as lists), dates and times (ISO 8601),
    decimals (as strings), Deferreds, requests and responses (as a short text) and items
    (an L{tinyscrapy.item.Item}, a dataclass, an attrs object: as dicts).
    """

    def default(self, o):
        """@raise TypeError: C{o} is none of those (as C{json.JSONEncoder} does)."""
        if isinstance(o, set):
            return list(o)
        if isinstance(o, (datetime.datetime, datetime.date, datetime.time)):
            return o.isoformat()
        if isinstance(o, decimal.Decimal):
            return str(o)
        from twisted.internet.defer import Deferred

        from tinyscrapy.http.request import Request
        from tinyscrapy.http.response import Response
        if isinstance(o, Deferred):
            return str(o)
        if isinstance(o, Request):
            return f"<{type(o).__name__} {o.method} {o.url}>"
        if isinstance(o, Response):
            return f"<{type(o).__name__} {o.status} {o.url}>"
        from itemadapter import ItemAdapter, is_item  # only for an item inside an item
        if is_item(o):
            return ItemAdapter(o).asdict()
        return super().default(o)
