"""The Timeloop reference set in ``accelsim validate``: the triples kept in
``validation/timeloop/triples/`` (timeloop-model v3.0.3's cycles in ``references.csv``) read by
the ``--timeloop`` reader and run by the simulator (maestro mode; realistic mode as read, with L1
and L2 double-buffered; realistic mode with both single-buffered) and the analytical model.

Files per triple: the 2022-era and single-source triples as timeloop-model took them
(``copied_files``); the 2024 triples as a user hands them to Timeloop's v4 front end
(``user_files``), plus timeloop-mapper's mapping (``timeloop-mapper.map.yaml``, in place of a
user's mapping file) where a mapper wrote it; a 2024 model exercise has no mapping among its user
files, and a Jinja architecture is not expanded by accelsim, so those are read from the front
end's dump (``parsed-processed-input.yaml``) as timeloop-model was given it.

Beside our totals, a *Timeloop-comparable* figure (``*_steady_cycles``): our cycles less the first
fill (before the array's first compute) and the last drain (after its last compute). timeloop-model
v3.0.3 reports the slowest level's steady-state cycles, ``max over levels of ceil(compute cycles /
bandwidth slowdown)``, plus only the networks' declared fill and drain latencies
(``Topology::ComputeStats``, ``BufferLevel::ComputeBufferStats``): no storage level's first fill or
last drain. The figure is measured from the simulator's compute events, on triples up to
``STEADY_BUDGET_PE_STEPS`` (an event sink turns the warp off).

Acceptance (issue 17), on dense triples only (a sparse triple's cycles are Timeloop's sparse
cycles, which accelsim does not model): maestro mode within 1% of Timeloop's cycles, and realistic
mode (double-buffered) within 5% on every triple Timeloop reports compute-bound (``compute_bound``
in ``references.csv``: its cycles equal its arithmetic level's). The verdict compares like with
like: it judges the comparable figure where it was measured (Timeloop never counts a first fill or
a last drain), the total elsewhere; the verdict on the totals is kept beside it
(``*_total_ok``), never hidden.
"""

from __future__ import annotations

import csv
import warnings
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Callable

from accelsim.errors import InputError, MappingError
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.compile import CompiledMapping
from accelsim.mapping.jobs import prepare
from accelsim.input_files import read_text
from accelsim.mapping.timeloop_files import timeloop_job
from accelsim.model_options import check_mode
from accelsim.sim.engine import SimOptions, simulate_layer
from accelsim.validation.runner import analytical_model, simulator_model

MAESTRO_TOLERANCE = 0.01  # maestro mode against Timeloop's cycles
REALISTIC_TOLERANCE = 0.05  # realistic mode, double-buffered, on compute-bound triples
# a full run simulates a triple up to this many steps x PEs (Simba-like: 5.8e7, 12.2 s measured on the 2-core machine); the
# interface tutorial's 1.07e9 one-PE steps get the analytical model only
FULL_BUDGET_PE_STEPS = 100_000_000
# the Timeloop-comparable figure is measured (unwarped) on triples up to this many steps x PEs
STEADY_BUDGET_PE_STEPS = 100_000
SINGLE_BUFFERED = ("l1.double_buffered=false", "l2.double_buffered=false")
MAPPER_MAP = "timeloop-mapper.map.yaml"
DUMP = "parsed-processed-input.yaml"


