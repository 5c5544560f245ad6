"""``accelsim lint``: for each layer of a mapping, the ways MAESTRO's result will be wrong.

Each finding names what MAESTRO will print (or fail to), where in the mapping the cause is and
its size, computed from the model of the binary (accelsim.maestro) against the true layer:

- ``mac_error``: MAESTRO's ``Num MACs`` against the layer's, with the cause: a coverage hole or
  overlap of a directive (our compiler's legality check names it), otherwise the spatial edge of
  the sliding-window SpatialMaps (quirk ``sliding_window_mac_miscount``);
- ``stride_inflated_outputs``: ``output l2 read`` counts ``(Y - R + 1) x (X - S + 1)`` output
  positions per channel whatever the stride (quirk ``output_size_ignores_stride``);
- ``strided_output_inflation``: ``output l2 write`` (and the runtime through the egress and the
  off-chip floor) counts ``min(offset, size)`` output rows for each further unit of an
  input-row SpatialMap on a strided layer (quirk ``spatial_edge_output_inflation``);
- ``zero_counted_edge_pe``: ``output l2 write`` misses the outputs of the partial last unit of a
  spatial map whose windows fill the dimension (quirk ``spatial_edge_zero_egress``);
- ``idle_pes``: PEs beyond a multiple of the Cluster sizes, silently idle
  (quirk ``cluster_remainder_idle``);
- ``buffer_not_enforced``: the mapping's tiles do not fit L1 or L2; MAESTRO only warns;
- ``maestro_stops``: MAESTRO stops with an error or crashes on the layer;
- ``name_cut``: MAESTRO prints the layer under another name (quirk ``layer_name_split``);
- ``crlf`` (file level): MAESTRO's parser fails on CRLF line endings.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from accelsim.input_files import read_bytes
from accelsim.errors import MappingError
from accelsim.hw.spec import HardwareSpec
from accelsim.maestro.engine import Corrections
from accelsim.maestro.model import analyze_problem, hardware_of, problem_of
from accelsim.maestro.report import maestro_name
from accelsim.mapping.compile import check_fits, compile_mapping
from accelsim.mapping.jobs import Job, to_maestro


@dataclass(frozen=True)
class Finding:
    """One way MAESTRO's result for a layer will be wrong, with its size."""

    kind: str
    message: str
    maestro_value: int | None = None  # what MAESTRO prints (when it is a number)
    true_value: int | None = None  # what the layer has

    @property
    def error(self) -> int | None:
        if self.maestro_value is None or self.true_value is None:
            return None
        return self.maestro_value - self.true_value


@dataclass
class LayerLint:
    """The findings of one layer."""

    layer: str
    findings: list[Finding] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"layer": self.layer, "findings": [{**asdict(f), "error": f.error} for f in self.findings]}


def _pct(error: int, true: int) -> str:
    return f"{100 * error / true:+.3f}%" if true else "n/a"


