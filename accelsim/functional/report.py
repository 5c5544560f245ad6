"""The functional check's verdict: wrong outputs, MAC coverage, damage on the way, as plain data.

A layer passes when every output element matches the numpy reference (exactly for integer
types, within the tolerance of :mod:`accelsim.functional.operands` for fp32) *and* every MAC of
the iteration space was executed exactly once (duplicated MACs whose results happen to be
overwritten still fail: the mapping does work twice).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from accelsim.functional.datapath import DatapathValues
from accelsim.functional.operands import macs_per_output
from accelsim.mapping.geometry import tensor_box

EXAMPLES = 5  # wrong outputs listed with their coordinates (and steps/PEs of a duplicated MAC)
LOCATED = 3  # missing / duplicated MACs located in the schedule


@dataclass
class FunctionalReport:
    """Outcome of one layer's functional execution (counts in elements and MACs)."""

    layer: str
    op: str
    dtype: str
    seed: int
    tolerance: str
    passed: bool
    outputs: int
    outputs_wrong: int
    outputs_never_written: int
    wrong_outputs: list[str]  # first few: coordinates, expected, got
    macs_required: int
    macs_executed: int
    macs_missing: int  # MACs of the iteration space never executed
    macs_duplicated: int  # executions beyond the first of a MAC
    missing_macs: list[str]  # which coordinates, then the first few with where they belonged
    duplicated_macs: list[str]  # which coordinates, then the first few with their steps and PEs
    macs_in_output: int  # MACs whose contribution reached DRAM's output
    problems: dict[str, int] = field(default_factory=dict)  # kind -> events (see ProblemLog)
    problem_messages: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)

    def text(self) -> str:
        """The report as shown by ``accelsim simulate --functional``."""
        head = f"functional check of {self.layer} ({self.op}, {self.dtype}, seed {self.seed}): "
        if self.passed:
            return (head + f"PASS: {self.outputs} outputs {self.tolerance}, {self.macs_executed} MACs "
                    "each executed once")
        lines = [head + "FAIL"]
        lines.append(f"  outputs wrong: {self.outputs_wrong} of {self.outputs} ({self.outputs_never_written} "
                     f"never written back), {self.tolerance}")
        lines += [f"    {w}" for w in self.wrong_outputs]
        lines.append(f"  MACs executed: {self.macs_executed} of {self.macs_required} required "
                     f"({self.macs_missing} never executed, {self.macs_duplicated} executed more than once)")
        lines += [f"    missing {m}" for m in self.missing_macs]
        lines += [f"    duplicated {m}" for m in self.duplicated_macs]
        lines.append(f"  MACs reaching the output in DRAM: {self.macs_in_output} of {self.macs_required}")
        for message in self.problem_messages:
            lines.append(f"  {message}")
        return "\n".join(lines)


def build_report(values: DatapathValues, expected: np.ndarray, tolerance: np.ndarray | None) -> FunctionalReport:
    """Compare DRAM's output with the reference and summarize the MAC coverage."""
    cm, nest, ops = values.cm, values.nest, values.operands
    got, written = values.dram_out, values.dram_out_written
    if tolerance is None:
        wrong = ~written | (got != expected)
        tol_text = "compared exactly"
    else:
        wrong = ~written | (np.abs(got.astype(np.float64) - expected) > tolerance)
        tol_text = "within gamma_(n+1) * sum|a*b| (fp32 rounding bound)"
    out_names = [axis[0][0] for axis in nest.tensors["output"]]
    wrong_list = []
    for idx in np.argwhere(wrong)[:EXAMPLES]:
        i = tuple(idx.tolist())
        coords = ", ".join(f"{n}={v}" for n, v in zip(out_names, i))
        shown = f"{got[i]}" if written[i] else "<never written>"
        wrong_list.append(f"output[{coords}]: expected {expected[i]}, got {shown} "
                          f"({int(values.dram_out_macs[i])} of {macs_per_output(nest)} MACs reached it; "
                          f"{_computed_by(values, i)})")
    cov = values.coverage
    missing_pts = np.argwhere(cov == 0)
    dup_pts = np.argwhere(cov > 1)
    for pe, tile, macs in values.undrained():
        values.log.add("never_drained", f"PE {pe} still held partial sums of output {tile} "
                       "at the end; no drain took them out", macs)
    messages = values.log.lines()
    macs_executed = int(cov.sum())
    required = int(cov.size)
    passed = not wrong.any() and len(missing_pts) == 0 and len(dup_pts) == 0
    return FunctionalReport(
        layer=cm.layer.name, op=cm.layer.op.value, dtype=ops.dtype, seed=ops.seed, tolerance=tol_text,
        passed=passed, outputs=int(wrong.size), outputs_wrong=int(wrong.sum()),
        outputs_never_written=int((~written).sum()), wrong_outputs=wrong_list,
        macs_required=required, macs_executed=macs_executed, macs_missing=len(missing_pts),
        macs_duplicated=int((cov[cov > 1] - 1).sum()),
        missing_macs=_described(values, missing_pts, missing=True),
        duplicated_macs=_described(values, dup_pts, missing=False),
        macs_in_output=int(values.dram_out_macs[written].sum()),
        problems=dict(values.log.events), problem_messages=messages,
    )


