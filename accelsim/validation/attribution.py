"""Where the cycle gap between the realistic simulation and the analytical model comes from,
per scenario set (accelsim.compare.attribution's ablation: one extra simulation per named cause).

The ablation costs one realistic simulation per cause; it runs on every layer (``--quick``: on
none), but not on the systolic set (its fold rule is a simulator option the ablation does not
take).
"""

from __future__ import annotations

from typing import Any, Iterable

from accelsim.compare.attribution import PARTS, ablate
from accelsim.mapping.jobs import prepare
from accelsim.validation.runner import scenario_jobs
from accelsim.validation.scenarios import Scenario

ATTRIBUTION_COLUMNS = ("set", "network", "hw", "style", "layer", "realistic_cycles", "analytical_cycles",
                       "gap_cycles", *PARTS)


def attribute_gaps(scenarios: Iterable[Scenario], rows: list[dict[str, Any]], budget_pe_steps: int | None
                   ) -> list[dict[str, Any]]:
    """One row per attributed layer: the gap realistic - analytical split into PARTS (cycles)."""
    runs = {(r["set"], r["network"], r["hw"], r["style"], r["layer"], r["model"], r["mode"]): r
            for r in rows if r["status"] == "ok"}
    out = []
    for sc in scenarios:
        if sc.kind != "style":
            continue
        concrete = None
        for layer_name in [r["layer"] for r in rows if (r["set"], r["network"], r["hw"], r["style"], r["model"],
                                                        r["mode"]) == (sc.set_name, sc.network, sc.hw, sc.style,
                                                                       "simulator", "realistic")]:
            key = (sc.set_name, sc.network, sc.hw, sc.style, layer_name)
            real, smae, ana = (runs.get(key + run) for run in
                               (("simulator", "realistic"), ("simulator", "maestro"), ("analytical", "maestro")))
            over = (budget_pe_steps is not None and real is not None
                    and real["steps"] * real["num_pes"] > budget_pe_steps)
            if real is None or smae is None or ana is None or over:
                continue
            concrete = concrete or scenario_jobs(sc)
            job = next(j for layer, j, _ in concrete.layers if layer.name == layer_name)
            if job is None:  # unmappable: nothing was simulated
                continue
            cm = prepare(job, concrete.hw)
            parts = ablate(cm, concrete.hw, real["cycles"], smae["cycles"]).split(ana["cycles"])
            out.append({"set": sc.set_name, "network": sc.network, "hw": sc.hw, "style": sc.style,
                        "layer": layer_name, "realistic_cycles": real["cycles"], "analytical_cycles": ana["cycles"],
                        "gap_cycles": real["cycles"] - ana["cycles"], **parts})
    return out
