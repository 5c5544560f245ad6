"""The grouped engine (lock-step PE groups, one burst per tensor, steady-state fast-forward)
must give exactly what the unrolled per-PE engine (one event per PE and per packet, no
fast-forward) gives, on mappings with multicast, spatial reduction, ragged edges, idle PEs,
partial-sum spills and several L2 tiles."""

from __future__ import annotations

import pytest

from accelsim.hw.loader import load_hardware
from accelsim.mapping.ast import ClusterDirective as Cluster
from accelsim.mapping.ast import MapDirective
from accelsim.mapping.compile import buffer_needs_bytes, compile_mapping
from accelsim.mapping.jobs import jobs_from_network, prepare
from accelsim.sim.context import SimContext
from accelsim.sim.engine import LayerSimulation, SimOptions, simulate_layer
from accelsim.workload.ops import Layer


def S(size, offset, dim):
    return MapDirective("spatial", size, offset, dim, 0)


def T(size, offset, dim):
    return MapDirective("temporal", size, offset, dim, 0)


def _hw(**extra):
    base = {
        "pe_array.rows": 3, "pe_array.cols": 4, "l1.size_bytes": 2048, "l2.size_bytes": 4096,
        "distribution_noc.bandwidth_words_per_cycle": 4, "l2.read_bandwidth_words_per_cycle": 4,
        "reduction_noc.kind": "tree", "reduction_noc.bandwidth_words_per_cycle": 2,
        "dram.bandwidth_bytes_per_cycle": 8, "dram.latency_cycles": 20, "dram.burst_bytes": 8,
    }
    base.update(extra)
    return load_hardware("eyeriss_like", [f"{k}={v}" for k, v in base.items()])


CONV = Layer.build("conv", "CONV2D", {"K": 7, "C": 5, "R": 3, "S": 3, "Y": 9, "X": 8})
STRIDED = Layer.build("strided", "CONV2D", {"K": 6, "C": 3, "R": 3, "S": 3, "Y": 11, "X": 10}, 2, 2)
DW = Layer.build("dw", "DWCONV", {"C": 10, "R": 3, "S": 3, "Y": 8, "X": 8})
GEMM = Layer.build("gemm", "GEMM", {"M": 9, "N": 7, "K": 10})

CASES = {
    # K across clusters (ragged: 7 over 3), C within (ragged: 5 over 4), sliding X
    "kcp_ragged": (CONV, [S(1, 1, "K"), T(4, 4, "C"), T(3, 1, "Y"), T(3, 1, "X"), Cluster(4, 0), S(1, 1, "C")]),
    # C outside the output loops: partial sums spill to L2 and are read back
    "psum_spill": (CONV, [T(2, 2, "C"), S(1, 1, "K"), T(3, 1, "Y"), T(4, 2, "X")]),
    # row stationary: Y and R zipped inside a cluster of 3 (spatial reduction over R)
    "row_stationary": (STRIDED, [T(2, 2, "K"), T(1, 1, "C"), S(3, 2, "Y"), T(3, 2, "X"), Cluster(3, 0),
                                 S(1, 1, "Y"), S(1, 1, "R")]),
    "depthwise": (DW, [S(1, 1, "C"), T(3, 1, "Y"), T(3, 1, "X")]),
    "gemm_tiled": (GEMM, [S(2, 2, "N"), T(4, 4, "K"), T(2, 2, "M"), Cluster(3, 0), S(2, 2, "K")]),
}


def _run(case, mode, **options):
    layer, dataflow = CASES[case]
    hw = _hw()
    return simulate_layer(compile_mapping(layer, dataflow, hw.num_pes), hw, SimOptions(mode=mode, **options))


def _same(a, b):
    da, db = a.to_dict(), b.to_dict()
    for key in ("wall_seconds", "events"):
        da.pop(key)
        db.pop(key)
    assert da == db


