"""Words each root port of a multi-port distribution network carries in a step (see
:meth:`accelsim.hw.noc.base.DistributionNetwork.ports`).

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


class PortLoads:
    """Per-case words on each port, accumulated tensor by tensor."""

    def __init__(self, cm: CompiledMapping, classes: UnitClasses, block_pes: int, ports: int):
        self.ports = ports
        self.block_pes = block_pes
        self.offsets: list[np.ndarray] = []  # per class: (members, levels) u - first
        self.port_of: list[np.ndarray] = []  # per class: (members,) port of each member PE
        for c in range(len(classes)):
            ranges = [np.arange(classes.size[c, lv]) for lv in range(classes.first.shape[1])]
            grid = np.stack(np.meshgrid(*ranges, indexing="ij"), -1).reshape(-1, len(ranges)).astype(np.int64)
            units = [(grid[:, lv] + classes.first[c, lv])[None, :] for lv in range(len(ranges))]
            self.offsets.append(grid)
            self.port_of.append(np.asarray(pe_index(cm, units)).ravel() // block_pes)

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
