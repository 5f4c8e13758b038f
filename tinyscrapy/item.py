"""
Declared items: L{Item} and L{Field}, as Scrapy's C{scrapy.item}.

    class Quote(Item):
        text = Field()
        tags = Field(output_processor=Join(", "))

An item is a mapping that only takes its declared fields: C{quote["text"] = ...} works,
C{quote["txet"] = ...} raises C{KeyError("Quote does not support field: txet")}. A
L{Field} is a plain C{dict} of metadata (processors for L{tinyscrapy.loader.ItemLoader},
a serializer for the feeds); the class keeps them in C{fields}, and the class attributes
themselves are removed, as in Scrapy (C{Quote.text} raises C{AttributeError}).

itemadapter knows Scrapy's own C{Item} only, so this module registers L{ItemClassAdapter}
first in C{ItemAdapter.ADAPTER_CLASSES} when it is imported: pipelines, feeds and loaders
then see our items, and their field metadata, as Scrapy's see Scrapy's. It imports
itemadapter only once L{Item} exists: with C{scrapy} served by tinyscrapy
(L{tinyscrapy.scrapyfinder}), itemadapter's first import probes C{scrapy.item.Item}, and
when itemadapter is imported first, that probe is what imports this module (itemadapter
is then half-imported, and takes L{Item} for Scrapy's own, with no adapter of ours). Only a
crawl whose code uses L{Item} imports this module (C{tinyscrapy.Item} is looked up lazily),
so only such a crawl pays for itemadapter's import (docs/performance.md).

Every item class is named in L{Item.classes} (and a dataclass or attrs class can be added
with L{register_item_class}): the frontier's codec finds an item class there by name when
it loads a stored request's C{meta}, without importing anything.
"""

import copy as _copy
import pprint
import sys
from collections.abc import MutableMapping
from types import MappingProxyType

from tinyscrapy.utils.trackref import object_ref

# "module.QualName" -> class, for every Item subclass and every registered class
_CLASSES = {}


def _class_name(cls):
    return f"{cls.__module__}.{cls.__qualname__}"


def register_item_class(cls):
    """
    Name C{cls} (a dataclass, an attrs class, ...) in L{Item.classes}, so that the
    frontier's codec accepts its instances in a stored request's C{meta} or C{cb_kwargs}.
    Usable as a class decorator.

    @return: C{cls}.
    """
    _CLASSES[_class_name(cls)] = cls
    return cls


class Field(dict):
    """The metadata of one field of an L{Item}: any keyword arguments, kept as a dict."""


class ItemMeta(type(MutableMapping)):
    """
    Collects the L{Field} attributes of an L{Item} class into its C{fields} dict (its
    bases' first, then its own, in the order they are written), removes them from the
    class, and names the class in L{Item.classes}.
    """

    def __new__(mcs, name, bases, namespace, **kwargs):
        fields = {}
        for base in reversed(bases):
            fields.update(getattr(base, "fields", None) or {})
        own = {key: value for key, value in namespace.items() if isinstance(value, Field)}
        fields.update(own)
        namespace = {key: value for key, value in namespace.items() if key not in own}
        namespace["fields"] = fields
        cls = super().__new__(mcs, name, bases, namespace, **kwargs)
        register_item_class(cls)
        return cls


class Item(MutableMapping, object_ref, metaclass=ItemMeta):
    """
    A scraped item whose fields are declared with L{Field} class attributes.

    @cvar fields: C{{field name: Field}} of every declared field (inherited ones too).
    @cvar classes: C{{"module.QualName": class}} of every item class (L{register_item_class}).
    """

    classes = _CLASSES

    def __init__(self, *args, **kwargs):
        object.__setattr__(self, "_values", {})
        if args or kwargs:
            for key, value in dict(*args, **kwargs).items():
                self[key] = value

    def __getitem__(self, key):
        return self._values[key]

    def __setitem__(self, key, value):
        if key not in self.fields:
            raise KeyError(f"{type(self).__name__} does not support field: {key}")
        self._values[key] = value

    def __delitem__(self, key):
        del self._values[key]

    def __getattr__(self, name):
        if name in self.fields:
            raise AttributeError(f"Use item[{name!r}] to get field value")
        raise AttributeError(name)

    def __setattr__(self, name, value):
        if not name.startswith("_"):
            raise AttributeError(f"Use item[{name!r}] = {value!r} to set field value")
        super().__setattr__(name, value)

    def __len__(self):
        return len(self._values)

    def __iter__(self):
        return iter(self._values)

    def __contains__(self, key):
        return key in self._values

    __hash__ = object.__hash__

    def keys(self):
        """The fields that have a value (L{fields} lists every declared one)."""
        return self._values.keys()

    def __repr__(self):
        return pprint.pformat(dict(self))

    def copy(self):
        """@return: a shallow copy: a new item of this class with the same values."""
        return type(self)(self)

    def deepcopy(self):
        """@return: a deep copy (values copied too)."""
        return _copy.deepcopy(self)

    def __deepcopy__(self, memo):
        clone = type(self).__new__(type(self))
        memo[id(self)] = clone
        object.__setattr__(clone, "_values", _copy.deepcopy(self._values, memo))
        return clone

    def __reduce__(self):
        return (type(self), (dict(self._values),))


# after Item (see the module's docstring)
try:
    from itemadapter.adapter import AdapterInterface, ItemAdapter
except ImportError:
    if "itemadapter.adapter" not in sys.modules:
        raise
    AdapterInterface = None  # half-imported: its probe of scrapy.item brought us here


class ItemClassAdapter(AdapterInterface or object):
    """itemadapter's view of an L{Item}: its values, its field names and metadata (without
    a base, and not registered, in a process whose itemadapter was importing when this
    module was: there, itemadapter's own adapter for Scrapy's items handles L{Item})."""

    @classmethod
    def is_item(cls, item):
        return isinstance(item, Item)

    @classmethod
    def is_item_class(cls, item_class):
        return isinstance(item_class, type) and issubclass(item_class, Item)

    @classmethod
    def get_field_meta_from_class(cls, item_class, field_name):
        return MappingProxyType(item_class.fields[field_name])

    @classmethod
    def get_field_names_from_class(cls, item_class):
        return list(item_class.fields)

    def field_names(self):
        return self.item.fields.keys()

    def __getitem__(self, field_name):
        return self.item[field_name]

    def __setitem__(self, field_name, value):
        self.item[field_name] = value

    def __delitem__(self, field_name):
        del self.item[field_name]

    def __iter__(self):
        return iter(self.item)

    def __len__(self):
        return len(self.item)


def _register_adapter():
    """Put L{ItemClassAdapter} first in itemadapter's list (once)."""
    adapters = ItemAdapter.ADAPTER_CLASSES
    if ItemClassAdapter not in adapters:
        adapters.appendleft(ItemClassAdapter)


if AdapterInterface is not None:
    _register_adapter()
