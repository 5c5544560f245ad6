"""Words each root port of a multi-port distribution network carries in a step (see
:meth:`accelsim.hw.noc.base.DistributionNetwork.ports`), and how long a step's drains take
through fixed write ports (``reduction_noc.write_ports``: ``interleaved``, as STONNE's TPU mesh,
or ``collection_bus``, as STONNE's MAERI).

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
        g = drain_groups(self.offsets, self.pes, velocity, case, klass, keys, words, [self.port_of, self.ready])
        g_case, g_words = g.case, g.words
        g_port = np.asarray(g.first_values[0])
        g_ready = np.asarray(g.max_values[1])
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


class DrainGroups:
    """The drain groups of some rows, one entry per group: its ``case``, ``words``, first and
    last PE, and per extra member attribute its value at the first PE (``first_values``) and
    its largest (``max_values``)."""

    def __init__(self, case: np.ndarray, words: np.ndarray, first_pe: np.ndarray, last_pe: np.ndarray,
                 first_values: list[np.ndarray], max_values: list[np.ndarray]):
        self.case, self.words, self.first_pe, self.last_pe = case, words, first_pe, last_pe
        self.first_values, self.max_values = first_values, max_values


def drain_groups(offsets: list[np.ndarray], pes: list[np.ndarray], velocity: np.ndarray, case: np.ndarray,
                 klass: np.ndarray, keys: np.ndarray, words: np.ndarray,
                 attributes: list[list[np.ndarray]]) -> DrainGroups:
    """Place every member PE of rows (``case``, ``klass``) of drained output tiles (``keys``
    (rows, 2 * axes) the corners of each class's representative, ``words`` per group,
    ``velocity`` the output tensor's) and gather the PEs holding one tile into its group;
    ``attributes``: per attribute, its value per member PE of each class."""
    members = np.array([len(p) for p in pes], dtype=np.int64)[klass]
    row = np.repeat(np.arange(len(case)), members)
    moved = np.concatenate([offsets[k] @ velocity for k in klass])
    pe = np.concatenate([pes[k] for k in klass])
    table = np.column_stack([case[row], keys[row] + np.tile(moved, 2)])
    order = np.lexsort((pe, *table.T[::-1]))  # by group, then PE: a group's first entry is its first PE
    _, first, group = np.unique(table[order], axis=0, return_index=True, return_inverse=True)
    group = group.ravel()
    last_pe = np.zeros(len(first), dtype=np.int64)
    np.maximum.at(last_pe, group, pe[order])
    firsts, maxima = [], []
    for values in attributes:
        v = np.concatenate([values[k] for k in klass])[order]
        top = np.full(len(first), np.iinfo(np.int64).min, dtype=np.int64)
        np.maximum.at(top, group, v)
        firsts.append(v[first])
        maxima.append(top)
    return DrainGroups(case[row][order][first], words[row][order][first], pe[order][first], last_pe, firsts, maxima)


class CollectionBus:
    """MAERI's collection bus as STONNE builds it (``ASNetwork``, ``CompilerART``,
    ``CollectionBus``, ``SDMemory``), for drain groups of neighbouring PEs (STONNE's virtual
    neurons) on an array of ``pes`` multipliers, the leaves of a binary tree of adder switches.

    A group's sum leaves the tree at the adder switch STONNE's ART compiler picks (the lowest
    level where one switch holds the whole group; :func:`art_output_switch`) through that
    switch's accumulator and the bus line it is wired to: ``lines`` lines, the switches with an
    augmented (forwarding) link in pairs, pair ``q`` on line ``q % lines``, the others after
    them, each on line ``(i + paired switches) % lines`` (``ASNetwork::setMemoryConnections``).
    A line moves one word per cycle. The SRAM takes the words the lines deliver into one write
    queue and retires ``ceil(n / 2)`` of its ``n`` queued words per cycle (``SDMemory::cycle``
    pops while its index is below the shrinking queue size).

    :meth:`drain` gives per step the cycles of its busiest line (the network's busy time) and
    the further cycles until the write queue is empty, drained on its own (a latency)."""

    def __init__(self, cm: CompiledMapping, classes: UnitClasses, lines: int, pes: int):
        self.offsets, self.pes = class_members(cm, classes)
        self.lines = lines
        self.leaves = 1 << max(1, (pes - 1).bit_length())  # STONNE's arrays are powers of two
        self.line_of_switch = _bus_wiring(self.leaves, lines)
        self._line: dict[tuple[int, int], int] = {}

    def line(self, first_pe: int, last_pe: int) -> int:
        """The bus line of the group on PEs ``first_pe..last_pe``."""
        key = (first_pe, last_pe)
        if key not in self._line:
            self._line[key] = self.line_of_switch[art_output_switch(self.leaves, first_pe, last_pe)]
        return self._line[key]

    def drain(self, cases: int, velocity: np.ndarray, case: np.ndarray, klass: np.ndarray, keys: np.ndarray,
              words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per case: (cycles of the busiest line, further cycles until the SRAM's write queue
        has taken every word); arguments as :meth:`WritePorts.drain_cycles`."""
        busy = np.zeros(cases, dtype=np.int64)
        queue = np.zeros(cases, dtype=np.int64)
        if len(case) == 0:
            return busy, queue
        g = drain_groups(self.offsets, self.pes, velocity, case, klass, keys, words, [])
        spans, which = np.unique(np.column_stack([g.first_pe, g.last_pe]), axis=0, return_inverse=True)
        line = np.array([self.line(int(a), int(b)) for a, b in spans], dtype=np.int64)[which.ravel()]
        loads = np.zeros((cases, self.lines), dtype=np.int64)
        np.add.at(loads, (g.case, line), g.words.astype(np.int64))
        busy = loads.max(axis=1)
        queue = write_queue_cycles(loads) - busy
        return busy, queue


def write_queue_cycles(loads: np.ndarray) -> np.ndarray:
    """Per row of ``loads`` (words per bus line), the cycle in which STONNE's SRAM has written
    the last word: each line delivers one word per cycle from cycle 1, and each cycle the
    write queue takes in the words delivered and retires ``ceil(n / 2)`` of its ``n``."""
    cycles = np.zeros(len(loads), dtype=np.int64)
    queued = np.zeros(len(loads), dtype=np.int64)
    t = 0
    while True:
        t += 1
        queued += (loads >= t).sum(axis=1)
        busy = queued > 0
        if not busy.any() and t > loads.max(initial=0):
            return cycles
        queued -= -(-queued // 2)
        cycles[busy] = t


def _bus_wiring(leaves: int, lines: int) -> dict[tuple[int, int], int]:
    """The bus line of each adder switch (level, index), level 0 the root, of a tree over
    ``leaves`` multipliers (``ASNetwork``'s constructor and ``setMemoryConnections``)."""
    levels = leaves.bit_length() - 1
    paired: list[tuple[int, int]] = []
    single: list[tuple[int, int]] = [(0, 0)]
    for level in range(1, levels):
        width = 1 << level
        for j in range(width):
            if j and j % 2 == 0:
                paired += [(level, j - 1), (level, j)]
            elif j in (0, width - 1):
                single.append((level, j))
    wiring = {switch: (i // 2) % lines for i, switch in enumerate(paired)}
    wiring.update({switch: (i + len(paired)) % lines for i, switch in enumerate(single)})
    return wiring


def art_output_switch(leaves: int, first_pe: int, last_pe: int) -> tuple[int, int]:
    """The adder switch (level, index; level 0 the root) that sends the sum of multipliers
    ``first_pe..last_pe`` to memory: STONNE's ``CompilerART::generate_art_signals`` walks the
    tree from the leaves, a switch enabled where one of its children is, a pair of switches
    joined by their augmented link reducing into one of them where the group spans both and
    needs no parent, and picks the first level where one switch is enabled."""
    levels = leaves.bit_length() - 1
    bits = [first_pe <= s <= last_pe for s in range(leaves)]

    def bit(s: int) -> bool:
        return 0 <= s < leaves and bits[s]

    adders = leaves
    for level in range(levels - 1, -1, -1):
        adders //= 2
        parent = [False] * leaves
        for a in range(adders):
            child = 2 * a
            if a in (0, adders - 1):
                parent[a] = bits[child] or bits[child + 1]
            elif a % 2:  # the left switch of an augmented pair (a, a + 1)
                last = child + 1
                s = last if bits[last] else child
                left = 0
                while s >= 0 and bits[s]:
                    left, s = left + 1, s - 1
                s = last + 1 if bits[last + 1] else last + 2
                right = 0
                while s < leaves and bits[s]:
                    right, s = right + 1, s + 1
                if left == 0 or right == 0:
                    parent[a], parent[a + 1] = left > 0, right > 0
                elif left >= right:  # reduce to the left unless the right side needs the parent
                    if bit(last + 3) or bit(last + 4):
                        parent[a] = parent[a + 1] = True
                    else:
                        bits[child + 2:] = [False] * (leaves - child - 2)
                        parent[a], parent[a + 1] = True, False
                elif bit(last - 2) or bit(last - 3):
                    parent[a] = parent[a + 1] = True
                else:
                    bits[:child + 2] = [False] * (child + 2)
                    parent[a], parent[a + 1] = False, True
        bits = parent
        enabled = [s for s in range(leaves) if bits[s]]
        if len(enabled) == 1:
            return level, enabled[0]
    return 0, 0
