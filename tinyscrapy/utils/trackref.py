"""
Live references of tracked objects, as Scrapy's C{scrapy.utils.trackref}: a class that
inherits from L{object_ref} has its live instances counted in L{live_refs}, each with the
time it was made, for L{format_live_refs} (the telnet console's C{prefs()}), L{get_oldest}
and L{iter_all}, and for the C{memdebug/live_refs/<Class>} stats of
L{tinyscrapy.extensions.memdebug.MemoryDebugger}. Requests, responses, items, selectors
and spiders are L{object_ref}s.

Unlike Scrapy's, tracking costs nothing until it is switched on: while it is off,
L{object_ref} defines no C{__new__}, so making a request calls C{object.__new__}
directly, as if it had no such base, and no byte is kept for it. L{start_tracking}
switches it on for the rest of the process; the extensions that read live references
do when they are enabled (C{MEMDEBUG_ENABLED}, the telnet console, L{StackTraceDump
<tinyscrapy.extensions.debug.StackTraceDump>}). From then on every instance made is
remembered through a weak reference, with its creation time.
"""

from operator import itemgetter
from time import monotonic_ns
from types import NoneType
from weakref import WeakKeyDictionary

# class -> {instance: creation time in nanoseconds (monotonic)}, both weakly held
live_refs = WeakKeyDictionary()


class object_ref:
    """Inherit from this class to have live instances tracked (once L{start_tracking}
    was called)."""

    __slots__ = ()


def _new_tracked(cls, *args, **kwargs):
    """C{object_ref.__new__} while tracking: make the instance, and remember it."""
    instance = object.__new__(cls)
    _remember(instance)
    return instance


def _remember(instance):
    cls = type(instance)
    refs = live_refs.get(cls)
    if refs is None:
        refs = live_refs[cls] = WeakKeyDictionary()
    try:
        refs[instance] = monotonic_ns()
    except TypeError:  # a subclass with __slots__ but no __weakref__: not trackable
        pass


def tracking():
    """@return: whether instances of L{object_ref} are being tracked."""
    return object_ref.__dict__.get("__new__") is not None


def start_tracking(*existing):
    """
    Track every L{object_ref} instance made from now on, for the rest of the process
    (calling it again does nothing more).

    @param existing: instances made before, to track as well (the crawl's spider, made
        before the extensions that switch tracking on); ones that are not L{object_ref}s
        are left out.
    """
    if not tracking():
        object_ref.__new__ = staticmethod(_new_tracked)
    for instance in existing:
        if isinstance(instance, object_ref):
            _remember(instance)


def format_live_refs(ignore=NoneType):
    """
    @param ignore: a class, or a tuple of classes, whose instances are left out.
    @return: a table of the tracked classes that have live instances: their count and
        the age of the oldest, sorted by class name.
    """
    text = "Live References\n\n"
    now = monotonic_ns()
    for cls, refs in sorted(live_refs.items(), key=_class_name):
        if not refs or issubclass(cls, ignore):
            continue
        oldest = min(refs.values())
        text += f"{cls.__name__:<30} {len(refs):6}   oldest: {(now - oldest) // 10**9}s ago\n"
    return text


def _class_name(pair):
    return pair[0].__name__


def print_live_refs(*args, **kwargs):
    """Print L{format_live_refs}'s table (the telnet console's C{prefs()})."""
    print(format_live_refs(*args, **kwargs))


def get_oldest(class_name):
    """@return: the oldest live instance of the tracked class called C{class_name}, or
    None."""
    for cls, refs in live_refs.items():
        if cls.__name__ == class_name:
            if not refs:
                break
            return min(refs.items(), key=itemgetter(1))[0]
    return None


def iter_all(class_name):
    """@return: an iterable of the live instances of the tracked class called
    C{class_name} (empty when there is none)."""
    for cls, refs in live_refs.items():
        if cls.__name__ == class_name:
            return refs.keys()
    return ()
