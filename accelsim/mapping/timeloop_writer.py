"""``accelsim mapping --format timeloop``: one layer's mapping as the files ``timeloop-model``
reads, in one YAML document (Timeloop merges top-level keys, so one file holds all three):

- ``architecture`` in the 2020-2023 tree form: ``DRAM``, a ``GlobalBuffer`` (L2), and
  ``PE[0..N-1]`` each holding a ``RegisterFile`` (L1), the spec's register files inside the PE
  (``inner_levels``, outermost first, by name) and its MACs, sizes and bandwidths from the
  hardware spec;
- ``problem``: Timeloop's CNN layer with its shape written out (``M`` output channels, ``P``/``Q``
  output rows/cols paired with ``R``/``S`` and ``Hstride``/``Wstride``);
- ``mapping``: the loop nest (:func:`~accelsim.mapping.loopnest_format.loopnest_of`) per
  level: DRAM's loops, L2's loops and one spatial entry spreading the L2 tile over the PEs
  (accelsim's nested cluster levels flattened into one fanout), the register file's loops (a
  PE's tile, and the steps a PE takes in a row; with register files inside the PE, the step's
  loops outside them), then each register file's loops: those
  :func:`~accelsim.mapping.inner_levels.inner_tiling` gives it (the pins or the default rule),
  the loops accelsim's counts use;
- a ``bypass`` entry (``keep``/``bypass``) for the global buffer when ``l2.keeps`` leaves an
  operand out and for each register file that does not keep every tensor.

What Timeloop's levels cannot say is refused with a :class:`MappingError`: temporal loops
between two cluster levels, a dimension split twice at one level, a ragged split (Timeloop's
factors multiply exactly to the dimension), an operator outside the convolution family, register
files in a PE of several MACs or double-buffered, or one holding fewer loops than a register
file below it.
"""

from __future__ import annotations

from dataclasses import replace
from math import ceil, prod

from accelsim.errors import InputError, MappingError
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.compile import CompiledMapping, compile_mapping
from accelsim.mapping.inner_levels import inner_tiling, step_nest
from accelsim.mapping.loopnest_format import NestEntry, NestLayer, canonical_form, loopnest_dataflow, loopnest_of
from accelsim.mapping.timeloop_files import timeloop_job
from accelsim.workload.tables import yaml_scalar

# accelsim's loop dimensions -> Timeloop's CNN-layer names (others keep theirs)
TIMELOOP_NAMES = {"K": "M", "Y'": "P", "X'": "Q"}
CNN_DIMS = ("C", "M", "R", "S", "N", "P", "Q")
DATA_SPACES = {"weight": "Weights", "input": "Inputs", "output": "Outputs"}  # accelsim's tensors -> the shape's
_SHAPE = """  shape:
    name: {name}
    dimensions: [C, M, R, S, N, P, Q]
    coefficients:
    - {name: Hstride, default: 1}
    - {name: Wstride, default: 1}
    data-spaces:
    - name: Weights
      projection: [[[C]], [[M]], [[R]], [[S]]]
    - name: Inputs
      projection: [[[N]], [[C]], [[R], [P, Hstride]], [[S], [Q, Wstride]]]
    - name: Outputs
      projection: [[[N]], [[M]], [[P]], [[Q]]]
      read-write: true
"""


def _refuse(cm: CompiledMapping, message: str) -> MappingError:
    return MappingError(f"layer {cm.layer.name!r}: no Timeloop equivalent: {message}", source=cm.source,
                        reason="no_timeloop_equivalent")


class _Level:
    """One Timeloop mapping entry being built: factors by Timeloop dimension, loops innermost
    first."""

    def __init__(self) -> None:
        self.factors: dict[str, int] = {d: 1 for d in CNN_DIMS}
        self.inner_first: list[str] = []

    def add_outer(self, cm: CompiledMapping, loops: list[tuple[str, int]], what: str) -> None:
        """Add ``loops`` (outermost first) outside the loops already here."""
        for dim, factor in reversed(loops):
            d = TIMELOOP_NAMES.get(dim, dim)
            if self.factors[d] > 1:
                raise _refuse(cm, f"{dim} is split twice at {what} (Timeloop has one loop per dimension and level)")
            self.factors[d] = factor
            self.inner_first.append(d)

    def text(self, target: str, kind: str) -> str:
        order = self.inner_first + [d for d in CNN_DIMS if d not in self.inner_first]
        factors = " ".join(f"{d}={self.factors[d]}" for d in CNN_DIMS)
        return f"- target: {target}\n  type: {kind}\n  factors: {factors}\n  permutation: {''.join(order)}\n"


