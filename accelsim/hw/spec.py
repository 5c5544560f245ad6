"""Typed, validated hardware description. Every quantity carries its unit in its name.

A spec is built from a YAML mapping (see ``hwconfigs/*.yaml``); unknown keys, missing required
fields, wrong types and out-of-range numbers are rejected with a message naming the field.
"""

from __future__ import annotations

import math
from typing import Literal, Mapping, Optional

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PositiveInt,
    ValidationInfo,
    field_validator,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from accelsim.hw.dram import DRAM_KINDS
from accelsim.hw.noc import DISTRIBUTION_KINDS, REDUCTION_KINDS

PositiveFloat = float  # validated through Field(gt=0)
Tensor = Literal["input", "weight", "output"]
TENSORS: tuple[Tensor, ...] = ("input", "weight", "output")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_for_numbers(cls, value: object, info: ValidationInfo) -> object:
        # pydantic's lax mode turns ``true`` into 1 for int/float fields; a boolean where a
        # number is expected is almost always a mistake in the file (or a shifted line).
        if isinstance(value, bool) and info.field_name is not None:
            annotation = cls.model_fields[info.field_name].annotation
            if annotation is not bool and annotation != Optional[bool]:
                expected = "a string" if annotation is str else "a number"
                raise ValueError(f"expected {expected}, got the boolean {str(value).lower()}")
        return value


class PEArraySpec(_Strict):
    """The processing elements. ``count`` may be given alone (rows=1, cols=count); a validated
    spec always has all three.

    ``multiply_on_arrival``: a PE multiplies each operand as it arrives, during its step's
    transfer (STONNE's multipliers take each fold's input from their FIFO as it comes), so a
    step's MACs end with its last operand word, or its MACs' cycles after its first, whichever
    is later (:func:`accelsim.mapping.demand.compute_cycles`). ``false`` (default): a
    step's MACs start when all its operands have arrived."""

    count: PositiveInt
    rows: PositiveInt
    cols: PositiveInt
    macs_per_pe_per_cycle: PositiveInt = 1
    mac_pipeline_latency_cycles: int = Field(default=1, ge=1)
    multiply_on_arrival: bool = False

    @model_validator(mode="before")
    @classmethod
    def _complete_shape(cls, data: object) -> object:
        """Fill in what ``count`` alone or ``rows`` and ``cols`` imply (their types are checked
        after this)."""
        if not isinstance(data, dict):
            return data
        rows, cols, count = data.get("rows"), data.get("cols"), data.get("count")
        if rows is None and cols is None:
            if count is None:
                raise ValueError("give count, or rows and cols")
            return {**data, "rows": 1, "cols": count}
        if rows is None or cols is None:
            raise ValueError("give both rows and cols (or only count)")
        if count is None:
            product = rows * cols if _is_int(rows) and _is_int(cols) else rows  # a wrong type is reported on rows
            return {**data, "count": product}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> "PEArraySpec":
        if self.count != self.rows * self.cols:
            raise ValueError(f"count {self.count} != rows x cols = {self.rows * self.cols}")
        return self


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class L1Spec(_Strict):
    """Per-PE scratchpad.

    ``reused_operands``: the operands a PE keeps in its L1 from one step to the next, so that
    the part of a tile it already holds is not sent again (default both). An operand left out
    is sent whole every step that uses it, as by a PE that consumes each word it receives:
    STONNE's MAERI multipliers keep their weights (a FIFO of every fold's weight) but take each
    input from their input FIFO once, so the controller streams the inputs again for every
    weight tile. In maestro mode every operand is reused (ideal effect ``l1_reuse``)."""

    size_bytes: PositiveInt
    double_buffered: bool = True
    reused_operands: tuple[Literal["input", "weight"], ...] = ("input", "weight")

    @field_validator("reused_operands")
    @classmethod
    def _distinct(cls, operands: tuple[str, ...]) -> tuple[str, ...]:
        if len(set(operands)) != len(operands):
            raise ValueError(f"an operand is listed twice in {list(operands)}")
        return operands


