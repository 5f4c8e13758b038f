"""L{FingerprintSet}: a compact set of 64-bit fingerprints behaves as a set."""

import random

from twisted.trial import unittest

from tinyscrapy import dupefilters as seen
from tinyscrapy.dupefilters import FingerprintSet


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

    def test_exact_while_growing(self):
        """Membership stays exact at every add through many grows, old table or not."""
        self.patch(seen, "STEP", 8)  # small steps: many adds while a table moves
        self.patch(seen, "EVERY", 2)
        rng = random.Random(11)
        compact, reference = FingerprintSet(capacity=2), set()
        grows = 0
        for _ in range(6000):
            value = rng.getrandbits(64) if rng.random() < 0.8 else rng.choice([0, 1, 5])
            if reference and rng.random() < 0.2:
                value = rng.choice(sorted(reference))  # a duplicate, maybe not moved yet
            was_moving = compact.moved is not None
            self.assertEqual(compact.add(value), (value or 1) not in reference)
            reference.add(value or 1)
            grows += not was_moving and compact.moved is not None
            probe = rng.choice(sorted(reference))
            self.assertIn(probe, compact)
            self.assertNotIn(rng.getrandbits(64) | 1 << 63, compact)  # (never drawn: 2**-63)
        self.assertGreater(grows, 8)
        self.assertEqual(len(compact), len(reference))
        self.assertEqual(sorted(compact), sorted(reference))

    def test_a_grow_moves_a_bounded_number_of_cells_an_add(self):
        """Growing is spread over adds: no add moves more than STEP old cells, and only
        every EVERY-th add moves any."""
        rng = random.Random(3)
        compact = FingerprintSet(capacity=1 << 10)
        adds_while_moving = moves = 0
        for _ in range(21000):
            before = compact.moved
            compact.add(rng.getrandbits(64))
            if before is not None:
                adds_while_moving += 1
                after = compact.moved
                moved = (after if after is not None else before + seen.STEP) - before
                self.assertLessEqual(moved, seen.STEP)
                moves += moved > 0
        # five doublings, of 2048 cells up to 32768 (the last begun at the 16384th add, and
        # done by the 17408th): each spread over (old size / STEP) moves, EVERY adds apart
        old_sizes = 2048 + 4096 + 8192 + 16384 + 32768
        self.assertEqual(moves, old_sizes // seen.STEP)
        self.assertEqual(adds_while_moving, old_sizes // seen.STEP * seen.EVERY)
        self.assertIsNone(compact.moved)
