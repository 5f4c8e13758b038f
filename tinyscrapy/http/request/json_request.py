"""
L{JsonRequest}: a request whose body is C{data} as JSON, with Scrapy's defaults: POST when
C{data} is given (unless C{method} says otherwise), C{Content-Type: application/json}, an
C{Accept} header for JSON, C{json.dumps(data, sort_keys=True, **dumps_kwargs)}.
"""

import copy
import json
import warnings

from tinyscrapy.http.request import Request

JSON_ACCEPT = "application/json, text/javascript, */*; q=0.01"


class JsonRequest(Request):
    """
    A L{Request} that sends C{data} as JSON. Given both C{body} and C{data}, the body
    wins and a C{UserWarning} says C{data} was ignored, as in Scrapy.

    @ivar dumps_kwargs: the keyword arguments of C{json.dumps} (C{sort_keys=True} unless
        told otherwise).
    """

    __slots__ = ("_dumps_kwargs",)
    attributes = (*Request.attributes, "dumps_kwargs")

    def __init__(self, *args, dumps_kwargs=None, **kwargs):
        dumps_kwargs = copy.deepcopy(dumps_kwargs) if dumps_kwargs is not None else {}
        dumps_kwargs.setdefault("sort_keys", True)
        self._dumps_kwargs = dumps_kwargs
        if self._take_data(kwargs) and "method" not in kwargs:
            kwargs["method"] = "POST"
        super().__init__(*args, **kwargs)
        headers = self.headers
        headers.setdefault("Content-Type", "application/json")
        headers.setdefault("Accept", JSON_ACCEPT)

    @property
    def dumps_kwargs(self):
        # a request rebuilt by a frontier without its __init__ may lack the slot
        return getattr(self, "_dumps_kwargs", None) or {"sort_keys": True}

    def _take_data(self, kwargs):
        """Turn C{kwargs["data"]} into C{kwargs["body"]}. @return: True if it did."""
        data = kwargs.pop("data", None)
        if data is None:
            return False
        if kwargs.get("body") is not None:
            warnings.warn("Both body and data passed. data will be ignored", stacklevel=3)
            return False
        kwargs["body"] = json.dumps(data, **self.dumps_kwargs)
        return True

    def replace(self, *args, cls=None, **changes):
        """L{Request.replace}; C{data=} makes a new JSON body."""
        self._take_data(changes)
        return super().replace(*args, cls=cls, **changes)
