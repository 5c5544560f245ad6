"""DRAM layouts as a mapping parameter (``Job.dram_layouts``, ``--dram-layout``,
``mapping/layouts.py``): the burst counts both timing models use follow the layout, the default
(channel-last) is unchanged, and MARVEL's / the burst-exact layouts against channel-last.

Hardware: ``eyeriss_like`` (1-byte words, 64-byte bursts, L2 55,296 words per tile).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from click.testing import CliRunner

from accelsim.cli import main
from accelsim.errors import InputError, MappingError
from accelsim.hw.loader import load_hardware
from accelsim.mapping.jobs import Job, compile_job, jobs_from_network, prepare
from accelsim.mapping.layouts import box_bursts, dram_bursts, layer_layouts, with_dram_layouts
from accelsim.mapping.offchip import optimize_offchip, pinned_dataflow
from accelsim.sim.engine import SimOptions, simulate_layer
from accelsim.analytical.model import analyze_layer
from accelsim.validation.marvel_table3 import burst_rows
from accelsim.workload.tables import load_network

HW = load_hardware("eyeriss_like")
MARVEL = {layer.name: layer for layer in load_network("marvel15").layers}


def _pinned(name: str) -> Job:
    layer = MARVEL[name]
    nest = layer.loop_nest()
    return Job(layer, tuple(pinned_dataflow(nest, optimize_offchip(nest, HW), HW.num_pes)), name)


def test_box_bursts_l5_first_tile_by_hand():
    """L5's input (n, c, y, x) = (1, 32, 112, 112); MARVEL's first L2 tile holds (1, 32, 16, 56).

    Channel-last (n, y, x, c): c is whole, so a run continues into x, which is not whole: 16 runs
    (one per row) of 32 * 56 = 1,792 bytes = 28 bursts: 448 bursts.
    X innermost (n, y, c, x): x is not whole: 16 * 32 = 512 runs of 56 bytes, 1 burst each: 512.
    (MARVEL's DB counts the other way round, 512 against 896: it cannot see the runs merge.)"""
    full = (1, 32, 112, 112)
    box = [1, 32, 16, 56]
    assert box_bursts(box, full, (0, 2, 3, 1), 1, 64) == 448
    assert box_bursts(box, full, (0, 2, 1, 3), 1, 64) == 512


def test_default_layout_changes_nothing():
    """A job with the operator's own (channel-last) layouts spelled out gives the same result as
    one without: the parameter's default is today's behaviour."""
    _, jobs = jobs_from_network("marvel15", "eyeriss_like", HW)
    job = jobs[3]  # L4_Bottleneck6_2_2, small
    nest = job.layer.loop_nest()
    spelled = replace(job, dram_layouts=tuple(sorted(nest.layouts.items())))
    a = simulate_layer(prepare(job, HW), HW, SimOptions())
    b = simulate_layer(prepare(spelled, HW), HW, SimOptions())
    assert a.cycles == b.cycles and a.accesses == b.accesses


def test_layout_moves_bursts_not_words_in_both_models():
    """L5 under the eyeriss_like style with the input X innermost: the simulator's and the
    analytical model's DRAM words are unchanged, their cycles change together (realistic mode:
    the two models agree within 2% with either layout, as the validation suite requires)."""
    _, jobs = jobs_from_network("marvel15", "eyeriss_like", HW)
    job = next(j for j in jobs if j.layer.name == "L5_Bottleneck1_1_3")
    moved = with_dram_layouts([job], ("input=N,Y,C,X",), HW)[0]
    assert dict(moved.dram_layouts) == {"input": (0, 2, 1, 3)}
    results = {}
    for name, j in (("default", job), ("moved", moved)):
        cm = prepare(j, HW)
        sim = simulate_layer(cm, HW, SimOptions())
        ana = analyze_layer(cm, HW, "realistic")
        assert abs(ana.cycles - sim.cycles) <= 0.02 * sim.cycles
        results[name] = sim
    assert {t: a.dram_read for t, a in results["default"].accesses.items()} == \
        {t: a.dram_read for t, a in results["moved"].accesses.items()}
    assert results["default"].cycles != results["moved"].cycles


def test_bad_layouts_are_refused():
    nest = MARVEL["L8_CONV2_2_2"].loop_nest()
    with pytest.raises(InputError, match="has axes N,C,Y,X"):
        layer_layouts(nest, ("input=N,Y,C",), HW, "L8")
    with pytest.raises(InputError, match="unknown tensor"):
        layer_layouts(nest, ("psum=N,Y,C,X",), HW, "L8")
    with pytest.raises(InputError, match="expected 'marvel'"):
        layer_layouts(nest, ("nhwc",), HW, "L8")
    tiny = HW.model_copy(update={"l2": HW.l2.model_copy(update={"size_bytes": 4})})  # 2 words a tile: one MAC needs 3
    with pytest.raises(InputError, match="--dram-layout marvel, layer L8: no L2 tile fits"):
        layer_layouts(nest, ("marvel",), tiny, "L8")
    job = replace(_pinned("L8_CONV2_2_2"), dram_layouts=(("input", (0, 1, 1, 2)),))
    with pytest.raises(MappingError, match="permutation"):
        compile_job(job, HW)


def test_cli_dram_layout_error_is_one_line():
    result = CliRunner().invoke(main, ["simulate", "--hw", "eyeriss_like", "--network", "marvel15", "--style",
                                       "eyeriss_like", "--layer", "L4_Bottleneck6_2_2", "--dram-layout", "input=Y"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1].startswith("error: --dram-layout 'input=Y'")
    assert "Traceback" not in result.output


def test_pinned_tile_is_marvels_on_l8():
    """L8's pinned dataflow: level-0 loops C (2 tiles) then Y' (9 tiles), MARVEL's order; its
    L2 tile is MARVEL's (K64 C32 Y'6 X'54, 53,504 words: two of them, 107,008, do not fit
    55,296), so 18 tiles."""
    cm = compile_job(_pinned("L8_CONV2_2_2"), HW)
    level0 = [(loop.dims[0], loop.trips) for loop in cm.loops if loop.level == 0]
    assert level0 == [("C", 2), ("Y'", 9)]
    from accelsim.mapping.tiles import TileSchedule
    assert TileSchedule(cm, 55_296).count == 18


@pytest.mark.parametrize("name", ["L5_Bottleneck1_1_3", "L8_CONV2_2_2", "L13_CONV5_1_3"])
def test_burst_exact_layouts_never_cost_more(name):
    """With MARVEL's tiles pinned, the burst-exact layouts take at most channel-last's bursts
    (L5: where MARVEL's own layouts take more, 10,753 against 9,419)."""
    job = _pinned(name)
    base = dram_bursts(compile_job(job, HW), HW)
    chosen = dram_bursts(compile_job(with_dram_layouts([job], ("bursts",), HW)[0], HW), HW)
    assert chosen <= base


@pytest.mark.slow
def test_burst_exact_layouts_every_marvel15_layer():
    """Acceptance (issue 20): on every marvel15 layer, with the same tiles, the chosen layouts'
    bursts are at most channel-last's."""
    rows = burst_rows()
    assert len(rows) == 15
    assert all(r.bursts <= r.channel_last for r in rows)
