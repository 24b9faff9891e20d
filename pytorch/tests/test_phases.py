"""A step's phases and its buckets' spans from the clock reads and DDP's hand-overs and
completions (phases.split_step), on times chosen by hand."""
from __future__ import annotations

import unittest

from worker_input import TORCH_MISSING

if not TORCH_MISSING:
    import phases


@unittest.skipIf(TORCH_MISSING, TORCH_MISSING)
class SplitStep(unittest.TestCase):
    def test_a_bucket_handed_over_while_the_one_before_runs_starts_when_that_one_ends(self):
        buckets = phases.BucketTimes()
        buckets.handed += [1.0, 1.5]
        buckets.completed.update({0: 1.8, 1: 2.0})
        buckets.sizes += [400, 100]
        # previous step ended at 0, load from 0.1, forward from 0.2, backward from 0.5 to 2.0,
        # the update until 2.5.
        got = phases.split_step(0.0, 0.1, 0.2, 0.5, 2.0, 2.5, buckets)
        self.assertAlmostEqual(got.backward, 1.0)  # to the last hand-over
        self.assertAlmostEqual(got.comm, 0.5)      # from it to backward()'s return
        self.assertAlmostEqual(got.update, 0.5)
        self.assertAlmostEqual(got.other, 0.1)
        self.assertEqual(got.buckets, 2)
        expected = [[0.5, 0.5, 1.3, 400], [1.0, 1.3, 1.5, 100]]  # the second waited 0.3 s for gloo
        for span, want in zip(got.bucket_spans, expected):
            for value, wanted in zip(span, want):
                self.assertAlmostEqual(value, wanted)
        self.assertAlmostEqual(got.comm_total, 0.8 + 0.2)

    def test_a_bucket_completing_before_the_one_handed_over_earlier_keeps_its_own_completion(self):
        # gloo runs two collectives at once: a small bucket handed over at 1.5 beside a large one
        # in flight since 1.0 completes at 1.7, the large one at 2.0. Paired by completion order
        # the large one would end at 1.7 and the small at 2.0.
        buckets = phases.BucketTimes()
        buckets.handed += [1.0, 1.5]
        buckets.sizes += [400, 4]
        buckets.completed[1] = 1.7
        buckets.completed[0] = 2.0
        got = phases.split_step(0.0, 0.1, 0.2, 0.5, 2.0, 2.5, buckets)
        expected = [[0.5, 0.5, 1.5, 400], [1.0, 1.2, 1.2, 4]]  # the small one's span inside the large one's
        for span, want in zip(got.bucket_spans, expected):
            for value, wanted in zip(span, want):
                self.assertAlmostEqual(value, wanted)
        self.assertAlmostEqual(got.comm_total, 1.0)  # the time any bucket was in flight, once

    def test_every_phase_is_its_own_span_so_their_sum_checks_the_step(self):
        # other is the gap from the previous step's end to the load, measured, not what is left
        # of the total: a phase lost on the way would leave the sum short of the total.
        buckets = phases.BucketTimes()
        buckets.handed += [1.0]
        buckets.completed.update({0: 1.6})
        buckets.sizes += [4]
        got = phases.split_step(0.0, 0.25, 0.5, 0.75, 1.5, 2.0, buckets)
        self.assertEqual((got.other, got.load, got.forward, got.backward, got.comm, got.update),
                         (0.25, 0.25, 0.25, 0.25, 0.5, 0.5))
        self.assertEqual(got.total, 2.0)
        self.assertAlmostEqual(got.other + got.load + got.forward + got.backward + got.comm + got.update, got.total,
                               delta=1e-12)

    def test_without_buckets_backward_runs_to_its_return_and_nothing_is_communicated(self):
        got = phases.split_step(0.0, 0.0, 0.1, 0.3, 0.9, 1.0, None)
        self.assertAlmostEqual(got.backward, 0.6)
        self.assertEqual((got.comm, got.comm_total, got.buckets, got.bucket_spans), (0.0, 0.0, 0, []))


if __name__ == "__main__":
    unittest.main()
