"""``accelsim mapping --format timeloop``: one layer's mapping as the files ``timeloop-model``
reads, in one YAML document (Timeloop merges top-level keys, so one file holds all three):

- ``architecture`` in the 2020-2023 tree form: ``DRAM``, a ``GlobalBuffer`` (L2), and
  ``PE[0..N-1]`` each holding a ``RegisterFile`` (L1) and its MACs, sizes and bandwidths from
  the hardware spec;
- ``problem``: Timeloop's CNN layer with its shape written out (``M`` output channels, ``P``/``Q``
  output rows/cols paired with ``R``/``S`` and ``Hstride``/``Wstride``);
- ``mapping``: the loop nest (:func:`~accelsim.mapping.loopnest_format.loopnest_of`) per
  level: DRAM's loops, L2's loops and one spatial entry spreading the L2 tile over the PEs
  (accelsim's nested cluster levels flattened into one fanout), and the register file's loops (a
  PE's tile, and the steps a PE takes in a row).

What Timeloop's three levels cannot say is refused with a :class:`MappingError`: temporal loops
between two cluster levels, a dimension split twice at one level, a ragged split (Timeloop's
factors multiply exactly to the dimension), an operator outside the convolution family.
"""

from __future__ import annotations

from math import ceil, prod

from accelsim.errors import InputError, MappingError
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.compile import CompiledMapping, compile_mapping
from accelsim.mapping.loopnest_format import NestEntry, NestLayer, canonical_form, loopnest_dataflow, loopnest_of
from accelsim.mapping.timeloop_files import timeloop_job
from accelsim.workload.tables import yaml_scalar

# accelsim's loop dimensions -> Timeloop's CNN-layer names (others keep theirs)
TIMELOOP_NAMES = {"K": "M", "Y'": "P", "X'": "Q"}
CNN_DIMS = ("C", "M", "R", "S", "N", "P", "Q")
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


def _levels(cm: CompiledMapping, nl: NestLayer) -> tuple[_Level, _Level, _Level, _Level]:
    """DRAM temporal, GlobalBuffer temporal, GlobalBuffer spatial, RegisterFile temporal."""
    dram, gb, spread, rf = _Level(), _Level(), _Level(), _Level()
    l1 = next(e for e in nl.entries if e.target == "L1")
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
        if prod(level.factors[d] for level in (dram, gb, spread, rf)) != extent:
            raise _refuse(cm, f"{dim} is split raggedly (its factors do not multiply to {extent}; Timeloop's must)")
    return dram, gb, spread, rf


def write_timeloop(cm: CompiledMapping, hw: HardwareSpec) -> str:
    """The YAML text of one layer's architecture, problem and mapping for ``timeloop-model``;
    checked by reading it back (:func:`~accelsim.mapping.timeloop_files.timeloop_job` on ``hw``):
    it must compile to the same schedule (:func:`canonical_form`), or the writer says why not."""
    text = _text(cm, hw)
    try:
        back = timeloop_job([(text, f"{cm.source} as Timeloop's files")], hw_ref=hw).jobs[0]
        same = (_schedule(compile_mapping(back.layer, back.dataflow, hw.num_pes))
                == _schedule(_with_dram(cm, loopnest_of(cm))))
    except InputError as exc:
        raise _refuse(cm, f"read back, its single fanout does not nest as accelsim's cluster levels ({exc.detail})") from None
    if not same:
        raise _refuse(cm, "its cluster levels leave sub-units idle (a fanout of fewer PEs than the cluster holds); "
                          "Timeloop's global buffer feeds the PEs through one fanout")
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
    dram, gb, spread, rf = _levels(cm, loopnest_of(cm))
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
           f"            word-bits: {bits}", "            block-size: 1",
           f"        - name: {mac_name}", "          class: intmac", "          attributes:",
           f"            datawidth: {bits}",
           "problem:", _SHAPE.replace("{name}", yaml_scalar(cm.layer.name)).rstrip("\n"),
           "  instance: {" + ", ".join(f"{k}: {v}" for k, v in instance.items()) + "}",
           "mapping:"]
    for level, target, kind in ((dram, "DRAM", "temporal"), (gb, "GlobalBuffer", "temporal"),
                                (spread, "GlobalBuffer", "spatial"), (rf, "RegisterFile", "temporal")):
        out += [line for line in level.text(target, kind).splitlines()]
    return "\n".join(out) + "\n"
