"""Words each root port of a multi-port distribution network carries in a step (see
:meth:`accelsim.hw.noc.base.DistributionNetwork.ports`), and how long a step's drains take
through fixed write ports (``reduction_noc.write_ports: interleaved``).

A port feeds a fixed block of ``block_pes`` neighbouring PEs; a multicast group (PEs receiving
the same words) costs its words once on every port whose block holds one of its members. The
profile knows a step's groups per PE class (translates of a representative); here every member
PE of a class is placed, its box moved from the representative's by ``V (u - first)``, and the
(group, port) pairs are counted. The cost is the member PEs times the rows given, in chunks.
"""

from __future__ import annotations

import numpy as np

from accelsim.mapping.compile import CompiledMapping
from accelsim.mapping.geometry import UnitClasses, pe_index

CHUNK_ENTRIES = 1 << 20  # (row, member PE) pairs placed at once


def class_members(cm: CompiledMapping, classes: UnitClasses) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per PE class: its members' sub-unit offsets from the representative, (members, levels),
    and their PE indices, (members,)."""
    offsets, pes = [], []
    for c in range(len(classes)):
        ranges = [np.arange(classes.size[c, lv]) for lv in range(classes.first.shape[1])]
        grid = np.stack(np.meshgrid(*ranges, indexing="ij"), -1).reshape(-1, len(ranges)).astype(np.int64)
        units = [(grid[:, lv] + classes.first[c, lv])[None, :] for lv in range(len(ranges))]
        offsets.append(grid)
        pes.append(np.asarray(pe_index(cm, units)).ravel())
    return offsets, pes


class PortLoads:
    """Per-case words on each port, accumulated tensor by tensor."""

    def __init__(self, cm: CompiledMapping, classes: UnitClasses, block_pes: int, ports: int):
        self.ports = ports
        self.block_pes = block_pes
        # per class: (members, levels) u - first; (members,) port of each member PE
        self.offsets, pes = class_members(cm, classes)
        self.port_of = [p // block_pes for p in pes]

    def add(self, loads: np.ndarray, velocity: np.ndarray, case: np.ndarray, klass: np.ndarray, keys: np.ndarray,
            moving: np.ndarray, words: np.ndarray, multicast: bool) -> None:
        """Add to ``loads`` (cases, ports) the words of rows (``case``, ``klass``) of one tensor:
        ``keys`` (rows, k * axes) are k box corners of each class's representative, ``moving``
        (rows, k) which corners move with the PE, ``words`` per PE of the row; ``velocity``
        (levels, axes) the tensor's. ``multicast``: PEs with equal corners form one group."""
        if len(case) == 0:
            return
        axes = velocity.shape[1]
        mask = np.repeat(moving, axes, axis=1).astype(np.int64)
        members = np.array([len(p) for p in self.port_of], dtype=np.int64)[klass]
        chunk_rows = max(1, CHUNK_ENTRIES // max(1, int(members.max())))
        for lo in range(0, len(case), chunk_rows):
            sl = slice(lo, lo + chunk_rows)
            self._add_chunk(loads, velocity, case[sl], klass[sl], keys[sl], mask[sl], words[sl], members[sl],
                            multicast)

    def _add_chunk(self, loads: np.ndarray, velocity: np.ndarray, case: np.ndarray, klass: np.ndarray,
                   keys: np.ndarray, mask: np.ndarray, words: np.ndarray, members: np.ndarray,
                   multicast: bool) -> None:
        row = np.repeat(np.arange(len(case)), members)
        port = np.concatenate([self.port_of[k] for k in klass])
        if not multicast:  # every PE its own packet
            np.add.at(loads, (case[row], port), words[row])
            return
        corners = keys.shape[1] // velocity.shape[1]
        moved = np.concatenate([self.offsets[k] @ velocity for k in klass])  # (entries, axes)
        table = np.column_stack([case[row], keys[row] + np.tile(moved, corners) * mask[row], port])
        _, first = np.unique(table, axis=0, return_index=True)
        np.add.at(loads, (case[row][first], port[first]), words[row][first])


class WritePorts:
    """A step's drain time through ``ports`` fixed one-word write ports, PE (row, col) wired to
    port ``(row * cols + col) % ports`` (PE ``p`` sits at row ``p % rows``, column ``p // rows``:
    clusters of ``rows`` PEs are the columns). A drain group (PEs holding one output tile) leaves
    through its first PE's port, ready ``ready_offset`` cycles after the first PE is done (on a
    systolic array, ``row + col`` of its farthest member; else 0), and a port writes one word per
    cycle in the order its words are ready. The drain lasts from the last group being ready until
    the busiest port's last word (at least one cycle)."""

    def __init__(self, cm: CompiledMapping, classes: UnitClasses, ports: int, rows: int, cols: int,
                 wavefront: bool):
        self.offsets, pes = class_members(cm, classes)
        row, col = [p % rows for p in pes], [p // rows for p in pes]
        self.pes = pes
        self.port_of = [(r * cols + c) % ports for r, c in zip(row, col)]
        self.ready = [r + c if wavefront else np.zeros_like(r) for r, c in zip(row, col)]

    def drain_cycles(self, cases: int, velocity: np.ndarray, case: np.ndarray, klass: np.ndarray, keys: np.ndarray,
                     words: np.ndarray) -> np.ndarray:
        """Per case (``cases`` of them), the drain cycles of rows (``case``, ``klass``) of drained
        output tiles: ``keys`` (rows, 2 * axes) the box corners of each class's representative,
        ``words`` per group; ``velocity`` (levels, axes) the output tensor's."""
        out = np.zeros(cases, dtype=np.int64)
        if len(case) == 0:
            return out
        members = np.array([len(p) for p in self.pes], dtype=np.int64)[klass]
        row = np.repeat(np.arange(len(case)), members)
        moved = np.concatenate([self.offsets[k] @ velocity for k in klass])
        pe = np.concatenate([self.pes[k] for k in klass])
        port = np.concatenate([self.port_of[k] for k in klass])
        ready = np.concatenate([self.ready[k] for k in klass])
        table = np.column_stack([case[row], keys[row] + np.tile(moved, 2)])
        order = np.lexsort((pe, *table.T[::-1]))  # by group, then PE: a group's first entry is its first PE
        _, first, group = np.unique(table[order], axis=0, return_index=True, return_inverse=True)
        group = group.ravel()
        g_ready = np.zeros(len(first), dtype=np.int64)
        np.maximum.at(g_ready, group, ready[order])
        g_case, g_port, g_words = case[row][order][first], port[order][first], words[row][order][first]
        # per (case, port), in order of readiness: a port's last word leaves at the latest
        # ready + the words ready then or later
        by = np.lexsort((-g_ready, g_port, g_case))
        c, p, r, w = g_case[by], g_port[by], g_ready[by], g_words[by].astype(np.int64)
        start = np.r_[True, (c[1:] != c[:-1]) | (p[1:] != p[:-1])]
        segment = np.cumsum(start) - 1
        # words from the segment's start (latest ready first) to here
        suffix = np.cumsum(w) - np.r_[0, np.cumsum(w)[:-1]][np.flatnonzero(start)][segment]
        finish = np.zeros(cases, dtype=np.int64)
        np.maximum.at(finish, c, r + suffix)
        latest = np.zeros(cases, dtype=np.int64)
        np.maximum.at(latest, c, r)
        drains = np.bincount(c, minlength=cases) > 0
        out[drains] = np.maximum(1, finish - latest)[drains]
        return out
