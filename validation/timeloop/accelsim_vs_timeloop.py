"""accelsim on the triples timeloop-model v3.0.3 ran (``triples/``, ``references.csv``,
``accesses.csv``, see README.md here): each dense triple read with ``--timeloop`` as a user has
it (the user's files for the 2024 model exercises, the files as written for 2022, the front
end's dump and the mapper's mapping otherwise), its cycles in maestro mode (analytical model)
and its DRAM counts beside Timeloop's, written to ``real_references.csv``, and on the triples whose
PE has several levels (the outermost is accelsim's L1, the others register files) each level's
counts beside Timeloop's, written to ``pe_level_references.csv``:

    PYTHONPATH=. python validation/timeloop/accelsim_vs_timeloop.py

``tests/test_timeloop_files.py`` runs :func:`compare` on every row and checks the events both
count the same way."""

from __future__ import annotations

import csv
import sys
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


@dataclass
class Comparison:
    """One triple: Timeloop's and accelsim's cycles and DRAM counts (words)."""

    triple_id: str
    accelsim_status: str
    bypass_warned: bool
    single_level: bool
    timeloop_cycles: int
    accelsim_cycles: int
    cycles_ratio: float
    timeloop_dram_weight_reads: int = 0
    accelsim_dram_weight_reads: int = 0
    timeloop_dram_input_reads: int = 0
    accelsim_dram_input_reads: int = 0
    timeloop_dram_output_reads: int = 0
    accelsim_dram_output_reads: int = 0
    timeloop_dram_output_updates: int = 0
    accelsim_dram_output_writes: int = 0
    # the level below DRAM (Timeloop's global buffer, accelsim's L2), where the triple has one
    # that is not inside the PE: -1 where it has none
    timeloop_l2_weight_reads: int = -1
    accelsim_l2_weight_reads: int = -1
    timeloop_l2_weight_fills: int = -1
    accelsim_l2_weight_writes: int = -1
    timeloop_l2_input_fills: int = -1
    accelsim_l2_input_writes: int = -1
    timeloop_l2_output_updates_and_fills: int = -1
    accelsim_l2_output_writes: int = -1
    pe_levels: int = 0  # Timeloop levels inside a PE (accelsim's L1)
    # the tensors accelsim's L2 bypasses (the global buffer's bypass entries, l2.keeps), comma-separated
    l2_bypassed: str = ""


def dense_rows() -> list[dict[str, str]]:
    """references.csv's rows that ran and have no sparsity."""
    with open(HERE / "references.csv", newline="") as fh:
        return [r for r in csv.DictReader(fh) if r["status"] == "ok" and not r["note"].startswith("sparse")]


def _file_sets(row: dict[str, str]) -> list[list[str]]:
    """The files to read, best first: the user's own (with the mapper's mapping where the user
    gave none), then what timeloop-model was given (the front end's dump where the user's files
    are Jinja templates)."""
    folder = HERE / "triples" / row["triple_id"]
    copied = [str(folder / f) for f in row["copied_files"].split(";")]
    if not row["user_files"]:
        return [copied]
    user = [str(folder / f) for f in row["user_files"].split(";") if not f.endswith("variables.yaml")]
    if not any("map" in Path(f).name for f in user):
        user += [f for f in copied if f.endswith("map.yaml")]
    return [user, copied]


@dataclass
class PeLevelComparison:
    """One Timeloop level inside a PE and one tensor it keeps, on a triple whose PE has several
    levels: Timeloop's totals (words, all PEs) and accelsim's reads and writes at the level it
    became (``role``: ``L1`` for the outermost, ``register file`` for those inside it)."""

    triple_id: str
    level: str
    role: str
    tensor: str
    timeloop_reads: int
    timeloop_fills: int
    timeloop_updates: int
    accelsim_reads: int
    accelsim_writes: int


