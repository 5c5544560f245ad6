"""SCALE-Sim inputs -> our systolic hardware spec, GEMM layers, mappings and fold rule.

SCALE-Sim runs every layer as a matrix product of its operand matrices: M output pixels
(``ofmap_h x ofmap_w``), N filters, K = filter height x width x channels (im2col). We run the
same GEMM (``C[M][N] += A[M][K] B[K][N]``). Its dataflows place the matrices on the
``rows x cols`` array as (``Sr`` over rows, ``Sc`` over columns, ``T`` streamed in time):

    os: Sr = M, Sc = N, T = K      outputs stationary (``output``)
    ws: Sr = K, Sc = N, T = M      weights stationary (``weight``)
    is: Sr = K, Sc = M, T = N      inputs stationary  (``input``)

A fold is one ``rows x cols`` tile of (Sr, Sc): ``ceil(Sr / rows) x ceil(Sc / cols)`` folds,
column folds outermost, each streaming T and paying a fill/drain that depends only on the
array (SCALE-Sim's demand matrices, ``compute/systolic_compute_*.py``)::

    os: T + rows + cols - 2        (operand skew rows-1 and cols-1)
    ws, is: T + 2 rows + cols - 2  (stationary preload rows, skew rows-1, drain cols-1)

Folds run back to back, never overlapped. Our mapping is one step per chunk of T (chunks as
large as fit the L2 tiles), and :class:`accelsim.sim.engine.SystolicFold` adds the fill/drain
once per fold, so the engine's busy cycles are ``folds x (T + fill/drain)``.

The hardware: the three SRAMs become one double-buffered L2 of their total size; the
array edges feed ``rows + cols`` words per cycle and drain ``cols`` per cycle; systolic skew is
in the fold rule, so network latencies are 0; DRAM is one channel with the sum of SCALE-Sim's
three channel bandwidths (1-byte words, no bursts, no latency). SCALE-Sim's PEs hold no
scratchpad: L1 stands for the operand registers and is sized to the largest per-PE tile.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil

from accelsim.mapping.jobs import Job
from accelsim.errors import InputError
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.ast import ClusterDirective, Directive, MapDirective
from accelsim.mapping.compile import CompiledMapping, buffer_needs_bytes, check_fits, compile_mapping
from accelsim.scalesim.config import ScaleSimConfig
from accelsim.scalesim.topology import ScaleSimLayer, ScaleSimTopology
from accelsim.model_options import SystolicFold
from accelsim.workload.operators import TensorRole
from accelsim.workload.ops import Layer, OpType

STATIONARY: dict[str, TensorRole] = {"os": "output", "ws": "weight", "is": "input"}
# (dimension over rows, dimension over columns, dimension streamed in time), in our GEMM names
PLACEMENT = {"os": ("M", "N", "K"), "ws": ("K", "N", "M"), "is": ("K", "M", "N")}
UNBOUNDED_L1_BYTES = 1 << 40  # while choosing chunks; L1 is sized to the result afterwards


def fill_drain_cycles(dataflow: str, rows: int, cols: int) -> int:
    """SCALE-Sim's per-fold cycles beyond the streamed T (see the module docstring)."""
    return rows + cols - 2 if dataflow == "os" else 2 * rows + cols - 2


def fold_rule(config: ScaleSimConfig) -> SystolicFold:
    """The engine's fold timing option for this configuration."""
    return SystolicFold(STATIONARY[config.dataflow],
                        fill_drain_cycles(config.dataflow, config.array_rows, config.array_cols))


@dataclass(frozen=True)
class FoldShape:
    """SCALE-Sim's fold structure of one layer: spatial extents, streamed extent, folds."""

    rows_extent: int  # Sr
    cols_extent: int  # Sc
    streamed: int  # T
    row_folds: int
    col_folds: int

    @property
    def folds(self) -> int:
        return self.row_folds * self.col_folds


def fold_shape(config: ScaleSimConfig, layer: ScaleSimLayer) -> FoldShape:
    """Sr, Sc, T and the fold counts SCALE-Sim uses for ``layer``."""
    sizes = dict(zip("MNK", layer.gemm_mnk))
    r_dim, c_dim, t_dim = PLACEMENT[config.dataflow]
    sr, sc = sizes[r_dim], sizes[c_dim]
    return FoldShape(sr, sc, sizes[t_dim], ceil(sr / config.array_rows), ceil(sc / config.array_cols))


def gemm_layer(layer: ScaleSimLayer, source: str) -> Layer:
    """Our GEMM for a SCALE-Sim layer (its operand matrices: M pixels, N filters, K window)."""
    m, n, k = layer.gemm_mnk
    return Layer.build(layer.name, OpType.GEMM, {"M": m, "N": n, "K": k}, source=f"{source}:{layer.line}")


