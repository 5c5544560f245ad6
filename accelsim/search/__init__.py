"""Batch evaluation for mappers: score many candidate mappings of a layer in-process.

:class:`Evaluator` takes candidates as MAESTRO directive lists, Dataflow texts or GAMMA-style
:class:`Genome` s and returns a pandas DataFrame with one row per candidate (legality status and
reason, cost, metrics); identical schedules are scored once; work runs in this process, on
local worker processes or on a Dask cluster (:mod:`accelsim.search.executors`).
"""

from accelsim.search.candidates import canonical_key, dataflow_text, parse_dataflow
from accelsim.search.evaluate import COLUMNS, OBJECTIVES, Evaluator
from accelsim.search.executors import (
           DaskExecutor,
           InProcess,
           LocalProcesses,
           make_executor,
)
from accelsim.search.genome import Gene, Genome, genome_from_directives
from accelsim.search.legality import Legality, check_candidate
from accelsim.cost_models import model_names

__all__ = ["COLUMNS", "OBJECTIVES", "DaskExecutor", "Evaluator", "Gene", "Genome", "InProcess", "Legality",
           "LocalProcesses", "canonical_key", "check_candidate", "dataflow_text", "genome_from_directives",
           "make_executor", "model_names", "parse_dataflow"]