def _run(row: dict[str, str]) -> tuple[Any, Any, bool] | str:
    """(the files read, accelsim's maestro-mode result, whether a bypass was warned about), or
    why the files were refused."""
    from accelsim.analytical.model import analyze_layer
    from accelsim.errors import InputError
    from accelsim.mapping.jobs import prepare
    from accelsim.mapping.timeloop_files import load_timeloop

    refusal = ""
    for paths in _file_sets(row):
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                t = load_timeloop(paths)
                result = analyze_layer(prepare(t.jobs[0], t.hw), t.hw, "maestro")
            return t, result, any("bypasses" in str(w.message) for w in caught)
        except InputError as exc:
            refusal = refusal or exc.detail
    return refusal


def _timeloop_levels(triple_id: str) -> list[dict[str, str]]:
    with open(HERE / "accesses.csv", newline="") as fh:
        return [r for r in csv.DictReader(fh) if r["triple_id"] == triple_id]


def pe_levels(row: dict[str, str]) -> list[PeLevelComparison]:
    """Per level inside the PE and tensor Timeloop keeps there, both tools' counts; none when
    the triple's PE has one level (accelsim's L1 is then that level) or its files are refused."""
    ran = _run(row)
    if isinstance(ran, str):
        return []
    t, result, _ = ran
    if "register file" not in t.roles.values():
        return []
    roles = {name: role for role, name in t.tensors.items()}
    out = []
    for r in _timeloop_levels(row["triple_id"]):
        role = t.roles.get(r["level"])
        if role not in ("L1", "register file"):
            continue
        tensor = roles[r["tensor"]]
        ours = result.inner_accesses[r["level"]][tensor] if role == "register file" else None
        acc = result.accesses[tensor]
        out.append(PeLevelComparison(
            row["triple_id"], r["level"], role, tensor, int(r["reads_total"]), int(r["fills_total"]),
            int(r["updates_total"]), ours.read if ours else acc.l1_read, ours.write if ours else acc.l1_write))
    return out


def compare(row: dict[str, str]) -> Comparison:
    """accelsim's numbers for one references.csv row beside Timeloop's."""
    tl_cycles = int(row["cycles"])
    ran = _run(row)
    if isinstance(ran, str):
        return Comparison(row["triple_id"], f"refused: {ran}", False, False, tl_cycles, 0, 0.0)
    t, result, bypass_warned = ran
    levels = _timeloop_levels(row["triple_id"])
    roles = {name: role for role, name in t.tensors.items()}  # Timeloop's data space -> accelsim's tensor
    top = max(int(r["level_index"]) for r in levels)
    dram = {roles[r["tensor"]]: r for r in levels if int(r["level_index"]) == top}
    acc = result.accesses
    below = {roles[r["tensor"]]: r for r in levels if int(r["level_index"]) == top - 1}
    l2: list[int] = []
    if t.roles.get(next(iter(below.values()))["level"] if below else "", "") == "L2":
        l2 = [int(below.get("weight", {}).get("reads_total", 0)), acc["weight"].l2_read,
              int(below.get("weight", {}).get("fills_total", 0)), acc["weight"].l2_write,
              int(below.get("input", {}).get("fills_total", 0)), acc["input"].l2_write,
              int(below.get("output", {}).get("updates_total", 0)) + int(below.get("output", {}).get("fills_total", 0)),
              acc["output"].l2_write]
    return Comparison(
        row["triple_id"], "ok", bypass_warned,
        len({r["level_index"] for r in levels}) == 1, tl_cycles, result.cycles, round(result.cycles / tl_cycles, 6),
        int(dram["weight"]["reads_total"]), acc["weight"].dram_read,
        int(dram["input"]["reads_total"]), acc["input"].dram_read,
        int(dram["output"]["reads_total"]), acc["output"].dram_read,
        int(dram["output"]["updates_total"]), acc["output"].dram_write, *(l2 or [-1] * 8),
        sum(role in ("L1", "register file") for role in t.roles.values()), ",".join(sorted(t.hw.l2.bypassed)))


def _write(name: str, rows: list[dict[str, Any]]) -> None:
    with open(HERE / name, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {HERE / name} ({len(rows)} rows)", file=sys.stderr)


def main() -> None:
    dense = dense_rows()
    _write("real_references.csv", [asdict(compare(r)) for r in dense])
    _write("pe_level_references.csv", [asdict(c) for r in dense for c in pe_levels(r)])


if __name__ == "__main__":
    main()