def _dataflow(config: ScaleSimConfig, layer: Layer, chunk: int) -> list[Directive]:
    """Columns of the array are clusters of ``rows`` PEs: the column dimension maps across
    clusters (folding when larger), the row dimension across the PEs of a cluster in tiles of
    ``rows`` (the row folds, inside the column folds), the streamed dimension in ``chunk``s."""
    r_dim, c_dim, t_dim = PLACEMENT[config.dataflow]
    rows = min(config.array_rows, layer.sizes[r_dim])
    return [MapDirective("spatial", 1, 1, c_dim, 0),
            MapDirective("temporal", rows, rows, r_dim, 0),
            MapDirective("temporal", chunk, chunk, t_dim, 0),
            ClusterDirective(config.array_rows, 0),
            MapDirective("spatial", 1, 1, r_dim, 0)]


def hardware_spec(config: ScaleSimConfig, l1_size_bytes: int = UNBOUNDED_L1_BYTES) -> HardwareSpec:
    """Our systolic hardware for a SCALE-Sim configuration (see the module docstring)."""
    rows, cols = config.array_rows, config.array_cols
    return HardwareSpec.model_validate({
        "name": f"scalesim_{config.run_name}",
        "source": f"SCALE-Sim config {config.source} ({config.dataflow}, {config.bandwidth_mode} bandwidth)",
        "word_size_bytes": 1,
        "pe_array": {"rows": rows, "cols": cols, "macs_per_pe_per_cycle": 1, "mac_pipeline_latency_cycles": 1},
        "l1": {"size_bytes": l1_size_bytes, "double_buffered": True},
        "l2": {"size_bytes": config.sram_bytes, "double_buffered": True,
               "read_bandwidth_words_per_cycle": rows + cols, "write_bandwidth_words_per_cycle": cols},
        "distribution_noc": {"kind": "systolic", "multicast": False,
                             "bandwidth_words_per_cycle": rows + cols, "latency_cycles": 0},
        "reduction_noc": {"kind": "chain", "bandwidth_words_per_cycle": cols, "latency_cycles_per_hop": 0},
        "dram": {"model": "simple", "bandwidth_bytes_per_cycle": config.dram_bandwidth_words_per_cycle,
                 "latency_cycles": 0, "burst_bytes": 1},
    })


def _fitting_dataflow(config: ScaleSimConfig, layer: Layer, hw: HardwareSpec, source: str
                      ) -> tuple[list[Directive], CompiledMapping]:
    """The mapping with the largest chunk of T (T, T/2, T/4, ... rounded up) whose L2 tile fits,
    and its compiled form."""
    streamed = layer.sizes[PLACEMENT[config.dataflow][2]]
    chunk = streamed
    while True:
        dataflow = _dataflow(config, layer, chunk)
        cm = compile_mapping(layer, dataflow, hw.num_pes, source=source)
        if not check_fits(cm, hw.l1.size_bytes, hw.l2.size_bytes, hw.word_size_bytes,
                          hw.l1.double_buffered, hw.l2.double_buffered):
            return dataflow, cm
        if chunk == 1:
            raise InputError(f"layer {layer.name!r}: even one {config.dataflow} fold of the "
                             f"{config.array_rows}x{config.array_cols} array does not fit the "
                             f"{config.sram_bytes} bytes of SRAM", source=source)
        chunk = ceil(chunk / 2)


@dataclass(frozen=True)
class ScaleSimRun:
    """Everything the engine needs to run a SCALE-Sim topology."""

    hw: HardwareSpec
    jobs: tuple[Job, ...]
    fold: SystolicFold
    shapes: tuple[FoldShape, ...]  # per job, SCALE-Sim's fold structure


def translate(config: ScaleSimConfig, topology: ScaleSimTopology) -> ScaleSimRun:
    """Hardware, one job per topology layer (GEMM, dataflow mapping) and the fold rule."""
    probe = hardware_spec(config)
    jobs, l1_bytes = [], 1
    source = f"SCALE-Sim {config.dataflow} mapping of {topology.source}"
    for sl in topology.layers:
        layer = gemm_layer(sl, topology.source)
        dataflow, cm = _fitting_dataflow(config, layer, probe, source)
        l1_bytes = max(l1_bytes, buffer_needs_bytes(cm, 1, True, True)[0])
        jobs.append(Job(layer, tuple(dataflow), source))
    shapes = tuple(fold_shape(config, sl) for sl in topology.layers)
    return ScaleSimRun(hardware_spec(config, l1_bytes), tuple(jobs), fold_rule(config), shapes)
