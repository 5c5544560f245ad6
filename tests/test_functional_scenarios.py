"""Functional execution of the scenario layers themselves (slow).

Every bundled named style on every scenario layer small enough to run: marvel15 on
eyeriss_like, dmazerunner6 on dmazerunner_16x16, FLASH's GEMM workloads (flash_gemm,
flash_mlp) on flash_edge. "Small enough" for this sweep: at most ``SWEEP_MACS`` MACs and at
most ``SWEEP_PE_STEPS`` steps x used PEs, so that the sweep stays under about two minutes on the
2-core development machine (the limits functional execution had when values were computed
PE by PE; larger layers run too, see ``test_layer_beyond_the_old_fixed_limits``). The default
run covers every op type and stride on scaled-down layers (tests/test_functional.py).
"""

from __future__ import annotations

import pytest

from accelsim.errors import InputError
from accelsim.functional import simulate_functional
from accelsim.hw.loader import load_hardware
from accelsim.mapping.compile import compile_mapping
from accelsim.mapping.styles import STYLES, style_mapping
from accelsim.workload.tables import load_network

SCENARIOS = [("marvel15", "eyeriss_like"), ("dmazerunner6", "dmazerunner_16x16"),
             ("flash_gemm", "flash_edge"), ("flash_mlp", "flash_edge")]
SWEEP_MACS = 1 << 22  # 4,194,304
SWEEP_PE_STEPS = 1 << 17  # 131,072


def _small_cases():
    """(network, layer, style, hw, compiled mapping) of every pair within the sweep budget."""
    cases = []
    for network, hw_name in SCENARIOS:
        hw = load_hardware(hw_name)
        for layer in load_network(network).layers:
            if layer.macs > SWEEP_MACS:
                continue
            for style in sorted(STYLES):
                try:
                    cm = compile_mapping(layer, style_mapping(style, layer, hw), hw.num_pes)
                except InputError:
                    continue  # the style cannot map this layer on this array
                if cm.steps * cm.used_pes <= SWEEP_PE_STEPS:
                    cases.append((network, layer.name, style, hw, cm))
    return cases


@pytest.mark.slow
def test_scenario_layers_compute_the_right_answer():
    cases = _small_cases()
    # the sweep must not silently shrink: dmazerunner6's layers all exceed SWEEP_MACS (2.3e8 MACs
    # and more; its scaled-down shapes run in tests/test_functional.py), the others contribute
    assert {network for network, *_ in cases} == {"marvel15", "flash_gemm", "flash_mlp"}
    assert {cm.layer.op.value for *_, cm in cases} == {"RESADD", "DWCONV", "FC", "GEMM"}
    failures = []
    for network, layer, style, hw, cm in cases:
        _, report = simulate_functional(cm, hw)
        if not report.passed:
            failures.append(f"{network}/{layer}/{style}:\n{report.text()}")
    assert not failures, "\n".join(failures)
