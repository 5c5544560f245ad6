"""Hold the simulator against cost models and other tools' outputs, layer by layer.

``compare_jobs`` runs the simulator and each other model of ``accelsim.cost_models`` on the same compiled layers,
reads MAESTRO's result CSV and SCALE-Sim's COMPUTE_REPORT.csv, lines up cycles and every access
count (``metrics``), judges maestro-mode agreement and splits each cycle gap into named causes
by ablation (``attribution``). ``report`` renders the result as text, CSV rows and JSON.
"""

from accelsim.compare.attribution import CAUSES, PARTS, Ablation
from accelsim.compare.metrics import METRICS, metrics_of
from accelsim.compare.report import comparison_dict, comparison_rows, format_comparison
from accelsim.compare.run import Comparison, LayerComparison, compare_jobs

__all__ = ["CAUSES", "PARTS", "Ablation", "METRICS", "Comparison", "LayerComparison",
           "compare_jobs", "comparison_dict", "comparison_rows", "format_comparison", "metrics_of"]
