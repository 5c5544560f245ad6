"""Register files inside the PE in the search's rows: the per-level columns a design with
register files adds (hand-derived counts of tests/test_inner_levels.py's two-level case), their
absence on every other design, and ``candidates.parquet`` / ``summary.json`` of a search on
``interstellar_rf2``."""

from __future__ import annotations

import json

import pandas as pd
import pyarrow.parquet as pq
import pytest

from accelsim.errors import InputError
from accelsim.hw.loader import load_hardware
from accelsim.search import COLUMNS, Evaluator
from accelsim.search.evaluate import columns
from accelsim.search.executors import InProcess
from accelsim.search.models import inner_level_columns
from accelsim.search.session import SearchSettings, run_search
from tests.test_inner_levels import RF7, RF24, SMALL, WHOLE, _hw

# tests/test_inner_levels.py::test_two_register_files_by_hand derives these (words, read and
# write per tensor): inputs RF0 162 / 162, RF1 162 / 81; weights RF0 162 / 162, RF1 162 / 18;
# outputs RF0 180 / 180, RF1 36 / 36. Sums: RF0 162 x 4 + 180 x 2 = 1008, RF1 162 + 81 + 162
# + 18 + 36 + 36 = 495. L1 is read by RF1's fills: inputs 81, weights 18.
BY_HAND = {"input_RF0_read": 162, "input_RF0_write": 162, "weight_RF0_read": 162, "weight_RF0_write": 162,
           "output_RF0_read": 180, "output_RF0_write": 180, "RF0_words": 1008,
           "input_RF1_read": 162, "input_RF1_write": 81, "weight_RF1_read": 162, "weight_RF1_write": 18,
           "output_RF1_read": 36, "output_RF1_write": 36, "RF1_words": 495}

BY_HAND_ORDER = [*(f"{t}_RF0_{rw}" for t in ("input", "weight", "output") for rw in ("read", "write")),
                 "RF0_words", "RF0_energy_pj",
                 *(f"{t}_RF1_{rw}" for t in ("input", "weight", "output") for rw in ("read", "write")),
                 "RF1_words", "RF1_energy_pj"]


@pytest.mark.parametrize("model", ["analytical", "sim"])
def test_rows_carry_register_file_columns_by_hand(tmp_path, model):
    """SMALL on one PE in one step under RF0 (7 B) and RF1 (24 B): the row has every register
    file's reads and writes per tensor, their sum and energy (words x the level's pJ per
    access), after the columns every design has, innermost level first; the L1 columns are
    L1's reads by RF1's fills."""
    hw = _hw(tmp_path, [RF7, RF24])
    with Evaluator(hw, SMALL, model, "maestro", executor=InProcess()) as ev:
        frame = ev.evaluate([WHOLE])
    row = frame.iloc[0]
    assert row["status"] == "ok"
    assert list(frame.columns) == [*COLUMNS[:-2], *BY_HAND_ORDER, "wall_seconds", "new"]
    assert {c: int(row[c]) for c in BY_HAND} == BY_HAND
    assert (row["input_l1_read"], row["weight_l1_read"]) == (81, 18)
    for i, name in enumerate(("RF0", "RF1")):
        assert row[f"{name}_energy_pj"] == pytest.approx(BY_HAND[f"{name}_words"] * hw.inner_energy_pj(hw.inner_levels[i]))
    assert str(frame["RF0_words"].dtype) == "Int64" and str(frame["RF0_energy_pj"].dtype) == "float64"



def test_bypassed_tensor_has_no_column(tmp_path):
    """A register file that keeps only weights has columns for weights alone."""
    hw = _hw(tmp_path, [{**RF7, "keeps": ["weight"]}])
    assert inner_level_columns(hw) == ("weight_RF0_read", "weight_RF0_write", "RF0_words", "RF0_energy_pj")


def test_designs_without_register_files_keep_their_columns():
    """A preset without register files scores rows with exactly :data:`COLUMNS`; one with them does not."""
    for preset in ("eyeriss_like", "tpu_like_32x32", "interstellar_rf2"):
        hw = load_hardware(preset)
        assert (columns(hw) == COLUMNS) == (not hw.inner_levels)


def test_search_on_interstellar_rf2_stores_register_file_traffic(tmp_path):
    """A seeded search of AlexNet CONV3 on interstellar_rf2 (RF16 inside each PE): every legal
    row of candidates.parquet has RF16's accesses, the sum of its per-tensor columns, and the
    summary's best carries them; resuming the finished search reads its parts back with the
    same columns and scores nothing new."""
    out = tmp_path / "s"
    settings = SearchSettings(hw="interstellar_rf2", network="alexnet", layer="conv3", mapper="gamma", budget=6)
    run_search(settings, out, InProcess())
    frame = pd.read_parquet(out / "candidates.parquet")
    ok = frame[frame["status"] == "ok"]
    assert len(ok) >= 1
    parts = [f"{t}_RF16_{rw}" for t in ("input", "weight", "output") for rw in ("read", "write")]
    assert (ok[parts].sum(axis=1) == ok["RF16_words"]).all()
    assert (ok["weight_RF16_read"] == ok["macs"]).all()  # the MACs read their weights from RF16
    assert ok["RF16_words"].min() > 0 and frame.loc[frame["status"] != "ok", "RF16_words"].isna().all()
    best = json.loads((out / "summary.json").read_text())["layers"][0]["best"]
    assert best["RF16_words"] == int(ok.loc[ok["key"] == best["key"], "RF16_words"].iloc[0])
    summary = run_search(settings, out, InProcess(), resume=True)
    assert summary["layers"][0]["best"] == best
    assert len(pd.read_parquet(out / "candidates.parquet")) == len(frame)


def test_resuming_parts_without_the_columns_is_refused(tmp_path):
    """A part saved without the register files' columns (a search of interstellar_rf2 by an
    accelsim before they existed) is one InputError naming the part and the columns, not rows
    whose register-file counts read as missing."""
    out = tmp_path / "s"
    settings = SearchSettings(hw="interstellar_rf2", network="alexnet", layer="conv3", mapper="random", budget=2,
                              style_seeds=False)
    run_search(settings, out, InProcess())
    part = next((out / "candidates.parquet").glob("part-*.parquet"))
    table = pq.read_table(part)
    pq.write_table(table.drop([c for c in table.column_names if "RF16" in c]), part)
    with pytest.raises(InputError, match=f"{part.name}: saved without the column\\(s\\) input_RF16_read"):
        run_search(settings, out, InProcess(), resume=True)
