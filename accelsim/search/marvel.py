"""MARVEL's decoupled mapper (``--mapper marvel``): the off-chip subspace first, by the
distinct-block model, then the on-chip subspace inside it, pruned as MARVEL prunes it.

Phase 1 (off-chip, :func:`accelsim.mapping.offchip.optimize_offchip`): the L2 tile and the order
of the loops over L2 tiles, exhaustively, least distinct blocks per MAC as accelsim moves the
tensors (:data:`accelsim.mapping.distinct_blocks.PHYSICAL_READING`: strided windows, the filter
window tiled like any loop; MARVEL's own reading, which Table 3 supports, found slower mappings on
marvel15's L6 and L15); tiles must fit accelsim's L2 as its buffer check counts them (boxes, strided windows' gaps
included), and among tiles of equal cost the largest is taken (more work for the PEs to share;
Table 3's comparison takes the first in MARVEL's loop order, as the paper does on its tied
layers). The candidates'
level-0 loops are that tile in that order (``TemporalMap(T, T)``), above one cluster of all PEs.

Phase 2 (on-chip, MARVEL's Algorithm 1): inside the tile, one or two parallel dimensions (MARVEL
leaves their number to the user; two fill a 2-D array): one spread over all PEs, or the first over
the array's rows of ``pe_array.cols`` PEs and the second within a row (or over the columns and
within a column), a per-PE (level-1) tile per dimension and the order of the loops over per-PE
tiles, with MARVEL's pruning (its Sec. 3.2 and evaluation settings):

* batch size 1: N is never tiled or ordered;
* R and S unrolled: a PE holds the tile's whole filter window (no R/S loop on chip);
* tile sizes divide the L2 tile's (no prologues or epilogues);
* the symmetric property: on a square tile (``Y'`` and ``X'`` tiles equal, R and S equal) a
  candidate and its width/height mirror cost the same; only the one naming ``Y'`` first is kept;
* a PE's tile, double-buffered, fits L1;
* PE utilization at least ``min_utilization`` (MARVEL's bound p, 0.1 in its evaluation): each
  parallel dimension's windows over its PEs, averaged over the rounds they fold into, multiplied.

The pruned candidates are proposed in order of utilization (highest first; MARVEL: "the highest
throughput is typically obtained at higher PE utilization"), ties in a seeded random order,
``batch`` at a time; each is checked as the simulator would check it before it is proposed.
``info()`` reports the time each phase took and the sizes of the pruned space.
"""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass
from math import prod
from typing import Any

import pandas as pd

from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.ast import ClusterDirective, Directive, MapDirective
from accelsim.mapping.distinct_blocks import PHYSICAL_READING
from accelsim.mapping.offchip import OffchipChoice, divisors, l2_tile_loops, optimize_offchip
from accelsim.search.candidates import Candidate
from accelsim.search.legality import check_candidate
from accelsim.workload.ops import Layer

UNROLLED = ("R", "S")  # filter window: whole inside a PE
BATCH = ("N",)


@dataclass(frozen=True)
class OnChip:
    """One on-chip candidate: the parallel dimensions (one, or two with ``cluster`` PEs per
    sub-unit of the first), the per-PE tile of every dimension and the order of the loops over
    per-PE tiles (outermost first), with its PE utilization."""

    spatial: tuple[str, ...]
    cluster: int  # PEs per sub-unit of the first parallel dimension (0: one parallel dimension)
    tile: dict[str, int]
    order: tuple[str, ...]
    utilization: float


