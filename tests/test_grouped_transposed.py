"""MAESTRO's NGCONV (grouped convolution) and TRCONV (transposed convolution) as operators, and
the conventions of MAESTRO's own mapping files (repeated layer names)."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from accelsim.analytical import analyze_layer
from accelsim.cli import main
from accelsim.errors import InputError
from accelsim.hw.loader import load_hardware
from accelsim.mapping.jobs import jobs_from_maestro, prepare
from accelsim.sim.engine import SimOptions, simulate_layer
from accelsim.workload.operators import OpType
from accelsim.workload.ops import Layer

MAPPING = """Network g {
  Layer grouped {
    Type: NGCONV
    Stride { X: 1, Y: 1 }
    Dimensions { G: 2, K: 3, C: 2, R: 3, S: 3, Y: 6, X: 6 }
    Dataflow {
      TemporalMap(1,1) G;
      SpatialMap(1,1) K;
      TemporalMap(2,2) C;
      TemporalMap(Sz(R),Sz(R)) R;
      TemporalMap(Sz(S),Sz(S)) S;
      TemporalMap(Sz(R),1) Y;
      TemporalMap(Sz(S),1) X;
    }
  }
  Layer up {
    Type: TRCONV
    Dimensions { K: 2, C: 3, R: 2, S: 2, Y: 4, X: 4 }
    Dataflow {
      SpatialMap(1,1) K;
      TemporalMap(3,3) C;
      TemporalMap(2,2) R;
      TemporalMap(2,2) S;
      TemporalMap(1,1) Y;
      TemporalMap(1,1) X;
    }
  }
  Layer grouped {
    Type: NGCONV
    Dimensions { G: 2, K: 3, C: 2, R: 3, S: 3, Y: 6, X: 6 }
    Dataflow { SpatialMap(1,1) G; TemporalMap(3,3) K; TemporalMap(2,2) C; TemporalMap(Sz(R),1) Y; TemporalMap(Sz(S),1) X; }
  }
}
"""


def test_macs_and_loop_nests():
    """NGCONV G=2, K=3, C=2, 3x3 over 6x6 (4x4 outputs): 2 x 3 x 2 x 9 x 16 = 1,728 MACs, output
    G x K x 4 x 4 = 96. TRCONV K=2, C=3, 2x2 over a 4x4 input at the default stride 2: every
    input pixel meets every tap, 2 x 3 x 4 x 16 = 384 MACs; output (4 - 1) x 2 + 2 = 8 rows and
    cols, 2 x 64 = 128 words."""
    g = Layer.build("g", OpType.NGCONV, {"G": 2, "K": 3, "C": 2, "R": 3, "S": 3, "Y": 6, "X": 6})
    assert g.macs == 1728 and g.loop_nest().tensor_words("output") == 96
    assert g.loop_nest().tensor_words("input") == 2 * 2 * 36 and g.loop_nest().tensor_words("weight") == 2 * 3 * 2 * 9
    t = Layer.build("t", OpType.TRCONV, {"K": 2, "C": 3, "R": 2, "S": 2, "Y": 4, "X": 4}, 2, 2)
    assert t.macs == 384 and t.loop_nest().tensor_words("output") == 128


def test_references_against_loops():
    """The numpy references against plain loops over the definitions."""
    rng = np.random.default_rng(0)
    g = Layer.build("g", OpType.NGCONV, {"G": 2, "K": 3, "C": 2, "R": 3, "S": 2, "Y": 7, "X": 6}, 2, 1)
    i, w = rng.integers(-5, 5, (1, 2, 2, 7, 6)), rng.integers(-5, 5, (2, 3, 2, 3, 2))
    want = np.zeros((1, 2, 3, g.out_y, g.out_x), dtype=np.int64)
    for gg, k, c, y, x, r, s in np.ndindex(2, 3, 2, g.out_y, g.out_x, 3, 2):
        want[0, gg, k, y, x] += i[0, gg, c, 2 * y + r, x + s] * w[gg, k, c, r, s]
    assert np.array_equal(g.operator.reference(g, i, w), want)
    t = Layer.build("t", OpType.TRCONV, {"K": 2, "C": 3, "R": 3, "S": 2, "Y": 4, "X": 3}, 2, 2)
    i, w = rng.integers(-5, 5, (1, 3, 4, 3)), rng.integers(-5, 5, (2, 3, 3, 2))
    want = np.zeros((1, 2, 3 * 2 + 3, 2 * 2 + 2), dtype=np.int64)
    for k, c, y, x, r, s in np.ndindex(2, 3, 4, 3, 3, 2):
        want[0, k, 2 * y + r, 2 * x + s] += i[0, c, y, x] * w[k, c, r, s]
    assert np.array_equal(t.operator.reference(t, i, w), want)


def test_mapping_file_with_both_and_a_repeated_name(tmp_path):
    """A MAESTRO file with NGCONV, TRCONV and a repeated layer name reads in file order; the
    simulator (maestro mode) and the analytical model agree on every count and on cycles; the
    grouped layer passes functional execution; the transposed one says why it cannot."""
    path = tmp_path / "g.m"
    path.write_text(MAPPING)
    _, jobs = jobs_from_maestro(path)
    assert [j.layer.name for j in jobs] == ["grouped", "up", "grouped"]
    assert (jobs[1].layer.stride_y, jobs[1].layer.stride_x) == (2, 2)
    hw = load_hardware("eyeriss_like")
    for job in jobs:
        cm = prepare(job, hw)
        sim, model = simulate_layer(cm, hw, SimOptions(mode="maestro")), analyze_layer(cm, hw, "maestro")
        assert sim.macs == model.macs == job.layer.macs
        assert sim.accesses == model.accesses and sim.cycles == model.cycles
    runner = CliRunner()
    ok = runner.invoke(main, ["simulate", "--hw", "eyeriss_like", "--mapping", str(path), "--layer", "grouped",
                              "--functional"])
    assert ok.exit_code == 0 and ok.output.count(": PASS:") == 2, ok.output
    no = runner.invoke(main, ["simulate", "--hw", "eyeriss_like", "--mapping", str(path), "--layer", "up",
                              "--functional"])
    assert no.exit_code == 2 and "functional execution does not follow outputs indexed by a sum" in no.output


def test_styles_map_grouped_not_transposed():
    hw = load_hardware("eyeriss_like")
    from accelsim.mapping.styles import style_mapping

    g = Layer.build("g", OpType.NGCONV, {"G": 4, "K": 8, "C": 4, "R": 3, "S": 3, "Y": 10, "X": 10})
    for style in ("nvdla_like", "eyeriss_like", "shidiannao_like"):
        flow = style_mapping(style, g, hw)
        assert flow[1].dim == "G" and flow[1].size == 1  # group by group, outermost
    t = Layer.build("t", OpType.TRCONV, {"K": 2, "C": 3, "R": 2, "S": 2, "Y": 4, "X": 4}, 2, 2)
    with pytest.raises(InputError, match="no named style maps a TRCONV"):
        style_mapping("nvdla_like", t, hw)
