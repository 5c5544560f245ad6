"""Event and counter tables for pandas: Parquet (pyarrow, written in row groups as the
simulation runs) or CSV, and a chunked reader over either.

``events.{parquet,csv}`` has one row per :class:`~accelsim.trace.events.TraceEvent` (columns
in field order); ``counters.{parquet,csv}`` one row per
:class:`~accelsim.trace.events.CounterSample`. Rows are in recording order.
"""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path
from typing import Any, Iterator

from accelsim.errors import InputError
from accelsim.trace.events import CounterSample, TraceEvent

ROWS_PER_GROUP = 16384  # rows buffered before a Parquet row group (or CSV flush) is written
EVENT_COLUMNS = TraceEvent._fields
COUNTER_COLUMNS = CounterSample._fields
_TEXT = {"component", "kind", "tensor", "counter"}


def has_pyarrow() -> bool:
    """Whether pyarrow (the optional Parquet writer) is installed."""
    return importlib.util.find_spec("pyarrow") is not None


class _Table:
    """Rows of one record type, buffered up to ROWS_PER_GROUP and then written out."""

    def __init__(self, path: Path, columns: tuple[str, ...], parquet: bool):
        self.columns, self.parquet = columns, parquet
        self.rows: list[tuple] = []
        self.writer: Any = None  # a pyarrow ParquetWriter (pyarrow has no type stubs)
        if parquet:
            import pyarrow as pa
            import pyarrow.parquet as pq

            self.schema = pa.schema([(c, pa.string() if c in _TEXT else pa.int64()) for c in columns])
            self.writer = pq.ParquetWriter(str(path), self.schema)
        else:
            self.f = open(path, "w", encoding="utf-8", newline="")
            self.csv = csv.writer(self.f, lineterminator="\n")
            self.csv.writerow(columns)

    def add(self, row: tuple) -> None:
        self.rows.append(row)
        if len(self.rows) >= ROWS_PER_GROUP:
            self.flush()

    def flush(self) -> None:
        if self.parquet:
            if self.rows:
                import pyarrow as pa

                cols = list(zip(*self.rows))
                self.writer.write_table(pa.table({c: list(v) for c, v in zip(self.columns, cols)}, schema=self.schema))
        else:
            self.csv.writerows(self.rows)
        self.rows = []

    def close(self) -> None:
        self.flush()
        if self.parquet:
            self.writer.close()
        else:
            self.f.close()


class TableWriter:
    """Writes ``events`` and ``counters`` tables into ``directory`` (Parquet or CSV)."""

    def __init__(self, directory: Path, parquet: bool):
        ext = "parquet" if parquet else "csv"
        self.events = _Table(directory / f"events.{ext}", EVENT_COLUMNS, parquet)
        self.counters = _Table(directory / f"counters.{ext}", COUNTER_COLUMNS, parquet)

    def event(self, ev: TraceEvent) -> None:
        self.events.add(ev)

    def counter(self, sample: CounterSample) -> None:
        self.counters.add(sample)

    def close(self) -> None:
        self.events.close()
        self.counters.close()


def read_table(directory: Path, name: str) -> Iterator[dict[str, list]]:
    """Chunks (column -> values) of table ``name`` (``events`` or ``counters``) of a layer's
    trace directory, from Parquet if present, else CSV."""
    pq_path, csv_path = directory / f"{name}.parquet", directory / f"{name}.csv"
    if pq_path.exists():
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise InputError(f"{pq_path}: reading Parquet needs pyarrow (pip install 'accelsim[parquet]')") from None
        try:
            batches = pq.ParquetFile(str(pq_path)).iter_batches(batch_size=ROWS_PER_GROUP)
            for batch in batches:
                yield batch.to_pydict()
        except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
            raise InputError(f"{pq_path}: not a readable Parquet file ({str(exc)[:200]}); trace the layer "
                             "again") from None
        return
    if not csv_path.exists():
        raise InputError(f"{directory}: no {name}.parquet or {name}.csv; trace with --trace-format parquet or csv")
    with open(csv_path, encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None:
            raise InputError(f"{csv_path}: empty file; expected a header line and one row per "
                             f"{'event' if name == 'events' else 'sample'}")
        chunk: list[list[str]] = []
        for row in reader:
            if len(row) != len(header):
                raise InputError(f"{csv_path}:{reader.line_num}: expected {len(header)} values, got {len(row)}")
            chunk.append(row)
            if len(chunk) >= ROWS_PER_GROUP:
                yield _columns(header, chunk, csv_path, reader.line_num - len(chunk))
                chunk = []
        if chunk:
            yield _columns(header, chunk, csv_path, reader.line_num - len(chunk))


def _columns(header: list[str], rows: list[list[str]], path: Path, before: int) -> dict[str, list]:
    """The rows (lines ``before + 1`` on of ``path``) as columns, integer columns as ints."""
    cols = list(zip(*rows))
    out: dict[str, list] = {}
    for h, c in zip(header, cols):
        if h in _TEXT:
            out[h] = list(c)
            continue
        try:
            out[h] = [int(v) for v in c]
        except ValueError:
            bad = next(i for i, v in enumerate(c) if not _is_int(v))
            raise InputError(f"{path}:{before + bad + 1}: column {h!r}: expected an integer, got "
                             f"{c[bad][:40]!r}") from None
    return out


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True