@pytest.mark.parametrize("mode", ["realistic", "maestro"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_per_pe_equals_grouped(case, mode):
    grouped = _run(case, mode)
    per_pe = _run(case, mode, per_pe=True)
    assert grouped.macs == CASES[case][0].macs
    _same(grouped, per_pe)
    assert per_pe.events > grouped.events  # the per-PE run really did more work


@pytest.mark.parametrize("case", sorted(CASES))
def test_fast_forward_changes_nothing_but_the_event_count(case):
    _same(_run(case, "realistic"), _run(case, "realistic", fast_forward=False))


def test_fast_forward_engages_on_long_identical_runs():
    """58 sliding-window steps per output row, 57 of them identical (after the first): most of
    them are executed as blocks."""
    layer = Layer.build("long", "CONV2D", {"K": 8, "C": 4, "R": 3, "S": 3, "Y": 6, "X": 60})
    hw = _hw(**{"l2.size_bytes": 65536})
    cm = compile_mapping(layer, [S(1, 1, "K"), T(4, 4, "C"), T(3, 1, "Y"), T(3, 1, "X"), Cluster(4, 0),
                                 S(1, 1, "C")], hw.num_pes)
    fast = simulate_layer(cm, hw)
    slow = simulate_layer(cm, hw, SimOptions(fast_forward=False))
    _same(fast, slow)
    assert fast.events * 3 < slow.events


def test_fast_forward_holds_a_long_offchip_transfer(monkeypatch):
    """C in two folds outside the output loops: the second fold reads each row's partial sums
    back from DRAM and writes them again, at 1 byte per cycle, so one transfer spans many of
    the row's 58 sliding-window steps and its end is a different distance from each step. The
    warp holds the off-chip side (the transfer stays where it is) and jumps the steps between;
    every count is the unrolled run's, and every jump ends, with every on-chip event it moved,
    before the first held event (here the results would not show a jump past it: the
    transfers do not reach the array before the row ends)."""
    layer = Layer.build("long", "CONV2D", {"K": 4, "C": 4, "R": 1, "S": 3, "Y": 6, "X": 60})
    hw = _hw(**{"dram.bandwidth_bytes_per_cycle": 1})
    cm = compile_mapping(layer, [T(2, 2, "C"), S(1, 1, "K"), T(1, 1, "Y"), T(3, 1, "X")], hw.num_pes)
    shift = SimContext.shift
    jumps = []

    def checked(context, cycles, keep=frozenset()):
        shift(context, cycles, keep)
        if keep:
            held = min(at for at, _, eid, _ in context.env._queue if eid in keep)
            moved = max(at for at, _, eid, _ in context.env._queue if eid not in keep)
            jumps.append(max(context.env.now, moved) < held)

    monkeypatch.setattr(SimContext, "shift", checked)
    fast = LayerSimulation(cm, hw)
    result = fast.run()
    _same(result, simulate_layer(cm, hw, SimOptions(fast_forward=False)))
    assert fast.warp.held_steps > cm.steps // 2
    assert jumps and all(jumps)


def test_fast_forward_tells_the_previous_tile_from_no_tile():
    """marvel15's L2_Bottleneck1_1_2 under maeri_like on marvel_edge: one L2 tile per output row.
    In the last row the drain of the row before is still landing; its tile is -1 relative to
    the checkpoint's, which the warp once took for "no tile" and jumped over, delaying that
    row's write-back by 315 cycles (36,441 cycles against the unrolled 36,428)."""
    hw = load_hardware("marvel_edge")
    _, jobs = jobs_from_network("marvel15", "maeri_like", hw)
    (job,) = [j for j in jobs if j.layer.name == "L2_Bottleneck1_1_2"]
    cm = prepare(job, hw)
    _same(simulate_layer(cm, hw), simulate_layer(cm, hw, SimOptions(fast_forward=False)))


@pytest.mark.parametrize("case", sorted(CASES))
def test_reported_buffer_needs_match_the_compiler(case):
    """The profile measures the largest tiles it actually moved; the compiler predicts them
    from the nominal window sizes. Both must agree."""
    layer, dataflow = CASES[case]
    hw = _hw()
    cm = compile_mapping(layer, dataflow, hw.num_pes)
    result = simulate_layer(cm, hw)
    assert (result.l1_required_bytes, result.l2_required_bytes) == buffer_needs_bytes(cm, 1, True, True)


def test_determinism():
    a, b = _run("kcp_ragged", "realistic"), _run("kcp_ragged", "realistic")
    _same(a, b)


@pytest.mark.parametrize("mode", ["realistic", "maestro"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_busy_plus_stalls_is_the_cycle_count(case, mode):
    """Every cycle the array did not compute is attributed to exactly one cause."""
    r = _run(case, mode)
    assert r.compute_busy_cycles + sum(r.stall_cycles.values()) == r.cycles


def test_mac_pipeline_latency_shows_as_compute_stall():
    """A 3-stage MAC pipeline keeps results 2 cycles after the last MAC issues."""
    layer, dataflow = CASES["depthwise"]
    hw = _hw(**{"pe_array.mac_pipeline_latency_cycles": 3})
    r = simulate_layer(compile_mapping(layer, dataflow, hw.num_pes), hw)
    assert r.stall_cycles["compute"] == 2
    assert r.compute_busy_cycles + sum(r.stall_cycles.values()) == r.cycles


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_spilled_partial_sum_is_read_back_once(case):
    """Partial sums written to L2 before their reduction is complete come back exactly once."""
    from accelsim.mapping.demand import ProfileOptions, ScheduleProfile

    layer, dataflow = CASES[case]
    hw = _hw()
    cm = compile_mapping(layer, dataflow, hw.num_pes)
    profile = ScheduleProfile(cm, ProfileOptions(True, 4, 2), 1 << 20)
    spilled = read_back = 0
    for step in range(cm.steps):
        demand = profile.demand(step)
        read_back += demand.readback.words
        spilled += demand.drain_words if demand.drain_partial else 0
    assert spilled == read_back
    if case == "psum_spill":
        assert spilled > 0
