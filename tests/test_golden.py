"""Golden end-to-end numbers: MARVEL's 15 layers on eyeriss_like under two styles, both modes.

The pinned file was produced by this very test (``ACCELSIM_UPDATE_GOLDEN=1 pytest
tests/test_golden.py``); any change to the simulator that moves a number shows up here and must
be explained in review before the file is regenerated.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from accelsim.mapping.jobs import jobs_from_network, prepare
from accelsim.hw.loader import load_hardware
from accelsim.sim.engine import SimOptions, simulate_layer

GOLDEN = Path(__file__).parent / "golden" / "marvel15_eyeriss_like.json"
STYLES = ("nvdla_like", "eyeriss_like")
FIELDS = ("cycles", "macs", "compute_busy_cycles", "stall_cycles", "accesses", "noc_words",
          "l1_required_bytes", "l2_required_bytes")


def _measure() -> dict:
    hw = load_hardware("eyeriss_like")
    out: dict = {}
    for style in STYLES:
        _, jobs = jobs_from_network("marvel15", style, hw)
        for job in jobs:
            cm = prepare(job, hw)
            for mode in ("realistic", "maestro"):
                r = simulate_layer(cm, hw, SimOptions(mode=mode)).to_dict()
                out[f"{style}/{mode}/{job.layer.name}"] = {f: r[f] for f in FIELDS}
    return out


@pytest.mark.slow
def test_marvel15_on_eyeriss_like_matches_golden():
    measured = _measure()
    if os.environ.get("ACCELSIM_UPDATE_GOLDEN"):
        GOLDEN.write_text(json.dumps(measured, indent=1, sort_keys=True) + "\n")
    golden = json.loads(GOLDEN.read_text())
    assert sorted(measured) == sorted(golden)
    moved = [key for key in golden if measured[key] != golden[key]]
    assert not moved, f"{len(moved)} results moved, e.g. {moved[0]}: {golden[moved[0]]} -> {measured[moved[0]]}"