def _register_files(cm: CompiledMapping, hw: HardwareSpec) -> tuple[list[tuple[str, int]], list[_Level]]:
    """The loops of a PE's step outside every register file (L1's part of the tile, outermost
    first) and, innermost file first, what each register file of ``hw`` adds: the loops of
    :func:`~accelsim.mapping.inner_levels.step_nest` that :func:`inner_tiling` gives it (the
    pinned loops or the default rule's), the same loops accelsim's counts use."""
    tiling = inner_tiling(cm, hw)
    loops = step_nest(cm)
    files: list[_Level] = []
    below = 0
    for lv in tiling.levels:
        if lv.depth < below:
            raise _refuse(cm, f"register file {lv.name} holds fewer loops than the one below it (Timeloop's levels "
                              "inside a PE nest: each holds every loop below it)")
        level = _Level()
        level.add_outer(cm, [(lp.dim, lp.trips) for lp in loops[len(loops) - lv.depth:len(loops) - below]
                             if lp.trips > 1], f"register file {lv.name}")
        files.append(level)
        below = lv.depth
    return [(lp.dim, lp.trips) for lp in loops[:len(loops) - below] if lp.trips > 1], files


def _pe_nest(cm: CompiledMapping, hw: HardwareSpec) -> tuple:
    """What :func:`_register_files` writes for ``cm`` (loops of one trip left out: they change
    no count): the loops outside the register files and each file's factors and order."""
    outside, files = _register_files(cm, hw)
    return tuple(outside), tuple((tuple(f.factors.items()), tuple(f.inner_first)) for f in files)


def _levels(cm: CompiledMapping, nl: NestLayer, hw: HardwareSpec) -> tuple[_Level, _Level, _Level, _Level, list[_Level]]:
    """DRAM temporal, GlobalBuffer temporal, GlobalBuffer spatial, RegisterFile temporal, and
    each register file's temporal loops (innermost first)."""
    dram, gb, spread, rf = _Level(), _Level(), _Level(), _Level()
    l1 = next(e for e in nl.entries if e.target == "L1")
    files: list[_Level] = []
    if hw.inner_levels:
        outside, files = _register_files(cm, hw)
        rf.add_outer(cm, outside, "a PE's tile")
    else:
        rf.add_outer(cm, [(d, f) for d, f in l1.factors.items() if f > 1], "a PE's tile")
    entries = [e for e in nl.entries if e.target != "L1"]
    last_spatial = max((i for i, e in enumerate(entries) if e.kind == "spatial"), default=-1)
    first_spatial = next((i for i, e in enumerate(entries) if e.kind == "spatial"), len(entries))
    has_dram = any(e.target == "DRAM" for e in entries)
    for i in range(len(entries) - 1, -1, -1):  # innermost first: each entry's loops go outside the ones added
        e = entries[i]
        if e.target == "DRAM":
            dram.add_outer(cm, e.loops(), "DRAM")
        elif e.kind == "spatial":
            spread.add_outer(cm, e.loops(), "the fanout to the PEs")
        elif i < first_spatial and not has_dram:  # accelsim's top-level loops: L2 holds one iteration
            dram.add_outer(cm, e.loops(), "DRAM")
        elif i < first_spatial:
            gb.add_outer(cm, e.loops(), "the global buffer")
        elif i > last_spatial:
            rf.add_outer(cm, e.loops(), "a PE (its tile and its steps)")
        elif e.loops():
            raise _refuse(cm, "temporal loops between two cluster levels (Timeloop's global buffer feeds the PEs "
                              "through one fanout)")
    for dim, extent in cm.nest.dims.items():
        d = TIMELOOP_NAMES.get(dim, dim)
        if prod(level.factors[d] for level in (dram, gb, spread, rf, *files)) != extent:
            raise _refuse(cm, f"{dim} is split raggedly (its factors do not multiply to {extent}; Timeloop's must)")
    return dram, gb, spread, rf, files


