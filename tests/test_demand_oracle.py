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

from accelsim.hw.loader import load_hardware
from accelsim.mapping.demand import Groups, ProfileOptions, ScheduleProfile
from accelsim.mapping.geometry import enumerate_cases
from accelsim.mapping.jobs import jobs_from_network, prepare
from accelsim.mapping.styles import STYLES
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
