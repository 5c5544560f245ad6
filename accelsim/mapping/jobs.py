"""Jobs: a layer with its dataflow, from a MAESTRO file, a network under a named style or a
network table that gives its layers' dataflows, compiled and checked against the hardware's buffers before any model runs it."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable, NoReturn, Sequence

from accelsim.errors import InputError, MappingError
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.ast import ClusterDirective, Directive, MaestroFile, MaestroLayer, MapDirective
from accelsim.mapping.compile import BufferOverflow, CompiledMapping, InnerPins, check_fits, compile_mapping
from accelsim.mapping.inner_levels import inner_tiling
from accelsim.mapping.loopnest_format import load_loopnest, loopnest_dataflow
from accelsim.mapping.limits import check_exact
from accelsim.mapping.maestro_format import layer_from_maestro, load_maestro, parse_maestro, write_maestro
from accelsim.mapping.styles import STYLES, style_mapping
from accelsim.workload.ops import Layer, LayerDataflow, Network
from accelsim.workload.tables import load_network

class OverflowWarning(UserWarning):
    """A mapping that does not fit its buffers was simulated anyway (--allow-overflow)."""


@dataclass(frozen=True)
class Job:
    """One layer to simulate: the layer, its dataflow and where the dataflow came from."""

    layer: Layer
    dataflow: tuple[Directive, ...]
    source: str
    origin: MaestroLayer | None = None  # the layer as a MAESTRO file wrote it (models reading MAESTRO's form)
    # DRAM layout per tensor role (axis indices, outermost first); () keeps the operator's channel-last
    dram_layouts: tuple[tuple[str, tuple[int, ...]], ...] = ()
    inner_pins: InnerPins | None = None  # the loops each register file holds (None: the default rule)

    def repeat_key(self) -> tuple[object, ...]:
        """What decides this job's result on given hardware and options: the layer's operator,
        sizes and strides and the dataflow, not the layer's name or file. Two jobs with the same
        key get the same result but for the name (a network's repeated layers are computed once).
        A directive's line number only places messages, so it is left out."""
        layer = self.layer
        dataflow = tuple((d.kind, d.size, d.offset, d.dim) if isinstance(d, MapDirective) else ("cluster", d.size)
                         for d in self.dataflow)
        return (layer.op, tuple(sorted(layer.sizes.items())), layer.stride_y, layer.stride_x, dataflow,
                self.dram_layouts, self.inner_pins)


def compile_job(job: Job, hw: HardwareSpec, check_legality: bool = True) -> CompiledMapping:
    """A job compiled for ``hw``'s array with its DRAM layouts, without the buffer-fit check."""
    cm = compile_mapping(job.layer, job.dataflow, hw.num_pes, source=job.source, check_legality=check_legality,
                         dram_layouts=dict(job.dram_layouts))
    return replace(cm, inner_pins=job.inner_pins) if job.inner_pins is not None else cm


def prepare(job: Job, hw: HardwareSpec, allow_overflow: bool = False, check_legality: bool = True) -> CompiledMapping:
    """Compile a job and check it fits the buffers (refuse, or warn with ``allow_overflow``);
    ``check_legality=False`` skips the coverage checks (see ``compile_mapping``). A layer too
    large to count exactly (:func:`~accelsim.mapping.limits.check_exact`) is refused first."""
    check_exact(job.layer, hw)
    cm = compile_job(job, hw, check_legality)
    if hw.inner_levels or cm.inner_pins is not None:
        # a register file that cannot hold one word of what it keeps, and pins that do not name
        # the design's register files (a design without any included), are refused
        inner_tiling(cm, hw)
    problems = _fit_problems(cm, hw)
    if problems:
        message = f"layer {job.layer.name!r} does not fit {hw.name}: " + "; ".join(p.message for p in problems)
        if not allow_overflow:
            raise MappingError(message + " (use --allow-overflow to simulate it anyway)", source=job.source,
                               reason=problems[0].reason)
        warnings.warn(message, OverflowWarning, stacklevel=2)
    return cm


def _fit_problems(cm: CompiledMapping, hw: HardwareSpec) -> list[BufferOverflow]:
    return check_fits(cm, hw.l1.size_bytes, hw.l2.size_bytes, hw.word_size_bytes, hw.l1.double_buffered,
                      hw.l2.double_buffered, hw.l2.bypassed)


def fits(cm: CompiledMapping, hw: HardwareSpec) -> bool:
    """Whether the tiles of ``cm`` fit ``hw``'s L1 and L2 (a result that did not is marked
    ``overflowed``)."""
    return not _fit_problems(cm, hw)


def jobs_from_maestro(path: str | Path, layer: str | None = None) -> tuple[str, list[Job]]:
    """(network name, jobs) of a MAESTRO ``.m`` file, optionally one layer only."""
    mf = load_maestro(path)
    layers = _select(mf, layer, str(path))
    jobs = [Job(layer_from_maestro(ml, str(path)), ml.dataflow, str(path), ml) for ml in layers]
    return mf.network or Path(path).stem, jobs


def jobs_from_loopnest(path: str | Path, num_pes: int, layer: str | None = None) -> tuple[str, list[Job]]:
    """(network name, jobs) of a loop-nest mapping file (see :mod:`accelsim.mapping.loopnest_format`)
    on an array of ``num_pes`` PEs, optionally one layer only."""
    name, layers = load_loopnest(path)
    if layer is not None:
        layers = [nl for nl in layers if nl.layer.name == layer] or _no_layer(layer, [nl.layer.name for nl in layers],
                                                                             str(path))
    return name, [Job(nl.layer, tuple(loopnest_dataflow(nl, num_pes)), str(path), inner_pins=nl.inner_pins)
                  for nl in layers]


def jobs_from_mapping_file(path: str | Path, num_pes: int, layer: str | None = None) -> tuple[str, list[Job]]:
    """``--mapping``: a loop-nest file (``.yaml``/``.yml``) or a MAESTRO ``.m`` file (any other name)."""
    if str(path).lower().endswith((".yaml", ".yml")):
        return jobs_from_loopnest(path, num_pes, layer)
    return jobs_from_maestro(path, layer)


def _no_layer(layer: str, names: Sequence[str], path: str) -> NoReturn:
    raise MappingError(f"no layer {layer!r}; layers are: " + ", ".join(names), source=path, reason="unknown_layer")


def _select(mf: MaestroFile, layer: str | None, path: str) -> Sequence[MaestroLayer]:
    if layer is None:
        return mf.layers
    return [ml for ml in mf.layers if ml.name == layer] or _no_layer(layer, [ml.name for ml in mf.layers], path)


def jobs_from_network(network: str, style: str | None, hw: HardwareSpec,
                      layer: str | None = None) -> tuple[str, list[Job]]:
    """(network name, jobs) of a bundled or YAML network mapped in a named style, or, with no
    style, in the dataflows its table gives its layers (a layer without one is refused)."""
    net = load_network(network)
    layers = [net.layer(layer)] if layer is not None else list(net.layers)
    if style:
        return net.name, [Job(one, tuple(style_mapping(style, one, hw)), f"style {style}") for one in layers]
    return net.name, [_table_job(net, one) for one in layers]


def _table_job(net: Network, layer: Layer) -> Job:
    """The job of a layer whose network table gives its dataflow (see :func:`table_dataflow`)."""
    given = net.dataflow(layer.name)
    if given is None:
        raise InputError(
            f"layer {layer.name!r} of network {net.name!r} has no 'dataflow' in its table: --network needs "
            f"--style (one of {', '.join(sorted(STYLES))}) unless its table gives every layer a dataflow",
            source=net.source)
    return Job(layer, table_dataflow(layer, given), f"{given.source} layer {layer.name} dataflow")


def table_dataflow(layer: Layer, given: LayerDataflow) -> tuple[Directive, ...]:
    """The directives of a table's ``dataflow`` text for ``layer``, parsed as the ``Dataflow``
    block of a MAESTRO file holding the layer (so ``Sz(R)`` reads the layer's sizes); a problem is
    a MappingError at the table's file and line (the text is placed on the lines it has there)."""
    holder = write_maestro(to_maestro("table", [Job(layer, (ClusterDirective(1, 0),), given.source)]))
    lines = [ln.strip() for ln in holder.splitlines() if ln.strip() and not ln.strip().startswith("//")]
    opened = next(i for i, ln in enumerate(lines) if ln.startswith("Dataflow"))
    # the holder's one placeholder directive is replaced by the table's text
    header, closing = " ".join(lines[:opened + 1]), " ".join(lines[opened + 2:])
    pad = "\n" * max(0, (given.line or 2) - 1)
    mf = parse_maestro(f"{header}{pad}{given.text}\n{closing}\n", given.source)
    return mf.layers[0].dataflow


def to_maestro(network: str, jobs: Iterable[Job]) -> MaestroFile:
    """A MAESTRO file holding the jobs' layers and dataflows (for ``accelsim mapping``); sizes the
    operator fixes (a depthwise layer's K, a residual add's filter) are left out."""
    layers = []
    for job in jobs:
        layer = job.layer
        dims = {d: v for d, v in layer.sizes.items() if d in layer.operator.used_dims}
        dataflow = tuple(
            d if isinstance(d, ClusterDirective) else MapDirective(d.kind, d.size, d.offset, d.dim, 0)
            for d in job.dataflow)
        layers.append(MaestroLayer(layer.name, layer.operator.maestro_type, layer.stride_y, layer.stride_x, dims, dataflow, 0))
    return MaestroFile(network, tuple(layers), f"network {network}")