def write_timeloop(cm: CompiledMapping, hw: HardwareSpec) -> str:
    """The YAML text of one layer's architecture, problem and mapping for ``timeloop-model``;
    checked by reading it back (:func:`~accelsim.mapping.timeloop_files.timeloop_job` on ``hw``):
    it must compile to the same schedule (:func:`canonical_form`), or the writer says why not."""
    text = _text(cm, hw)
    try:
        back = timeloop_job([(text, f"{cm.source} as Timeloop's files")], hw_ref=hw).jobs[0]
        back_cm = compile_mapping(back.layer, back.dataflow, hw.num_pes)
        same = _schedule(back_cm) == _schedule(_with_dram(cm, loopnest_of(cm)))
    except InputError as exc:
        raise _refuse(cm, f"read back, its single fanout does not nest as accelsim's cluster levels ({exc.detail})") from None
    if not same:
        raise _refuse(cm, "its cluster levels leave sub-units idle (a fanout of fewer PEs than the cluster holds); "
                          "Timeloop's global buffer feeds the PEs through one fanout")
    try:
        same = not hw.inner_levels or (back.inner_pins is not None and _pe_nest(cm, hw) == _pe_nest(
            replace(back_cm, inner_pins=back.inner_pins), hw))
    except MappingError:
        same = False
    if not same:
        raise _refuse(cm, "read back, its register files do not hold the same loops (a step's loops outside them "
                          "are not one PE's tile alone)")
    return text


def _schedule(cm: CompiledMapping) -> tuple:
    """:func:`canonical_form` without the operator's name (Timeloop's CNN layer is read back as
    ``CONV2D``; ``FC`` and ``PWCONV`` are ``CONV2D`` layers of the same sizes) and without
    trailing levels of one sub-unit of one PE that map nothing (they change no box or loop)."""
    _, sizes, sy, sx, num_pes, levels, loops = canonical_form(cm)
    while levels and levels[-1][:2] == (1, 1) and not levels[-1][2]:
        levels = levels[:-1]
    return sizes, sy, sx, num_pes, levels, loops


def _with_dram(cm: CompiledMapping, nl: NestLayer) -> CompiledMapping:
    """The mapping with its top level's temporal loops as a DRAM entry (Timeloop names DRAM's
    loops; accelsim's L2 holds as many of their innermost iterations as fit either way)."""
    entries = list(nl.entries)
    if any(e.target == "DRAM" for e in entries):
        return cm
    first_spatial = next((i for i, e in enumerate(entries) if e.kind == "spatial"), len(entries) - 1)
    loops = [lp for e in entries[:first_spatial] for lp in e.loops()]
    factors = {d: 1 for d in cm.nest.dims}
    factors.update(dict(loops))
    order = tuple(d for d, _ in reversed(loops)) + tuple(d for d in cm.nest.dims if d not in dict(loops))
    dram = NestEntry("DRAM", "temporal", factors, order)
    lifted = NestLayer(nl.layer, (dram, *entries[first_spatial:]), nl.source)
    return compile_mapping(cm.layer, loopnest_dataflow(lifted, cm.num_pes), cm.num_pes, source=cm.source)


