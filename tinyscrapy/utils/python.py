"""
Scrapy's C{scrapy.utils.python}: what "should have come with Python itself", as its users
call it in their own components: L{to_bytes} and L{to_unicode}, L{is_listlike},
L{unique}, L{binary_is_text}, L{memoizemethod_noargs}, the arguments of a callable
(L{get_func_args_dict}, L{get_func_args}, L{get_spec}), L{without_none_values},
L{global_object_name}, L{garbage_collect}, and the chains of iterables a spider's output
is read through (L{MutableChain}, L{MutableAsyncChain}).
"""

import gc
import inspect
import re
import warnings
import weakref
from collections.abc import AsyncIterator, Iterable, Mapping
from functools import partial, wraps
from itertools import chain


def to_bytes(text, encoding=None, errors="strict"):
    """
    C{text} as C{bytes}: a C{str} encoded (utf-8 unless C{encoding} says), C{bytes} as it is.

    @raise TypeError: C{text} is neither.
    """
    if isinstance(text, bytes):
        return text
    if isinstance(text, str):
        return text.encode(encoding or "utf-8", errors)
    raise TypeError(f"to_bytes must receive a str or bytes object, got {type(text).__name__}")


def to_unicode(text, encoding=None, errors="strict"):
    """
    C{text} as C{str}: C{bytes} decoded (utf-8 unless C{encoding} says), C{str} as it is.

    @raise TypeError: C{text} is neither.
    """
    if isinstance(text, str):
        return text
    if isinstance(text, bytes):
        return text.decode(encoding or "utf-8", errors)
    raise TypeError(f"to_unicode must receive a bytes or str object, got {type(text).__name__}")


def is_listlike(x):
    """Whether C{x} is iterable and not text: lists, tuples, sets, dicts, generators,
    ranges are; C{str} and C{bytes} are not."""
    return hasattr(x, "__iter__") and not isinstance(x, (str, bytes))


def unique(list_, key=None):
    """The items of C{list_} in their order, each once (by C{key(item)} when given)."""
    seen = set()
    kept = []
    for item in list_:
        mark = item if key is None else key(item)
        if mark not in seen:
            seen.add(mark)
            kept.append(item)
    return kept


def re_rsearch(pattern, text, chunk_size=1024):
    """
    The last match of C{pattern} in C{text}, searched from the end in chunks of
    C{chunk_size} KiB (deprecated, as in Scrapy: it warns).

    @return: C{(start, end)} in C{text}, or None.
    """
    from tinyscrapy.exceptions import ScrapyDeprecationWarning
    warnings.warn("re_rsearch() is deprecated and will be removed in a future Scrapy "
                  "version.", ScrapyDeprecationWarning, stacklevel=2)
    if isinstance(pattern, str):
        pattern = re.compile(pattern)
    offset = len(text)
    while True:
        offset = max(0, offset - chunk_size * 1024)
        matches = list(pattern.finditer(text[offset:]))
        if matches:
            return offset + matches[-1].start(), offset + matches[-1].end()
        if offset == 0:
            return None


def memoizemethod_noargs(method):
    """A method decorator: the result of its first call on an object is kept (as long as
    the object lives) and given back on every later call."""
    results = weakref.WeakKeyDictionary()

    @wraps(method)
    def remembered(self, *args, **kwargs):
        if self not in results:
            results[self] = method(self, *args, **kwargs)
        return results[self]

    return remembered


_CONTROL = frozenset(range(32)) - {0, 9, 10, 13}  # NUL, tab and line ends are text


def binary_is_text(data):
    """
    Whether C{data} has no control character but NUL, tab, CR and LF.

    @raise TypeError: C{data} is not C{bytes}.
    """
    if not isinstance(data, bytes):
        raise TypeError(f"data must be bytes, got '{type(data).__name__}'")
    return not _CONTROL.intersection(data)


def get_func_args_dict(func, stripself=False):
    """
    C{{name: inspect.Parameter}} of what C{func} takes: a keyword a C{partial} binds is
    left out, and C{self} with C{stripself}; C{{}} for a callable C{inspect} cannot read
    (a built-in without a signature).

    @raise TypeError: C{func} is not callable.
    """
    if not callable(func):
        raise TypeError(f"func must be callable, got '{type(func).__name__}'")
    try:
        parameters = dict(inspect.signature(func).parameters)
    except ValueError:
        return {}
    if isinstance(func, partial) and func.keywords:
        for name in func.keywords:
            parameters.pop(name, None)
    if stripself:
        parameters.pop("self", None)
    return parameters


def get_func_args(func, stripself=False):
    """The names of what C{func} takes (L{get_func_args_dict})."""
    return list(get_func_args_dict(func, stripself))


def get_spec(func):
    """
    C{(names without a default, {name: default})} of C{func}'s positional arguments (of
    C{__call__} for a class or a callable object).

    @raise TypeError: C{func} is not callable.
    """
    if inspect.isfunction(func) or inspect.ismethod(func):
        spec = inspect.getfullargspec(func)
    elif callable(func):
        spec = inspect.getfullargspec(func.__call__)
    else:
        raise TypeError(f"{type(func)} is not callable")
    defaults = spec.defaults or ()
    required = len(spec.args) - len(defaults)
    return spec.args[:required], dict(zip(spec.args[required:], defaults, strict=True))


def without_none_values(iterable):
    """A copy of C{iterable} without its None entries: a mapping as a dict without the
    keys whose value is None, another iterable as one of its own type."""
    if isinstance(iterable, Mapping):
        return {key: value for key, value in iterable.items() if value is not None}
    return type(iterable)(value for value in iterable if value is not None)


def global_object_name(obj):
    """C{obj}'s dotted path: its module and qualified name."""
    return f"{obj.__module__}.{obj.__qualname__}"


def garbage_collect():
    """Collect garbage now (weak references included)."""
    gc.collect()


class MutableChain(Iterable):
    """An iterator over iterables that more can be added to while it is read
    (deprecated, as in Scrapy: it warns)."""

    def __init__(self, *iterables):
        from tinyscrapy.exceptions import ScrapyDeprecationWarning
        warnings.warn("MutableChain is deprecated and will be removed in a future Scrapy "
                      "version.", ScrapyDeprecationWarning, stacklevel=2)
        self.data = chain.from_iterable(iterables)

    def extend(self, *iterables):
        self.data = chain(self.data, chain.from_iterable(iterables))

    def __iter__(self):
        return self

    def __next__(self):
        return next(self.data)


async def _async_chain(*iterables):
    from tinyscrapy.utils.asyncgen import as_async_generator
    for iterable in iterables:
        async for value in as_async_generator(iterable):
            yield value


class MutableAsyncChain(AsyncIterator):
    """An asynchronous iterator over iterables (plain or asynchronous) that more can be
    added to while it is read."""

    def __init__(self, *iterables):
        self.data = _async_chain(*iterables)

    def extend(self, *iterables):
        self.data = _async_chain(self.data, _async_chain(*iterables))

    def __aiter__(self):
        return self

    async def __anext__(self):
        return await anext(self.data)
