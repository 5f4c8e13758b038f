"""L{FingerprintSet}: a compact set of 64-bit fingerprints behaves as a set."""

import random

from twisted.trial import unittest

from tinyscrapy.scope.seen import FingerprintSet


class FingerprintSetTests(unittest.TestCase):
    """Membership, growth and the zero value."""

    def test_behaves_like_a_set(self):
        """Through several growths, add() and `in` agree with a Python set."""
        rng = random.Random(5)
        values = [rng.getrandbits(64) for _ in range(20000)] + [7, 7, 2**64 - 1]
        compact, reference = FingerprintSet(capacity=4), set()
        for value in values:
            self.assertEqual(compact.add(value), value not in reference)
            reference.add(value)
        self.assertEqual(len(compact), len(reference))
        self.assertEqual(set(compact), reference)
        absent = [rng.getrandbits(64) for _ in range(2000)]
        for value in absent:
            self.assertEqual(value in compact, value in reference)

    def test_zero_is_a_value(self):
        """0 (the empty-cell marker) can still be added and found."""
        compact = FingerprintSet()
        self.assertTrue(compact.add(0))
        self.assertIn(0, compact)
        self.assertFalse(compact.add(0))