class L2Spec(_Strict):
    """Shared scratchpad feeding the distribution network: one memory with a read and a write
    bandwidth (banks and their conflicts are not modelled).

    ``keeps``: the tensors L2 holds (default all three). An operand left out **bypasses** L2:
    it takes no L2 space, and the words the PEs need of it at each step come from DRAM (see
    :mod:`accelsim.mapping.tiles`); outputs are always kept (their drains land in L2)."""

    size_bytes: PositiveInt
    read_bandwidth_words_per_cycle: float = Field(gt=0)
    write_bandwidth_words_per_cycle: float = Field(gt=0)
    double_buffered: bool = True
    # ``free_space``: with a single-buffered L2, the DMA may fetch the next L2 tile's new words
    # (those the current tile does not hold) while the current tile is in use, as soon as the
    # current tile's words plus the new ones fit in ``size_bytes``; ``none``: it waits for the
    # current tile to be used up (see README, "Hardware fields")
    prefetch: Literal["none", "free_space"] = "none"
    keeps: tuple[Tensor, ...] = TENSORS

    @model_serializer(mode="wrap")
    def _omit_no_prefetch(self, handler: SerializerFunctionWrapHandler) -> dict:
        """An L2 without prefetch or bypass dumps (and hashes) as before those fields existed."""
        data = handler(self)
        if self.prefetch == "none":
            data.pop("prefetch", None)
        if set(self.keeps) == set(TENSORS):
            data.pop("keeps", None)
        return data

    @field_validator("keeps")
    @classmethod
    def _keeps_outputs(cls, keeps: tuple[str, ...]) -> tuple[str, ...]:
        if len(set(keeps)) != len(keeps):
            raise ValueError(f"a tensor is listed twice in {list(keeps)}")
        if "output" not in keeps:
            raise ValueError("output must be kept: outputs bypassing L2 (drains written to DRAM directly) are "
                             "not modelled yet; only input and weight may bypass L2")
        return keeps

    @property
    def bypassed(self) -> frozenset[str]:
        """The operands L2 does not keep: their words go between DRAM and the PEs directly."""
        return frozenset(TENSORS) - set(self.keeps)

    @model_validator(mode="after")
    def _prefetch_single_buffered(self) -> "L2Spec":
        if self.prefetch != "none" and self.double_buffered:
            raise ValueError(f"prefetch {self.prefetch!r} is for a single-buffered L2: set double_buffered: false "
                             "(a double-buffered L2 already fetches the next tile into its other half)")
        return self


def _known_kind(kind: str, kinds: Mapping[str, object]) -> str:
    if kind not in kinds:
        raise ValueError(f"unknown kind {kind!r}; expected one of {', '.join(kinds)}")
    return kind


class DistributionNoCSpec(_Strict):
    """L2 -> PE L1 network: one of the kinds of :mod:`accelsim.hw.noc` (``bus`` with or
    without multicast, a ``tree``, or ``systolic`` neighbour forwarding: data enters at the
    array edge and moves one hop per cycle)."""

    kind: str
    multicast: bool = True
    bandwidth_words_per_cycle: float = Field(gt=0)
    latency_cycles: int = Field(default=1, ge=0)
    # links between neighbouring PEs of the innermost cluster (MAERI's forwarding links): an
    # input word the next PE held in the previous step and this PE needs now crosses one link
    # instead of the network (see accelsim.mapping.forwarding)
    neighbour_forwarding: bool = False
    # how far a step's operands travel before it computes: ``array``, to the array's farthest
    # PE (``latency_cycles`` per hop of the whole array); ``used``, to the farthest PE the step
    # uses (STONNE's mesh fills a tile of r x c outputs in r + c - 1 hops)
    fill: Literal["array", "used"] = "array"
    # a tile clipped at its dimension's end (a ragged fold) still costs its full size on the
    # root ports: the missing elements go as zero packages (STONNE's MAERI), not read from L2;
    # a ragged output tile's padded positions get their inputs, read from L2 as STONNE reads them
    pads_ragged_tiles: bool = False

    @field_validator("kind")
    @classmethod
    def _kind(cls, kind: str) -> str:
        return _known_kind(kind, DISTRIBUTION_KINDS)

    @model_validator(mode="after")
    def _forwarding(self) -> "DistributionNoCSpec":
        if self.neighbour_forwarding and DISTRIBUTION_KINDS[self.kind].always_multicast:
            raise ValueError(f"neighbour_forwarding: a {self.kind} network already forwards between "
                             "neighbours; expected false")
        return self