def _utilization(windows: int, num_pes: int) -> float:
    """Busy share of ``num_pes`` PEs over the rounds ``windows`` windows fold into."""
    return windows / (num_pes * -(-windows // num_pes))


def onchip_candidates(layer: Layer, offchip: OffchipChoice, hw: HardwareSpec,
                      min_utilization: float) -> Iterator[OnChip]:
    """Every on-chip candidate inside ``offchip``'s tile that survives MARVEL's pruning (module
    docstring)."""
    nest = layer.loop_nest()
    top = offchip.tile
    free = [d for d in nest.dims if d not in UNROLLED + BATCH]
    l1_words = hw.l1.size_bytes // hw.word_size_bytes // (2 if hw.l1.double_buffered else 1)
    square = "Y'" in top and "X'" in top and top["Y'"] == top["X'"] and top.get("R") == top.get("S")
    for sizes in itertools.product(*(divisors(top[d]) for d in free)):
        tile = {**{d: top[d] for d in UNROLLED if d in top}, **{d: 1 for d in BATCH if d in top},
                **dict(zip(free, sizes))}
        if sum(prod(nest.extents(role, tile)) for role in nest.tensors) > l1_words:
            continue
        for spatial, cluster, utilization in _parallel_choices(free, top, tile, hw):
            if utilization < min_utilization:
                continue
            looping = [d for d in free if d not in spatial and tile[d] < top[d]]
            for order in itertools.permutations(looping):
                sequence = (*spatial, *order)
                if square and "X'" in sequence and ("Y'" not in sequence or
                                                    sequence.index("X'") < sequence.index("Y'")):
                    continue
                yield OnChip(spatial, cluster, tile, tuple(order), utilization)


def _parallel_choices(free: list[str], top: dict[str, int], tile: dict[str, int],
                      hw: HardwareSpec) -> Iterator[tuple[tuple[str, ...], int, float]]:
    """(parallel dimensions, cluster, utilization): each dimension with at least two windows over
    all PEs, and each ordered pair over the array's rows or columns (module docstring)."""
    windows = {d: top[d] // tile[d] for d in free}
    spread = [d for d in free if windows[d] >= 2]
    for d in spread:
        yield (d,), 0, _utilization(windows[d], hw.num_pes)
    shapes = sorted({hw.pe_array.cols, hw.pe_array.rows} - {1, hw.num_pes})
    for first, second in itertools.permutations(spread, 2):
        for cluster in shapes:
            units = hw.num_pes // cluster
            share = units * cluster / hw.num_pes
            yield ((first, second), cluster,
                   share * _utilization(windows[first], units) * _utilization(windows[second], cluster))


def marvel_dataflow(layer: Layer, offchip: OffchipChoice, onchip: OnChip, num_pes: int) -> list[Directive]:
    """The candidate's MAESTRO directives: the L2 tile loops (one-tile dimensions first, then the
    off-chip order), ``Cluster(num_pes)``, then the parallel dimension's ``SpatialMap`` and the
    per-PE tiles, looping ones in the on-chip order."""
    dims = layer.loop_nest().dims
    flow = l2_tile_loops(dims, offchip, num_pes)
    first = onchip.spatial[0]
    inner = [first, *onchip.order]
    inner += [d for d in dims if d not in inner]
    # a second parallel dimension stays whole on this level and is spread one level down
    size = {d: offchip.tile[d] if d in onchip.spatial[1:] else onchip.tile[d] for d in dims}
    flow += [MapDirective("spatial" if d == first else "temporal", size[d], size[d], d, 0) for d in inner]
    if onchip.cluster:
        second = onchip.spatial[1]
        flow.append(ClusterDirective(onchip.cluster, 0))
        flow += [MapDirective("spatial" if d == second else "temporal", onchip.tile[d], onchip.tile[d], d, 0)
                 for d in [second, *(d for d in dims if d != second)]]
    return flow


class MarvelMapper:
    """MARVEL's decoupled two-phase mapper over one layer (module docstring)."""

    name = "marvel"

    def __init__(self, layer: Layer, hw: HardwareSpec, seed: int = 0, min_utilization: float = 0.1,
                 batch: int = 64):
        if not 0 <= min_utilization <= 1:
            raise ValueError(f"min_utilization must lie in 0..1, got {min_utilization}")
        self.layer, self.hw, self.batch, self.min_utilization = layer, hw, batch, min_utilization
        start = time.perf_counter()
        self.offchip = optimize_offchip(layer.loop_nest(), hw, span=True, large_ties=True, reading=PHYSICAL_READING)
        self.offchip_seconds = time.perf_counter() - start
        start = time.perf_counter()
        pruned = list(onchip_candidates(layer, self.offchip, hw, min_utilization))
        random.Random(seed).shuffle(pruned)
        pruned.sort(key=lambda c: -c.utilization)
        self.onchip_seconds = time.perf_counter() - start
        self._queue = iter(pruned)
        self.space = len(pruned)
        self.proposed = 0
        self.illegal = 0

    def ask(self) -> list[Candidate]:
        out: list[Candidate] = []
        for onchip in self._queue:
            flow = marvel_dataflow(self.layer, self.offchip, onchip, self.hw.num_pes)
            if not check_candidate(self.layer, self.hw, flow).legal:
                self.illegal += 1
                continue
            out.append(flow)
            if len(out) == self.batch:
                break
        self.proposed += len(out)
        return out

    def tell(self, frame: pd.DataFrame) -> None:
        pass

    def info(self) -> dict[str, Any]:
        return {"mapper": self.name, "min_utilization": self.min_utilization,
                "offchip_tile": " ".join(f"{d}{n}" for d, n in self.offchip.tile.items()),
                "offchip_order": " ".join(self.offchip.order), "offchip_dmc": float(self.offchip.dmc),
                "offchip_tiles_scored": self.offchip.candidates, "offchip_seconds": round(self.offchip_seconds, 4),
                "onchip_pruned_space": self.space, "onchip_seconds": round(self.onchip_seconds, 4),
                "proposed": self.proposed, "illegal_skipped": self.illegal}
