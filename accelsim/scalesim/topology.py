"""Reader for SCALE-Sim's topology CSV, in its convolution form and its GEMM form.

Convolution form (one header line, then one layer per line; SCALE-Sim's files end every line
with a comma)::

    Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,
    Conv1, 224, 224, 7, 7, 3, 64, 2,

An optional ninth value is either a stride along the width (SCALE-Sim's own writer emits
"Stride height, Stride width") or a sparsity ratio ``N:M`` (only ``1:1``, dense, is accepted).
A layer whose name contains ``DP`` is depthwise: like SCALE-Sim we run it as ``Channels``
single-channel layers named ``<name>Channel_<i>``.

GEMM form (SCALE-Sim's ``-i gemm``)::

    Layer, M, N, K,
    fc1, 128, 256, 512,

SCALE-Sim turns a GEMM row into the convolution ``IFMAP M x K, filter 1 x K, 1 channel, N
filters, stride 1``; so do we. The form is recognised from the header.

SCALE-Sim's output size rule: ``ceil((IFMAP - Filter + Stride) / Stride)`` per axis (it counts
a partial last window, unlike ``floor((IFMAP - Filter) / Stride) + 1``).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil
from pathlib import Path

from accelsim.input_files import read_csv_rows
from accelsim.errors import InputError

CONV_COLUMNS = ("Layer name", "IFMAP Height", "IFMAP Width", "Filter Height", "Filter Width",
                "Channels", "Num Filter", "Strides")
GEMM_COLUMNS = ("Layer", "M", "N", "K")


@dataclass(frozen=True)
class ScaleSimLayer:
    """One layer as SCALE-Sim sees it (a convolution; GEMM rows are converted)."""

    name: str
    ifmap_height: int
    ifmap_width: int
    filter_height: int
    filter_width: int
    channels: int
    num_filters: int
    stride_height: int
    stride_width: int
    line: int = 0  # line in the topology file

    @property
    def ofmap_height(self) -> int:
        return ceil((self.ifmap_height - self.filter_height + self.stride_height) / self.stride_height)

    @property
    def ofmap_width(self) -> int:
        return ceil((self.ifmap_width - self.filter_width + self.stride_width) / self.stride_width)

    @property
    def ofmap_pixels(self) -> int:
        return self.ofmap_height * self.ofmap_width

    @property
    def window_size(self) -> int:
        """MACs per output pixel: filter height x width x channels."""
        return self.filter_height * self.filter_width * self.channels

    @property
    def gemm_mnk(self) -> tuple[int, int, int]:
        """SCALE-Sim's operand-matrix view ``(M, N, K)``: M output pixels, N filters, K window."""
        return self.ofmap_pixels, self.num_filters, self.window_size

    @property
    def macs(self) -> int:
        m, n, k = self.gemm_mnk
        return m * n * k


@dataclass(frozen=True)
class ScaleSimTopology:
    """A topology file: its form (``conv`` or ``gemm``) and its layers in order."""

    name: str
    form: str
    layers: tuple[ScaleSimLayer, ...]
    source: str



def _form(header: list[str], source: str, line: int) -> str:
    lowered = [h.lower() for h in header]
    if len(lowered) >= 4 and lowered[1:4] == ["m", "n", "k"]:
        return "gemm"
    if len(lowered) >= 8 and "ifmap" in lowered[1]:
        return "conv"
    raise InputError(
        f"unrecognised header {', '.join(header)!r}; expected SCALE-Sim's convolution header "
        f"({', '.join(CONV_COLUMNS)}) or its GEMM header ({', '.join(GEMM_COLUMNS)})",
        source=source, line=line)


def _positive(cell: str, column: str, source: str, line: int) -> int:
    try:
        value = int(cell)
    except ValueError:
        value = 0
    if value < 1:
        raise InputError(f"column {column!r}: expected a positive integer, got {cell!r}", source=source, line=line)
    return value


def _check_dense(cell: str, position: str, source: str, line: int) -> None:
    """A sparsity ratio ``N:M`` must be dense (N = M)."""
    parts = cell.split(":")
    if len(parts) != 2 or not all(p.strip().isdigit() and int(p) > 0 for p in parts):
        expected = "a stride width (a positive integer) or a sparsity ratio N:M" if position == "ninth" \
            else "a sparsity ratio N:M"
        raise InputError(f"{position} value {cell!r}: expected {expected}", source=source, line=line)
    if int(parts[0]) != int(parts[1]):
        raise InputError(f"sparsity ratio {cell!r}: only dense layers (1:1) are modelled", source=source, line=line)


def _conv_layers(cells: list[str], source: str, line: int) -> list[ScaleSimLayer]:
    if len(cells) not in (8, 9):
        raise InputError(f"expected 8 values ({', '.join(CONV_COLUMNS)}) and optionally a stride width "
                         f"or sparsity ratio, got {len(cells)}", source=source, line=line)
    name = cells[0]
    if not name:
        raise InputError("column 'Layer name' is empty", source=source, line=line)
    v = [_positive(c, col, source, line) for c, col in zip(cells[1:8], CONV_COLUMNS[1:])]
    stride_w = v[6]
    if len(cells) == 9:
        if ":" in cells[8] or not cells[8].isdigit():
            _check_dense(cells[8], "ninth", source, line)
        else:
            stride_w = _positive(cells[8], "Stride width", source, line)
    ih, iw, fh, fw, ch, nf, sh = v
    if fh > ih or fw > iw:
        raise InputError(f"layer {name!r}: filter {fh}x{fw} is larger than the IFMAP {ih}x{iw}",
                         source=source, line=line)
    if "DP" in name:  # SCALE-Sim: depthwise, one single-channel layer per channel
        return [ScaleSimLayer(f"{name}Channel_{c}", ih, iw, fh, fw, 1, nf, sh, stride_w, line) for c in range(ch)]
    return [ScaleSimLayer(name, ih, iw, fh, fw, ch, nf, sh, stride_w, line)]


def _gemm_layer(cells: list[str], source: str, line: int) -> ScaleSimLayer:
    if len(cells) not in (4, 5):
        raise InputError(f"expected 4 values ({', '.join(GEMM_COLUMNS)}) and optionally a sparsity ratio, "
                         f"got {len(cells)}", source=source, line=line)
    if not cells[0]:
        raise InputError("column 'Layer' is empty", source=source, line=line)
    if len(cells) == 5:
        _check_dense(cells[4], "fifth", source, line)
    m, n, k = (_positive(c, col, source, line) for c, col in zip(cells[1:4], GEMM_COLUMNS[1:]))
    return ScaleSimLayer(cells[0], m, k, 1, k, 1, n, 1, 1, line)


def read_topology(path: str | Path) -> ScaleSimTopology:
    """Read a SCALE-Sim topology CSV (either form); raise InputError naming the file, line and
    column on any problem."""
    source = str(path)
    rows = read_csv_rows(path, "SCALE-Sim topology")
    if not rows:
        raise InputError(f"empty file; expected a header ({', '.join(CONV_COLUMNS)}) and one layer per line",
                         source=source)
    form = _form(rows[0][1], source, rows[0][0])
    layers: list[ScaleSimLayer] = []
    for line, cells in rows[1:]:
        if form == "gemm":
            layers.append(_gemm_layer(cells, source, line))
        else:
            layers.extend(_conv_layers(cells, source, line))
    if not layers:
        raise InputError("no layers after the header", source=source)
    return ScaleSimTopology(Path(path).stem, form, tuple(layers), source)
