"""
Scrapy's default contracts (C{SPIDER_CONTRACTS_BASE}): C{@url}, C{@cb_kwargs}, C{@meta},
C{@method}, C{@body}, C{@header} and C{@cookie} shape the sample request; C{@returns}
and C{@scrapes} check what the callback returned.
"""

import json

from itemadapter import ItemAdapter, is_item

from tinyscrapy.contracts import Contract
from tinyscrapy.exceptions import ContractFail
from tinyscrapy.http.request import Request


class UrlContract(Contract):
    """C{@url URL}: the sample request's URL. Without it a callback is not tried."""

    name = "url"

    def adjust_request_args(self, args):
        args["url"] = self.args[0]
        return args


class CallbackKeywordArgumentsContract(Contract):
    """C{@cb_kwargs {"arg": "value", ...}}: the request's C{cb_kwargs}, a JSON object."""

    name = "cb_kwargs"

    def adjust_request_args(self, args):
        args["cb_kwargs"] = json.loads(" ".join(self.args))
        return args


class MetadataContract(Contract):
    """C{@meta {"key": "value", ...}}: the request's C{meta}, a JSON object."""

    name = "meta"

    def adjust_request_args(self, args):
        args["meta"] = json.loads(" ".join(self.args))
        return args


class MethodContract(Contract):
    """C{@method POST}: the request's method."""

    name = "method"

    def adjust_request_args(self, args):
        args["method"] = self.args[0]
        return args


class BodyContract(Contract):
    """C{@body field1=value1&field2=value2}: the request's body (the rest of the line)."""

    name = "body"

    def adjust_request_args(self, args):
        args["body"] = " ".join(self.args)
        return args


class HeaderContract(Contract):
    """C{@header Name value}: a header of the request (one line each)."""

    name = "header"

    def adjust_request_args(self, args):
        args["headers"] = {**(args.get("headers") or {}), self.args[0]: " ".join(self.args[1:])}
        return args


class CookieContract(Contract):
    """C{@cookie name value}: a cookie of the request (one line each)."""

    name = "cookie"

    def adjust_request_args(self, args):
        args["cookies"] = {**(args.get("cookies") or {}), self.args[0]: " ".join(self.args[1:])}
        return args


def _is_request(value):
    return isinstance(value, Request)


class ReturnsContract(Contract):
    """
    C{@returns items|requests [MIN [MAX]]}: how many items (or requests) the callback
    returns, at least C{MIN} (1 by default) and at most C{MAX} (no bound by default);
    other objects are not counted.

    @ivar min_bound: C{MIN}; @ivar max_bound: C{MAX} (C{float("inf")} without one).
    """

    name = "returns"
    object_type_verifiers = {"request": _is_request, "requests": _is_request,
                             "item": is_item, "items": is_item}

    def __init__(self, *args, **kwargs):
        """@raise ValueError: not 1, 2 or 3 words, or a kind that is neither items nor
        requests."""
        super().__init__(*args, **kwargs)
        if len(self.args) not in (1, 2, 3):
            raise ValueError(f"Incorrect argument quantity: expected 1, 2 or 3, got "
                             f"{len(self.args)}")
        self.obj_name = self.args[0] or None
        if self.obj_name not in self.object_type_verifiers:
            raise ValueError(f"@returns {self.obj_name}: expected one of "
                             f"{', '.join(self.object_type_verifiers)}")
        self.obj_type_verifier = self.object_type_verifiers[self.obj_name]
        self.min_bound = int(self.args[1]) if len(self.args) > 1 else 1
        self.max_bound = int(self.args[2]) if len(self.args) > 2 else float("inf")

    def post_process(self, output):
        """@raise ContractFail: the count is out of bounds."""
        occurrences = sum(1 for element in output if self.obj_type_verifier(element))
        if self.min_bound <= occurrences <= self.max_bound:
            return
        expected = str(self.min_bound) if self.min_bound == self.max_bound else \
            f"{self.min_bound}..{self.max_bound}"
        raise ContractFail(f"Returned {occurrences} {self.obj_name}, expected {expected}")


class ScrapesContract(Contract):
    """C{@scrapes field ...}: every item the callback returns has these fields."""

    name = "scrapes"

    def post_process(self, output):
        """@raise ContractFail: an item lacks some (all of them named)."""
        for element in output:
            if is_item(element):
                missing = [field for field in self.args if field not in ItemAdapter(element)]
                if missing:
                    raise ContractFail(f"Missing fields: {', '.join(missing)}")
