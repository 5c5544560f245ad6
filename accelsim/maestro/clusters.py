"""MAESTRO's split of a dataflow into cluster levels (its ``ClusterAnalysis``/``ClusterUnit``).

Level 0 is the top (directives above the first ``Cluster``); each ``Cluster(n)`` closes a level
and the next one works inside a cluster of ``n`` sub-units. Per level MAESTRO completes the
directives (inherits the upper level's maps as TemporalMaps, unrolls dimensions no directive
mentions), scales input-side maps by the stride (``ApplyOuterStride``), and fixes a *static*
tile of every dimension for the level below (``min(map size, dimension)``).
"""

from __future__ import annotations

from dataclasses import dataclass

from accelsim.maestro.problem import DimTable, Directive, MaestroProblem, cdiv

CONV_TYPES = ("CONV", "DSCONV", "NGCONV")


@dataclass
class ClusterLevel:
    """One cluster level: its directives, static dimensions and sub-unit count."""

    index: int  # 0 = top
    num_sub_clusters: int  # MAESTRO's cluster size: sub-units under one unit of this level
    dataflow: list[Directive]
    dims: DimTable
    num_edge_clusters: int  # sub-units active in a spatial edge step (AnalyzeSpatialEdgeCase)

    def find(self, var: str) -> Directive | None:
        for directive in self.dataflow:
            if directive.var == var:
                return directive
        return None

    def index_of(self, var: str) -> int:
        for i, directive in enumerate(self.dataflow):
            if directive.var == var:
                return i
        return len(self.dataflow)

    def first_spatial(self) -> Directive:
        for directive in self.dataflow:
            if directive.spatial:
                return directive
        raise AssertionError("levels are built with a SpatialMap")

    def is_unrolled(self, var: str) -> bool:
        """The map covers the whole (static) dimension (``ClusterUnit::IsUnrolled``)."""
        directive = self.find(var)
        assert directive is not None
        size = self.dims.size(var)
        if directive.temporal:
            return directive.size >= size
        return (self.num_sub_clusters - 1) * directive.offset + directive.size >= size

    def is_init_edge(self, var: str) -> bool:
        """``ClusterUnit::IsInitEdge``: the first step already overruns the static dimension."""
        directive = self.find(var)
        if directive is None:
            return False
        if directive.temporal:
            return directive.size > self.dims.size(var)
        return directive.offset * self.num_sub_clusters > self.dims.size(var)


def top_dimension_table(problem: MaestroProblem) -> DimTable:
    """The top level's dimensions (``ConstructConvDimensionTable``).

    Quirk ``output_size_ignores_stride``: a convolution's output rows are ``Y - R + 1``
    whatever the stride (and the input size from a given ``Y'`` is ``Y' + R - 1``). When the
    file gives ``Y'``/``X'``, MAESTRO attaches the other axis's stride entry to each derived
    input dimension (both are 1 unless ``Stride`` names ``Y'``/``X'``).
    """
    table = DimTable()
    kind = problem.analysed_type
    if kind not in CONV_TYPES:
        for name, size in problem.dims:
            table.add(name, size, problem.strides.get(name, 1))
        return table
    seen: dict[str, int] = {}
    stride_y = stride_x = 1
    for name, size in problem.dims:
        stride = problem.strides.get(name, 1)
        if name in ("Y", "Y'", "X", "X'"):
            clash = {"Y": "Y'", "Y'": "Y", "X": "X'", "X'": "X"}[name]
            if clash in seen:
                raise problem.error(f"gives both {clash} and {name} (MAESTRO: DoubleDimDefinition)")
        if name == "Y":
            stride_y = stride
        elif name == "X":
            stride_x = stride
        elif name == "X'":
            stride_y = stride  # MAESTRO's swap: X' sets the Y stride variable
        elif name == "Y'":
            stride_x = stride
        seen.setdefault(name, size)
        table.add(name, size, stride)
    r, s = seen.get("R", 0), seen.get("S", 0)
    if "X" in seen and "X'" not in seen:
        table.add("X'", seen["X"] - s + 1, stride_x)
    if "Y" in seen and "Y'" not in seen:
        table.add("Y'", seen["Y"] - r + 1, stride_y)
    if "X" not in seen and "X'" in seen:
        table.add("X", seen["X'"] + s - 1, stride_x)
    if "Y" not in seen and "Y'" in seen:
        table.add("Y", seen["Y'"] + r - 1, stride_y)
    table.overlaps = [("X", "S"), ("Y", "R")]
    return table


def input_vars(problem: MaestroProblem) -> list[str]:
    """Dimensions of the input-side tensors (input and filter), sorted and unique."""
    tensors = problem.tensors()
    return sorted({v for t in tensors if not t.is_output for v in t.coupled})


def _output_to_input(dataflow: list[Directive]) -> None:
    """MAESTRO's first conversion (per level, before completing it): ``Y'``/``X'`` maps become
    ``Y``/``X`` maps of ``size + R - 1`` when the level maps no input ``Y``/``X``; R and S are
    the sizes the level maps them with (MAESTRO leaves them unset otherwise; we use 1)."""
    sizes = {d.var: d.size for d in dataflow}
    for out, inp, filt in (("X'", "X", "S"), ("Y'", "Y", "R")):
        if inp not in sizes and out in sizes:
            for d in dataflow:
                if d.var == out:
                    d.var = inp
                    d.size = sizes[out] + sizes.get(filt, 1) - 1
                    break


def _inherit(upper: list[Directive] | None, dataflow: list[Directive]) -> None:
    """Directives of the upper level whose dimension this level does not map are put in front
    as TemporalMaps of the same size and offset (in reverse order, as MAESTRO inserts them)."""
    if upper is None:
        return
    for directive in upper:
        if not any(d.var == directive.var for d in dataflow):
            dataflow.insert(0, Directive("temporal", directive.size, directive.offset, directive.var))


