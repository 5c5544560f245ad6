"""The validation report's PNG plots (matplotlib, imported lazily; Agg backend, no timestamps
in the files so a rerun with the same numbers writes the same bytes).

Every plot reads the result rows of :mod:`accelsim.validation.runner` (pandas DataFrame).
"""

from __future__ import annotations

from pathlib import Path

from accelsim.results import STALL_CAUSES

_PNG_METADATA = {"Software": None}  # matplotlib would write its version
_MARKERS = {"marvel": "o", "flash_gemm": "s", "flash_mlp": "^", "dmazerunner": "D", "systolic": "v"}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path) -> None:
    fig.savefig(path, dpi=110, metadata=_PNG_METADATA)
    _pyplot().close(fig)


def paired_cycles(df):
    """One row per (scenario, layer) with the cycles of each run side by side (columns
    ``realistic``, ``sim_maestro``, ``analytical``); runs that did not happen are NaN."""
    import pandas as pd

    ok = df[df["status"] == "ok"].copy()
    names = {("simulator", "realistic"): "realistic", ("simulator", "maestro"): "sim_maestro",
             ("analytical", "maestro"): "analytical"}
    ok["run"] = [names[(m, md)] for m, md in zip(ok["model"], ok["mode"])]
    keys = ["set", "network", "hw", "style", "layer", "op"]
    wide = ok.pivot_table(index=keys, columns="run", values="cycles", aggfunc="first").reset_index()
    for col in ("realistic", "sim_maestro", "analytical"):
        if col not in wide:
            wide[col] = pd.NA
    return wide


def cycles_scatter(df, path: Path) -> None:
    """Predicted (analytical model; simulator in maestro mode) against simulated (realistic)
    cycles per layer, log-log, with the y = x line."""
    plt = _pyplot()
    wide = paired_cycles(df).dropna(subset=["realistic"])
    fig, axes = plt.subplots(1, 2, figsize=(11, 5), sharex=True, sharey=True)
    for ax, col, title in ((axes[0], "analytical", "analytical model (maestro mode)"),
                           (axes[1], "sim_maestro", "simulator, maestro mode")):
        sub = wide.dropna(subset=[col])
        for set_name, group in sub.groupby("set", sort=True):
            ax.scatter(group["realistic"].astype(float), group[col].astype(float), s=14, alpha=0.7,
                       marker=_MARKERS.get(set_name, "o"), label=set_name)
        if not len(sub):
            ax.text(0.5, 0.5, "no results (model missing)", transform=ax.transAxes, ha="center")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"predicted by {title}")
        ax.set_xlabel("simulated cycles (realistic mode)")
        ax.grid(True, which="major", alpha=0.3)
    lo = max(1.0, float(wide[["realistic", "sim_maestro", "analytical"]].min(numeric_only=True).min() or 1))
    hi = float(wide[["realistic", "sim_maestro", "analytical"]].max(numeric_only=True).max() or 10)
    for ax in axes:
        ax.plot([lo, hi], [lo, hi], color="black", linewidth=0.8, label="y = x")
        ax.legend(fontsize=8, loc="upper left")  # points lie along y = x: the upper left is empty
    axes[0].set_ylabel("predicted cycles")
    fig.tight_layout()
    _save(fig, path)


