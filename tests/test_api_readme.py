"""The Python API exactly as the README shows it ("From Python" under Using it, and the
analytical model's entry point): the calls, their arguments and what the results offer."""

from __future__ import annotations

import pandas as pd
import pytest

import accelsim.analytical
import accelsim.api
from accelsim.hw.loader import load_hardware
from accelsim.mapping.jobs import jobs_from_network, prepare, to_maestro
from accelsim.mapping.maestro_format import write_maestro
from accelsim.results import NetworkResult


def _check_network_result(result: NetworkResult, layers: int) -> None:
    """``.layers``, ``.summary()`` and ``.to_frame()``, as the README lists them."""
    assert isinstance(result, NetworkResult) and len(result.layers) == layers
    summary = result.summary()
    assert summary["cycles"] == sum(r.cycles for r in result.layers)
    assert summary["macs"] == sum(r.macs for r in result.layers)
    frame = result.to_frame()
    assert isinstance(frame, pd.DataFrame) and len(frame) == layers
    assert list(frame["Runtime (Cycles)"]) == [r.cycles for r in result.layers]  # MAESTRO's column names


@pytest.mark.slow
def test_simulate_network_as_shown():
    _check_network_result(accelsim.api.simulate_network("resnet18", "eyeriss_like", "nvdla_like"), 29)


def test_simulate_network_one_layer():
    """The same call with its ``layer`` argument (the default test run's budget)."""
    result = accelsim.api.simulate_network("resnet18", "eyeriss_like", "nvdla_like", layer="fc")
    _check_network_result(result, 1)
    assert result.layers[0].macs == 512 * 1000


def test_simulate_maestro_as_shown(tmp_path, monkeypatch):
    """``simulate_maestro("net.m", "eyeriss_like")`` on a file ``accelsim mapping`` would write."""
    hw = load_hardware("eyeriss_like")
    name, jobs = jobs_from_network("marvel15", "nvdla_like", hw, "L4_Bottleneck6_2_2")
    (tmp_path / "net.m").write_text(write_maestro(to_maestro(name, jobs)), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = accelsim.api.simulate_maestro("net.m", "eyeriss_like")
    _check_network_result(result, 1)
    assert result.layers[0].layer == "L4_Bottleneck6_2_2"


def test_analyze_layer_as_shown():
    """``accelsim.analytical.analyze_layer(cm, hw, mode="maestro")``: the simulator's schema with
    ``model: "analytical"`` and ``events: 0``, agreeing with ``simulate --mode maestro`` on counts."""
    hw = load_hardware("eyeriss_like")
    _, jobs = jobs_from_network("marvel15", "nvdla_like", hw, "L4_Bottleneck6_2_2")
    cm = prepare(jobs[0], hw)
    estimate = accelsim.analytical.analyze_layer(cm, hw, mode="maestro")
    assert estimate.model == "analytical" and estimate.events == 0
    simulated = accelsim.api.simulate_network("marvel15", hw, "nvdla_like", mode="maestro",
                                              layer="L4_Bottleneck6_2_2").layers[0]
    assert estimate.accesses == simulated.accesses and estimate.macs == simulated.macs


@pytest.mark.parametrize("call", [
    lambda: accelsim.api.simulate_network("resnet18", "eyeriss_like", "nvdla_like", mode="fast"),
    lambda: accelsim.api.simulate_maestro("net.m", "eyeriss_like", mode="fast"),
])
def test_a_bad_mode_is_an_input_error(call):
    from accelsim.errors import InputError

    with pytest.raises(InputError, match="unknown mode 'fast'"):
        call()
