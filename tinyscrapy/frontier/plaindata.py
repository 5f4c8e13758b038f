"""
The data a stored request carries (C{meta}, C{cb_kwargs}, its rarer arguments) as JSON
values, and back: what L{tinyscrapy.frontier.codec} writes inside its JSON object.

Plain data (None, booleans, numbers, strings, lists, dicts with string keys) is written as
it is. JSON has no bytes, tuples, sets or datetimes, so values of those kinds are written
as one-key objects whose key is a tag: C{{"$b": base64}}, C{{"$t": [...]}} (tuple),
C{{"$s": [...]}} (set), C{{"$fs": [...]}} (frozenset), C{{"$dt": iso}} (datetime),
C{{"$date": iso}}, and C{{"$dict": [[key, value], ...]}} for a dict whose keys are not all
strings (or that looks like a tag itself). A registered item is C{{"$item": [class name,
{field: value}]}}: an item class is one of C{Item.classes} (L{tinyscrapy.item.Item}
subclasses, filled when they are defined) or one registered here with
L{register_item_class} (dataclass or attrs items). Anything else is refused
(L{NotPlain}).

Reading back (L{untag}, C{json}'s object hook) never imports a module: the only thing it
calls is a registered item class, with its fields. A tag it did not write, or a bad value
under one, raises L{StoredRequestError}.
"""

from base64 import b64decode, b64encode
from datetime import date, datetime

_PLAIN = (str, int, float, bool, type(None))
# dataclass and attrs item classes the user registered (Item subclasses register
# themselves in Item.classes)
_ITEM_CLASSES = {}


class StoredRequestError(ValueError):
    """The bytes are not a request this codec wrote; the message says why."""


class MissingMethod(StoredRequestError):
    """A well-formed stored request names a callback or errback the spider does not have
    (the spider changed since it was stored): not the row's fault, so it is kept."""


def class_name(cls):
    """The registry key of C{cls}: C{"module.qualname"}."""
    return f"{cls.__module__}.{cls.__qualname__}"


def register_item_class(cls):
    """
    Allow instances of C{cls} (a dataclass or attrs class) in stored C{meta} and
    C{cb_kwargs}. Usable as a class decorator. L{tinyscrapy.item.Item} subclasses
    need not be registered. @return: C{cls}.
    """
    _ITEM_CLASSES[class_name(cls)] = cls
    return cls


# writing


def bytes_text(data):
    """C{bytes} as base64 text."""
    return b64encode(data).decode("ascii")


class NotPlain(Exception):
    """Raised by L{plain}: its message describes the value."""


def plain(value, depth=0):
    """C{value} as JSON data, tagged where JSON has no kind for it. @raise NotPlain."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if depth > 50:
        raise NotPlain("data nested more than 50 levels deep")
    depth += 1
    if kind is list:
        return [plain(each, depth) for each in value]
    if kind is dict:
        if all(type(key) is str for key in value) and not _looks_tagged(value):
            return {key: plain(each, depth) for key, each in value.items()}
        return {"$dict": [[plain(key, depth), plain(each, depth)]
                          for key, each in value.items()]}
    if kind is bytes:
        return {"$b": bytes_text(value)}
    if kind is tuple:
        return {"$t": [plain(each, depth) for each in value]}
    if kind is set or kind is frozenset:
        tag = "$s" if kind is set else "$fs"
        return {tag: [plain(each, depth) for each in value]}
    if kind is datetime:
        return {"$dt": value.isoformat()}
    if kind is date:
        return {"$date": value.isoformat()}
    classes = item_classes()
    name = class_name(kind)
    if classes.get(name) is kind:
        fields = _item_fields(value)
        return {"$item": [name, {key: plain(each, depth) for key, each in fields.items()}]}
    raise NotPlain(f"a {kind.__module__}.{kind.__qualname__}")


def _looks_tagged(mapping):
    return len(mapping) == 1 and next(iter(mapping)).startswith("$")


def _item_fields(item):
    """The fields an item holds, through itemadapter (imported on first need)."""
    from itemadapter import ItemAdapter
    return dict(ItemAdapter(item).items())


def item_classes(_item=[]):  # noqa: B006 - the Item class, imported once
    """The registered item classes: C{Item.classes} and L{register_item_class}'s."""
    if not _item:
        try:
            from tinyscrapy.item import Item
        except ImportError:  # before tinyscrapy had declared items
            Item = None
        _item.append(Item)
    classes = getattr(_item[0], "classes", None)
    if not classes:
        return _ITEM_CLASSES
    if not _ITEM_CLASSES:
        return classes
    return {**classes, **_ITEM_CLASSES}


# reading


_TAGS = {
    "$t": tuple,
    "$s": set,
    "$fs": frozenset,
}


def untag(obj):
    """C{json}'s object hook: a tagged object back to its value (innermost first)."""
    if len(obj) != 1:
        return obj
    ((tag, value),) = obj.items()
    if not tag.startswith("$"):
        return obj
    try:
        if tag in _TAGS:
            if type(value) is not list:
                raise TypeError("not a list")
            return _TAGS[tag](value)
        if tag == "$b":
            return b64decode(value.encode("ascii"), validate=True)
        if tag == "$dt":
            return datetime.fromisoformat(value)
        if tag == "$date":
            return date.fromisoformat(value)
        if tag == "$dict":
            return {key: each for key, each in value}
        if tag == "$item":
            return _item(*value)
    except StoredRequestError:
        raise
    except Exception as e:  # TypeError, ValueError, binascii.Error: all mean crafted
        raise StoredRequestError(f"a bad {tag} value ({type(e).__name__}: {e})") from None
    raise StoredRequestError(f"an unknown tag {tag!r}")


def _item(name, fields):
    """A registered item class, called with its fields (nothing else is ever called)."""
    cls = item_classes().get(name) if type(name) is str else None
    if cls is None or type(fields) is not dict:
        raise StoredRequestError(f"an item of class {name!r}, which is not registered")
    return cls(**fields)