def relative_errors(df):
    """Long table of the relative cycle error of each prediction against the realistic
    simulation: columns set, hw, style, layer, op, predictor, error."""
    import pandas as pd

    wide = paired_cycles(df).dropna(subset=["realistic"])
    parts = []
    for col, name in (("analytical", "analytical model"), ("sim_maestro", "simulator, maestro mode")):
        sub = wide.dropna(subset=[col])
        parts.append(pd.DataFrame({
            "set": sub["set"], "hw": sub["hw"], "style": sub["style"], "layer": sub["layer"], "op": sub["op"],
            "predictor": name,
            "error": (sub[col].astype(float) - sub["realistic"].astype(float)) / sub["realistic"].astype(float)}))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def error_by_type_and_style(df, path: Path) -> None:
    """Box plots of the relative cycle error against the realistic simulation, grouped by
    layer type (left) and dataflow style (right), one box per predictor."""
    plt = _pyplot()
    errors = relative_errors(df)
    fig, axes = plt.subplots(1, 2, figsize=(12, 5), sharey=True)
    predictors = ("analytical model", "simulator, maestro mode")
    for ax, key in ((axes[0], "op"), (axes[1], "style")):
        groups = sorted(errors[key].unique()) if len(errors) else []
        handles = []
        for j, predictor in enumerate(predictors):
            data, positions = [], []
            for i, g in enumerate(groups):
                values = errors[(errors[key] == g) & (errors["predictor"] == predictor)]["error"] * 100
                if len(values):
                    data.append(values.to_numpy())
                    positions.append(i * 3 + j)
            if data:
                box = ax.boxplot(data, positions=positions, widths=0.8, patch_artist=True, showfliers=True,
                                 medianprops={"color": "black", "linewidth": 2})  # visible on the filled box
                color = ("tab:blue", "tab:orange")[j]
                for patch in box["boxes"]:
                    patch.set_facecolor(color)
                handles.append((box["boxes"][0], predictor))
        ax.set_xticks([i * 3 + 0.5 for i in range(len(groups))])
        ax.set_xticklabels(groups, rotation=30, ha="right")
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_title(f"error by {'layer type' if key == 'op' else 'dataflow style'}")
        ax.grid(True, axis="y", alpha=0.3)
        if handles:
            ax.legend([h for h, _ in handles], [n for _, n in handles], fontsize=8, loc="upper left",
                      bbox_to_anchor=(1.01, 1.0))  # beside the boxes, never over them
    axes[0].set_ylabel("(predicted - simulated realistic) / simulated realistic  [%]")
    fig.tight_layout()
    _save(fig, path)


def stall_breakdown(df, path: Path) -> None:
    """Per scenario, the realistic simulation's cycles split into compute-busy and stall causes
    (summed over the simulated layers), as fractions of its cycles."""
    plt = _pyplot()
    sim = df[(df["status"] == "ok") & (df["model"] == "simulator") & (df["mode"] == "realistic")]
    parts = ["compute_busy_cycles"] + [f"stall_{c}_cycles" for c in STALL_CAUSES]
    sums = sim.groupby(["set", "hw", "style"], sort=True)[parts + ["cycles"]].sum()
    fig, ax = plt.subplots(figsize=(12, max(3.0, 0.32 * len(sums) + 1.5)))
    labels = [f"{s} / {h} / {st}" for s, h, st in sums.index]
    left = [0.0] * len(sums)
    for part in parts:
        frac = (sums[part] / sums["cycles"]).fillna(0).to_list()
        name = ("computing" if part == "compute_busy_cycles"
                else "stall: " + part[len("stall_"):-len("_cycles")].replace("compute", "MAC pipeline drain"))
        ax.barh(labels, frac, left=left, label=name)
        left = [a + b for a, b in zip(left, frac)]
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("fraction of realistic-mode cycles (simulated layers only)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title("where the cycles go (simulator, realistic mode)")
    fig.tight_layout()
    _save(fig, path)


def cycles_bars(labels: list[str], cycles: list[float | None], title: str, path: Path,
                reference: float | None = None) -> None:
    """One horizontal bar per label (a scheme, a mapper) of its cycles, the first label on top;
    a missing value (None: nothing legal, or not measured) is a gap labelled so; ``reference``
    (the co-search's cycles, say) a dashed vertical line."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9, max(2.5, 0.45 * len(labels) + 1.2)))
    ax.barh(labels, [0.0 if c is None else c for c in cycles], color="tab:blue")
    for i, c in enumerate(cycles):
        ax.annotate("—" if c is None else f"{c:,.0f}", (0.0 if c is None else c, i), xytext=(3, 0),
                    textcoords="offset points", va="center", fontsize=8)
    if reference is not None:
        ax.axvline(reference, color="tab:red", linestyle="--", linewidth=1)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.2 * max([c for c in cycles if c is not None], default=1.0))
    ax.set_xlabel("cycles (analytical model, realistic mode; lower is better)")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    _save(fig, path)
