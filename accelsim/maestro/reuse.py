"""MAESTRO's per-case data volumes of one cluster level (its ``ReuseAnalysis``).

For every directive the level has a mapped size (the window), a unique size (what a step or a
neighbouring sub-unit adds: ``min(size, offset)``) and the same two at the edge. A tensor's
volume in a case is the product, over its coupled dimensions, of one of these, chosen by the
case's states; these rules are MAESTRO's, quirks included:

* ``spatial_edge_output_inflation``: non-first sub-units of a strided sliding-window spatial map
  count ``min(offset, size)`` output rows.
* ``spatial_edge_zero_egress``: a spatial map whose dimension is smaller than the cluster
  counts the last sub-unit's output as 0 (its unique size at the edge is 0).
* ``sliding_window_mac_miscount``: partial sums of a sliding-window spatial map at the spatial
  edge use the full window for every active sub-unit.
* ``outer_wrap_input_reuse``: an input tensor whose changing dimension wrapped to Init is
  charged 0 when no inner coupled dimension restarts.
"""

from __future__ import annotations

from accelsim.maestro.cases import INIT, STEADY, Case
from accelsim.maestro.clusters import ClusterLevel
from accelsim.maestro.problem import DimTable, Tensor, cdiv


class LevelReuse:
    """The mapped/unique sizes of one level (static: computed from the level's own tile)."""

    def __init__(self, level: ClusterLevel, zero_edge_fixed: bool = False, strided_egress_fixed: bool = False):
        """``zero_edge_fixed`` corrects quirk ``spatial_edge_zero_egress``: where a map's windows
        fill its dimension exactly, MAESTRO's edge size is 0 and the partial last unit's unique
        size ``max(offset - size, 0)``; corrected, it is ``min(size, offset)``.
        ``strided_egress_fixed`` corrects quirk ``spatial_edge_output_inflation``: a neighbouring
        unit of an input-row map on a strided layer adds ``offset / stride`` output rows, not
        ``min(offset, size)``."""
        self.level = level
        self.mapped: dict[str, int] = {}
        self.unique: dict[str, int] = {}
        self.mapped_edge: dict[str, int] = {}
        self.unique_edge: dict[str, int] = {}
        dims = level.dims
        for d in level.dataflow:
            size = dims.size(d.var)
            steady = max(cdiv(size - d.size, d.offset), 0)
            has_edge = steady * d.offset + d.size < size or d.size > size
            self.mapped[d.var] = d.size
            self.unique[d.var] = min(d.size, d.offset)
            if d.temporal and size <= d.size:
                self.unique[d.var] = 0
            edge_size = size - (steady + 1) * d.offset
            if edge_size < 0:
                edge_size = size
            self.mapped_edge[d.var] = edge_size if has_edge else d.size
            self.unique_edge[d.var] = max(d.offset - (d.size - edge_size), 0)
            if zero_edge_fixed and edge_size == 0:
                self.unique_edge[d.var] = min(d.size, d.offset)
        for d in level.dataflow:
            if dims.is_reference(d.var):
                sliding = dims.counterpart(d.var)
                out = "Y'" if d.var == "Y" else "X'"
                self.mapped[out] = self.mapped.get(d.var, 0) - self.mapped.get(sliding, 0) + 1
                step = d.offset
                if strided_egress_fixed and dims.stride(d.var) > 1:
                    step = max(d.offset // dims.stride(d.var), 1)
                self.unique[out] = min(step, d.size)
                self.mapped_edge[out] = self.mapped_edge.get(d.var, 0) - self.mapped_edge.get(sliding, 0) + 1
                self.unique_edge[out] = min(step, self.mapped_edge[out])

    # --- helpers ---------------------------------------------------------------------------
    def _m(self, var: str) -> int:
        return self.mapped.get(var, 0)

    def _u(self, var: str) -> int:
        return self.unique.get(var, 0)

    def _me(self, var: str) -> int:
        return self.mapped_edge.get(var, 0)

    def _ue(self, var: str) -> int:
        return self.unique_edge.get(var, 0)

    def mapped_volume(self, tensor: Tensor) -> int:
        """The innermost tile of a tensor at this level (``GetMappedVolume``)."""
        volume = 1
        for var in tensor.coupled:
            if var in self.mapped:
                volume *= self.mapped[var]
        return volume

    def sub_cluster_dims(self, case: Case, sp_edge_edge: bool) -> DimTable:
        """The tile one sub-unit works on in this case (``ConstructSubClusterDimension``)."""
        level = self.level
        edge_clusters = level.num_edge_clusters
        out = DimTable()
        for d in level.dataflow:
            state = case.state(d.var)
            if d.temporal:
                size = self._me(d.var) if state.is_edge else self._m(d.var)
            elif state.position == STEADY or state.position == INIT and not state.is_edge:
                size = self._m(d.var)
            elif edge_clusters == 1 or sp_edge_edge:
                size = self._me(d.var)
            else:
                size = self._m(d.var)
            stride = level.dims.stride(d.var)
            out.add(d.var, size, stride)
        for d in level.dataflow:
            if d.var == "Y":
                out.add("Y'", out.size("Y") - out.size("R") + 1)
            elif d.var == "X":
                out.add("X'", out.size("X") - out.size("S") + 1)
            if level.dims.is_reference(d.var):
                out.overlaps.append((d.var, level.dims.counterpart(d.var)))
        return out

    # --- input tensors ---------------------------------------------------------------------
    def _pe_mapped_volume(self, tensor: Tensor, case: Case, first_pe: bool, edge_edge_pe: bool) -> int:
        volume = 1
        for d in self.level.dataflow:
            if d.var not in tensor.coupled:
                continue
            state = case.state(d.var)
            if d.temporal:
                volume *= self._me(d.var) if state.is_edge else self._m(d.var)
            elif state.is_edge:
                active = self.level.num_edge_clusters
                if active == 1 and (first_pe or edge_edge_pe):
                    volume *= self._me(d.var)
                elif active > 1:
                    volume *= self._me(d.var) if edge_edge_pe else self._m(d.var)
            else:
                volume *= self._m(d.var)
        return volume

    def _changing_index(self, case: Case) -> int:
        changing = -1
        for i, d in enumerate(self.level.dataflow):
            if case.state(d.var).position != INIT:
                changing = i
        return changing

    def _tensor_inited(self, tensor: Tensor, case: Case, changing: int) -> bool:
        for i, d in enumerate(self.level.dataflow):
            state = case.state(d.var)
            if state.position == INIT and d.var in tensor.coupled and i > changing and not state.unrolled:
                return True
        return False

    def _pe_ingress(self, tensor: Tensor, case: Case, first_pe: bool = True, edge_edge_pe: bool = False) -> int:
        """``GetPEIngressVolume``: what one sub-unit receives of an input tensor in a case."""
        changing = self._changing_index(case)
        if changing == -1:
            return self._pe_mapped_volume(tensor, case, first_pe, edge_edge_pe)
        inited = self._tensor_inited(tensor, case, changing)
        volume = 1
        tensor_changes = False
        for i, d in enumerate(self.level.dataflow):
            if d.var not in tensor.coupled:
                continue
            state = case.state(d.var)
            is_changing = i == changing
            if is_changing:
                tensor_changes = True
            reset = i > changing
            if d.temporal:
                if state.position == INIT:
                    volume *= self._me(d.var) if state.is_edge else self._m(d.var)
                elif is_changing and not inited:
                    volume *= max(self._u(d.var), 1)
                else:
                    volume *= self._m(d.var)
            else:
                if first_pe:
                    volume *= self._me(d.var) if edge_edge_pe else self._m(d.var)
                elif state.position == INIT:
                    if not reset:
                        volume *= self._me(d.var) if edge_edge_pe else self._m(d.var)
                    else:
                        volume *= self._ue(d.var) if edge_edge_pe else self._u(d.var)
                elif not inited and is_changing:
                    volume *= self._ue(d.var) if edge_edge_pe else self._u(d.var)
                else:
                    volume *= self._me(d.var) if edge_edge_pe else self._m(d.var)
        return volume if tensor_changes else 0

    def _spatial_state(self, tensor: Tensor, case: Case):
        """(is the tensor spatially mapped, is that map at its edge, its state)."""
        mapped = edge = False
        sp_state = None
        for var in tensor.coupled:
            d = self.level.find(var)
            assert d is not None, var
            if d.spatial:
                mapped = True
                sp_state = case.state(var)
                if sp_state.is_edge:
                    edge = True
        return mapped, edge, sp_state

    def _over_sub_units(self, tensor: Tensor, case: Case, per_pe) -> int:
        """Sum a per-sub-unit volume over the active sub-units, MAESTRO's way: the first one,
        then full ones, then the partial last one at a spatial edge."""
        mapped, edge, sp_state = self._spatial_state(tensor, case)
        if not mapped:
            return per_pe(True, False)
        n, n_edge = self.level.num_sub_clusters, self.level.num_edge_clusters
        if not edge:
            return per_pe(True, False) + (n - 1) * per_pe(False, False)
        edge_edge = sp_state.sp_edge_edge
        total = per_pe(True, True) if (n_edge == 1 and edge_edge) else per_pe(True, False)
        if n_edge > 1:
            partial = 1 if edge_edge else 0
            full = max(n_edge - partial - 1, 0)
            total += full * per_pe(False, False) + partial * per_pe(False, True)
        return total

    def ingress(self, tensor: Tensor, case: Case) -> int:
        """Words of an input tensor sent to the sub-units in a case (``GetSpatialIngressTraffic``)."""
        return self._over_sub_units(tensor, case, lambda first, ee: self._pe_ingress(tensor, case, first, ee))

    # --- output tensor ---------------------------------------------------------------------
    def _pe_egress(
        self,
        tensor: Tensor,
        case: Case,
        partial_sums: bool = False,
        first_pe: bool = True,
        edge_edge_pe: bool = False,
        reuse_at_edge: bool = True,
    ) -> int:
        """``GetPEEgressVolume``: one sub-unit's outputs (or, with ``partial_sums``, its MACs)."""
        level = self.level
        volume = 1
        if partial_sums:
            for d in level.dataflow:
                if d.var in tensor.coupled:
                    continue
                state = case.state(d.var)
                if d.temporal:
                    volume *= self._me(d.var) if state.is_edge else self._m(d.var)
                    continue
                active = level.num_edge_clusters
                if state.position == INIT and state.is_edge and edge_edge_pe:
                    if active >= 1:
                        volume *= self._me(d.var)
                elif state.position in (INIT, STEADY):
                    if first_pe:
                        volume *= self._m(d.var)
                    elif self._u(d.var) != 0:
                        volume *= self._u(d.var)
                else:  # EDGE
                    if active == 1 and (first_pe or edge_edge_pe):
                        volume *= self._me(d.var)
                    elif active > 1:
                        if edge_edge_pe:
                            volume *= self._ue(d.var)
                        elif first_pe:
                            volume *= self._m(d.var)
                        elif self._u(d.var) != 0:
                            volume *= self._u(d.var)
        for var in tensor.coupled:
            d = level.dataflow[level.index_of(var)]
            state = case.state(var)
            actual = {"Y": "Y'", "X": "X'"}.get(var, var)
            if d.temporal:
                if state.position == INIT:
                    volume *= self._me(actual) if state.is_edge else self._m(actual)
                elif state.position == STEADY:
                    volume *= self._m(actual)
                else:
                    volume *= self._me(actual)
                continue
            active = level.num_edge_clusters
            if state.position == INIT and state.is_edge and edge_edge_pe:
                if active == 1:
                    volume *= self._me(actual)
                elif active > 1:
                    volume *= self._ue(actual) if reuse_at_edge else self._me(actual)
            elif state.position in (INIT, STEADY):
                if first_pe:
                    volume *= self._m(actual)
                elif self._u(actual) != 0:
                    volume *= self._u(actual)
            else:  # EDGE
                if active == 1 and (first_pe or edge_edge_pe):
                    volume *= self._me(var)  # MAESTRO indexes the input dimension here
                elif active > 1:
                    if edge_edge_pe:
                        volume *= self._ue(actual)
                    elif first_pe:
                        volume *= self._m(actual)
                    elif self._u(actual) != 0:
                        volume *= self._u(actual)
        return volume

    def egress(self, tensor: Tensor, case: Case) -> int:
        """Output words leaving the sub-units in a case (``GetSpatialEgressTraffic``)."""
        return self._over_sub_units(tensor, case, lambda first, ee: self._pe_egress(tensor, case, False, first, ee))

    def critical_path_partial_sums(self, tensor: Tensor, case: Case) -> int:
        """MACs of the first sub-unit (``GetNumCriticalPathPartialSums``): the compute delay."""
        mapped, edge, sp_state = self._spatial_state(tensor, case)
        if mapped and edge and self.level.num_edge_clusters == 1 and sp_state.sp_edge_edge:
            return self._pe_egress(tensor, case, True, True, True)
        return self._pe_egress(tensor, case, True, True, False)

    def output_mapping_size(self, tensor: Tensor, case: Case, partial_sums: bool) -> int:
        """``GetOutputTensorSpatialMappingSize``: outputs (or MACs) over all active sub-units."""
        level = self.level
        mapped, edge, sp_state = self._spatial_state(tensor, case)
        if partial_sums:
            for d in level.dataflow:
                if d.spatial:
                    mapped = True
                    sp_state = case.state(d.var)
                    if sp_state.is_edge:
                        edge = True
        n = level.num_sub_clusters
        if not mapped:
            return n * self._pe_egress(tensor, case, partial_sums)
        if not edge:
            return n * self._pe_egress(tensor, case, partial_sums, True, False)
        n_edge = level.num_edge_clusters
        edge_edge = sp_state.sp_edge_edge
        if n_edge == 1 and edge_edge:
            total = self._pe_egress(tensor, case, partial_sums, True, True)
        else:
            total = self._pe_egress(tensor, case, partial_sums, True, False)
        if n_edge > 1:
            partial = 1 if edge_edge else 0
            full = max(n_edge - partial - 1, 0)
            total += full * self._pe_egress(tensor, case, partial_sums, True, False)
            total += partial * self._pe_egress(tensor, case, partial_sums, False, True, False)
        return total
