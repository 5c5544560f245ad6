"""L2 tiles: which loops step from one L2 tile to the next, the union box a tile holds, and the
DRAM traffic of each tile (read per tensor, partial sums read back, outputs written back, and
the contiguous runs they form in DRAM). Mapping semantics both timing models read.

L2 holds the union of the data of as many innermost level-0 loops as fit its capacity; the
level-0 loops outside them (the *tile loops*) step from tile to tile. A tile reads the part
of each operand's box outside the previous tile's box; an output tile revisited later is
written back as partial sums and read back at the start of its next visit.

**Bypass** (``hw.l2.keeps``): an operand L2 does not keep takes no L2 space (the tile choice,
``l2_required_words`` and a tile's footprint leave it out) and is never read from or written
to L2: the words the PEs need of it at each step (the step's packets, one per multicast group,
as the distribution network would send them from L2) come from DRAM. A tile's DRAM read of
such an operand is the sum over the tile's steps of those words, one contiguous run per packet
(:meth:`TileSchedule.stream`, given by :class:`accelsim.mapping.demand.ScheduleProfile`), and
travels in the tile's DMA transfer with its other words.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from math import prod

import numpy as np

from accelsim.mapping.compile import CompiledMapping
from accelsim.mapping.geometry import (
    Cases,
    boxes,
    enumerate_cases,
    every_index_classes,
    last_active,
    level_intervals,
    loop_classes,
    loop_points,
    loop_strides,
    previous_active,
    step_loop_indices,
    volume,
)
from accelsim.mapping.runs import VisitOrder, class_of, delta_runs, dram_runs, l2_view, output_loop_structure
from accelsim.workload.operators import OPERAND_ROLES


@dataclass(frozen=True)
class TileDemand:
    """DRAM traffic of one L2 tile."""

    read_words: dict[str, int]  # input, weight, output (output = partial sums read back)
    read_runs: dict[str, int]  # contiguous runs in DRAM (in each tensor's layout)
    write_words: int  # output words written back at the end of the tile (0 if kept)
    write_runs: int
    # each tensor's box in the tile: (lo, hi) index per tensor axis, inclusive (empty: no work)
    boxes: dict[str, tuple[list[int], list[int]]] = field(default_factory=dict, compare=False)
    # the tile whose write-back put the partial sums read back here into DRAM (-1: none read)
    partial_sums_tile: int = -1
    # words of all tensors in the tile (its boxes' volumes), and those of them the tile before
    # it (when it has work) already holds: a tile takes ``footprint_words - kept_words`` new
    # words of L2 space, ``read_words`` of them from DRAM
    footprint_words: int = 0
    kept_words: int = 0


@dataclass(frozen=True)
class TileTable:
    """The DRAM traffic of every L2 tile case (arrays of length ``len(cases)``; cases over the
    classes of the tile loops): words read per tensor (output: partial sums read back) and
    written back, the contiguous runs the reads (all tensors) and the write-back form, how
    many tiles back the write-back lies whose partial sums a tile reads (0: none read), and
    the tile's words in L2 and those of them kept from the tile before (see :class:`TileDemand`)."""

    cases: Cases
    read_words: dict[str, np.ndarray]
    read_runs: np.ndarray
    write_words: np.ndarray
    write_runs: np.ndarray
    partial_sums_source: np.ndarray
    footprint_words: np.ndarray
    kept_words: np.ndarray