class ReductionNoCSpec(_Strict):
    """Spatial reduction of partial sums: one of the kinds of :mod:`accelsim.hw.noc` (adder
    ``tree``, store-and-forward ``chain``, ``none``).

    ``write_ports``: how outputs reach L2. ``shared`` (default): a step's drained words share
    the network's width, ``ceil(words / bandwidth)`` cycles after the step's last MAC.
    ``interleaved``: ``floor(bandwidth)`` one-word write ports, the PE at (row, col) wired to
    port ``(row * cols + col) % ports`` (a reduction group through its first PE's port), as
    STONNE's TPU mesh writes its accumulators; each output leaves as soon as its PE is done (on
    a ``systolic`` distribution network PE (row, col) finishes ``row + col`` cycles after PE
    (0, 0), so the drain overlaps the wavefront) and each port writes one word per cycle in
    the order they are ready: a step's drain ends when its busiest port has written its last
    word. ``collection_bus``: MAERI's collection bus as STONNE builds it, ``floor(bandwidth)``
    one-word lines, each reduction group (a virtual neuron of neighbouring PEs) written through
    the line its adder switch's accumulator is wired to (``accelsim.mapping.ports.CollectionBus``);
    the step's drain takes its busiest line's words, and the SRAM's write queue, which retires
    half its queued words (rounded up) per cycle, adds its backlog as latency."""

    kind: str
    bandwidth_words_per_cycle: float = Field(default=1.0, gt=0)
    latency_cycles_per_hop: int = Field(default=1, ge=0)
    # cycles from a group's reduced sum to its write in L2: the registers on the way (STONNE:
    # the accumulator and the collection-bus line on MAERI, the accumulator and the SRAM's
    # write on its mesh); part of the reduction's latency
    write_latency_cycles: int = Field(default=0, ge=0)
    write_ports: Literal["shared", "interleaved", "collection_bus"] = "shared"

    @field_validator("kind")
    @classmethod
    def _kind(cls, kind: str) -> str:
        return _known_kind(kind, REDUCTION_KINDS)


class DRAMSpec(_Strict):
    """Off-chip memory behind a DMA engine.

    ``model``: one of the kinds of :mod:`accelsim.hw.dram`. ``simple``: a transfer costs ``latency_cycles + bytes / bandwidth``, bytes rounded up
    to whole bursts. ``model: dmazerunner``: each contiguous run costs
    ``setup_dma_cycles + dma_cycles_per_byte * bytes`` at ``dma_clock_mhz`` (dMazeRunner uses
    291 + 0.24 per byte), converted to accelerator cycles.
    """

    model: str = "simple"  # a kind of accelsim.hw.dram
    bandwidth_bytes_per_cycle: float = Field(gt=0)
    latency_cycles: int = Field(default=0, ge=0)
    burst_bytes: PositiveInt = 64
    dma_clock_mhz: Optional[float] = Field(default=None, gt=0)
    setup_dma_cycles: float = Field(default=291.0, ge=0)
    dma_cycles_per_byte: float = Field(default=0.24, ge=0)

    @field_validator("model")
    @classmethod
    def _model(cls, model: str) -> str:
        return _known_kind(model, DRAM_KINDS)


class ControllerSpec(_Strict):
    """Policies of the accelerator's controller that hold back the schedule (each off unless a
    design has it).

    ``tile_barrier``: a step is not sent before every output drained so far has landed in L2:
    ``output_tile`` at the first step of every output tile (an output-stationary mesh that
    fills and drains each tile, as STONNE's TPU controller), ``weight_tile`` at every step that
    loads weights (STONNE's MAERI controller: the next weight tile only after the previous
    tile's outputs are written); ``none``: steps stream."""

    tile_barrier: Literal["none", "output_tile", "weight_tile"] = "none"


# Interstellar (Yang et al., ASPLOS 2020) Table 3, 16-bit access energy at 28 nm.
RF_ENERGY_PJ_BY_BYTES = {16: 0.03, 32: 0.06, 64: 0.12, 128: 0.24, 256: 0.48, 512: 0.96}
SRAM_ENERGY_PJ_BY_BYTES = {
    32 * 1024: 6.0, 64 * 1024: 9.0, 128 * 1024: 13.5, 256 * 1024: 20.25, 512 * 1024: 30.375,
}
MAC_ENERGY_PJ = 0.075
NOC_HOP_ENERGY_PJ = 0.035
DRAM_ENERGY_PJ = 200.0


