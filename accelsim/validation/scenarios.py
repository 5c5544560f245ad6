"""The validation scenario sets: which network runs on which hardware under which style.

Each set reproduces a setup of one of the papers the simulator grows from (see DESIGN.md
"Scenario numbers from the papers"). A scenario is a network (bundled table) on a hardware
preset mapped by a named dataflow style; every layer of it is run by the simulator in
``realistic`` and ``maestro`` mode and by the analytical model.

Every layer is simulated: the simulator's cost depends on the distinct work of a mapping, not on
its steps or PEs (FLASH's GEMM I, 3.4e7 steps on the 256-PE ``flash_edge``, takes about a second).
``--quick`` (a smoke run) simulates only layers whose ``steps x PEs`` ("PE-steps") is at most
:data:`QUICK_BUDGET_PE_STEPS` and says so per row of the others.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

QUICK_BUDGET_PE_STEPS = 100_000
QUICK_PAPER_CHECK_BUDGET_PE_STEPS = 1_000_000

CONV_STYLES = ("nvdla_like", "eyeriss_like", "shidiannao_like")
FLASH_STYLES = ("nvdla_like", "eyeriss_like", "shidiannao_like", "tpu_like", "maeri_like")


@dataclass(frozen=True)
class Scenario:
    """One network on one hardware preset under one named dataflow style, or (``kind``
    ``scalesim``) a SCALE-Sim topology CSV (``network``) on a SCALE-Sim ``.cfg`` (``hw``) mapped
    the way SCALE-Sim runs it (``style`` names its dataflow)."""

    set_name: str
    network: str
    hw: str
    style: str
    kind: str = "style"


@dataclass(frozen=True)
class ScenarioSet:
    """A group of scenarios taken from one paper."""

    name: str
    title: str
    source: str
    scenarios: tuple[Scenario, ...]
    notes: str = ""  # what a reader must know to read the set's numbers


def _set(name: str, title: str, source: str, networks: tuple[str, ...], hws: tuple[str, ...],
         styles: tuple[str, ...], notes: str = "") -> ScenarioSet:
    return ScenarioSet(name, title, source, tuple(
        Scenario(name, net, hw, style) for net in networks for hw in hws for style in styles), notes)


SCENARIO_SETS: tuple[ScenarioSet, ...] = (
    _set("marvel", "MARVEL: 15 layers of MobileNetV2 and ResNet-50",
         "MARVEL Table 1 (platforms) and Table 3 (layers); Fig. 8 compares KC-, QR- and QP-partitioned "
         "(NVDLA-, row-stationary and ShiDianNao-like) mappings",
         ("marvel15",), ("eyeriss_like", "marvel_edge"), CONV_STYLES),
    _set("flash_gemm", "FLASH: GEMM workloads I-VI",
         "FLASH Table 3 (workloads), Table 4 (edge and cloud), Table 2 (the five GEMM mapping styles)",
         ("flash_gemm",), ("flash_edge", "flash_cloud"), FLASH_STYLES),
    _set("flash_mlp", "FLASH: MNIST MLP (batch 128) as GEMMs",
         "FLASH Sec. 5.4 and Fig. 10", ("flash_mlp",), ("flash_edge", "flash_cloud"), FLASH_STYLES),
    _set("dmazerunner", "dMazeRunner: six ResNet layers, batch 4",
         "dMazeRunner Sec. 5 (16x16 array) and Table 4 (layers)",
         ("dmazerunner6",), ("dmazerunner_16x16",), CONV_STYLES),
)


def systolic_set(directory: Path) -> ScenarioSet:
    """The SCALE-Sim parity scenarios: every ``scale_*.cfg`` in ``directory`` (SCALE-Sim's
    default 32 x 32 configuration per dataflow) on every ``topologies/*.csv``. Empty when the
    directory does not exist (an installed package without the repository)."""
    configs = sorted(directory.glob("scale_*.cfg"))
    topologies = sorted((directory / "topologies").glob("*.csv"))
    return ScenarioSet(
        "systolic", "Systolic set (SCALE-Sim's inputs)",
        f"SCALE-Sim's default configuration and small topologies in {directory.as_posix()}",
        tuple(Scenario("systolic", topo.as_posix(), cfg.as_posix(), f"scalesim_{cfg.stem.split('_', 1)[1]}",
                       "scalesim") for topo in topologies for cfg in configs),
        "The simulator runs these layers as SCALE-Sim does (accelsim.scalesim.translate: one GEMM per layer, "
        "SCALE-Sim's fold rule adding the array's fill and drain once per fold). The analytical model is given "
        "the same fold rule (analyze_layer's systolic_fold), so both models charge the fill and drain.")
