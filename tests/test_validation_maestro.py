"""The MAESTRO section of the validation report (accelsim.validation.maestro_set), its rows on
their own: on the quirk layers of one hardware file, with a small simulation budget."""

from __future__ import annotations

from pathlib import Path

from accelsim.compare.ladder import RUNGS
from accelsim.validation.maestro_set import (
    MAESTRO_COLUMNS,
    maestro_rows,
    maestro_section,
)

REFERENCE = Path(__file__).resolve().parents[1] / "validation" / "maestro"


def test_rows_and_section_of_the_quirk_layers():
    rows = maestro_rows(REFERENCE, sim_budget_pe_steps=20_000, ablation_budget_pe_steps=10_000,
                        hw_files=("pub_eyeriss168",), networks=("quirks_public",))
    by_layer = {r["layer"]: r for r in rows}
    assert set(by_layer) == {"qk_os_s2_y100", "qk_os_s2_y227", "qk_os_s1_y33", "qk_rs_y115", "qk_yxp_lossy_xtile"}
    assert all(set(r) == set(MAESTRO_COLUMNS) for r in rows)
    assert all(r["model_csv_line_identical"] and r["model_cycles"] == r["maestro_cycles"] for r in rows)
    # budgets: 12,000 and 9,600 PE-steps simulate (the second split by cause), 28,800 and 28,224 do not
    assert [by_layer[n]["status"] for n in ("qk_os_s2_y100", "qk_os_s1_y33", "qk_os_s2_y227", "qk_rs_y115",
                                            "qk_yxp_lossy_xtile")] == [
        "simulated", "simulated", "over_budget", "over_budget", "refused"]
    s1 = by_layer["qk_os_s1_y33"]
    assert s1["part:realistic_effects"] is None and s1["part:noc_contention"] is not None
    assert by_layer["qk_os_s2_y100"]["part:realistic_effects"] is not None
    for r in rows:
        if r["status"] == "refused":
            assert "coverage" not in r["lint"] and "leave gaps" in r["lint"] and "mac_error" in r["lint"]
            continue
        parts = [r[f"part:{rung}"] for rung in RUNGS if r[f"part:{rung}"] is not None]
        assert sum(parts) == r["gap"]
        end = r["sim_realistic_cycles"] if r["status"] == "simulated" else r["analytical_maestro_cycles"]
        assert end - r["maestro_cycles"] == r["gap"]
    text = "\n".join(maestro_section(rows, 20_000))
    assert "byte for byte on **5 of 5** points" in text
    assert "| pub_eyeriss168 | `qk_os_s1_y33` | 71,280 | 66,960 | +4,320 (+6.452%) |" in text
    assert "| pub_eyeriss168 | simulated | 2 |" in text and "| pub_eyeriss168 | over_budget | 2 |" in text