def table_energy_pj(size_bytes: int, table: dict[int, float]) -> float:
    """Energy per access of a buffer of ``size_bytes``, interpolated log-log in ``table``
    and extrapolated along the slope of the nearest end segment."""
    sizes = sorted(table)
    if size_bytes in table:
        return table[size_bytes]
    if size_bytes < sizes[0]:
        lo, hi = sizes[0], sizes[1]
    elif size_bytes > sizes[-1]:
        lo, hi = sizes[-2], sizes[-1]
    else:
        hi = next(s for s in sizes if s > size_bytes)
        lo = sizes[sizes.index(hi) - 1]
    slope = math.log(table[hi] / table[lo]) / math.log(hi / lo)
    return table[lo] * (size_bytes / lo) ** slope


class EnergySpec(_Strict):
    """Energy per word access at each level, per MAC and per NoC hop, in pJ. Omitted buffer
    energies are derived from the buffer sizes with the Interstellar Table 3 figures."""

    mac_pj: float = Field(default=MAC_ENERGY_PJ, ge=0)
    l1_access_pj: Optional[float] = Field(default=None, ge=0)
    l2_access_pj: Optional[float] = Field(default=None, ge=0)
    dram_access_pj: float = Field(default=DRAM_ENERGY_PJ, ge=0)
    noc_hop_pj: float = Field(default=NOC_HOP_ENERGY_PJ, ge=0)


# names an inner level may not take: the fixed levels and the energy breakdown's other parts
RESERVED_LEVEL_NAMES: tuple[str, ...] = ("mac", "l1", "l2", "dram", "noc")


class StorageLevelSpec(_Strict):
    """One storage level of the memory hierarchy, as data: ``instances`` says where its copies
    sit (one per PE, one per cluster, one shared by the array); ``kind: dram`` is off-chip;
    ``size_bytes`` None is unbounded (DRAM); bandwidths in words per cycle (None: not limited);
    ``keeps`` the tensors it holds (the others bypass it); ``access_energy_pj`` per word (None:
    from Interstellar Table 3 by size, or the DRAM figure); ``reused_operands`` (the per-PE
    level only) the operands kept from one step to the next (see :class:`L1Spec`); ``prefetch``
    (the shared buffer, L2, only; None: ``none``) as :class:`L2Spec`'s."""

    name: str
    instances: Literal["per_pe", "per_cluster", "shared"]
    kind: Literal["buffer", "dram"] = "buffer"
    size_bytes: Optional[PositiveInt] = None
    read_bandwidth_words_per_cycle: Optional[float] = Field(default=None, gt=0)
    write_bandwidth_words_per_cycle: Optional[float] = Field(default=None, gt=0)
    double_buffered: bool = True
    keeps: tuple[Tensor, ...] = ("input", "weight", "output")
    access_energy_pj: Optional[float] = Field(default=None, ge=0)
    reused_operands: tuple[Literal["input", "weight"], ...] = ("input", "weight")
    prefetch: Optional[Literal["none", "free_space"]] = None

    @model_serializer(mode="wrap")
    def _omit_unset_prefetch(self, handler: SerializerFunctionWrapHandler) -> dict:
        """A level without ``prefetch`` dumps (and hashes) as before the field existed."""
        data = handler(self)
        if self.prefetch is None:
            data.pop("prefetch", None)
        return data


