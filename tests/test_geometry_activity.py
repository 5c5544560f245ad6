"""``last_active`` (accelsim.mapping.geometry), which the demand table uses to find the step whose
partial sums a step reads back, against its definition scanned index by index: for each loop
from ``first_free`` on, in order, the last index at which each sub-unit tuple works, the loops
before it fixed and the loops after it at 0 (0 where it works at none). The function tries only
the last index of each run between the loop's points (activity is constant within a run), all of
them at once; the scan tries every index one at a time. The cases run over every operator, the
named styles and random mappings (tests/test_properties.py's strategies), with three random rows
of fixed outer indices for every choice of ``first_free``, and four rows with a first free loop
each.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings

from accelsim.mapping.geometry import boxes, last_active, loop_points, unit_indices
from test_properties import MAX_EXAMPLES, SETTINGS, compile_or_reject, random_cases, style_cases

CASES = settings(SETTINGS, max_examples=max(20, MAX_EXAMPLES // 4))


def _scanned(cm, idx, first_free, units):
    """The definition, one index at a time."""
    shape = np.broadcast_shapes(*(np.shape(i) for i in idx[:first_free]), *(np.shape(u) for u in units))
    out = [np.broadcast_to(i, shape).copy() for i in idx[:first_free]]
    out += [np.zeros(shape, dtype=np.int64) for _ in range(first_free, len(cm.loops))]
    for li in range(first_free, len(cm.loops)):
        best = np.zeros(shape, dtype=np.int64)
        for index in range(cm.loops[li].trips):
            trial = out[:li] + [np.full(shape, index, dtype=np.int64)] + out[li + 1:]
            best = np.where(boxes(cm, trial, units).active, index, best)
        out[li] = best
    return out


def _check(case, data_seed: int) -> None:
    layer, hw, dataflow = case
    cm = compile_or_reject(layer, dataflow, hw)
    if not cm.loops or sum(loop.trips for loop in cm.loops) > 400:
        return  # the scan tries every index: keep it small
    units, _ = unit_indices(cm, np.arange(cm.used_pes, dtype=np.int64))
    units = [u[None, :] for u in units]
    rng = np.random.default_rng(data_seed)
    points = loop_points(cm)
    for first_free in range(len(cm.loops) + 1):
        # three rows of fixed outer indices, drawn anywhere in their loops
        idx = [rng.integers(0, loop.trips, size=(3, 1)) for loop in cm.loops[:first_free]]
        idx += [np.zeros((3, 1), dtype=np.int64)] * (len(cm.loops) - first_free)
        got = last_active(cm, idx, first_free, units, points)
        want = _scanned(cm, idx, first_free, units)
        for li, (g, w) in enumerate(zip(got, want)):
            np.testing.assert_array_equal(np.broadcast_to(g, w.shape), w, err_msg=f"loop {li}, free from {first_free}")
    # a first free loop per row (as the previous step of each case and the first L2 tile of
    # every tile-loop count ask for it) gives each row what its own first free loop gives
    free = rng.integers(0, len(cm.loops) + 1, size=4)
    idx = [np.where(free[:, None] > li, rng.integers(0, loop.trips, size=(4, 1)), 0) for li, loop in enumerate(cm.loops)]
    got = last_active(cm, idx, free, units, points)
    for row, first_free in enumerate(free.tolist()):
        want = _scanned(cm, [i[row:row + 1] for i in idx], first_free, units)
        for li, (g, w) in enumerate(zip(got, want)):
            np.testing.assert_array_equal(g[row:row + 1], w, err_msg=f"loop {li}, row {row} free from {first_free}")


@CASES
@given(case=random_cases())
def test_last_active_matches_the_index_scan_on_random_mappings(case):
    _check(case, 1)


@CASES
@given(case=style_cases())
def test_last_active_matches_the_index_scan_on_style_mappings(case):
    _check(case, 2)
