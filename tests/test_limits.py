"""Exact counts for huge layers: a layer is refused at input when its counts could leave the
exact range (``accelsim.mapping.limits``), and every layer accepted is counted exactly.

The property test draws layers with dimensions up to 2**24 (products far beyond 2**63, where
int64 arithmetic used to wrap: ``K: 10**17`` reported 2.26e18 MACs instead of 5.76e19) and runs
the analytical model on each with every style, in both modes. A refused layer must have a cycle
bound at or above 2**53; an accepted one must report exactly ``layer.macs`` MACs (a Python
integer), L1 reads of each operand equal to the MACs, output L1 reads equal to MACs plus the
words drained, busy plus stall cycles equal to cycles, every count at most twice the work
bound (words into the PEs, summed over three tensors and read-backs, four times) and cycles at
most the cycle bound: the two facts the bound's proof rests on.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accelsim.api import analyze_jobs
from accelsim.errors import InputError
from accelsim.hw.loader import load_hardware
from accelsim.mapping.jobs import Job
from accelsim.mapping.limits import EXACT_LIMIT, cycle_bound, cycles_per_work_word, work_words
from accelsim.mapping.styles import STYLES, style_mapping
from accelsim.workload.ops import Layer

HW = {name: load_hardware(name) for name in ("flash_edge", "dmazerunner_16x16", "eyeriss_like")}


def huge(max_exponent: int) -> st.SearchStrategy[int]:
    """Log-uniform positive integers below 2**(max_exponent + 1)."""
    return st.integers(0, max_exponent).flatmap(lambda e: st.integers(2**e, 2 ** (e + 1) - 1))


@st.composite
def layers(draw) -> Layer:
    kind = draw(st.sampled_from(["GEMM", "CONV2D", "FC"]))
    if kind == "GEMM":
        return Layer.build("g", "GEMM", {d: draw(huge(24)) for d in "MNK"})
    if kind == "FC":
        return Layer.build("f", "FC", {"N": draw(huge(12)), "K": draw(huge(24)), "C": draw(huge(24))})
    r, s = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    sizes = {"N": draw(huge(6)), "K": draw(huge(14)), "C": draw(huge(14)), "R": r, "S": s,
             "Y": r + draw(huge(12)), "X": s + draw(huge(12))}
    stride = draw(st.integers(1, 4))
    return Layer.build("c", "CONV2D", sizes, stride, stride)


@settings(max_examples=int(os.environ.get("ACCELSIM_LIMIT_EXAMPLES", "30")), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(layer=layers(), hw_name=st.sampled_from(sorted(HW)), mode=st.sampled_from(["maestro", "realistic"]))
def test_huge_layers_refused_or_exact(layer, hw_name, mode):
    hw = HW[hw_name]
    bound = cycle_bound(layer, hw)
    for style in sorted(STYLES):
        try:
            job = Job(layer, tuple(style_mapping(style, layer, hw)), f"style {style}")
        except InputError:
            continue  # the style cannot map this layer (e.g. a tile that never fits)
        if bound >= EXACT_LIMIT:
            with pytest.raises(InputError, match="too large to count exactly"):
                analyze_jobs("n", [job], hw, mode, allow_overflow=True)
            continue
        r = analyze_jobs("n", [job], hw, mode, allow_overflow=True).layers[0]
        work = work_words(layer)
        assert r.macs == layer.macs
        assert r.accesses["input"].l1_read == r.accesses["weight"].l1_read == layer.macs
        assert r.accesses["output"].l1_read == layer.macs + r.egress_words
        assert r.compute_busy_cycles + sum(r.stall_cycles.values()) == r.cycles
        assert r.compute_bound_cycles == -(-layer.macs // (hw.num_pes * hw.pe_array.macs_per_pe_per_cycle))
        counts = [getattr(a, f) for a in r.accesses.values() for f in vars(a)]
        counts += [r.egress_words, r.steps]
        assert all(0 <= c <= 2 * work for c in counts), (counts, work)
        assert 0 <= r.noc_words <= r.noc_delivered_words <= 4 * work
        assert r.compute_bound_cycles <= r.cycles <= bound < EXACT_LIMIT


def test_k_1e17_refused_with_layer_bound_and_limit():
    """K = 10**17, C = 576: 5.76e19 MACs (int64 wrapped it to 2.26e18 before the check)."""
    layer = Layer.build("fc", "FC", {"K": 10**17, "C": 576}, source="net.yaml layer 0 (fc)")
    hw = HW["eyeriss_like"]
    job = Job(layer, tuple(style_mapping("nvdla_like", layer, hw)), "style nvdla_like")
    with pytest.raises(InputError) as info:
        analyze_jobs("n", [job], hw, "maestro")
    message = str(info.value)
    assert message.startswith("net.yaml layer 0 (fc): layer 'fc' is too large to count exactly on eyeriss_like: "
                              "5.760e+19 MACs;")
    assert "2^53 = 9,007,199,254,740,992" in message


def test_bound_is_what_the_presets_allow():
    """The largest layer each preset takes (2**53 / cycles per work word) is above 5e12 MACs,
    ten times FLASH's GEMM I (8192**3 = 5.5e11)."""
    for name in ("eyeriss_like", "marvel_edge", "flash_edge", "flash_cloud", "dmazerunner_16x16",
                 "tpu_like_32x32", "maestro_default"):
        assert EXACT_LIMIT / cycles_per_work_word(load_hardware(name)) > 5e12, name


def test_network_k_2_63_minus_1_exit_2(tmp_path):
    """K = 2**63 - 1 in a network gave negative MACs and energy; now one error line, exit 2."""
    from click.testing import CliRunner

    from accelsim.cli import main

    net = tmp_path / "net.yaml"
    net.write_text(f"name: big\nlayers:\n  - {{name: fc, type: FC, K: {2**63 - 1}, C: 4}}\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["analyze", "--hw", "eyeriss_like", "--network", str(net),
                                       "--style", "nvdla_like"])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"error: {net} layer 0 (fc): layer 'fc' is too large to count exactly")
    assert result.stderr.count("\n") == 1