class TileSchedule:
    """The L2 tiles of a mapping and the DRAM traffic of each, by tile index.

    L2 holds the union of the data of as many innermost level-0 loops as fit
    ``l2_capacity_words`` (a double-buffered L2 offers half its size); the level-0 loops outside
    them (the *tile loops*) step from one L2 tile to the next. The first tile is the largest
    (windows only shrink at ragged ends), so it decides how many loops fit. ``traffic`` gives a
    tile's counts (computed once per case of the tile loops), ``demand`` also its boxes.
    """

    CACHE_LIMIT = 4096

    def __init__(self, cm: CompiledMapping, l2_capacity_words: int, exact: bool = False,
                 bypass: frozenset[str] = frozenset()):
        self.cm = cm
        # operands L2 does not keep (their words stream from DRAM; see the module docstring)
        self.bypass = bypass
        self.kept_roles = tuple(role for role in cm.nest.tensors if role not in bypass)
        self._streamed: dict[tuple[int, ...], tuple[dict[str, int], int]] = {}
        self.top = l2_view(cm)
        top = self.top
        self.points = loop_points(top)
        # the level-0 sub-units that bound a tile: the first and last of every interval of
        # sub-units that behave alike (indices only grow with the sub-unit)
        edges = sorted({u for first, size in level_intervals(top)[0] for u in (first, first + size - 1)})
        self.edge_units = np.array(edges, dtype=np.int64)[None, :]
        loops0 = len(top.loops)
        # the smallest L2 tile is one level-0 iteration; a tile of the first k loops' iterations
        words = self._first_tile_words()
        self.l2_required_words = words[loops0]
        k = next((k for k in range(loops0) if words[k] <= l2_capacity_words), loops0)
        self.tile_loops = k
        self.view = CompiledMapping(cm.layer, cm.nest, top.levels, top.loops[:k], top.num_pes, cm.source)
        self.count = self.view.steps
        self.steps_per_tile = cm.steps_per_top_step * prod(loop.trips for loop in top.loops[k:])
        self.run_steps, self.outer_red = output_loop_structure(self.view)
        self.visits = VisitOrder(self.view)
        self.full = {role: cm.nest.extents(role) for role in cm.nest.tensors}
        self.view_points = loop_points(self.view)
        self.view_classes = every_index_classes(self.view) if exact else [
            loop_classes(p, loop.trips) for p, loop in zip(self.view_points, self.view.loops)]
        self.view_class_starts = [[c.first for c in cls] for cls in self.view_classes]
        self.view_strides = loop_strides(self.view)
        self._cache: dict[int, TileDemand] = {}
        self._traffic: dict[tuple[int, ...], tuple[TileDemand, int]] = {}

    def prefetch_space_words(self, l2_words: int) -> int:
        """The words a single-buffered L2 of ``l2_words`` words offers tiles under ``l2.prefetch:
        free_space`` (0: prefetch off): an L2 too small for one tile still holds one tile, as
        everywhere else."""
        return max(l2_words, self.l2_required_words) if l2_words else 0

    def _first_tile_words(self) -> list[int]:
        """Words of the tensors L2 keeps in the first tile when the first ``k`` level-0 loops
        are tile loops, for every ``k`` from 0 to all of them (all at once)."""
        loops0 = len(self.top.loops)
        box, worked = self._union_boxes(np.zeros((loops0 + 1, loops0), dtype=np.int64), np.arange(loops0 + 1))
        words = sum(volume(*box[role]) for role in self.kept_roles)
        return np.where(worked, words, 0).tolist()

    def stream(self, words: dict[tuple[int, ...], dict[str, int]], runs: dict[tuple[int, ...], int]) -> None:
        """Set, per tile case (its class along each tile loop), the DRAM words of each bypassed
        operand one tile of the case reads for its steps, and their contiguous runs: given by
        the step demand (:class:`accelsim.mapping.demand.ScheduleProfile`) before any traffic
        is asked for."""
        self._streamed = {case: (words[case], runs.get(case, 0)) for case in words}
        self._traffic.clear()
        self._cache.clear()

    def _tile_case(self, tile: int) -> tuple[int, ...]:
        """The class of each tile loop's index at tile ``tile``."""
        return tuple(class_of(starts, i) for starts, i in zip(self.view_class_starts, self._indices(tile)))

    def _streamed_words(self, case: tuple[int, ...]) -> tuple[dict[str, int], int]:
        """(words per bypassed operand, runs) a tile of ``case`` reads from DRAM for its steps."""
        if not self.bypass:
            return {}, 0
        return self._streamed.get(case, ({role: 0 for role in self.bypass}, 0))

    def _union_box(self, tile_idx: list[int]) -> dict[str, tuple[list[int], list[int]]] | None:
        """Per tensor, the union box of every level-0 sub-unit over the inner level-0 loops of
        the tile whose tile-loop indices are ``tile_idx``; None if no sub-unit works in it
        (:meth:`_union_boxes` of one tile)."""
        box, worked = self._union_boxes(np.array([tile_idx], dtype=np.int64).reshape(1, len(tile_idx)))
        if not worked[0]:
            return None
        return {role: (lo[:, 0].tolist(), hi[:, 0].tolist()) for role, (lo, hi) in box.items()}

    def _indices(self, tile: int) -> list[int]:
        return step_loop_indices(self.view, tile) if self.tile_loops else []

    def valid(self, tile: int) -> bool:
        """Some level-0 sub-unit works in the tile: the first one does at the inner loops'
        first iteration (the view's boxes keep the inner loops whole)."""
        idx = [np.full((1, 1), i, dtype=np.int64) for i in self._indices(tile)]
        return bool(boxes(self.view, idx, [np.zeros((1, 1), dtype=np.int64)]).active[0, 0])

    def previous_valid(self, tile: int) -> int:
        """The last tile before ``tile`` in which some sub-unit works, or -1."""
        if tile <= 0:
            return -1
        if self.valid(tile - 1):
            return tile - 1
        rep = np.array([self._indices(tile)], dtype=np.int64)
        prev, has_prev = previous_active(self.view, rep, [np.zeros((1, 1), dtype=np.int64)], self.view_points)
        if not has_prev[0]:
            return -1
        strides = loop_strides(self.view)
        found = int(sum(int(p[0, 0]) * s for p, s in zip(prev, strides)))
        return found if self.valid(found) else -1

    def traffic(self, tile: int) -> TileDemand:
        """DRAM traffic of tile ``tile`` without its boxes: the same for every tile of one case
        (one class of indices per tile loop), so computed once per case."""
        case = self._tile_case(tile)
        found = self._traffic.get(case)
        if found is None:
            rep = sum(self.view_classes[i][k].first * s for i, (k, s) in enumerate(zip(case, self.view_strides)))
            full = self._demand(rep)
            found = self._traffic[case] = (
                TileDemand(full.read_words, full.read_runs, full.write_words, full.write_runs,
                           footprint_words=full.footprint_words, kept_words=full.kept_words),
                rep - full.partial_sums_tile if full.partial_sums_tile >= 0 else -1)
        template, back = found
        return template if back < 0 else replace(template, partial_sums_tile=tile - back)

    def table(self) -> TileTable:
        """The traffic of every tile case, each computed on its first tile: all cases at once,
        except those whose previous tile or partial-sum source has no work (or that have none
        themselves), which take :meth:`_demand`'s search one by one."""
        cases = enumerate_cases(self.view_classes)
        n, k = len(cases), self.tile_loops
        rep = cases.rep
        tiles = rep @ np.array(self.view_strides, dtype=np.int64) if k else np.zeros(n, dtype=np.int64)
        # the tile before each (indices one step back in lexicographic order)
        nonzero = rep > 0
        has_prev = np.asarray(nonzero.any(axis=1), dtype=bool)
        prev = rep.copy()
        for row in np.nonzero(has_prev)[0]:
            j = k - 1 - int(np.argmax(nonzero[row, ::-1]))
            prev[row, j] -= 1
            prev[row, j + 1:] = [self.view.loops[i].trips - 1 for i in range(j + 1, k)]
        # each tile's union box and its previous tile's, found together
        both, worked_both = self._union_boxes(np.concatenate([rep, prev]))
        box = {role: (lo[:, :n], hi[:, :n]) for role, (lo, hi) in both.items()}
        prev_box = {role: (lo[:, n:], hi[:, n:]) for role, (lo, hi) in both.items()}
        worked = worked_both[:n]
        prev_ok = has_prev & self._valid_many(prev)
        start = tiles % self.run_steps == 0
        end = ((tiles + 1) % self.run_steps == 0) | (tiles == self.count - 1)
        revisit = (rep[:, self.outer_red] > 0).any(axis=1) if self.outer_red else np.zeros(n, dtype=bool)
        reads_back = start & revisit
        source = np.array([self.visits.previous_end(int(t)) if r else -1 for t, r in zip(tiles, reads_back)],
                          dtype=np.int64)
        source_rows = np.nonzero(source >= 0)[0]
        source_ok = np.ones(n, dtype=bool)
        if len(source_rows):
            src_idx = np.array([self._indices(int(source[r])) for r in source_rows], dtype=np.int64).reshape(
                len(source_rows), k)
            source_ok[source_rows] = self._valid_many(src_idx)
        fallback = ~worked | (has_prev & ~prev_ok) | ~source_ok
        nest = self.cm.nest
        reads = {role: np.zeros(n, dtype=np.int64) for role in nest.tensors}
        read_runs, write_words, write_runs, back = (np.zeros(n, dtype=np.int64) for _ in range(4))
        footprint, kept = (np.zeros(n, dtype=np.int64) for _ in range(2))
        for role in self.kept_roles:
            lo, hi = box[role]
            plo, phi = prev_box[role]
            inter = np.where(has_prev, volume(np.maximum(lo, plo), np.minimum(hi, phi)), 0)
            footprint += volume(lo, hi)
            kept += inter
            if role not in OPERAND_ROLES:
                continue
            reads[role] = volume(lo, hi) - inter
            for i in np.nonzero(reads[role] > 0)[0]:
                read_runs[i] += delta_runs(lo[:, i].tolist(), hi[:, i].tolist(),
                                           (plo[:, i].tolist(), phi[:, i].tolist()) if has_prev[i] else None,
                                           self.full[role], nest.layout(role))
        olo, ohi = box["output"]
        ovol = volume(olo, ohi)
        oruns = np.array([dram_runs((ohi[:, i] - olo[:, i] + 1).tolist(), self.full["output"], nest.layout("output"))
                          for i in range(n)], dtype=np.int64)
        reads["output"] = np.where(reads_back, ovol, 0)
        read_runs += np.where(reads_back, oruns, 0)
        write_words, write_runs = np.where(end, ovol, 0), np.where(end, oruns, 0)
        back = np.where(source >= 0, tiles - source, 0)
        if self.bypass:
            for c, row in enumerate(cases.klass.tolist()):
                streamed, case_runs = self._streamed_words(tuple(row))
                for role, words in streamed.items():
                    reads[role][c] = words
                read_runs[c] += case_runs
        for i in np.nonzero(fallback)[0]:
            tile = int(tiles[i])
            td = self._demand(tile)
            for role, words in td.read_words.items():
                reads[role][i] = words
            read_runs[i] = sum(td.read_runs.values())
            write_words[i], write_runs[i] = td.write_words, td.write_runs
            back[i] = tile - td.partial_sums_tile if td.partial_sums_tile >= 0 else 0
            footprint[i], kept[i] = td.footprint_words, td.kept_words
        return TileTable(cases, reads, read_runs, write_words, write_runs, back, footprint, kept)

    def _union_boxes(self, rows: np.ndarray, first_free: np.ndarray | None = None
                     ) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], np.ndarray]:
        """Per tensor, the union box of every level-0 sub-unit over the inner level-0 loops of
        the tiles whose first level-0 loop indices are the rows of ``rows`` (tiles, loops
        given), the loops from ``first_free`` on (per tile, 0 in ``rows``; default: those not
        given) inner:
        (lo, hi) arrays (axes, tiles), and whether some sub-unit works in each tile (where
        none does, the boxes are meaningless). The lowest corner is at the inner loops' first
        iteration and the first sub-unit; the highest at each sub-unit's last iteration
        (indices only grow along a loop and with the sub-unit, so the edges of the intervals
        of alike sub-units suffice)."""
        top = self.top
        n = rows.shape[0]
        units = [self.edge_units]
        if first_free is None:
            first_free = np.full(n, rows.shape[1], dtype=np.int64)
        fixed = [rows[:, j:j + 1] for j in range(rows.shape[1])] + \
            [np.zeros((n, 1), dtype=np.int64)] * (len(top.loops) - rows.shape[1])
        low = boxes(top, fixed, units)
        high = boxes(top, last_active(top, fixed, first_free, units, self.points), units)
        out = {}
        for role in top.nest.tensors:
            lo = np.where(low.active[None], low.tensor(top.nest, role)[0], np.iinfo(np.int64).max).min(axis=2)
            hi = np.where(high.active[None], high.tensor(top.nest, role)[1], -1).max(axis=2)
            out[role] = (lo, hi) if lo.shape[1] == n else (  # no level-0 loops: one box for every row
                np.repeat(lo, n, axis=1), np.repeat(hi, n, axis=1))
        worked = np.asarray(low.active.any(axis=1), dtype=bool)
        return out, worked if len(worked) == n else np.repeat(worked, n)

    def _valid_many(self, rows: np.ndarray) -> np.ndarray:
        """:meth:`valid` of the tiles whose tile-loop indices are the rows of ``rows``."""
        idx = [rows[:, j:j + 1] for j in range(rows.shape[1])]
        return np.asarray(boxes(self.view, idx, [np.zeros((1, 1), dtype=np.int64)]).active[:, 0], dtype=bool)

    def demand(self, tile: int) -> TileDemand:
        """DRAM traffic of tile ``tile`` with its boxes (cached)."""
        found = self._cache.get(tile)
        if found is None:
            if len(self._cache) >= self.CACHE_LIMIT:
                self._cache.clear()
            found = self._cache[tile] = self._demand(tile)
        return found

    def _demand(self, t: int) -> TileDemand:
        nest = self.cm.nest
        box = self._union_box(self._indices(t))
        reads = {role: 0 for role in nest.tensors}
        runs = {role: 0 for role in nest.tensors}
        if box is None:
            return TileDemand(reads, runs, 0, 0)
        p = self.previous_valid(t)
        prev = self._union_box(self._indices(p)) if p >= 0 else None
        streamed, streamed_runs = self._streamed_words(self._tile_case(t))
        reads.update(streamed)
        if streamed_runs:
            runs[sorted(streamed)[0]] = streamed_runs
        for role in OPERAND_ROLES:
            if role in self.bypass:
                continue
            lo, hi = box[role]
            vol = prod(b - a + 1 for a, b in zip(lo, hi))
            inter = 0 if prev is None else prod(
                max(0, min(b, pb) - max(a, pa) + 1) for a, b, pa, pb in zip(lo, hi, *prev[role]))
            reads[role] = vol - inter
            if vol > inter:
                runs[role] = delta_runs(lo, hi, None if prev is None else prev[role], self.full[role],
                                         nest.layout(role))
        footprint = sum(prod(b - a + 1 for a, b in zip(*box[role])) for role in self.kept_roles)
        kept = 0 if p != t - 1 or prev is None else sum(
            prod(max(0, min(b, pb) - max(a, pa) + 1) for a, b, pa, pb in zip(*box[role], *prev[role]))
            for role in self.kept_roles)
        olo, ohi = box["output"]
        oext = [b - a + 1 for a, b in zip(olo, ohi)]
        ovol = prod(oext)
        oruns = dram_runs(oext, self.full["output"], nest.layout("output"))
        idx = self._indices(t)
        revisit = any(idx[i] > 0 for i in self.outer_red)
        start = t % self.run_steps == 0
        end = (t + 1) % self.run_steps == 0 or t == self.count - 1
        source = -1
        if start and revisit:
            reads["output"], runs["output"] = ovol, oruns
            source = self.visits.previous_end(t)
            while source >= 0 and not self.valid(source):  # no work there: nothing written back
                source = self.visits.previous_end(source)
        return TileDemand(reads, runs, ovol if end else 0, oruns if end else 0, box, source, footprint, kept)
