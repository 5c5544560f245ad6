"""dMazeRunner's unique-reuse loop-order pruning (Dave et al., TECS 2019, Sec. 4.2.1, Algorithms 1-2,
Table 2).

At one level of a tiled loop nest, an operand fetched from the memory below is reused across the
innermost run of loops it does not depend on: its *reuse factor* is the product of those loops'
trip counts, counted from the innermost loop outwards up to the first loop that indexes it
(Algorithm 1; loops of trip count 1 are skipped). Two loop orders whose operands have the same
innermost runs move the same data between the two memories, so an exhaustive search needs only
one order per distinct set of runs. For a convolution whose seven loops all iterate, that keeps 15
of the 7! = 5,040 orders (Table 2): one with ``K`` innermost (input reused), seven whose innermost
loops are a non-empty subset of ``N``, ``Y'``, ``X'`` (weights reused) and seven of ``C``, ``R``,
``S`` (outputs reused).

Reading taken here: the runs are told apart as *sets of loops*, not as the numbers their trip
counts multiply to (two different loops of equal trip count reuse different blocks), so the count
depends only on which loops iterate, never on their sizes. The order kept for each set of runs is
the first one in :func:`itertools.permutations` order of the loops as given, which makes the
choice deterministic; which representative is kept is not otherwise specified by the paper.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from functools import lru_cache

from accelsim.workload.loopnest import LoopNest

Reuse = tuple[frozenset[str], ...]  # per tensor, the innermost loops it is reused across


def tensor_dims(nest: LoopNest) -> dict[str, frozenset[str]]:
    """Per tensor role, the dimensions its index axes depend on."""
    return {role: frozenset(d for axis in axes for d, _ in axis) for role, axes in nest.tensors.items()}


def reuse_runs(order: Sequence[str], depends: Mapping[str, frozenset[str]]) -> Reuse:
    """Per tensor (in ``depends``' order), the innermost loops of ``order`` (outermost first, every
    loop iterating) that it does not depend on, up to the first one it does (Algorithm 1)."""
    runs = []
    for dims in depends.values():
        run: set[str] = set()
        for dim in reversed(order):
            if dim in dims:
                break
            run.add(dim)
        runs.append(frozenset(run))
    return tuple(runs)


def unique_reuse_orders(looping: Sequence[str], depends: Mapping[str, frozenset[str]]) -> tuple[tuple[str, ...], ...]:
    """One order (outermost first) of the iterating loops ``looping`` per distinct reuse of the
    tensors (see the module docstring)."""
    return _unique_orders(tuple(looping), tuple((role, dims) for role, dims in depends.items()))


@lru_cache(maxsize=4096)
def _unique_orders(looping: tuple[str, ...],
                   depends: tuple[tuple[str, frozenset[str]], ...]) -> tuple[tuple[str, ...], ...]:
    by_reuse: dict[Reuse, tuple[str, ...]] = {}
    table = dict(depends)
    for order in itertools.permutations(looping):
        by_reuse.setdefault(reuse_runs(order, table), order)
    return tuple(by_reuse.values())
