"""What the analytical model will cost, known before it runs, and its memory budget.

The model holds numpy arrays of one row per iteration case and one column per PE in use, so
its memory grows with cases x PEs: about 750-850 bytes per (case, PE) measured on one CONV
layer with 27 cases on 65,536 to 1,048,576 PEs (1.5 GB to 21 GB peak RSS, 2026-11-22, the
2-core development machine), plus the process. The bundled networks under the five styles have
at most 2,187 cases on at most 2,048 PEs (a few GB at most; most layers far less).
"""

from __future__ import annotations

from accelsim.budget import Budget, refuse_over_budget
from accelsim.mapping.compile import CompiledMapping
from accelsim.mapping.geometry import case_count

BASE_BYTES = 100 * 2**20  # the process with numpy and pandas loaded
BYTES_PER_CASE_PE = 1024


def peak_memory_bytes(cm: CompiledMapping) -> int:
    """Estimated peak memory of analyzing ``cm``."""
    return BASE_BYTES + BYTES_PER_CASE_PE * case_count(cm) * cm.used_pes


def check_analysis_budget(cm: CompiledMapping, budget: Budget, source: str = "") -> None:
    """Refuse (ResourceError) a layer whose analysis would need more memory than ``budget``."""
    refuse_over_budget(cm.layer.name, None, peak_memory_bytes(cm), budget,
                       f"the analytical model holds {case_count(cm):,} cases x {cm.used_pes:,} PEs", source)
