"""PNG figures of a traced layer: PE utilization, bandwidth in use per network and DRAM,
buffer occupancy and the stall breakdown, all over time.

The event and counter tables are read in chunks and binned into ``bins`` equal time bins:
each span spreads its amount (MACs, words, cycles stalled, buffers in use) uniformly over its
cycles, so every bin holds the exact amount that fell into it, and memory stays flat in the
trace length. Each bin is also cut into up to :data:`SUB_BINS` sub-bins (whole cycles at
least), binned the same way, and the least and the most of their averages are drawn as a band
around the bin's average: a pattern faster than a bin shows as a band of its real range instead
of folding into a slow wave (aliasing). matplotlib is imported only here
(``pip install 'accelsim[plot]'``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from accelsim.errors import InputError
from accelsim.input_files import read_text, shown
from accelsim.results import STALL_CAUSES
from accelsim.trace.events import BANDWIDTH_KINDS, BUFFERS, STALL_PREFIX
from accelsim.trace.run import META_FILE
from accelsim.trace.table import read_table

FIGURES = ("pe_utilization.png", "bandwidth.png", "buffers.png", "stalls.png", "overview.png")
NETWORKS = ("distribution_noc", "reduction_noc", "dram")
COLORS = {"compute": "tab:green", "distribution_noc": "tab:blue", "reduction_noc": "tab:purple", "dram": "tab:red"}
STALL_COLORS = {"compute": "tab:olive", "distribution_noc": "tab:blue", "reduction": "tab:purple", "dram": "tab:red"}


def layer_dirs(trace_dir: Path) -> list[Path]:
    """The layer directories of a trace directory (or the directory itself if it is one)."""
    if (trace_dir / META_FILE).exists():
        return [trace_dir]
    dirs = sorted(p for p in trace_dir.iterdir() if (p / META_FILE).exists()) if trace_dir.is_dir() else []
    if not dirs:
        raise InputError(f"{trace_dir}: not a trace directory (no {META_FILE}); make one with "
                         "`accelsim simulate ... --trace DIR`")
    return dirs


SUB_BINS = 64  # sub-bins per bin for the min/max band


class _Binned:
    """Amounts spread uniformly over spans [start, end), accumulated per time bin (each cut into
    ``sub`` sub-bins).

    The cumulative amount up to x is sum(rate * clip(x - start, 0, end - start)); it is kept at
    the sub-bin edges, added chunk by chunk."""

    def __init__(self, first: int, last: int, bins: int, sub: int = 1):
        self.bins, self.sub = bins, sub
        self.fine_edges = np.linspace(first, last, bins * sub + 1)
        self.edges = self.fine_edges[::sub]
        self.cumulative: dict[str, np.ndarray] = {}

    def add(self, series: str, start: np.ndarray, end: np.ndarray, amount: np.ndarray) -> None:
        keep = end > start
        start, end, amount = start[keep], end[keep], amount[keep]
        if not len(start):
            return
        rate = amount / (end - start)
        acc = self.cumulative.setdefault(series, np.zeros(len(self.fine_edges)))
        for points, sign in ((start, 1.0), (end, -1.0)):
            order = np.argsort(points, kind="stable")
            p, w = points[order].astype(float), sign * rate[order]
            s0 = np.r_[0.0, np.cumsum(w)]
            s1 = np.r_[0.0, np.cumsum(w * p)]
            k = np.searchsorted(p, self.fine_edges, side="left")  # breakpoints strictly below each edge
            acc += self.fine_edges * s0[k] - s1[k]

    def per_bin(self, series: str) -> np.ndarray:
        """The amount in each bin."""
        acc = self.cumulative.get(series)
        return np.diff(acc[::self.sub]) if acc is not None else np.zeros(self.bins)

    def band(self, series: str) -> tuple[np.ndarray, np.ndarray]:
        """Per bin, the least and the most amount per cycle over its sub-bins."""
        acc = self.cumulative.get(series)
        if acc is None:
            return np.zeros(self.bins), np.zeros(self.bins)
        rates = (np.diff(acc) / np.diff(self.fine_edges)).reshape(self.bins, self.sub)
        return rates.min(axis=1), rates.max(axis=1)

    @property
    def width(self) -> np.ndarray:
        return np.diff(self.edges)

    @property
    def centers(self) -> np.ndarray:
        return (self.edges[:-1] + self.edges[1:]) / 2


def bin_trace(layer_dir: Path, bins: int, window: tuple[int, int] | None = None) -> tuple[dict, _Binned]:
    """Read a layer's meta, events and counters into time bins over ``window`` (first, last
    cycle; default the whole run)."""
    meta = _read_meta(layer_dir / META_FILE)
    cycles = max(1, meta["cycles"])
    first, last = window if window is not None else (0, cycles)
    if not 0 <= first < last <= cycles:
        raise InputError(f"--window {first}:{last}: expected 0 <= first < last <= {cycles} (the layer's cycles)")
    try:
        bins = min(bins, last - first)
        sub = max(1, min(SUB_BINS, (last - first) // bins))
        return meta, _bin_tables(layer_dir, meta, _Binned(first, last, bins, sub), cycles)
    except (ValueError, KeyError, TypeError, OSError) as exc:  # pyarrow's errors are ValueErrors
        raise InputError(f"cannot read the trace's events or counters ({type(exc).__name__}: {str(exc)[:200]}); "
                         "trace the layer again", source=str(layer_dir)) from None


# what plotting reads from meta.json: (field, kind)
_META_FIELDS: tuple[tuple[str, type], ...] = (("cycles", int), ("num_pes", int), ("macs_per_pe_per_cycle", int), ("layer", str), ("hw", str),
                ("mode", str), ("bandwidth_words_per_cycle", dict), ("buffers", dict), ("result", dict))
MAX_TRACE_CYCLES = 2**53  # counts are exact below this (see README, Exact counts)


def _read_meta(meta_path: Path) -> dict:
    """A layer's meta.json, checked for what the figures read; InputError naming the field."""
    try:
        meta = json.loads(read_text(meta_path, "trace meta file"))
    except ValueError as exc:
        raise InputError(f"not a meta.json written by accelsim --trace (not JSON: {exc})",
                         source=str(meta_path)) from None
    if not isinstance(meta, dict):
        raise InputError("not a meta.json written by accelsim --trace (expected a JSON object)", source=str(meta_path))
    if meta.get("status", "complete") != "complete":
        raise InputError("the trace of this layer is incomplete (its run was stopped); trace it again",
                         source=str(meta_path))
    for name, kind in _META_FIELDS:
        value = meta.get(name)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise InputError(f"field {name!r}: expected {'an integer' if kind is int else 'a ' + kind.__name__}, "
                             f"got {shown(value)} (not a meta.json written by accelsim --trace?)",
                             source=str(meta_path))
        if isinstance(value, int) and not 0 <= value <= MAX_TRACE_CYCLES:
            raise InputError(f"field {name!r}: {value} is outside 0..2^53", source=str(meta_path))
    nested = {"bandwidth_words_per_cycle": NETWORKS, "buffers": BUFFERS,
              "result": ("macs", "compute_busy_cycles"), "result.stall_cycles": STALL_CAUSES}
    for where, keys in nested.items():
        table: Any = meta
        for part in where.split("."):
            table = table.get(part) if isinstance(table, dict) else None
        for key in keys:
            value = table.get(key) if isinstance(table, dict) else None
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value <= MAX_TRACE_CYCLES:
                raise InputError(f"field '{where}.{key}': expected a number of 0 to 2^53, got {shown(value)}",
                                 source=str(meta_path))
    return meta


