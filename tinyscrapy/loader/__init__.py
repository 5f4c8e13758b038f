"""
L{ItemLoader}: Scrapy's item loader, on the C{itemloaders} package (Scrapy's own base).

    loader = ItemLoader(item=Quote(), response=response)
    loader.add_css("text", "span.text::text")
    loader.add_xpath("author", ".//small/text()")
    loader.add_value("url", response.url)
    yield loader.load_item()

Values pass through the field's C{input_processor} as they are added and its
C{output_processor} in L{load_item}, taken from the L{Field} metadata of the item class
(C{Field(output_processor=TakeFirst())}) or from the loader class (C{text_out =
TakeFirst()}, C{default_output_processor}); C{itemloaders} does all of that. What this
class adds is Scrapy's: a loader made from a response (its selector), the response in the
loader's C{context}, and L{tinyscrapy.item.Item} as the default item class.
"""

import itemloaders

from tinyscrapy.item import Item


class ItemLoader(itemloaders.ItemLoader):
    """
    Populate an item from a response or a selector through field processors.

    @param item: the item to fill (an instance of C{default_item_class} when None).
    @param selector: what C{add_css} and C{add_xpath} query.
    @param response: used for the selector when C{selector} is None (C{response.selector});
        kept in the context as C{context["response"]}.
    @param parent: the loader a nested loader belongs to (see C{nested_css}).
    """

    default_item_class = Item

    def __init__(self, item=None, selector=None, response=None, parent=None, **context):
        if selector is None and response is not None:
            selector = _selector_of(response)
        context.update(response=response)
        super().__init__(item=item, selector=selector, parent=parent, **context)


def _selector_of(response):
    """The response's selector, or None for a response that has none (not text)."""
    try:
        return response.selector
    except (AttributeError, TypeError):
        return None
