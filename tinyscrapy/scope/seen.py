"""
L{FingerprintSet}: the set of fingerprints a crawl has seen, in about 24 bytes each.

A Python C{set} of 64-bit C{int}s costs about 90 bytes an entry (the int object, and the
table's hash and pointer at a load of two thirds); Scrapy's set of 20-byte C{bytes} costs
107. This table stores the 64-bit values themselves in an C{array('Q')} with open
addressing and linear probing, kept at most half full: 16 to 32 bytes an entry. The
fingerprints are already uniform hashes, so their low bits index the table directly.
"""

from array import array

_EMPTY = 0


class FingerprintSet:
    """
    A growable open-addressing hash set of non-zero 64-bit integers.

    Zero marks an empty cell, so a fingerprint of 0 is stored as 1 (one more collision in
    2**64, which is nothing beside the chance of two URLs sharing a fingerprint).
    """

    __slots__ = ("_table", "_mask", "_count")

    def __init__(self, capacity=1 << 12):
        size = 1
        while size < capacity * 2:
            size <<= 1
        self._table = array("Q", bytes(8 * size))
        self._mask = size - 1
        self._count = 0

    def __len__(self):
        return self._count

    def __contains__(self, fingerprint):
        fingerprint = fingerprint or 1
        index = fingerprint & self._mask
        value = self._table[index]
        if value == fingerprint:
            return True
        return value != _EMPTY and self._table[self._probe(fingerprint, index)] != _EMPTY

    def add(self, fingerprint):
        """Add C{fingerprint}. @return: True if it was new, False if already present."""
        fingerprint = fingerprint or 1
        table = self._table
        index = fingerprint & self._mask
        value = table[index]
        if value == fingerprint:
            return False
        if value != _EMPTY:
            index = self._probe(fingerprint, index)
            if table[index] != _EMPTY:
                return False
        table[index] = fingerprint
        self._count += 1
        if self._count * 2 > self._mask:
            self._grow()
        return True

    def _probe(self, fingerprint, index):
        """
        Linear probing on from the taken cell C{index}: the cell holding C{fingerprint},
        else the empty cell where it goes. L{__contains__} and L{add} look at the home cell
        themselves and call this only when another value sits there: the call costs more
        than that first look, which is all most lookups need in a table at most half full.
        """
        table, mask = self._table, self._mask
        while True:
            index = (index + 1) & mask
            value = table[index]
            if value == fingerprint or value == _EMPTY:
                return index

    def _grow(self):
        old = self._table
        size = (self._mask + 1) * 2
        self._table = table = array("Q", bytes(8 * size))
        self._mask = mask = size - 1
        for value in old:
            if value != _EMPTY:
                index = value & mask
                while table[index] != _EMPTY:
                    index = (index + 1) & mask
                table[index] = value

    def __iter__(self):
        return (value for value in self._table if value != _EMPTY)
