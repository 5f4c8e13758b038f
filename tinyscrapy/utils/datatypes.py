"""
Scrapy's C{scrapy.utils.datatypes}: containers the standard library lacks.

    - L{CaseInsensitiveDict}: C{str} or C{bytes} keys looked up in any casing (a
      subclass normalises keys and values through C{_normkey} and C{_normvalue});
    - L{LocalCache}: a dict of at most C{limit} keys, the oldest dropped first;
    - L{LocalWeakReferencedCache}: the same, holding its keys weakly (for memoising
      without keeping the arguments alive);
    - L{SequenceExclude}: C{x in SequenceExclude(s)} is C{x not in s}.
"""

import weakref
from collections import OrderedDict, UserDict


class CaseInsensitiveDict(UserDict):
    """A dict whose keys (C{str} or C{bytes}) are found in any casing, and kept in the
    casing they were last set in."""

    def __init__(self, *args, **kwargs):
        self._keys = {}  # lower-cased key -> the key as stored
        super().__init__(*args, **kwargs)

    def __getitem__(self, key):
        return self.data[self._keys[self._normkey(key).lower()]]

    def __setitem__(self, key, value):
        key = self._normkey(key)
        stored = self._keys.pop(key.lower(), None)
        if stored is not None:
            del self.data[stored]
        self.data[key] = self._normvalue(value)
        self._keys[key.lower()] = key

    def __delitem__(self, key):
        del self.data[self._keys.pop(self._normkey(key).lower())]

    def __contains__(self, key):
        return self._normkey(key).lower() in self._keys

    def __repr__(self):
        return f"<{type(self).__name__}: {self.data!r}>"

    def __copy__(self):
        clone = type(self)()
        clone.data = self.data.copy()
        clone._keys = self._keys.copy()
        return clone

    copy = __copy__

    def __ior__(self, other):
        self.update(other)
        return self

    def _normkey(self, key):
        return key

    def _normvalue(self, value):
        return value


class LocalCache(OrderedDict):
    """A dict of at most C{limit} keys (None: no limit): setting a new key drops the
    oldest ones first."""

    def __init__(self, limit=None):
        super().__init__()
        self.limit = limit

    def __setitem__(self, key, value):
        if self.limit is not None:
            if self.limit == 0:
                return
            if key not in self:
                while len(self) >= self.limit:
                    self.popitem(last=False)
        super().__setitem__(key, value)


class LocalWeakReferencedCache(weakref.WeakKeyDictionary):
    """
    A L{LocalCache} that holds its keys weakly: an entry goes when its key is collected.
    A key that cannot be weakly referenced is not kept; looking one up, or a key not
    kept, gives None (not C{KeyError}).
    """

    def __init__(self, limit=None):
        super().__init__()
        self.data = LocalCache(limit=limit)

    def __setitem__(self, key, value):
        try:
            super().__setitem__(key, value)
        except TypeError:  # not weakly referenceable: not cached
            pass

    def __getitem__(self, key):
        try:
            return super().__getitem__(key)
        except (TypeError, KeyError):
            return None


class SequenceExclude:
    """A container of everything but what C{seq} holds."""

    def __init__(self, seq):
        self.seq = seq

    def __contains__(self, item):
        return item not in self.seq
