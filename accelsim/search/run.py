"""The search loop (a mapper proposes, the evaluator scores, until the budget is spent) and the
two-stage search (the analytical model screens every candidate, the simulator re-ranks the best
``k``), with the ranking fidelity that re-ranking measures.

Both are screenings (:mod:`accelsim.search.overlap`): :func:`search_steps` and
:func:`rerank_steps` yield their work for the executor, so ``accelsim search`` can run several
layers' searches at once; :func:`search` and :func:`rerank` run one to its end.

The budget counts *new* schedules: a candidate the evaluator has scored before (the same
schedule, however written) costs nothing. A mapper that keeps proposing only known schedules
for ``STALL_BATCHES`` batches in a row has converged and the loop stops.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from math import isnan
from typing import Any

import numpy as np
import pandas as pd

from accelsim.search.candidates import Candidate
from accelsim.search.evaluate import Evaluator
from accelsim.search.mappers import Mapper
from accelsim.search.overlap import Screening, drive

STALL_BATCHES = 20

RowsCallback = Callable[[pd.DataFrame], None]


@dataclass
class LayerSearch:
    """One layer's search: every new row in the order scored (``frame``), why it stopped
    (``budget``, ``exhausted``: the mapper had nothing more, ``stalled``: only known schedules
    for a while), and the mapper's own facts."""

    layer: str
    frame: pd.DataFrame
    stopped: str
    mapper: dict[str, Any] = field(default_factory=dict)

    @property
    def best(self) -> dict[str, Any] | None:
        """The legal row of least cost (the first such row on ties), or None."""
        return best_row(self.frame)


def best_row(frame: pd.DataFrame) -> dict[str, Any] | None:
    """The ``ok`` row of least cost, the earliest on ties; None without one. (Only that row is
    taken from the frame: the search's parent asks with every batch that improves a layer.)"""
    best = best_position(frame)
    return None if best is None else row_at(frame, best)


def best_position(frame: pd.DataFrame) -> int | None:
    """Where :func:`best_row`'s row is in ``frame`` (0 = first), or None."""
    legal = np.flatnonzero(frame["status"].to_numpy() == "ok")
    if not len(legal):
        return None
    return int(legal[pd.Series(frame["cost"].to_numpy()[legal]).argmin()])


def row_at(frame: pd.DataFrame, position: int) -> dict[str, Any]:
    """Row ``position`` of ``frame`` (0 = first) as a dict, column -> value."""
    return {str(column): value for column, value in frame.iloc[position].items()}


