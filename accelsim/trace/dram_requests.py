"""DRAM request trace in DRAMsim3's trace-file format, with byte addresses from the tensors'
DRAM layouts.

Every line is one burst-sized request: ``<hex byte address> <READ|WRITE> <cycle>``, e.g.
``0x1f40 READ 120``: what DRAMsim3's trace-driven front end (``dramsim3main CONFIG -t FILE``)
reads (hex address, access type, decimal issue cycle; lines in non-decreasing cycle order).
Cycles are accelerator cycles; scale them by the DRAM/accelerator clock ratio for another clock.

Addresses: tensors are stored one after another, ``input`` at byte 0, ``weight`` and then
``output`` each at the next multiple of :data:`TENSOR_ALIGN_BYTES` after the previous tensor,
each in its layout (``LoopNest.layout``: channel-last, N,Y,X,C and K,R,S,C; GEMM row-major).
A DRAM transfer of an L2 tile touches, per tensor, the part of the tile's box outside the
previous tile's box (operands), or the whole output box (partial sums read back, outputs
written back); every burst-aligned block of ``dram.burst_bytes`` it touches is one request,
issued evenly over the cycles the channel is busy with that transfer.

An operand L2 bypasses (``l2.keeps``) is read per packet its steps send, the same words again
where steps send them again; the request trace does not follow packets: it lists the blocks
of that operand's whole box in the tile, each once (the transfer's ``read`` event in the event
tables carries its streamed word count).
"""

from __future__ import annotations

from math import prod
from pathlib import Path
from typing import Callable

from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.tiles import TileSchedule
from accelsim.trace.events import CounterSample, TraceEvent
from accelsim.workload.operators import OPERAND_ROLES, TENSOR_ROLES
from accelsim.workload.ops import LoopNest

TENSOR_ALIGN_BYTES = 4096
Box = tuple[list[int], list[int]]  # inclusive lo, hi per tensor axis


def base_addresses(nest: LoopNest, word_size_bytes: int) -> dict[str, int]:
    """Byte address of each tensor's first element (see module docstring)."""
    bases, at = {}, 0
    for role in TENSOR_ROLES:
        bases[role] = at
        end = at + prod(nest.extents(role)) * word_size_bytes
        at = -(-end // TENSOR_ALIGN_BYTES) * TENSOR_ALIGN_BYTES
    return bases


def box_minus(box: Box, prev: Box | None) -> list[Box]:
    """Disjoint boxes covering ``box`` outside ``prev``."""
    if prev is None:
        return [box]
    lo, hi = list(box[0]), list(box[1])
    pieces = []
    for a in range(len(lo)):
        plo, phi = prev[0][a], prev[1][a]
        if hi[a] < plo or lo[a] > phi:
            pieces.append((lo, hi))
            return pieces
        if lo[a] < plo:
            pieces.append((lo[:], hi[:a] + [plo - 1] + hi[a + 1:]))
            lo[a] = plo
        if hi[a] > phi:
            pieces.append((lo[:a] + [phi + 1] + lo[a + 1:], hi[:]))
            hi[a] = phi
    return pieces


def box_words(box: Box) -> int:
    return prod(high - low + 1 for low, high in zip(*box))


class TensorLayout:
    """Byte offsets of one tensor's elements in DRAM."""

    def __init__(self, nest: LoopNest, role: str, base: int, word_size_bytes: int):
        self.order = nest.layout(role)  # axes, outermost first
        extents = nest.extents(role)
        self.stride = [0] * len(extents)
        step = word_size_bytes
        for axis in reversed(self.order):
            self.stride[axis] = step
            step *= extents[axis]
        self.base = base
        self.word = word_size_bytes

    def runs(self, box: Box) -> list[tuple[int, int]]:
        """Contiguous byte ranges [start, end) of a box, in address order, adjacent ones merged."""
        lo, hi = box
        inner = self.order[-1]
        outer = self.order[:-1]
        length = (hi[inner] - lo[inner] + 1) * self.word
        out: list[tuple[int, int]] = []
        index = [lo[a] for a in outer]
        while True:
            start = self.base + lo[inner] * self.stride[inner] + sum(i * self.stride[a] for i, a in zip(index, outer))
            if out and out[-1][1] == start:
                out[-1] = (out[-1][0], start + length)
            else:
                out.append((start, start + length))
            for k in range(len(outer) - 1, -1, -1):  # odometer over the outer axes
                a = outer[k]
                if index[k] < hi[a]:
                    index[k] += 1
                    break
                index[k] = lo[a]
            else:
                return out


class DramRequestWriter:
    """Writes one request line per burst of every DRAM transfer, as the transfers happen.
    ``tiles`` returns the simulation's L2 tiles (known once it runs)."""

    def __init__(self, path: Path, nest: LoopNest, hw: HardwareSpec, tiles: Callable[[], TileSchedule]):
        self.f = open(path, "w", encoding="utf-8", newline="\n")
        self.burst = hw.dram.burst_bytes
        bases = base_addresses(nest, hw.word_size_bytes)
        self.layouts = {role: TensorLayout(nest, role, bases[role], hw.word_size_bytes) for role in bases}
        self.tiles_of = tiles
        self.prev: dict[str, Box | None] = {role: None for role in OPERAND_ROLES}
        self.seen = 0  # tiles whose operand boxes have been taken into self.prev

    def _read_boxes(self, tile: int) -> list[tuple[str, Box]]:
        """The boxes the read of L2 tile ``tile`` fetches (operands: outside the previous tile;
        a bypassed operand: its whole box)."""
        out = []
        tiles = self.tiles_of()
        while self.seen <= tile:
            td = tiles.demand(self.seen)
            for role in OPERAND_ROLES:
                if td.boxes and self.seen == tile and td.read_words[role]:
                    prev = None if role in tiles.bypass else self.prev[role]
                    out += [(role, b) for b in box_minus(td.boxes[role], prev)]
                if td.boxes:
                    self.prev[role] = td.boxes[role]
            self.seen += 1
        td = tiles.demand(tile)
        if td.read_words["output"]:
            out.append(("output", td.boxes["output"]))
        for role in TENSOR_ROLES:
            if role in tiles.bypass:
                continue
            got = sum(box_words(b) for r, b in out if r == role)
            if got != td.read_words[role]:
                raise AssertionError(f"L2 tile {tile}: {role} boxes hold {got} words, the profile reads {td.read_words[role]}")
        return out

    def event(self, ev: TraceEvent) -> None:
        if ev.kind == "read":
            boxes, op = self._read_boxes(ev.step), "READ"
        elif ev.kind == "write":
            boxes, op = [("output", self.tiles_of().demand(ev.step).boxes["output"])], "WRITE"
        else:
            return
        blocks: list[int] = []
        for role, box in boxes:
            for start, end in self.layouts[role].runs(box):
                first = start // self.burst * self.burst
                for addr in range(first, end, self.burst):
                    if not blocks or blocks[-1] != addr:
                        blocks.append(addr)
        busy = ev.end_cycle - ev.start_cycle
        n = len(blocks)
        self.f.writelines(f"{addr:#x} {op} {ev.start_cycle + i * busy // n}\n" for i, addr in enumerate(blocks))

    def counter(self, sample: CounterSample) -> None:
        pass

    def close(self) -> None:
        self.f.close()
