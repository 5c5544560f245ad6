"""A model of the MAESTRO binary (maestro-project/maestro, commit 4eb08d17): what MAESTRO
*would* print for a mapping, quirks included, from the same ``.m`` mapping and hardware inputs.

Unlike our own analytical model (:mod:`accelsim.analytical`, MAESTRO-*style* and exact), this
package keeps MAESTRO's own arithmetic: its cluster levels (``clusters``), iteration cases
(``cases``), per-case volumes (``reuse``), recursive cost analysis (``engine``) and CSV
(``report``). Every rule that makes MAESTRO's number differ from the execution it describes is
named in the module that applies it (``quirk`` in the docstrings); ``engine.Corrections``
switches the cycle-deciding ones off one at a time for ``accelsim compare``'s ladder.
"""

from __future__ import annotations

from collections.abc import Sequence

from accelsim.hw.spec import HardwareSpec
from accelsim.maestro.engine import NO_CORRECTIONS, Corrections, MaestroHardware
from accelsim.maestro.model import (
    MaestroLayerAnalysis,
    analyze_problem,
    csv_text,
    hardware_of,
    layer_result,
    problem_of,
)
from accelsim.mapping.ast import MaestroLayer
from accelsim.mapping.jobs import Job, to_maestro
from accelsim.results import LayerResult, NetworkResult

__all__ = ["Corrections", "MaestroHardware", "MaestroLayerAnalysis", "analyze_job", "analyze_jobs",
           "analyze_problem", "csv_text", "hardware_of", "layer_result", "maestro_layer_of", "problem_of"]


def maestro_layer_of(job: Job) -> MaestroLayer:
    """The job's layer as a MAESTRO file writes it: the parsed layer for a ``.m`` file, the
    written form of a named style's mapping otherwise."""
    if job.origin is not None:
        return job.origin
    return to_maestro("", [job]).layers[0]


def analyze_job(job: Job, hw: HardwareSpec, network: str = "", corrections: Corrections = NO_CORRECTIONS
                ) -> tuple[LayerResult, MaestroLayerAnalysis]:
    """MAESTRO's numbers for one job: our result schema and the analysis behind it."""
    analysis = analyze_problem(problem_of(maestro_layer_of(job), network), hardware_of(hw), corrections)
    return layer_result(analysis, hw, job.layer.name, job.layer.op.value), analysis


def analyze_jobs(network: str, jobs: Sequence[Job], hw: HardwareSpec) -> tuple[NetworkResult, list[MaestroLayerAnalysis]]:
    """MAESTRO's numbers for every job (``accelsim analyze --model maestro``)."""
    results, analyses = [], []
    for job in jobs:
        result, analysis = analyze_job(job, hw, network)
        results.append(result)
        analyses.append(analysis)
    return NetworkResult(network, results), analyses