def _bin_tables(layer_dir: Path, meta: dict, binned: _Binned, cycles: int) -> _Binned:
    """The events and counters of a layer binned (see :func:`bin_trace`)."""
    for chunk in read_table(layer_dir, "events"):
        comp = np.array(chunk["component"], dtype=object)
        kind = np.array(chunk["kind"], dtype=object)
        start = np.asarray(chunk["start_cycle"], dtype=np.int64)
        end = np.asarray(chunk["end_cycle"], dtype=np.int64)
        words = np.asarray(chunk["words"], dtype=np.int64)
        array = comp == "pe_array"
        compute = array & (kind == "compute")
        binned.add("macs", start[compute], end[compute], words[compute].astype(float))
        binned.add("compute", start[compute], end[compute], (end - start)[compute].astype(float))
        for cause in STALL_CAUSES:
            sel = array & (kind == STALL_PREFIX + cause)
            binned.add(STALL_PREFIX + cause, start[sel], end[sel], (end - start)[sel].astype(float))
        moving = np.isin(kind, BANDWIDTH_KINDS)
        for net in NETWORKS:
            sel = moving & (comp == net)
            binned.add(net, start[sel], end[sel], words[sel].astype(float))
    latest: dict[str, tuple[int, int]] = {}  # buffer -> (cycle, value) of its latest sample
    for chunk in read_table(layer_dir, "counters"):
        for name in BUFFERS:
            sel = [i for i, c in enumerate(chunk["counter"]) if c == name]
            if not sel:
                continue
            t = np.asarray(chunk["cycle"], dtype=np.int64)[sel]
            v = np.asarray(chunk["value"], dtype=np.int64)[sel]
            if name in latest:
                t, v = np.r_[latest[name][0], t], np.r_[latest[name][1], v]
            binned.add(name, t[:-1], t[1:], (v[:-1] * (t[1:] - t[:-1])).astype(float))
            latest[name] = (int(t[-1]), int(v[-1]))
    for name, (cycle, value) in latest.items():
        binned.add(name, np.array([cycle]), np.array([cycles]), np.array([float(value * (cycles - cycle))]))
    return binned


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise InputError("accelsim plot needs matplotlib: pip install 'accelsim[plot]' (or pip install matplotlib)") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _draw_utilization(ax, meta: dict, b: _Binned) -> None:
    """Utilization per bin; the title gives the whole run's."""
    peak = meta["num_pes"] * meta["macs_per_pe_per_cycle"]
    util = 100 * b.per_bin("macs") / (peak * b.width)
    overall = 100 * meta["result"]["macs"] / (peak * max(1, meta["cycles"]))
    low, high = b.band("macs")
    ax.fill_between(b.centers, 100 * low / peak, 100 * high / peak, step="mid", color=COLORS["compute"], alpha=0.25,
                    lw=0, label="least to most within the bin")
    ax.plot(b.centers, util, drawstyle="steps-mid", color=COLORS["compute"], lw=1, label="bin average")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_ylabel("PE utilization (%)")
    ax.set_ylim(0, 100)
    ax.set_title(f"PE utilization (overall {overall:.1f}%)", fontsize=10)