@dataclass(frozen=True)
class TimeloopRow:
    """One triple: Timeloop's cycles and ours (None where not run; ``note`` says why)."""

    triple_id: str
    dense: bool
    compute_bound: bool
    timeloop_cycles: int
    maestro_cycles: int | None = None
    realistic_cycles: int | None = None  # as read: L1 and L2 double-buffered
    realistic_single_buffered_cycles: int | None = None
    analytical_cycles: int | None = None  # the analytical model, maestro mode
    # Timeloop-comparable: ours less the first fill and the last drain (module docstring)
    maestro_steady_cycles: int | None = None
    realistic_steady_cycles: int | None = None
    note: str = ""

    def rel(self, ours: int | None) -> float | None:
        """(ours - Timeloop) / Timeloop, or None."""
        return None if ours is None else (ours - self.timeloop_cycles) / self.timeloop_cycles

    @property
    def judged_on(self) -> str:
        """Which of our figures the verdict judges: ``comparable`` where it was measured, else
        ``total`` ("" where nothing is judged: sparse, or the simulator did not run)."""
        if self.maestro_cycles is None or not self.dense:
            return ""
        return "total" if self.maestro_steady_cycles is None else "comparable"

    def _within(self, ours: int | None, tolerance: float, judged: bool) -> bool | None:
        rel = self.rel(ours)
        return None if rel is None or not judged else abs(rel) <= tolerance

    @property
    def maestro_ok(self) -> bool | None:
        """The verdict: maestro mode within 1% on the figure :attr:`judged_on` names (None: not
        judged: sparse, or not run)."""
        ours = self.maestro_cycles if self.maestro_steady_cycles is None else self.maestro_steady_cycles
        return self._within(ours, MAESTRO_TOLERANCE, self.dense)

    @property
    def realistic_ok(self) -> bool | None:
        """The verdict: realistic (double-buffered) within 5% on the figure :attr:`judged_on`
        names (None: not judged: sparse, memory-bound or not run)."""
        ours = self.realistic_cycles if self.realistic_steady_cycles is None else self.realistic_steady_cycles
        return self._within(ours, REALISTIC_TOLERANCE, self.dense and self.compute_bound)

    @property
    def maestro_total_ok(self) -> bool | None:
        """Maestro mode's total within 1%, fill and drain included (shown beside the verdict)."""
        return self._within(self.maestro_cycles, MAESTRO_TOLERANCE, self.dense)

    @property
    def realistic_total_ok(self) -> bool | None:
        """Realistic mode's total within 5%, fill and drain included (shown beside the verdict)."""
        return self._within(self.realistic_cycles, REALISTIC_TOLERANCE, self.dense and self.compute_bound)


@dataclass
class ComputeSpan:
    """An event sink that keeps the cycle the array first computes and the cycle its last compute
    ends; ``cycles`` less that span is the first fill plus the last drain."""

    first_start: int | None = None
    last_end: int = 0

    def __call__(self, component: str, kind: str, start: int, end: int, step: int, tensor: str, words: int,
                 pes: int) -> None:
        if component == "pe_array" and kind == "compute":
            self.first_start = start if self.first_start is None else min(self.first_start, start)
            self.last_end = max(self.last_end, end)

    @property
    def cycles(self) -> int:
        """Cycles from the first compute's start to the last compute's end."""
        return 0 if self.first_start is None else self.last_end - self.first_start


def steady_cycles(cm: CompiledMapping, hw: HardwareSpec, mode: str) -> int:
    """The Timeloop-comparable cycles of one simulation: the array's compute span."""
    span = ComputeSpan()
    simulate_layer(cm, hw, SimOptions(mode=check_mode(mode)), sink=span)
    return span.cycles


def triple_files(triples_dir: Path, ref: dict[str, str]) -> list[str]:
    """The files of one ``references.csv`` row, in the order Timeloop takes them (see the module)."""
    folder = triples_dir / ref["triple_id"]
    copied = ref["copied_files"].split(";")
    if not ref["user_files"]:
        return [str(folder / f) for f in copied]
    if MAPPER_MAP in copied:  # the mapper's mapping replaces the user's (a search's starting point)
        users = [f for f in ref["user_files"].split(";") if "map" not in f]
        if not any(_is_template(folder / f) for f in users):
            return [str(folder / f) for f in users + [MAPPER_MAP]]
    return [str(folder / f) for f in copied]


def _is_template(path: Path) -> bool:
    """A Jinja template (accelsim does not expand them): its triple is read from the front end's dump."""
    text = read_text(path, "Timeloop file")
    return "{{" in text or "{%" in text


