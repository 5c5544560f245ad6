"""The search parent's bookkeeping per batch (:mod:`accelsim.search.run`, the saver of
:mod:`accelsim.search.session`) against the plain pandas filtering it stands for: the same rows,
numbers and best, with fewer copies."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from accelsim.search.run import best_position, best_row, new_rows
from accelsim.search.session import _Saver


def _frame(new: list[bool], keys: list[str] | None = None, costs: list[float] | None = None) -> pd.DataFrame:
    """A batch as the evaluator shapes it: strings, a float cost, a nullable count, ``new``
    last; a row is ``ok`` when its cost is finite."""
    n = len(new)
    keys = keys if keys is not None else [f"k{i}" for i in range(n)]
    costs = costs if costs is not None else [float(i) for i in range(n)]
    ok = [np.isfinite(c) for c in costs]
    return pd.DataFrame({"layer": ["conv"] * n, "key": keys, "status": ["ok" if o else "illegal" for o in ok],
                         "cost": np.array(costs, dtype=np.float64),
                         "cycles": pd.array([int(c) if o else None for c, o in zip(costs, ok)], dtype="Int64"),
                         "new": np.array(new, dtype=bool)})


def test_new_rows_by_hand():
    """All 3 rows new: the frame itself; none: no row, the same columns and types; rows 0 and 2
    of 3: those rows with their labels, as boolean indexing gives them."""
    every = _frame([True, True, True])
    assert new_rows(every) is every
    none = new_rows(_frame([False, False, False]))
    assert len(none) == 0 and none.dtypes.equals(every.dtypes)
    some = _frame([True, False, True])
    picked = new_rows(some)
    assert picked["key"].tolist() == ["k0", "k2"] and picked.index.tolist() == [0, 2]
    assert picked.equals(some[some["new"]])


def test_best_position_by_hand():
    """Costs 5, inf (illegal), 2, 2: the first 2, position 2 (the earliest on ties); best_row is
    that row; all illegal: None."""
    frame = _frame([True] * 4, costs=[5.0, float("inf"), 2.0, 2.0])
    assert best_position(frame) == 2
    assert best_row(frame) == {column: frame[column].iloc[2] for column in frame.columns}
    assert best_position(_frame([True], costs=[float("inf")])) is None


class _Parts:
    """A search directory that keeps the frames it is asked to save."""

    def __init__(self) -> None:
        self.parts: list[pd.DataFrame] = []

    def append(self, frame: pd.DataFrame) -> None:
        self.parts.append(frame)


class _PandasSaver:
    """The saver's bookkeeping as plain pandas filtering writes it (the reference)."""

    def __init__(self, known: set[str]):
        self.known, self.sample, self.parts = known, 0, []
        self.best: float | None = None
        self.best_row: dict[str, Any] | None = None

    def __call__(self, rows: pd.DataFrame) -> None:
        rows = rows.assign(sample=range(self.sample, self.sample + len(rows)))
        self.sample += len(rows)
        fresh = rows[~rows["key"].isin(self.known)]
        if len(fresh):
            self.parts.append(fresh)
            self.known.update(fresh["key"])
        legal = rows.loc[rows["status"] == "ok", "cost"]
        if len(legal) and (self.best is None or float(legal.min()) < self.best):
            self.best = float(legal.min())
            self.best_row = best_row(rows)


_batch = st.lists(st.tuples(st.sampled_from("abcdefgh"), st.sampled_from([1.0, 2.0, 3.0, float("inf")])),
                  min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(batches=st.lists(_batch, min_size=1, max_size=5), known=st.sets(st.sampled_from("abcdefgh"), max_size=4))
def test_saver_saves_what_pandas_filtering_saved(batches, known):
    """Batches of rows (keys repeating, some saved before, illegal rows): the saver hands the
    same frames to the directory (rows, labels, ``sample`` numbers, column order and types),
    and keeps the same best cost and best row, as the pandas filtering it replaced."""
    parts = _Parts()
    saver = _Saver(parts, set(known), None, True)  # type: ignore[arg-type]
    reference = _PandasSaver(set(known))
    for batch in batches:
        frame = _frame([True] * len(batch), [k for k, _ in batch], [c for _, c in batch])
        saver(frame)
        reference(frame)
    assert len(parts.parts) == len(reference.parts)
    for got, want in zip(parts.parts, reference.parts):
        assert got.equals(want) and got.index.equals(want.index) and got.dtypes.equals(want.dtypes)
    assert (saver.best, saver.best_row, saver.sample) == (reference.best, reference.best_row, reference.sample)