class HardwareSpec(_Strict):
    """A whole accelerator."""

    name: str
    source: str = ""
    word_size_bytes: PositiveInt = 1
    clock_mhz: float = Field(default=1000.0, gt=0)
    pe_array: PEArraySpec
    l1: L1Spec
    l2: L2Spec
    distribution_noc: DistributionNoCSpec
    reduction_noc: ReductionNoCSpec
    dram: DRAMSpec
    energy: EnergySpec = EnergySpec()
    controller: ControllerSpec = ControllerSpec()
    # per-PE levels between the MACs and L1 (register files), innermost first; a hardware YAML
    # gives them as the per-PE entries of ``levels`` before the last one (L1)
    inner_levels: tuple[StorageLevelSpec, ...] = ()

    @model_serializer(mode="wrap")
    def _omit_empty_inner_levels(self, handler: SerializerFunctionWrapHandler) -> dict:
        """A design without register files inside the PE dumps (and hashes) as before they
        existed: its resolved spec and ``hardware_sha256`` are unchanged."""
        data = handler(self)
        if not self.inner_levels:
            data.pop("inner_levels", None)
        return data

    @model_validator(mode="after")
    def _inner_levels_fit(self) -> "HardwareSpec":
        names = [lv.name for lv in self.inner_levels]
        for lv in self.inner_levels:
            if lv.instances != "per_pe" or lv.kind != "buffer" or lv.size_bytes is None:
                raise ValueError(f"inner level {lv.name}: a register file inside the PE needs instances: per_pe, "
                                 "kind: buffer and size_bytes")
            if not lv.keeps:
                raise ValueError(f"inner level {lv.name}: keeps no tensor")
            if set(lv.reused_operands) != {"input", "weight"}:
                raise ValueError(f"inner level {lv.name}: reused_operands applies to L1 only")
            if lv.read_bandwidth_words_per_cycle is not None or lv.write_bandwidth_words_per_cycle is not None:
                raise ValueError(f"inner level {lv.name}: the bandwidth of a register file inside the PE is not "
                                 "modelled (it is taken as not limiting); remove its bandwidth fields")
            if lv.name.lower() in RESERVED_LEVEL_NAMES:
                raise ValueError(f"inner level {lv.name}: the names {', '.join(RESERVED_LEVEL_NAMES)} are taken")
        if len({n.lower() for n in names}) != len(names):
            raise ValueError(f"inner levels: names must differ ({', '.join(names)})")
        return self

    @property
    def num_pes(self) -> int:
        return self.pe_array.count

    @property
    def levels(self) -> tuple[StorageLevelSpec, ...]:
        """The memory hierarchy as data, innermost first: the register files inside each PE
        (``inner_levels``, if any), L1 (one per PE), L2 (shared), DRAM; L1 and DRAM keep
        every tensor, L2 those of ``l2.keeps``. A hardware YAML may give this list as ``levels`` instead of ``l1``/``l2``
        (see the loader)."""
        word = self.word_size_bytes
        return self.inner_levels + (
            StorageLevelSpec(name="L1", instances="per_pe", size_bytes=self.l1.size_bytes,
                             double_buffered=self.l1.double_buffered, access_energy_pj=self.energy.l1_access_pj,
                             reused_operands=self.l1.reused_operands),
            StorageLevelSpec(name="L2", instances="shared", size_bytes=self.l2.size_bytes,
                             read_bandwidth_words_per_cycle=self.l2.read_bandwidth_words_per_cycle,
                             write_bandwidth_words_per_cycle=self.l2.write_bandwidth_words_per_cycle,
                             double_buffered=self.l2.double_buffered, access_energy_pj=self.energy.l2_access_pj,
                             keeps=self.l2.keeps, prefetch=None if self.l2.prefetch == "none" else self.l2.prefetch),
            StorageLevelSpec(name="DRAM", instances="shared", kind="dram",
                             read_bandwidth_words_per_cycle=self.dram.bandwidth_bytes_per_cycle / word,
                             write_bandwidth_words_per_cycle=self.dram.bandwidth_bytes_per_cycle / word,
                             double_buffered=False, access_energy_pj=self.energy.dram_access_pj),
        )

    @property
    def l1_energy_pj(self) -> float:
        if self.energy.l1_access_pj is not None:
            return self.energy.l1_access_pj
        return table_energy_pj(self.l1.size_bytes, RF_ENERGY_PJ_BY_BYTES)

    def inner_energy_pj(self, level: StorageLevelSpec) -> float:
        """Energy per word access of an inner level: its own figure, else Interstellar Table 3's
        register-file energy by its size."""
        if level.access_energy_pj is not None:
            return level.access_energy_pj
        return table_energy_pj(level.size_bytes or 1, RF_ENERGY_PJ_BY_BYTES)

    @property
    def l2_energy_pj(self) -> float:
        if self.energy.l2_access_pj is not None:
            return self.energy.l2_access_pj
        return table_energy_pj(self.l2.size_bytes, SRAM_ENERGY_PJ_BY_BYTES)