def _text(cm: CompiledMapping, hw: HardwareSpec) -> str:
    if set(TIMELOOP_NAMES.get(d, d) for d in cm.nest.dims) != set(CNN_DIMS):
        raise _refuse(cm, f"{cm.layer.op.value} has no Timeloop problem shape here (the convolution family: "
                          "CONV2D, PWCONV, FC)")
    if hw.inner_levels and hw.pe_array.macs_per_pe_per_cycle > 1:
        raise _refuse(cm, "register files in a PE of several MACs (accelsim's register files feed one MAC; the "
                          "reader sums the levels inside such a PE into L1)")
    if any(lv.double_buffered for lv in hw.inner_levels):
        raise _refuse(cm, "a double-buffered register file (Timeloop's storage levels hold one tile)")
    dram, gb, spread, rf, files = _levels(cm, loopnest_of(cm), hw)
    bits = 8 * hw.word_size_bytes
    word = hw.word_size_bytes
    macs = hw.pe_array.macs_per_pe_per_cycle
    mac_name = f"MACC[0..{macs - 1}]" if macs > 1 else "MACC"
    sizes = dict(cm.layer.sizes)
    instance = {"C": sizes["C"], "M": sizes["K"], "R": sizes["R"], "S": sizes["S"], "N": sizes["N"],
                "P": cm.nest.dims["Y'"], "Q": cm.nest.dims["X'"], "Hstride": cm.layer.stride_y,
                "Wstride": cm.layer.stride_x}
    out = [f"# accelsim mapping --format timeloop: layer {cm.layer.name} on {hw.name} ({hw.num_pes} PEs);",
           "# timeloop-model reads this one file (architecture, problem and mapping).",
           "architecture:", "  version: 0.3", "  subtree:", "  - name: System", "    attributes:",
           "      technology: 45nm", f"      global_cycle_seconds: {1e-6 / hw.clock_mhz:.6g}", "    local:",
           "    - name: DRAM", "      class: DRAM", "      attributes:",
           f"        width: {bits}", f"        word-bits: {bits}", "        block-size: 1",
           f"        read_bandwidth: {hw.dram.bandwidth_bytes_per_cycle / word:g}",
           f"        write_bandwidth: {hw.dram.bandwidth_bytes_per_cycle / word:g}",
           "    subtree:", "    - name: Chip", "      local:", "      - name: GlobalBuffer", "        class: SRAM",
           "        attributes:", f"          depth: {ceil(hw.l2.size_bytes / word)}", f"          width: {bits}",
           f"          word-bits: {bits}", "          block-size: 1",
           f"          read_bandwidth: {hw.l2.read_bandwidth_words_per_cycle:g}",
           f"          write_bandwidth: {hw.l2.write_bandwidth_words_per_cycle:g}",
           "      subtree:", f"      - name: PE[0..{hw.num_pes - 1}]", "        local:",
           "        - name: RegisterFile", "          class: regfile", "          attributes:",
           f"            depth: {ceil(hw.l1.size_bytes / word)}", f"            width: {bits}",
           f"            word-bits: {bits}", "            block-size: 1"]
    for lv in reversed(hw.inner_levels):  # Timeloop lists a subtree's levels outermost first
        out += [f"        - name: {lv.name}", "          class: regfile", "          attributes:",
                f"            depth: {(lv.size_bytes or 0) // word}", f"            width: {bits}",
                f"            word-bits: {bits}", "            block-size: 1"]
    out += [f"        - name: {mac_name}", "          class: intmac", "          attributes:",
           f"            datawidth: {bits}",
           "problem:", _SHAPE.replace("{name}", yaml_scalar(cm.layer.name)).rstrip("\n"),
           "  instance: {" + ", ".join(f"{k}: {v}" for k, v in instance.items()) + "}",
           "mapping:"]
    for level, target, kind in ((dram, "DRAM", "temporal"), (gb, "GlobalBuffer", "temporal"),
                                (spread, "GlobalBuffer", "spatial"), (rf, "RegisterFile", "temporal")):
        out += [line for line in level.text(target, kind).splitlines()]
    for lv, level in reversed(list(zip(hw.inner_levels, files))):
        out += level.text(lv.name, "temporal").splitlines()
    for target, keeps in (("GlobalBuffer", hw.l2.keeps), *((lv.name, lv.keeps) for lv in reversed(hw.inner_levels))):
        out += _bypass(target, keeps)
    return "\n".join(out) + "\n"


def _bypass(target: str, keeps: tuple[str, ...]) -> list[str]:
    """A bypass entry for a level that does not keep every tensor (none otherwise)."""
    if set(keeps) >= set(DATA_SPACES):
        return []
    keep = [DATA_SPACES[t] for t in DATA_SPACES if t in keeps]
    bypass = [DATA_SPACES[t] for t in DATA_SPACES if t not in keeps]
    return [f"- target: {target}", "  type: bypass", f"  keep: [{', '.join(keep)}]",
            f"  bypass: [{', '.join(bypass)}]"]