def triple_texts(files: list[str]) -> list[tuple[str, str]]:
    """(text, source) of the files; a front-end dump read with timeloop-mapper's mapping loses its
    empty ``mapping: []`` line, as ``run_timeloop.py`` gave it to timeloop-model (the line is
    blanked, so line numbers hold)."""
    texts = []
    with_map = any(Path(f).name == MAPPER_MAP for f in files)
    for f in files:
        text = read_text(Path(f), "Timeloop file")
        if with_map and Path(f).name == DUMP:
            text = "\n".join("" if line.rstrip() == "mapping: []" else line for line in text.split("\n"))
        texts.append((text, f))
    return texts


def references(timeloop_dir: Path) -> list[dict[str, str]]:
    """The rows of ``references.csv`` for the triples Timeloop ran (``status`` ok)."""
    with (timeloop_dir / "references.csv").open(encoding="utf-8", newline="") as f:
        return [r for r in csv.DictReader(f) if r["status"] == "ok"]


def timeloop_row(timeloop_dir: Path, ref: dict[str, str], budget_pe_steps: int | None) -> TimeloopRow:
    """One triple run by our models; the simulator runs it only when its mapping's steps x PEs is
    at most ``budget_pe_steps`` (None: always)."""
    base = TimeloopRow(ref["triple_id"], not ref["note"].startswith("sparse"), ref["compute_bound"] == "True",
                       int(ref["cycles"]))
    return _run(base, triple_files(timeloop_dir / "triples", ref), budget_pe_steps)


def timeloop_rows(timeloop_dir: Path, budget_pe_steps: int | None,
                  progress: Callable[[str], None] | None = None) -> list[TimeloopRow]:
    """Every triple Timeloop ran, by :func:`timeloop_row`."""
    say = progress or (lambda message: None)
    rows = []
    for ref in references(timeloop_dir):
        rows.append(timeloop_row(timeloop_dir, ref, budget_pe_steps))
        say(f"Timeloop triple {ref['triple_id']}")
    return rows


def _run(base: TimeloopRow, files: list[str], budget: int | None) -> TimeloopRow:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convention differences: README, "Timeloop's files"
        try:
            texts = triple_texts(files)
            read = timeloop_job(texts)
            single = timeloop_job(texts, SINGLE_BUFFERED)
            cm = prepare(read.jobs[0], read.hw, allow_overflow=True)
            cm_single = prepare(single.jobs[0], single.hw, allow_overflow=True)
        except (InputError, MappingError) as exc:
            return replace(base, note=f"refused: {exc}")
        analytical = analytical_model()(cm, read.hw, "maestro").cycles
        pe_steps = cm.steps * read.hw.num_pes
        if budget is not None and pe_steps > budget:
            return replace(base, analytical_cycles=analytical,
                           note=f"not simulated: {pe_steps:,} steps x PEs > budget {budget:,}")
        row = replace(base, analytical_cycles=analytical,
                      maestro_cycles=simulator_model(cm, read.hw, "maestro").cycles,
                      realistic_cycles=simulator_model(cm, read.hw, "realistic").cycles,
                      realistic_single_buffered_cycles=simulator_model(cm_single, single.hw, "realistic").cycles)
        if pe_steps > STEADY_BUDGET_PE_STEPS:
            return row
        return replace(row, maestro_steady_cycles=steady_cycles(cm, read.hw, "maestro"),
                       realistic_steady_cycles=steady_cycles(cm, read.hw, "realistic"))


def _n(v: int | None) -> str:
    return "" if v is None else f"{v:,}"


def _pct(v: float | None) -> str:
    return "" if v is None else f"{100 * v:+.1f}%"


def _verdict(ok: bool | None) -> str:
    return "" if ok is None else ("yes" if ok else "**no**")


