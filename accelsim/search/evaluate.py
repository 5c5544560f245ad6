"""Score many candidate mappings of one layer in one call: a pandas DataFrame, one row each.

    from accelsim.search import Evaluator
    with Evaluator("eyeriss_like", layer, model="analytical", objective="latency") as ev:
        frame = ev.evaluate(candidates)   # directive lists, Dataflow texts, Genomes or loop nests

Each row holds the candidate (``encoding``: ``directives``, ``genome`` or ``loopnest``; its ``candidate`` text, the ``dataflow`` it decodes to as
MAESTRO directives, the ``dram_layouts`` it was scored with as ``--dram-layout`` values separated by
spaces, empty for the operator's channel-last, canonical ``key``), its legality
(``status``: ``ok``, ``illegal``, ``skipped`` or ``error``; ``reason``: a code such as
``l1_overflow``; ``message``), the model that scored it, ``cost`` under the objective (+inf when not ``ok``) and
``fitness`` (= -cost, -inf when not ``ok``), and the model's metrics (cycles, energy, EDP,
utilization, accesses per tensor and level, stalls; see :mod:`accelsim.search.models`).
``new`` is True the first time this evaluator returns a schedule: mappers count their budget in
new rows.

Candidates are encoded in this process; every text not seen before goes, in a few large
batches per worker, to the executor (this process, local processes or Dask), whose workers
compile it, check its legality and work, name its schedule and score each new legal schedule
with the model's ``evaluate_many`` (:func:`accelsim.search.models.screen_batch`); this process
only merges: each schedule is kept once, whatever the batch or spelling it came in, and later
requests are answered from the cache. A legal candidate whose
estimated work exceeds the model's ``work_budget`` (see
:data:`accelsim.search.models.DEFAULT_WORK_BUDGETS`) is ``skipped`` (reason ``over_budget``). (A model that reads the
mapping as written, ``maestro``, is cached by the written directives instead.)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from math import inf, isnan, nan
from typing import Any, Self

import numpy as np
import pandas as pd

from accelsim.cost_models import COST_MODELS, model_names
from accelsim.errors import InputError, MappingError
from accelsim.hw.loader import load_hardware
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.ast import Directive
from accelsim.mapping.layouts import layout_specs
from accelsim.mapping.loopnest_format import NestLayer
from accelsim.model_options import check_mode
from accelsim.search.candidates import (
    Candidate,
    Encoded,
    dataflow_text,
    encode,
    loopnest_text,
    text_key,
    written_key,
)
from accelsim.search.executors import Executor, make_executor
from accelsim.search.models import DEFAULT_WORK_BUDGETS, METRIC_COLUMNS, ModelTask, Outcome, metric_columns
from accelsim.search.overlap import ScreenRequest, Screening, drive
from accelsim.workload.ops import Layer

# objective -> the metric it minimizes
OBJECTIVES = {"latency": "cycles", "energy": "energy_pj", "edp": "edp_pj_cycles"}
STATUS_COLUMNS = ("layer", "model", "mode", "objective", "encoding", "candidate", "dataflow", "dram_layouts", "key",
                  "status", "reason", "message", "cost", "fitness")
COLUMNS = (*STATUS_COLUMNS, *METRIC_COLUMNS, "wall_seconds", "new")  # on a design without register files
_FLOAT_METRICS = {"energy_pj", "edp_pj_cycles", "pe_utilization"}
INT_COLUMNS = tuple(c for c in METRIC_COLUMNS if c not in _FLOAT_METRICS)


def columns(hw: HardwareSpec) -> tuple[str, ...]:
    """The columns of a frame of candidates scored on ``hw``: :data:`COLUMNS`, with the register
    files' metrics (:func:`accelsim.search.models.inner_level_columns`) after the others on a
    design with register files inside the PE."""
    return (*STATUS_COLUMNS, *metric_columns(hw), "wall_seconds", "new")


def is_float_metric(column: str) -> bool:
    """Whether a metric column holds floats (energies, EDP, utilization); the others are counts."""
    return column in _FLOAT_METRICS or column.endswith("_energy_pj")


class Evaluator:
    """Scores candidates of ``layer`` on ``hw`` (a spec or a preset name) with one ``model``
    (``analytical``, ``sim``, or another registered model) in one fidelity ``mode``, costed by
    ``objective`` (``latency``, ``energy`` or ``edp``). Work runs on ``executor``, or on one made
    from ``workers`` local processes or a Dask ``scheduler`` (address or ``distributed.Client``);
    an executor the evaluator made is closed by :meth:`close` (or leaving a ``with`` block).
    ``dram_layouts`` (role -> axis indices, outermost first; None: the operator's channel-last)
    are the layouts every candidate is scored with (``--mapper marvel``'s off-chip choice)."""

    def __init__(self, hw: HardwareSpec | str, layer: Layer, model: str = "analytical",
                 mode: str = "realistic", objective: str = "latency", executor: Executor | None = None,
                 workers: int = 1, scheduler: Any = None, work_budget: float | None = None,
                 dram_layouts: Mapping[str, tuple[int, ...]] | None = None):
        if objective not in OBJECTIVES:
            raise InputError(f"unknown objective {objective!r}; expected one of {', '.join(OBJECTIVES)}")
        if model not in model_names():
            raise InputError(f"unknown model {model!r}; expected one of {', '.join(model_names())}")
        self.hw = load_hardware(hw) if isinstance(hw, str) else hw
        self.layer = layer
        self.objective = objective
        self.work_budget = DEFAULT_WORK_BUDGETS.get(model, inf) if work_budget is None else work_budget
        layouts = {role: tuple(axes) for role, axes in (dram_layouts or {}).items()}
        self.task = ModelTask(layer, self.hw, model, check_mode(mode), self.work_budget, tuple(sorted(layouts.items())))
        self.columns = columns(self.hw)
        self.metric_columns = metric_columns(self.hw)
        self.dram_layouts = " ".join(layout_specs(layer.loop_nest(), layouts))
        self._written = COST_MODELS[model].written_form
        self._owned = executor is None
        self.executor = executor if executor is not None else make_executor(workers, scheduler)
        self._checked: dict[str, tuple[str, bool, Outcome | None]] = {}  # text -> key, legal, verdict if not
        self._results: dict[str, Outcome] = {}  # canonical key -> status and metrics
        self._served: set[str] = set()  # keys already returned as new
        self.model_runs = 0  # schedules scored by the model here (not from the cache or a preload)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._owned:
            self.executor.close()

    @property
    def model(self) -> str:
        return self.task.model

    def evaluate(self, candidates: Iterable[Candidate], limit: int | None = None) -> pd.DataFrame:
        """One row per candidate, in order (see the module docstring). With ``limit``, stop
        before the candidate that would be the ``limit + 1``-th new schedule: the frame then
        holds fewer rows than candidates."""
        return self._frame(self.rows(candidates, limit))

    def evaluate_steps(self, candidates: Iterable[Candidate], limit: int | None = None) -> Screening[pd.DataFrame]:
        """:meth:`evaluate` as a screening (:mod:`accelsim.search.overlap`): it yields the work
        for the executor and returns the frame."""
        return self._frame((yield from self.rows_steps(candidates, limit)))

    def rows(self, candidates: Iterable[Candidate], limit: int | None = None) -> list[dict[str, Any]]:
        """:meth:`evaluate`'s rows as plain dicts (no frame built: for callers that score one
        candidate at a time, such as the co-search, where building frames would cost as much as
        the analytical model)."""
        return drive(self.rows_steps(candidates, limit), self.executor)

    def rows_steps(self, candidates: Iterable[Candidate], limit: int | None = None) -> Screening[list[dict[str, Any]]]:
        """:meth:`rows` as a screening (:mod:`accelsim.search.overlap`)."""
        encoded = [self._encode(candidate) for candidate in candidates]
        # the texts not seen before are compiled, checked, named and scored in the workers
        unseen = {enc.text: enc.dataflow for enc, failed in encoded if failed is None and enc.text not in self._checked}
        scored = yield from self._screen(unseen)
        wanted: list[tuple[Encoded, str, bool]] = []
        missing: dict[str, tuple[Directive, ...]] = {}  # legal schedules checked earlier, never scored
        fresh: set[str] = set()
        for enc, failed in encoded:
            key, legal, verdict = failed if failed is not None else self._checked[enc.text]
            new = key not in self._served and key not in fresh
            if new:
                if limit is not None and len(fresh) >= limit:
                    break
                fresh.add(key)
            if key not in self._results:
                if not legal:
                    assert verdict is not None
                    self._results[key] = verdict
                elif key in scored:
                    self._results[key] = scored[key]
                    self.model_runs += 1
                else:
                    missing.setdefault(key, enc.dataflow)
            wanted.append((enc, key, new))
        if missing:
            again = yield from self._screen({f"{i}": dataflow for i, dataflow in enumerate(missing.values())})
            for key in missing:
                self._results[key] = again[key]
                self.model_runs += 1
        self._served |= fresh
        return [self._row(enc, key, new) for enc, key, new in wanted]

    def preload(self, frame: pd.DataFrame) -> None:
        """Take rows of an earlier run of the same layer, model, mode (e.g. a resumed search's
        ``candidates.parquet``) as already scored: they are not scored again, and still count as
        new the first time they are asked for."""
        if frame.empty:  # a search started afresh: nothing to take (to_dict costs ms even then)
            return
        for record in frame.to_dict("records"):
            if (record["model"], record["mode"]) != (self.model, self.task.mode):
                raise ValueError(f"cannot preload {record['model']}/{record['mode']} rows into a "
                                 f"{self.model}/{self.task.mode} evaluator")
            if (_plain(record.get("dram_layouts")) or "") != self.dram_layouts:
                raise ValueError(f"cannot preload rows scored with DRAM layouts {record.get('dram_layouts')!r} into "
                                 f"an evaluator with {self.dram_layouts!r}")
            if record["key"] not in self._results:
                ok = record["status"] == "ok"
                self._results[record["key"]] = Outcome(
                    record["status"], _plain(record["reason"]), _plain(record["message"]),
                    {k: _plain(record[k]) for k in self.metric_columns} if ok else None, record["wall_seconds"])

    # ----------------------------------------------------------------------------------------
    def _encode(self, candidate: Candidate) -> tuple[Encoded, tuple[str, bool, Outcome] | None]:
        """The candidate's kind, text and directives, and for one that cannot be encoded its
        (key, legal, verdict): illegal."""
        try:
            return encode(candidate, self.layer, self.hw.num_pes), None
        except MappingError as exc:  # a loop nest without a directive equivalent
            text = loopnest_text(candidate) if isinstance(candidate, NestLayer) else repr(candidate)
            enc = Encoded("loopnest", text, ())
            verdict = Outcome("illegal", exc.reason or "invalid", exc.detail)
        except InputError as exc:
            text = candidate if isinstance(candidate, str) else repr(candidate)
            enc = Encoded("directives", text, ())
            verdict = Outcome("illegal", "syntax", exc.detail)
        key = written_key(dataflow_text(enc.dataflow)) if self._written else text_key(enc.text)
        return enc, (key, False, verdict)

    def _screen(self, unseen: dict[str, tuple[Directive, ...]]) -> Screening[dict[str, Outcome]]:
        """Compile, check, name and score the ``unseen`` dataflows (by text) on the executor (one
        request, which the driver splits into batches); remember each text's (key, legal,
        verdict); the outcome of every schedule scored, by key (of a schedule two batches held,
        the first text's)."""
        if not unseen:
            return {}
        texts = list(unseen)
        results = yield ScreenRequest(self.task, [tuple(unseen[t]) for t in texts])
        scored: dict[str, Outcome] = {}
        for text, screened in zip(texts, results, strict=True):
            if screened.legal:
                if screened.outcome is not None:
                    scored.setdefault(screened.key, screened.outcome)
                self._checked[text] = (screened.key, True, None)
            else:
                self._checked[text] = (screened.key, False, screened.outcome)
        return scored

    def _row(self, enc: Encoded, key: str, new: bool) -> dict[str, Any]:
        result = self._results[key]
        ok = result.status == "ok"
        values = result.metrics or {}
        cost = values[OBJECTIVES[self.objective]] if ok else inf
        row = {"layer": self.layer.name, "model": self.model, "mode": self.task.mode,
               "objective": self.objective, "encoding": enc.kind, "candidate": enc.text,
               "dataflow": dataflow_text(enc.dataflow), "dram_layouts": self.dram_layouts, "key": key,
               "status": result.status, "reason": result.reason, "message": result.message,
               "cost": float(cost), "fitness": -float(cost)}
        for column in self.metric_columns:  # a register file's tensor the layer lacks: 0 words
            row[column] = values.get(column, 0) if ok else None
        row["wall_seconds"] = result.wall_seconds
        row["new"] = new
        return row

    def _frame(self, rows: list[dict[str, Any]]) -> pd.DataFrame:
        """``rows`` as a frame of :attr:`columns`, built column by column: the metrics typed at
        once (floats, or nullable integers: None for a row that is not ``ok``), the others as
        pandas infers them from the values (as it would from the rows)."""
        if not rows:
            frame = pd.DataFrame([], columns=list(self.columns))
            for column in self.metric_columns:
                frame[column] = frame[column].astype("float64" if is_float_metric(column) else "Int64")
            frame["new"] = frame["new"].astype(bool)
            return frame
        data: dict[str, Any] = {column: [row[column] for row in rows] for column in self.columns}
        for column in self.metric_columns:
            data[column] = (_floats(data[column]) if is_float_metric(column) else _integers(data[column]))
        data["new"] = np.array(data["new"], dtype=bool)
        return pd.DataFrame(data, columns=list(self.columns))


def _floats(values: list[Any]) -> np.ndarray:
    """A float column's values (None: NaN) as float64."""
    return np.array([nan if v is None else v for v in values], dtype=np.float64)


def _integers(values: list[Any]) -> pd.api.extensions.ExtensionArray:
    """A count column's values (None: missing) as pandas' nullable Int64, read exactly (no detour
    through floats); values that are not all integers go through pandas' own checked conversion."""
    missing = np.array([v is None for v in values], dtype=bool)
    data = np.array([0 if v is None else v for v in values])
    if data.dtype.kind != "i":
        return pd.array(values, dtype="Int64")
    return pd.arrays.IntegerArray(data.astype(np.int64), missing)


def _plain(value: Any) -> Any:
    """A stored value back as a plain Python value (pandas' missing values as None)."""
    if value is None or value is pd.NA:
        return None
    if isinstance(value, float) and isnan(value):
        return None
    return value.item() if hasattr(value, "item") else value
