"""The shared demand table (accelsim.mapping.demand, accelsim.mapping.tiles) against the
analytical model's per-PE computation from before issue 19 (``reference_analytical``, frozen):
per iteration case every count the analytical model reads (MACs, the busiest PE, packets and
words per operand, read-backs, drains, their sources, the L1 footprint) and per L2 tile case
its DRAM words, runs and partial-sum sources must be the same, on hypothesis-generated legal
mappings over every operator, the named styles and random ones, both presets the property
tests shrink, multicast on and off (``maestro`` mode multicasts), and L2 sizes from a few words
to roomy.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

from accelsim.analytical import analyze_layer
from accelsim.hw.loader import load_hardware
from accelsim.mapping.ast import ClusterDirective, MapDirective
from accelsim.mapping.compile import compile_mapping
from accelsim.mapping.demand import Groups, ProfileOptions, ScheduleProfile
from accelsim.mapping.geometry import enumerate_cases
from accelsim.mapping.jobs import jobs_from_network, prepare
from accelsim.mapping.styles import STYLES
from accelsim.mapping.tiles import TileSchedule
from accelsim.sim.engine import SimOptions, simulate_layer
from accelsim.workload.ops import Layer
from reference_analytical.traffic import Packets, step_cases, tile_cases
from test_properties import MAX_EXAMPLES, SETTINGS, compile_or_reject, random_cases, style_cases

ORACLE = settings(SETTINGS, max_examples=max(20, MAX_EXAMPLES // 2))
PORTS = 3  # root ports of the distribution network whose per-port words are compared (issue 17)


def _packets(g: Groups) -> list[tuple[int, int]]:
    """(case, words) of every packet, sorted."""
    return sorted(zip(np.repeat(g.case, g.n).tolist(), np.repeat(g.words, g.n).tolist()))


def _oracle_packets(p: Packets) -> list[tuple[int, int]]:
    return sorted(zip(p.rows.tolist(), p.words.tolist()))


def _same_transfers(new: Groups, old: Packets, n: int, name: str) -> None:
    assert _packets(new) == _oracle_packets(old), name
    assert new.total(n).tolist() == old.total().tolist(), name


def assert_demand_agrees(cm, multicast: bool, l2_words: int) -> None:
    profile = ScheduleProfile(cm, ProfileOptions(multicast, 1, 1), l2_words)
    cases = enumerate_cases(profile.loop_classes)
    table = profile.table(cases.klass)
    old = step_cases(cm, multicast)
    n = len(cases)
    assert cases.klass.tolist() == old.cases.klass.tolist()
    assert cases.count.tolist() == old.cases.count.tolist()
    assert table.macs.tolist() == old.macs.tolist()
    assert table.max_pe_macs.tolist() == old.max_pe_macs.tolist()
    for role in ("input", "weight"):
        _same_transfers(table.sent[role], old.sent[role], n, role)
        assert table.delivered_words[role].tolist() == old.delivered_words[role].tolist(), role
    _same_transfers(table.readback, old.readback, n, "readback")
    _same_transfers(table.drained, old.drained, n, "drained")
    assert table.drain_pe_words.tolist() == old.drain_pe_words.tolist()
    assert table.drains.tolist() == old.drains.tolist()
    assert table.readback_source_steps.tolist() == old.readback_source_steps.tolist()
    assert int(table.peak_pe_words.max(initial=0)) == old.l1_required_words
    assert table.drained.max_members(n).tolist() == old.drain_max_group.tolist()
    # the busiest root port's words: port p feeds PEs [p * block, (p + 1) * block)
    block = -(-cm.num_pes // PORTS)
    ported = ScheduleProfile(cm, ProfileOptions(multicast, 1, 1, ports=PORTS, port_block_pes=block), l2_words)
    assert ported.table(cases.klass).busiest_port_words.tolist() == \
        step_cases(cm, multicast, PORTS, block).busiest_port_words.tolist()

    tiles = profile.tiles
    new_t, old_t = tiles.table(), tile_cases(cm, l2_words)
    assert tiles.tile_loops == old_t.tile_loops
    assert tiles.l2_required_words == old_t.l2_required_words
    assert new_t.cases.klass.tolist() == old_t.cases.klass.tolist()
    assert new_t.cases.count.tolist() == old_t.cases.count.tolist()
    for role, words in old_t.read_words.items():
        assert new_t.read_words[role].tolist() == words.tolist(), role
    assert new_t.read_runs.tolist() == old_t.read_runs.tolist()
    assert new_t.write_words.tolist() == old_t.write_words.tolist()
    assert new_t.write_runs.tolist() == old_t.write_runs.tolist()
    assert new_t.partial_sums_source.tolist() == old_t.partial_sums_source.tolist()
    # the table (all cases at once) against the simulator's path, one tile at a time
    strides = np.array(tiles.view_strides, dtype=np.int64)
    for i, rep in enumerate(new_t.cases.rep):
        tile = int(rep @ strides) if tiles.tile_loops else 0
        td = tiles.traffic(tile)
        assert {role: int(w[i]) for role, w in new_t.read_words.items()} == td.read_words, tile
        assert (int(new_t.read_runs[i]), int(new_t.write_words[i]), int(new_t.write_runs[i])) == \
            (sum(td.read_runs.values()), td.write_words, td.write_runs), tile
        assert int(new_t.partial_sums_source[i]) == (tile - td.partial_sums_tile if td.partial_sums_tile >= 0 else 0)


def _check(case) -> None:
    layer, hw, dataflow = case
    cm = compile_or_reject(layer, dataflow, hw)
    l2_words = hw.l2.size_bytes // hw.word_size_bytes
    for multicast in (True, False):
        assert_demand_agrees(cm, multicast, l2_words)


@ORACLE
@given(case=random_cases())
def test_demand_table_matches_the_per_pe_oracle_on_random_mappings(case):
    _check(case)


@ORACLE
@given(case=style_cases())
def test_demand_table_matches_the_per_pe_oracle_on_style_mappings(case):
    _check(case)


@pytest.mark.parametrize("style", sorted(STYLES))
def test_demand_table_matches_the_per_pe_oracle_on_marvel15(style):
    """Full-size layers on the preset the validation runs them on (up to 168 PEs, hundreds of
    cases), at the preset's L2 size (double-buffered: half of it)."""
    hw = load_hardware("eyeriss_like")
    for job in jobs_from_network("marvel15", style, hw)[1][:5]:
        assert_demand_agrees(prepare(job, hw, allow_overflow=True), True, hw.l2.size_bytes // hw.word_size_bytes // 2)


NO_TILE_LOOPS_GEMM = Layer.build("g553", "GEMM", {"M": 5, "N": 2, "K": 3})
# level 0: M in windows of 2 over the 3 clusters (one fold: no level-0 loop); inside a
# cluster of 2 PEs: N one per PE, K and then M one at a time (the level-1 loops)
NO_TILE_LOOPS_FLOW = (MapDirective("spatial", 2, 2, "M", 0), ClusterDirective(2, 0),
                      MapDirective("spatial", 1, 1, "N", 0), MapDirective("temporal", 1, 1, "K", 0),
                      MapDirective("temporal", 1, 1, "M", 0))


def test_tile_table_of_a_mapping_without_level0_loops():
    """C[5][2] += A[5][3] B[3][2] on 6 PEs in 3 clusters of 2: level 0 maps M in windows of 2
    over the clusters (windows [0,1], [2,3], [4,4]: 3 windows on 3 clusters, one fold), so it
    has no loops and the whole layer is one L2 tile (the tile table's union boxes take their
    no-level-0-loops branch); the level-1 loops (K 3 trips, M 2 trips, the last cluster's
    second M iteration idle) only run inside the tile.

    The tile's union box over the three clusters' sub-units: A M 0..4 x K 0..2 = 15 words,
    B K 0..2 x N 0..1 = 6 words, C M 0..4 x N 0..1 = 10 words, every box a whole tensor (one
    DRAM run each). No tile before it: DRAM reads A 15, B 6 (2 runs), nothing read back; C's
    10 words are written back once (1 run); L2 footprint 15 + 6 + 10 = 31, none kept.
    The same against the frozen per-PE oracle, and the analytical model (which reads this
    table) against the simulator (which asks for the tile one at a time, a path that never
    takes the branch) on DRAM words."""
    hw = load_hardware("maestro_default", ["pe_array.count=6", "word_size_bytes=1", "l2.size_bytes=4096"])
    cm = compile_mapping(NO_TILE_LOOPS_GEMM, NO_TILE_LOOPS_FLOW, hw.num_pes)
    assert [loop.level for loop in cm.loops] == [1, 1]
    tiles = TileSchedule(cm, 4096)
    assert tiles.top.loops == () and tiles.tile_loops == 0
    table = tiles.table()
    assert table.cases.count.tolist() == [1]
    assert {role: w.tolist() for role, w in table.read_words.items()} == {"input": [15], "weight": [6], "output": [0]}
    assert table.read_runs.tolist() == [2]
    assert (table.write_words.tolist(), table.write_runs.tolist()) == ([10], [1])
    assert table.partial_sums_source.tolist() == [0]
    assert (table.footprint_words.tolist(), table.kept_words.tolist()) == ([31], [0])
    for multicast in (True, False):
        assert_demand_agrees(cm, multicast, 4096)
    analytical = analyze_layer(cm, hw)
    simulated = simulate_layer(cm, hw, SimOptions("maestro"))
    for role in ("input", "weight", "output"):
        dram = (analytical.accesses[role].dram_read, analytical.accesses[role].dram_write)
        assert dram == (simulated.accesses[role].dram_read, simulated.accesses[role].dram_write), role
    assert analytical.accesses["input"].dram_read == 15 and analytical.accesses["output"].dram_write == 10