def _unroll_missing(names: list[str], dims: DimTable, dataflow: list[Directive]) -> None:
    for name in names:
        if not any(d.var == name for d in dataflow) and dims.has(name):
            size = dims.size(name)
            dataflow.append(Directive("temporal", size, size, name))


def _apply_outer_stride(is_top: bool, dataflow: list[Directive], dims: DimTable, top: DimTable) -> None:
    """MAESTRO's ``ApplyOuterStride``: a map of input rows (cols) whose size covers the filter
    on a strided layer is rewritten in output terms: ``out = (size + stride - R) / stride``
    outputs, size ``out * min(stride, R) + max(R - stride, 0)``, offset ``out * stride``
    (below the top level, ``out * R`` when R < stride)."""
    for directive in dataflow:
        var = directive.var
        stride = dims.stride(var)
        if not (dims.is_overlapped(var) and not dims.is_sliding(var) and stride != 1):
            continue
        target = next(d for d in dataflow if d.var == var)
        sliding = top.size(dims.counterpart(var))
        if directive.size >= sliding:
            outputs = cdiv(directive.size + stride - sliding, stride)
            target.size = outputs * min(stride, sliding) + max(sliding - stride, 0)
            target.offset = outputs * stride
            if not is_top and sliding < stride:
                target.offset = outputs * sliding


def _input_centric_again(dataflow: list[Directive]) -> None:
    """The second conversion MAESTRO applies when building a level (``DirectiveTable::
    ConvertToInputCentric``): any remaining ``Y'``/``X'`` map becomes an input map."""
    size_r = next((d.size for d in dataflow if d.var == "R"), 0)
    size_s = next((d.size for d in dataflow if d.var == "S"), 1)
    for d in dataflow:
        if d.var == "X'":
            d.var, d.size = "X", d.size + size_s - 1
        elif d.var == "Y'":
            d.var, d.size = "Y", d.size + size_r - 1


def _edge_clusters(level_dims: DimTable, dataflow: list[Directive], num_sub: int) -> int:
    """``ClusterUnit::AnalyzeSpatialEdgeCase``: sub-units active in the spatial edge step."""
    sp = next(d for d in dataflow if d.spatial)
    size = level_dims.size(sp.var)
    full = sp.offset * (num_sub - 1) + sp.size
    if size > full:
        steady = cdiv(cdiv(size - sp.size, sp.offset) + 1, num_sub) - 1
        remaining = size - (steady + 1) * sp.offset * num_sub
        edge = 1 if remaining < sp.size else cdiv(remaining - sp.size, sp.offset) + 1
    elif size > sp.size:
        edge = cdiv(size - sp.size, sp.offset) + 1
        if sp.offset * (edge - 1) + sp.size < size:
            edge += 1
    else:
        edge = 1
    if size <= sp.size:
        edge = 1
    return edge


def build_levels(problem: MaestroProblem, num_pes: int) -> tuple[list[ClusterLevel], int]:
    """The cluster levels, top first, and the number of PEs MAESTRO uses.

    Quirk ``cluster_remainder_idle``: the top level has ``num_pes // (product of Cluster
    sizes)`` units; PEs beyond that product's multiple stay idle. MAESTRO stops (or crashes)
    for a level without a SpatialMap, with three SpatialMaps, or a cluster larger than the
    array; we raise a MappingError naming the level.
    """
    full = [d.copy() for d in problem.dataflow]
    cluster_sizes = [d.size for d in full if d.kind == "cluster"]
    uppermost = 1
    for size in cluster_sizes:
        uppermost *= size
    last_size = cluster_sizes[-1] if cluster_sizes else num_pes
    full.append(Directive("cluster", last_size, 0, ""))
    num_units = uppermost * (num_pes // uppermost)
    if num_units == 0:
        raise problem.error(
            f"the Cluster sizes multiply to {uppermost}, more than the {num_pes} PEs "
            "(MAESTRO crashes on this mapping)"
        )
    names = input_vars(problem)
    top = top_dimension_table(problem)
    dims = top
    levels: list[ClusterLevel] = []
    current: list[Directive] = []
    upper: list[Directive] | None = None
    previous_size = num_units
    for directive in full:
        if directive.kind != "cluster":
            current.append(directive)
            continue
        index = len(levels)
        _output_to_input(current)
        _inherit(upper, current)
        _unroll_missing(names, dims, current)
        for d in current:
            if not dims.has(d.var):
                raise problem.error(
                    f"cluster level {index} maps dimension {d.var}, which the layer does not have "
                    "(MAESTRO: MissingDimension)"
                )
        _apply_outer_stride(index == 0, current, dims, top)
        size = num_units // uppermost if index == 0 else previous_size
        _input_centric_again(current)
        spatial = [d for d in current if d.spatial]
        if not spatial:
            raise problem.error(f"cluster level {index} has no SpatialMap (MAESTRO: NoSpatialMap)")
        if len(spatial) > 2:
            raise problem.error(
                f"cluster level {index} has {len(spatial)} SpatialMaps; MAESTRO allows two "
                "(MultiParallelismInSingleCluster)"
            )
        levels.append(ClusterLevel(index, size, current, dims, _edge_clusters(dims, current, size)))
        previous_size = directive.size
        lower = DimTable(overlaps=dims.overlaps)
        for name in names:
            found = next((d for d in current if d.var == name), None)
            if found is None:
                raise problem.error(f"dimension {name} is not given (MAESTRO: MissingDimension)")
            lower.add(name, min(found.size, dims.size(name)), dims.stride(name))
        dims = lower
        upper = current
        current = []
    return levels, num_units