def _count(rows: list[TimeloopRow], verdict: str, total: str, tolerance: float, what: str) -> str:
    """One acceptance line: the verdict's count (on which figures), the totals' count beside it,
    and the misses by name."""
    judged = [r for r in rows if getattr(r, verdict) is not None]
    passed = sum(bool(getattr(r, verdict)) for r in judged)
    comparable = sum(r.judged_on == "comparable" for r in judged)
    misses = [r.triple_id for r in judged if not getattr(r, verdict)]
    return (f"- {what} within {tolerance:.0%}: **{passed} of {len(judged)}** dense "
            f"{'compute-bound ' if verdict == 'realistic_ok' else ''}triples run, judged on the comparable figure "
            f"on {comparable} and on the total on {len(judged) - comparable}; the totals alone "
            f"{sum(bool(getattr(r, total)) for r in judged)} of {len(judged)}. "
            f"Misses: {', '.join(f'`{m}`' for m in misses) or 'none'}.")


def timeloop_section(rows: list[TimeloopRow]) -> list[str]:
    """Markdown lines of the section: the acceptance counts, then one row per triple."""
    lines = [
        "timeloop-model v3.0.3's cycles on the triples kept in `validation/timeloop/` (`references.csv`), the "
        "same files read by `--timeloop` (`accelsim.validation.timeloop_set`). *realistic*: as read (L1 and L2 "
        "double-buffered); *single*: realistic with `--set l1.double_buffered=false --set l2.double_buffered=false`; "
        "*analytical*: the analytical model, maestro mode; *comparable*: maestro / realistic less our first fill and "
        "last drain (Timeloop's cycles are its slowest level's steady state: the module docstring), measured on "
        f"triples up to {STEADY_BUDGET_PE_STEPS:,} steps x PEs. Errors are (ours - Timeloop) / Timeloop. "
        "*compute-bound*: Timeloop's cycles equal its arithmetic level's. The verdict (*ok*) judges like with like: "
        "the comparable figure where it was measured, else the total (*judged on*); *total ok* judges the totals, "
        "fill and drain included. Sparse triples are shown but not judged (Timeloop's cycles there skip or gate "
        "work accelsim counts).",
        "",
        _count(rows, "maestro_ok", "maestro_total_ok", MAESTRO_TOLERANCE, "maestro mode"),
        _count(rows, "realistic_ok", "realistic_total_ok", REALISTIC_TOLERANCE, "realistic mode (double-buffered)"),
        "",
        "| triple | dense | compute-bound | Timeloop | maestro | err | realistic | err | single | err | analytical "
        "| comparable maestro | err | comparable realistic | err | judged on | maestro ok | realistic ok "
        "| maestro total ok | realistic total ok | note |",
        "|" + "---|" * 21,
    ]
    for r in rows:
        lines.append("| " + " | ".join((
            r.triple_id, "yes" if r.dense else "no", "yes" if r.compute_bound else "no", f"{r.timeloop_cycles:,}",
            _n(r.maestro_cycles), _pct(r.rel(r.maestro_cycles)), _n(r.realistic_cycles),
            _pct(r.rel(r.realistic_cycles)), _n(r.realistic_single_buffered_cycles),
            _pct(r.rel(r.realistic_single_buffered_cycles)), _n(r.analytical_cycles), _n(r.maestro_steady_cycles),
            _pct(r.rel(r.maestro_steady_cycles)), _n(r.realistic_steady_cycles), _pct(r.rel(r.realistic_steady_cycles)),
            r.judged_on, _verdict(r.maestro_ok), _verdict(r.realistic_ok), _verdict(r.maestro_total_ok),
            _verdict(r.realistic_total_ok), r.note.replace("|", "/"))) + " |")
    return lines


def timeloop_csv_rows(rows: list[TimeloopRow]) -> list[dict[str, Any]]:
    """The rows as plain dicts (``timeloop.csv``)."""
    return [{**asdict(r), "judged_on": r.judged_on, "maestro_ok": r.maestro_ok, "realistic_ok": r.realistic_ok,
             "maestro_total_ok": r.maestro_total_ok, "realistic_total_ok": r.realistic_total_ok} for r in rows]