def lint_job(job: Job, hw: HardwareSpec) -> LayerLint:
    """The findings of one layer (see the module docstring)."""
    written = job.origin if job.origin is not None else to_maestro("", [job]).layers[0]
    result = LayerLint(job.layer.name)
    shown = maestro_name(written.name)
    if shown != written.name:
        result.findings.append(Finding("name_cut", f"MAESTRO prints this layer as {shown!r} (it cuts names at "
                                                   "its token separators '-', '>', ...)"))
    problem = problem_of(written)
    maestro_hw = hardware_of(hw)
    try:
        analysis = analyze_problem(problem, maestro_hw)
    except MappingError as exc:
        result.findings.append(Finding("maestro_stops", f"MAESTRO gives no result: {exc.detail}"))
        return result
    top = analysis.top
    true_macs = job.layer.macs
    if top.macs != true_macs:
        error = top.macs - true_macs
        where = _mac_error_cause(job, hw, written)
        result.findings.append(Finding(
            "mac_error", f"Num MACs {top.macs:,}, the layer has {true_macs:,} ({error:+,}, {_pct(error, true_macs)}): "
                         f"{'double-counts' if error > 0 else 'misses'} {abs(error):,} MACs; {where}",
            top.macs, true_macs))
    true_outputs = job.layer.loop_nest().tensor_words("output")
    strided = job.layer.stride_y > 1 or job.layer.stride_x > 1
    if strided and problem.analysed_type == problem.layer_type and top.l2_read["output"] != true_outputs:
        error = top.l2_read["output"] - true_outputs
        result.findings.append(Finding(
            "stride_inflated_outputs",
            f"output l2 read {top.l2_read['output']:,} counts the output size as (Y - R + 1) x (X - S + 1) per "
            f"channel, ignoring stride {job.layer.stride_y}x{job.layer.stride_x}; the layer has {true_outputs:,} "
            f"outputs ({error:+,})", top.l2_read["output"], true_outputs))
    strided_fix = analyze_problem(problem, maestro_hw, Corrections(strided_egress=True))
    extra = top.l2_write["output"] - strided_fix.top.l2_write["output"]
    if extra:
        sp = [d.text() for level in _levels(problem, maestro_hw.num_pes) for d in level.dataflow
              if d.spatial and d.var in ("Y", "X") and d.offset > 1]
        result.findings.append(Finding(
            "strided_output_inflation",
            f"output l2 write {top.l2_write['output']:,} counts min(offset, size) output rows for each further "
            f"unit of {' / '.join(sp)} on a stride-{max(job.layer.stride_y, job.layer.stride_x)} layer, where each "
            f"adds offset / stride: {extra:+,} writes (corrected {strided_fix.top.l2_write['output']:,}; runtime "
            f"{top.runtime:,} -> {strided_fix.top.runtime:,} cycles)",
            top.l2_write["output"], strided_fix.top.l2_write["output"]))
    fixed = analyze_problem(problem, maestro_hw, Corrections(zero_edge_egress=True))
    missing = fixed.top.l2_write["output"] - top.l2_write["output"]
    if missing:
        sp = [d.text() for level in _levels(problem, maestro_hw.num_pes) for d in level.dataflow if d.spatial]
        result.findings.append(Finding(
            "zero_counted_edge_pe",
            f"output l2 write {top.l2_write['output']:,} misses {missing:,} outputs: the partial last unit of "
            f"{' / '.join(sp)} at its spatial edge is counted as writing none (with it: "
            f"{fixed.top.l2_write['output']:,})", top.l2_write["output"], fixed.top.l2_write["output"]))
    idle = hw.num_pes - analysis.used_pes
    if idle:
        sizes = " x ".join(str(d.size) for d in problem.dataflow if d.kind == "cluster")
        result.findings.append(Finding(
            "idle_pes", f"{idle} of {hw.num_pes} PEs idle: the Cluster sizes ({sizes}) use "
                        f"{analysis.used_pes}; MAESTRO does not say so", analysis.used_pes, hw.num_pes))
    result.findings += _buffer_findings(job, hw)
    return result


def _levels(problem, num_pes):
    from accelsim.maestro.clusters import build_levels

    return build_levels(problem, num_pes)[0]


def _mac_error_cause(job: Job, hw: HardwareSpec, written) -> str:
    """Where the MAC error comes from: a TRCONV read as a CONV, a coverage hole or overlap (named
    by our compiler), else the spatial edge of the sliding-window SpatialMaps."""
    if written.type == "TRCONV":
        return ("MAESTRO analyses a TRCONV as a plain CONV of these dimensions (Y - R + 1 output rows, no "
                "upsampling; quirk trconv_as_conv)")
    try:
        compile_mapping(job.layer, job.dataflow, hw.num_pes, source=job.source)
    except MappingError as exc:
        if exc.reason in ("coverage", "overlap", "gap"):
            return f"coverage: {exc.detail}"
    filters = {"Y'": job.layer.sizes.get("R", 1), "X'": job.layer.sizes.get("S", 1)}
    sliding = [d for d in written.dataflow
               if getattr(d, "kind", "") == "spatial"
               and (d.dim in ("Y", "X") and d.size > d.offset or d.dim in filters and filters[d.dim] > 1)]
    if sliding:
        texts = ", ".join(f"SpatialMap({d.size},{d.offset}) {d.dim} (line {d.line})" if d.line else
                          f"SpatialMap({d.size},{d.offset}) {d.dim}" for d in sliding)
        return (f"at the spatial edge of {texts}: MAESTRO counts whole windows for the last, partly "
                "filled group of clusters")
    return "cause not located"


def _buffer_findings(job: Job, hw: HardwareSpec) -> list[Finding]:
    try:
        cm = compile_mapping(job.layer, job.dataflow, hw.num_pes, source=job.source)
    except MappingError:
        return []
    problems = check_fits(cm, hw.l1.size_bytes, hw.l2.size_bytes, hw.word_size_bytes, hw.l1.double_buffered,
                          hw.l2.double_buffered)
    return [Finding("buffer_not_enforced", f"{p.message}; MAESTRO only warns and reports the layer anyway",
                    p.need_bytes, p.size_bytes) for p in problems]


def lint_file_text(path: str) -> list[Finding]:
    """File-level findings: CRLF line endings, which MAESTRO's parser cannot read."""
    data = read_bytes(path, "mapping file")
    if b"\r" in data:
        line = data[: data.index(b"\r")].count(b"\n") + 1
        return [Finding("crlf", f"CRLF line endings (first at line {line}): MAESTRO's parser fails on them "
                                "(it keeps the '\\r' in its tokens); convert to LF")]
    return []
