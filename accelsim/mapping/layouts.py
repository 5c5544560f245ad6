"""Each tensor's DRAM layout as a mapping parameter (``--dram-layout``).

A layout is a permutation of a tensor's axes, outermost first (the last one contiguous in
DRAM); the operator's own (channel-last: input N,Y,X,C, weight K,R,S,C, output N,Y,X,K) is the
default. The DRAM runs both timing models count (:func:`accelsim.mapping.runs.dram_runs`) follow
the job's layouts, so a layout changes bursts, never words.

``--dram-layout`` takes, repeatable:

* ``ROLE=A,B,...``: the axes of tensor ROLE (``input``, ``weight``, ``output``) by name, outermost
  first; an axis is named by the dimension that indexes it, primes dropped (a convolution's input:
  ``N, C, Y, X``; weight ``K, C, R, S``; output ``N, K, Y, X``); applied to every layer having that
  tensor with those axes;
* ``marvel``: each layer's layouts chosen by MARVEL's distinct-block model
  (:func:`accelsim.mapping.offchip.optimize_offchip`): its innermost axis per tensor, for
  MARVEL's own L2 tile;
* ``bursts``: for each tensor the permutation whose first L2 tile (of the job's own mapping, as
  :class:`~accelsim.mapping.tiles.TileSchedule` chooses it) takes the fewest DRAM bursts
  (:func:`burst_layouts`); channel-last is one of the candidates, so the first tile never takes
  more bursts than with it.

MARVEL's DB formula counts ``ceil(innermost extent / block)`` blocks per row of the other axes
and so cannot see that a tile spanning its innermost axis whole forms one run with the next
axis out (:func:`accelsim.mapping.runs.dram_runs`): a channel-last input tile holding all of C
and half of X reads one run per row where MARVEL's X-innermost choice reads one per channel and
row (``marvel15`` L5: 448 bursts against 512 a tile). ``bursts`` counts that.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import permutations
from math import ceil, prod
from typing import Iterable, Sequence

import numpy as np

from accelsim.errors import InputError
from accelsim.hw.dram.base import burst_count
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.compile import CompiledMapping
from accelsim.mapping.distinct_blocks import l2_capacity_words
from accelsim.mapping.jobs import Job, compile_job
from accelsim.mapping.offchip import optimize_offchip
from accelsim.mapping.runs import dram_runs
from accelsim.mapping.tiles import TileSchedule
from accelsim.workload.loopnest import LoopNest

MARVEL = "marvel"
BURSTS = "bursts"


def dram_bursts(cm: CompiledMapping, hw: HardwareSpec) -> int:
    """DRAM bursts of the whole layer: per L2 tile, its reads (all tensors, one transfer) and its
    write-back, each as the ``simple`` DRAM kind counts a transfer's bursts
    (:func:`~accelsim.hw.dram.base.burst_count`), from the tile traffic both timing models charge."""
    table = TileSchedule(cm, l2_capacity_words(hw)).table()
    word = hw.word_size_bytes
    reads = np.sum([table.read_words[role] for role in table.read_words], axis=0)
    total = 0
    for words, runs in ((reads, table.read_runs), (table.write_words, table.write_runs)):
        per_case = np.where(words > 0, burst_count(words * word, np.maximum(runs, 1), hw.dram.burst_bytes), 0)
        total += int((table.cases.count * per_case).sum())
    return total


def box_bursts(extents: list[int], full: tuple[int, ...], layout: tuple[int, ...], word_bytes: int,
               burst_bytes: int) -> int:
    """Bursts one box of ``extents`` takes in a tensor of ``full`` sizes stored in ``layout``:
    its runs, each rounded up to whole bursts."""
    runs = dram_runs(extents, full, layout)
    return runs * ceil(prod(extents) // runs * word_bytes / burst_bytes)


def burst_layouts(cm: CompiledMapping, hw: HardwareSpec) -> dict[str, tuple[int, ...]]:
    """Per tensor, the layout whose box in the first L2 tile takes the fewest bursts
    (:func:`box_bursts`); a tie keeps the operator's layout, then the first permutation."""
    nest = cm.nest
    boxes = TileSchedule(cm, l2_capacity_words(hw)).demand(0).boxes
    layouts = {}
    for role, (lo, hi) in boxes.items():
        extents = [b - a + 1 for a, b in zip(lo, hi)]
        full = nest.extents(role)
        default = nest.layout(role)
        candidates = [default] + [p for p in permutations(range(len(full))) if p != default]
        layouts[role] = min(candidates, key=lambda p: box_bursts(extents, full, p, hw.word_size_bytes,
                                                                  hw.dram.burst_bytes))
    return layouts


def axis_names(nest: LoopNest, role: str) -> list[str]:
    """The name of each axis of tensor ``role``: its first dimension, prime dropped."""
    return [axis[0][0].rstrip("'") for axis in nest.tensors[role]]


def layout_specs(nest: LoopNest, layouts: dict[str, tuple[int, ...]]) -> list[str]:
    """``layouts`` (role -> axis indices, outermost first) as ``--dram-layout`` values
    (``ROLE=AXIS,...``), tensors in the nest's order; a tensor at its operator's layout is left out."""
    return [f"{role}={','.join(axis_names(nest, role)[i] for i in layouts[role])}"
            for role in nest.tensors if role in layouts and tuple(layouts[role]) != nest.layout(role)]


def _parse(spec: str) -> tuple[str, list[str]]:
    role, sep, names = spec.partition("=")
    if not sep or not names.strip():
        raise InputError(f"--dram-layout {spec!r}: expected {MARVEL!r} or ROLE=AXIS,AXIS,... (outermost first), "
                         "e.g. input=N,Y,C,X")
    return role.strip(), [n.strip().rstrip("'").upper() for n in names.split(",")]


def layer_layouts(nest: LoopNest, specs: Sequence[str], hw: HardwareSpec, layer: str) -> dict[str, tuple[int, ...]]:
    """The layouts ``specs`` give one layer (role -> axis indices, outermost first)."""
    layouts: dict[str, tuple[int, ...]] = {}
    for spec in specs:
        if spec.strip() == MARVEL:
            try:
                layouts.update(optimize_offchip(nest, hw).layouts)
            except InputError as e:
                raise InputError(f"--dram-layout marvel, layer {layer}: {e.detail}") from None
            continue
        if spec.strip() == BURSTS:
            continue  # chosen once the job is compiled (with_dram_layouts)
        role, names = _parse(spec)
        if role not in ("input", "weight", "output"):
            raise InputError(f"--dram-layout {spec!r}: unknown tensor {role!r}; expected input, weight or output")
        if role not in nest.tensors:
            continue
        have = axis_names(nest, role)
        if sorted(names) != sorted(have):
            raise InputError(f"--dram-layout {spec!r}: layer {layer}'s {role} has axes {','.join(have)}; "
                             "name each once, outermost first")
        layouts[role] = tuple(have.index(n) for n in names)
    return layouts


def with_dram_layouts(jobs: Iterable[Job], specs: Sequence[str], hw: HardwareSpec) -> list[Job]:
    """``jobs`` with the layouts of ``specs`` (none: unchanged)."""
    if not specs:
        return list(jobs)
    out = []
    for job in jobs:
        layouts = layer_layouts(job.layer.loop_nest(), specs, hw, job.layer.name)
        if any(spec.strip() == BURSTS for spec in specs):
            # the tiles do not depend on the layouts: compile once to see the first tile
            layouts = {**burst_layouts(compile_job(job, hw), hw), **layouts}
        out.append(replace(job, dram_layouts=tuple(sorted(layouts.items()))))
    return out