def new_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``frame`` marked ``new``: ``frame`` itself when all are, an empty slice of it
    when none is (nothing copied in either case; a search's parent asks with every batch)."""
    new = frame["new"].to_numpy()
    if new.all():
        return frame
    return frame[new] if new.any() else frame.iloc[:0]


def search(evaluator: Evaluator, mapper: Mapper, budget: int, on_rows: RowsCallback | None = None,
           seeds: Sequence[Candidate] = ()) -> LayerSearch:
    """Score ``seeds`` first (known mappings, e.g. the named styles'; they count against the
    budget and are not told to the mapper), then ask ``mapper`` for candidates and score them with
    ``evaluator`` until ``budget`` new schedules are scored (or the mapper is done or stalls);
    ``on_rows`` gets each batch's new rows as they come (to save them, or advance a progress
    bar)."""
    return drive(search_steps(evaluator, mapper, budget, on_rows, seeds), evaluator.executor)


def search_steps(evaluator: Evaluator, mapper: Mapper, budget: int, on_rows: RowsCallback | None = None,
                 seeds: Sequence[Candidate] = ()) -> Screening[LayerSearch]:
    """:func:`search` as a screening: the mapper sees the same frames in the same order
    whatever runs it."""
    if budget < 1:
        raise ValueError(f"the budget must be at least 1, got {budget}")
    frames: list[pd.DataFrame] = []

    def take(frame: pd.DataFrame) -> int:
        """Keep (and pass on) the frame's new rows; how many there were."""
        new = new_rows(frame)
        if len(new):
            frames.append(new)
            if on_rows is not None:
                on_rows(new)
        return len(new)

    used = take((yield from evaluator.evaluate_steps(list(seeds), limit=budget))) if seeds else 0
    idle, stopped = 0, "budget"
    while used < budget:
        batch = mapper.ask()
        if not batch:
            stopped = "exhausted"
            break
        frame = yield from evaluator.evaluate_steps(batch, limit=budget - used)
        mapper.tell(frame)
        scored = take(frame)
        used += scored
        idle = 0 if scored else idle + 1
        if idle >= STALL_BATCHES:
            stopped = "stalled"
            break
    frame = pd.concat(frames, ignore_index=True) if frames else evaluator.evaluate([])
    return LayerSearch(evaluator.layer.name, frame, stopped, mapper.info())


@dataclass(frozen=True)
class Reranking:
    """The simulator's verdict on the screen's best ``k`` legal schedules: their rows
    (``frame``, in screening order), the rank correlation of the two models' costs over the
    schedules both scored (Spearman's rho and Kendall's tau-b; None with fewer than 2 or with
    either side constant), and the
    regret: how much more the screen's pick costs under the simulator than the simulator's
    best, ``(sim cost of the pick - best sim cost) / best sim cost``."""

    k: int
    frame: pd.DataFrame
    spearman: float | None
    kendall: float | None
    regret: float | None
    screen_pick: str | None  # key of the screen's best
    sim_pick: str | None  # key of the simulator's best

    def summary(self) -> dict[str, Any]:
        return {"k": self.k, "reranked": len(self.frame), "spearman": self.spearman, "kendall": self.kendall,
                "regret": self.regret, "screen_pick": self.screen_pick, "sim_pick": self.sim_pick}


def top_k(frame: pd.DataFrame, k: int) -> pd.DataFrame:
    """The ``k`` legal rows of least cost, one per schedule, cheapest first (stable on ties)."""
    ok = frame[frame["status"] == "ok"].drop_duplicates("key")
    return ok.sort_values("cost", kind="stable").head(k)


def rerank(screened: pd.DataFrame, simulator: Evaluator, k: int, on_rows: RowsCallback | None = None) -> Reranking:
    """Simulate the screen's best ``k`` schedules (rows of ``screened``) and measure how well the
    screen ranked them."""
    return drive(rerank_steps(screened, simulator, k, on_rows), simulator.executor)


def rerank_steps(screened: pd.DataFrame, simulator: Evaluator, k: int,
                 on_rows: RowsCallback | None = None) -> Screening[Reranking]:
    """:func:`rerank` as a screening."""
    from scipy.stats import kendalltau, spearmanr

    best = top_k(screened, k)
    sim = yield from simulator.evaluate_steps(best["dataflow"].tolist())
    if on_rows is not None and sim["new"].any():
        on_rows(new_rows(sim))
    both = pd.DataFrame({"screen": best["cost"].to_numpy(), "sim": sim["cost"].to_numpy(),
                         "key": best["key"].to_numpy()})[sim["status"].to_numpy() == "ok"]
    spearman = kendall = regret = None
    screen_pick = sim_pick = None
    if len(both) >= 2 and both["screen"].nunique() > 1 and both["sim"].nunique() > 1:
        spearman = _finite(spearmanr(both["screen"], both["sim"]).statistic)
        kendall = _finite(kendalltau(both["screen"], both["sim"]).statistic)
    if len(both):
        screen_pick = str(both["key"].iloc[0])
        sim_best = both.loc[both["sim"].idxmin()]
        sim_pick = str(sim_best["key"])
        regret = float((both["sim"].iloc[0] - sim_best["sim"]) / sim_best["sim"])
    return Reranking(k, sim, spearman, kendall, regret, screen_pick, sim_pick)


def _finite(value: float) -> float | None:
    """A correlation, or None where it is undefined (constant costs give NaN)."""
    return None if isnan(value) else float(value)
