"""
L{Selector}: parsel's selector made from a response, as Scrapy's C{scrapy.Selector}:
C{Selector(response=r)} picks the type from the response's class (XML for an
C{XmlResponse}, JSON for a C{JsonResponse}, HTML for an C{HtmlResponse}) and keeps the
response as C{selector.response}.

It imports parsel, which is slow to import (docs/performance.md): the responses import this
module only when a callback first selects.
"""

from typing import Literal

from parsel import Selector as _ParselSelector
from parsel import SelectorList

from tinyscrapy.utils.trackref import object_ref

SelectorType = Literal["html", "xml", "json", "text"]  # Scrapy's name for the kinds

_NOT_SET = object()


class Selector(_ParselSelector, object_ref):
    """A parsel C{Selector} that may be built from a response (and remembers it)."""

    __slots__ = ("response",)
    selectorlist_cls = SelectorList

    def __init__(self, response=None, text=None, type=None, root=_NOT_SET,  # noqa: A002
                 **kwargs):
        if response is not None and text is not None:
            raise ValueError(f"{self.__class__.__name__}.__init__() received both response "
                             f"and text")
        if type is None and root is _NOT_SET:
            type = _selector_type(response)  # noqa: A001
        if response is not None:
            if root is _NOT_SET:
                text = response.text
            kwargs.setdefault("base_url", response._page_base_url())
        self.response = response
        if root is not _NOT_SET:
            kwargs["root"] = root
        super().__init__(text=text, type=type, **kwargs)


def _selector_type(response):
    """The parsel type a response's class asks for (C{selector_type}: C{"html"} for an
    C{HtmlResponse}, C{"xml"}, C{"json"}), C{"html"} with no response, None to let parsel
    guess (a plain C{TextResponse})."""
    if response is None:
        return "html"
    return getattr(response, "selector_type", None)
