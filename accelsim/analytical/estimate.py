"""What the analytical model will cost, known before it runs, and its memory budget.

The model holds numpy arrays of one row per iteration case and one column per class of PEs
(sub-units that are translates of each other, :func:`~accelsim.mapping.geometry.unit_classes`),
never one per PE, so its memory follows cases x PE classes: at most about 1.7 kB per (case,
class) measured on the bundled networks' largest (VGG-16 conv1_2, ``shidiannao_like`` on
``tpu_like_32x32``: 486 cases x 2 classes, 1.5 MB above the process; 2026-11-26, the 2-core
development machine), plus the process. A tiny layer on a 10^9-PE array has a handful of
classes and takes what it takes on 8 PEs.
"""

from __future__ import annotations

from accelsim.budget import Budget, refuse_over_budget
from accelsim.mapping.compile import CompiledMapping
from accelsim.mapping.geometry import case_count, unit_classes

BASE_BYTES = 100 * 2**20  # the process with numpy and pandas loaded
BYTES_PER_CASE_CLASS = 4096  # over twice the largest measured


def peak_memory_bytes(cm: CompiledMapping) -> int:
    """Estimated peak memory of analyzing ``cm``."""
    return BASE_BYTES + BYTES_PER_CASE_CLASS * case_count(cm) * len(unit_classes(cm))


def check_analysis_budget(cm: CompiledMapping, budget: Budget, source: str = "") -> None:
    """Refuse (ResourceError) a layer whose analysis would need more memory than ``budget``."""
    refuse_over_budget(cm.layer.name, None, peak_memory_bytes(cm), budget,
                       f"the analytical model holds {case_count(cm):,} cases x {len(unit_classes(cm)):,} PE classes",
                       source)