def _draw_bandwidth(ax, meta: dict, b: _Binned) -> None:
    peaks = meta["bandwidth_words_per_cycle"]
    for net in NETWORKS:
        used = b.per_bin(net) / b.width
        low, high = b.band(net)
        ax.fill_between(b.centers, low, high, step="mid", color=COLORS[net], alpha=0.2, lw=0)
        ax.plot(b.centers, used, drawstyle="steps-mid", color=COLORS[net], lw=1,
                label=f"{net} (peak {peaks[net]:g})")
    ax.set_ylabel("words / cycle")
    ax.set_ylim(bottom=0)
    ax.set_title("Bandwidth in use (bin average; band: least to most within it)", fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the axes, never over the data


def _draw_buffers(ax, meta: dict, b: _Binned) -> None:
    for name, color in zip(BUFFERS, ("tab:brown", "tab:blue", "tab:purple")):
        capacity = meta["buffers"][name]
        low, high = b.band(name)
        ax.fill_between(b.centers, low, high, step="mid", color=color, alpha=0.2, lw=0)
        ax.plot(b.centers, b.per_bin(name) / b.width, drawstyle="steps-mid", color=color, lw=1,
                label=f"{name} (of {capacity})")
    ax.set_ylabel("buffers in use")
    ax.set_ylim(bottom=0, top=max(meta["buffers"].values()) + 0.2)
    ax.set_title("Buffer occupancy (time average per bin; band: least to most within it)", fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the axes, never over the data


def _draw_stalls_over_time(ax, b: _Binned) -> None:
    names = ["compute"] + [STALL_PREFIX + c for c in STALL_CAUSES]
    fractions = [100 * b.per_bin(n) / b.width for n in names]
    colors = [COLORS["compute"]] + [STALL_COLORS[c] for c in STALL_CAUSES]
    labels = ["compute"] + [f"stall: {c}" for c in STALL_CAUSES]
    ax.stackplot(b.centers, *fractions, labels=labels, colors=colors, alpha=0.7, step="mid")
    ax.set_ylabel("% of cycles")
    ax.set_ylim(0, 100)
    ax.set_title("PE array: computing or stalled, by cause", fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))


def _draw_stall_totals(ax, meta: dict) -> None:
    r = meta["result"]
    values = [r["compute_busy_cycles"]] + [r["stall_cycles"][c] for c in STALL_CAUSES]
    colors = [COLORS["compute"]] + [STALL_COLORS[c] for c in STALL_CAUSES]
    ax.barh(["busy"] + [f"stall: {c}" for c in STALL_CAUSES], values, color=colors)
    for i, v in enumerate(values):
        ax.text(v, i, f" {v:,} ({100 * v / max(1, meta['cycles']):.1f}%)", va="center", fontsize=8)
    ax.set_xlabel("cycles")
    ax.set_xlim(0, max(values) * 1.35 if max(values) else 1)
    ax.set_title(f"Stall breakdown ({meta['cycles']:,} cycles)", fontsize=10)


def plot_layer(layer_dir: Path, bins: int = 400, force: bool = False,
               window: tuple[int, int] | None = None) -> list[Path]:
    """Write the FIGURES of one traced layer into its directory (names suffixed with
    ``_first-last`` for a window of cycles); returns their paths."""
    suffix = f"_{window[0]}-{window[1]}" if window is not None else ""
    outputs = [layer_dir / f.replace(".png", f"{suffix}.png") for f in FIGURES]
    existing = [str(p) for p in outputs if p.exists()]
    if existing and not force:
        raise InputError(f"{existing[0]}: already exists; pass --force to overwrite the figures")
    plt = _pyplot()
    meta, b = bin_trace(layer_dir, bins, window)
    title = f"{meta['layer']} on {meta['hw']} ({meta['mode']})"
    if window is not None:
        title += f", cycles {window[0]:,} to {window[1]:,}"
    span = (b.edges[0], b.edges[-1])

    def save(draw, path: Path, height: float = 3.0) -> None:
        fig, ax = plt.subplots(figsize=(9, height))
        draw(ax)
        ax.set_xlabel("cycle")
        ax.set_xlim(*span)
        fig.suptitle(title, fontsize=11)
        fig.tight_layout()
        fig.savefig(path, dpi=110, metadata={"Software": None})
        plt.close(fig)

    save(lambda ax: _draw_utilization(ax, meta, b), outputs[0])
    save(lambda ax: _draw_bandwidth(ax, meta, b), outputs[1])
    save(lambda ax: _draw_buffers(ax, meta, b), outputs[2])
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 5.5), gridspec_kw={"height_ratios": [3, 2]})
    _draw_stalls_over_time(top, b)
    top.set_xlabel("cycle")
    top.set_xlim(*span)
    _draw_stall_totals(bottom, meta)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    fig.savefig(outputs[3], dpi=110, metadata={"Software": None})
    plt.close(fig)

    fig, axes = plt.subplots(4, 1, figsize=(9, 11), sharex=True)
    _draw_utilization(axes[0], meta, b)
    _draw_bandwidth(axes[1], meta, b)
    _draw_buffers(axes[2], meta, b)
    _draw_stalls_over_time(axes[3], b)
    axes[3].set_xlabel("cycle")
    axes[3].set_xlim(*span)
    fig.suptitle(title, fontsize=12)
    fig.tight_layout()
    fig.savefig(outputs[4], dpi=110, metadata={"Software": None})
    plt.close(fig)
    return outputs
