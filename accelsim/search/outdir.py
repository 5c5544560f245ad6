"""A search's output directory: what was asked, every candidate scored, the best mappings.

``DIR/search.json``      the settings (a resumed search must be asked the same)
``DIR/candidates.parquet``  a Parquet dataset (a directory of part files written as the search
                         runs, one per :data:`FLUSH_SECONDS` of scoring, see below;
                         ``pandas.read_parquet`` reads it whole): one row per (layer, model,
                         schedule), with ``sample``, its order within the layer
``DIR/best.m``           the best mapping of every layer searched so far (MAESTRO format)
``DIR/summary.json``     per layer: counts, the best row, the mapper's facts, two-stage fidelity
``DIR/convergence.png``  best cost so far against candidates scored, per layer

Rows appended are held in memory and written together as one part file (converting and writing
a part costs milliseconds whatever its size, which with many workers kept the parent process
busy when every batch was a part). A part is written when rows are appended
:data:`FLUSH_SECONDS` or more after the last part was written (or the directory opened), when
more than :data:`FLUSH_ROWS` rows are held, before ``summary.json`` or ``best.m`` is written (so
neither names a layer whose rows are not on disk), and when the directory is closed, however the
search ends (done, Ctrl-C, SIGTERM, ``--max-seconds``, an error). A hard kill (SIGKILL, a crash
of the machine) loses the rows held: those that reached the parent within :data:`FLUSH_SECONDS`
after the last part was written, never more than :data:`FLUSH_ROWS` (they may wait longer than
that in memory when no further batch comes back); ``--resume`` scores them again, as it does a
deleted part's.

Part files are written to a hidden name and renamed, so an interrupted search leaves only
whole parts behind; new parts are numbered after the highest there, so a resumed search never
overwrites one (the candidates of a part that was deleted are scored again). A part that cannot
be read (a crash of the machine or a full disk can leave one) is refused, naming it.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Self

import pandas as pd

from accelsim.errors import InputError
from accelsim.mapping.jobs import Job, to_maestro
from accelsim.mapping.maestro_format import write_maestro
from accelsim.search.evaluate import COLUMNS, STATUS_COLUMNS, is_float_metric

SETTINGS = "search.json"
# a part file is written when rows are appended this many seconds (wall time) after the last one
# was: a hard kill loses at most the rows that came back in that time
FLUSH_SECONDS = 2.0
# ... or when more rows than this are held (about 4 MB in memory: 0.8 kB a row on marvel15)
FLUSH_ROWS = 5000
_PART = re.compile(r"part-(\d+)\.parquet")
CANDIDATES = "candidates.parquet"
STORED_COLUMNS = tuple(c for c in COLUMNS if c != "new") + ("sample",)  # on a design without register files
_TEXT = {"layer", "model", "mode", "objective", "encoding", "candidate", "dataflow", "dram_layouts", "key", "status",
         "reason", "message"}


def stored_columns(columns: Sequence[str]) -> tuple[str, ...]:
    """The columns ``candidates.parquet`` stores of an evaluator's frame ``columns``
    (:func:`accelsim.search.evaluate.columns`): all but ``new``, then ``sample``."""
    return tuple(c for c in columns if c != "new") + ("sample",)


def _schema(columns: Sequence[str]) -> Any:
    import pyarrow as pa

    def kind(column: str) -> Any:
        if column in _TEXT:
            return pa.string()
        if column == "sample" or (column not in STATUS_COLUMNS and column != "wall_seconds"
                                  and not is_float_metric(column)):
            return pa.int64()
        return pa.float64()

    return pa.schema([(c, kind(c)) for c in columns])


class SearchDir:
    """The output directory of one search (created, or reopened with ``resume``)."""

    def __init__(self, path: Path, settings: dict[str, Any], resume: bool,
                 defaults: dict[str, Any] | None = None, columns: Sequence[str] = STORED_COLUMNS):
        """``defaults``: the value a setting had before it existed; a search saved by an older
        accelsim, whose settings lack it, resumes when the setting is still at that value.
        ``columns``: the columns stored (:func:`stored_columns` of the evaluators' columns)."""
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise InputError("accelsim search writes candidates.parquet: pip install 'accelsim[search]'") from None
        self.path = path
        self.settings = settings
        self.columns = tuple(columns)
        saved = path / SETTINGS
        if resume:
            if not saved.is_file():
                raise InputError(f"{path}: no search to resume here (no {SETTINGS})")
            self._lock = _lock(path)
            try:
                before = json.loads(saved.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise InputError(f"{saved}: cannot read the saved settings: {exc}") from None
            if not isinstance(before, dict):
                raise InputError(f"{saved}: expected the settings a search saved (a JSON object), got "
                                 f"{type(before).__name__}; is this a search's directory?")
            known = defaults or {}
            names = set(before) | set(settings)
            then = {k: before.get(k, known.get(k)) for k in names}
            now = {k: settings.get(k, known.get(k)) for k in names}
            changed = sorted(k for k in names if then[k] != now[k])
            if changed:
                detail = ", ".join(f"{k}: {then[k]!r} then, {now[k]!r} now" for k in changed)
                raise InputError(f"{path}: --resume continues the same search; these settings differ: {detail}")
        else:
            if path.exists() and (not path.is_dir() or any(path.iterdir())):
                raise InputError(f"{path}: already exists and is not empty; pass --resume to continue the search "
                                 "saved there, or choose another directory")
            try:
                (path / CANDIDATES).mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise InputError(f"{path}: cannot create the output directory: {exc.strerror or exc}") from None
            self._lock = _lock(path)
            _write_text(saved, json.dumps(settings, indent=2))
        (path / CANDIDATES).mkdir(exist_ok=True)
        self._parts = max(_part_files(path / CANDIDATES), default=-1) + 1  # the next part's number
        self._held: list[pd.DataFrame] = []  # rows appended and not yet written, in order
        self._held_rows = 0
        self._written = time.monotonic()  # when the last part was written (the directory opened)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Write the rows held, then release the directory (another search may then resume it)."""
        try:
            self.flush()
        finally:
            self._lock.close()

    def stored(self) -> pd.DataFrame:
        """Every row saved so far (empty, with the stored columns, when none)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        files = _part_files(self.path / CANDIDATES)
        parts = [files[n] for n in sorted(files)]
        if not parts:
            return pd.DataFrame(columns=list(self.columns))
        tables = []
        for part in parts:
            try:
                missing = [c for c in self.columns if c not in pq.read_schema(part).names]
                tables.append(pq.read_table(part, schema=_schema(self.columns)))
            except (OSError, ValueError, pa.ArrowException) as exc:
                raise InputError(f"{part}: not a whole part of a search's candidates ({type(exc).__name__}: "
                                 f"{str(exc)[:200]}); a crash or a full disk can leave one: remove it and --resume "
                                 "again (its candidates are scored again)") from None
            if missing:
                raise InputError(f"{part}: saved without the column(s) {', '.join(missing[:4])}"
                                 + (", ..." if len(missing) > 4 else "") + " that rows on this hardware carry "
                                 "(an older accelsim's search); run the search again in a new directory")
        return pa.concat_tables(tables).to_pandas()

    def append(self, frame: pd.DataFrame) -> None:
        """Save rows (a frame with at least the stored columns, not changed afterwards): held in
        memory, written in the next part file (see the module docstring for when)."""
        missing = [c for c in self.columns if c not in frame.columns]
        if missing:
            raise KeyError(f"the rows to save lack the column(s) {', '.join(missing)}")
        self._held.append(frame)  # the stored columns are taken once per part: a copy costs ms
        self._held_rows += len(frame)
        if self._held_rows > FLUSH_ROWS or time.monotonic() - self._written >= FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        """Write the rows held as one more part file (nothing when none are held). The rows are
        let go first: a part that fails to be written is not tried again, its candidates are
        scored again on ``--resume``."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        held, self._held, self._held_rows = self._held, [], 0
        if not held:
            return
        self._written = time.monotonic()
        frame = (held[0] if len(held) == 1 else pd.concat(held, ignore_index=True))[list(self.columns)]
        # one thread: a part is small, and threads cost more than they save
        table = pa.Table.from_pandas(frame, schema=_schema(self.columns), preserve_index=False, nthreads=1)
        final = self.path / CANDIDATES / f"part-{self._parts:06d}.parquet"
        hidden = final.with_name("." + final.name)
        pq.write_table(table, hidden)
        os.replace(hidden, final)
        self._parts += 1

    def write_best(self, network: str, jobs: Sequence[Job]) -> Path:
        """``best.m``: the jobs' layers with their best dataflows (the rows held written first)."""
        self.flush()
        path = self.path / "best.m"
        _write_text(path, write_maestro(to_maestro(network, jobs)))
        return path

    def write_summary(self, summary: dict[str, Any]) -> Path:
        """``summary.json`` (the rows held written first, so it never names a layer whose rows
        are not on disk)."""
        self.flush()
        path = self.path / "summary.json"
        _write_text(path, json.dumps(summary, indent=2, default=_json_default))
        return path

    def write_convergence(self, frames: dict[str, pd.DataFrame]) -> Path | None:
        """``convergence.png``: per layer, the best cost so far over the candidates scored, relative
        to the layer's final best (1 = found). None without matplotlib or legal rows."""
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            return None
        curves = {}
        for layer, frame in frames.items():
            cost = frame.sort_values("sample")["cost"]
            best = cost.cummin()
            final = best.iloc[-1] if len(best) else float("inf")
            if final != float("inf"):
                curves[layer] = (frame.sort_values("sample")["sample"] + 1, best / final)
        if not curves:
            return None
        fig, ax = plt.subplots(figsize=(9, 5))
        colors = [plt.get_cmap("tab20")(i) for i in range(20)]
        for i, (layer, (x, y)) in enumerate(curves.items()):  # 20 colours x 4 line styles: 80 distinct curves
            ax.step(x, y, where="post", label=layer, color=colors[i % 20], linestyle=("-", "--", ":", "-.")[i // 20 % 4])
        ax.set_xlabel("candidates scored")
        objective = self.settings.get("objective", "cost")
        ax.set_ylabel(f"best {objective} so far / final best")
        ax.set_yscale("log")
        ax.set_title(f"search convergence: {objective}, {self.settings.get('model', '')} model, "
                     f"{self.settings.get('mapper', '')} mapper", fontsize=10)
        if len(curves) <= 40:
            ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1.0),
                      ncol=1 if len(curves) <= 20 else 2)
        else:
            ax.text(0.99, 0.99, f"{len(curves)} layers (too many to name; see summary.json)", transform=ax.transAxes,
                    ha="right", va="top", fontsize=8)
        fig.tight_layout()
        path = self.path / "convergence.png"
        hidden = path.with_name(".convergence.png")
        fig.savefig(hidden, dpi=100, format="png")
        plt.close(fig)
        os.replace(hidden, path)
        return path


def _part_files(directory: Path) -> dict[int, Path]:
    """The part files in ``directory`` by number (``part-000012.parquet``: 12)."""
    return {int(m.group(1)): p for p in directory.iterdir() if (m := _PART.fullmatch(p.name))}


def _lock(path: Path) -> Any:
    """Hold ``path/.lock`` for this process's life (released by the system however it ends), so
    two searches never write one directory."""
    import fcntl

    handle = open(path / ".lock", "a")  # noqa: SIM115 - held open until the process ends
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise InputError(f"{path}: another accelsim search is writing into this directory") from None
    return handle


def _write_text(path: Path, text: str) -> None:
    hidden = path.with_name("." + path.name)
    hidden.write_text(text, encoding="utf-8")
    os.replace(hidden, path)


def _json_default(value: Any) -> Any:
    """numpy and pandas scalars as plain values; infinities as strings."""
    if hasattr(value, "item"):
        return value.item()
    if value is pd.NA:
        return None
    raise TypeError(f"cannot write {type(value).__name__} to JSON")