def _described(values: DatapathValues, points: np.ndarray, missing: bool) -> list[str]:
    """The coordinates the MACs ``points`` take per dimension, then the first few located."""
    if len(points) == 0:
        return []
    parts = []
    for axis, (d, size) in enumerate(values.cm.nest.dims.items()):
        taken = np.unique(points[:, axis])
        parts.append(f"{d} all" if len(taken) == size else f"{d} in {_ranges(taken.tolist())}")
    return (["MACs whose coordinates span " + ", ".join(parts)]
            + [_locate(values, p, missing) for p in points[:LOCATED]])


def _ranges(values: list[int]) -> str:
    """Sorted integers as compact ranges: [1, 3, 4, 5, 9] -> '{1, 3..5, 9}' (first 8 runs)."""
    runs: list[list[int]] = []
    for v in values:
        if runs and v == runs[-1][1] + 1:
            runs[-1][1] = v
        else:
            runs.append([v, v])
    text = ", ".join(f"{a}" if a == b else f"{a}..{b}" for a, b in runs[:8])
    return "{" + text + (", ..." if len(runs) > 8 else "") + "}"


def _computed_by(values: DatapathValues, index: tuple[int, ...]) -> str:
    """Which PEs accumulated output element ``index``, and over which steps."""
    found_steps, found_pes = [], []
    for sb in values.step_chunks():
        lo, hi = tensor_box(values.nest, "output", sb.start, sb.extent)
        inside = sb.active.copy()
        for axis, v in enumerate(index):
            inside &= (lo[axis] <= v) & (v <= hi[axis])
        s, pe = np.nonzero(inside)
        found_steps.append(s + sb.first)
        found_pes.append(pe)
    at_step, at_pe = np.concatenate(found_steps), np.concatenate(found_pes)
    pes = np.unique(at_pe)
    if len(pes) == 0:
        return "no PE computed it"
    shown = []
    for pe in pes[:4].tolist():
        steps = at_step[at_pe == pe]
        if len(steps) == 1:
            at = f"step {steps[0]}"
        elif len(steps) <= 3:
            at = "steps " + ", ".join(map(str, steps.tolist()))
        else:
            at = f"{len(steps)} steps from {steps[0]} to {steps[-1]}"
        shown.append(f"PE {pe} at {at}")
    return "computed by " + ", ".join(shown) + (f" and {len(pes) - 4} more PEs" if len(pes) > 4 else "")


def _locate(values: DatapathValues, point: np.ndarray, missing: bool) -> str:
    """A MAC's coordinates and the steps/PEs that executed it, or (missing) the step and PE
    whose box comes closest: the one that should have held it, and the dimensions it missed."""
    dims = values.dims
    p = dict(zip(dims, point.tolist()))
    name = "MAC(" + ", ".join(f"{d}={v}" for d, v in p.items()) + ")"
    executed = 0
    where: list[str] = []
    best: tuple[int, int] | None = None  # (dimensions missed, distance) of the nearest box so far
    missed = ""
    for sb in values.step_chunks():
        inside = {d: (sb.start[d] <= p[d]) & (p[d] < sb.start[d] + sb.extent[d]) for d in dims}
        outside = sum((~inside[d]).astype(np.int64) for d in dims)
        outside = np.where(sb.active, outside, len(dims) + 1)
        if not missing:
            hits = np.argwhere(outside == 0)
            executed += len(hits)
            where += [f"step {s + sb.first} PE {pe}" for s, pe in hits[:EXAMPLES - len(where)].tolist()]
            continue
        # among boxes missing it in the fewest dimensions, the one whose windows come nearest
        distance = sum(np.maximum(np.maximum(sb.start[d] - p[d], p[d] - (sb.start[d] + sb.extent[d] - 1)), 0)
                       for d in dims)
        fewest = int(outside.min())
        score = np.where(outside == fewest, distance, np.iinfo(np.int64).max)
        s, pe = (int(v) for v in np.unravel_index(np.argmin(score), score.shape))
        if best is None or (fewest, int(score[s, pe])) < best:
            best = (fewest, int(score[s, pe]))
            missed = ", ".join(f"{d}={int(sb.start[d][s, pe])}..{int(sb.start[d][s, pe] + sb.extent[d][s, pe] - 1)}"
                               for d in dims if not inside[d][s, pe])
            nearest = f"step {s + sb.first} PE {pe}"
    if not missing:
        return f"{name}: executed {executed} times, at {'; '.join(where)}"
    if best is None or best[0] > len(dims):
        return f"{name}: no PE is ever active"
    return (f"{name}: in no PE's box at any step; nearest: {nearest}, whose window "
            f"{missed} just misses it")
