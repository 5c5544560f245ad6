"""The ``accelsim`` command.

User mistakes (bad files, flags, mappings that do not fit) print one ``error:`` line naming
the file, line or field and exit with status 2; no traceback.
"""

from __future__ import annotations

import csv
import json
import sys
import warnings
from contextlib import contextmanager
from pathlib import Path

import click

from accelsim import __version__
from accelsim.api import (
    OverflowWarning,
    analyze_jobs,
    jobs_from_maestro,
    jobs_from_network,
    run_jobs,
    run_jobs_functional,
    to_maestro,
)
from accelsim.compare import (
    MODELS,
    compare_jobs,
    comparison_dict,
    comparison_rows,
    format_comparison,
)
from accelsim.errors import InputError
from accelsim.functional import DTYPES
from accelsim.hw.loader import available_presets, dump_hardware, load_hardware
from accelsim.mapping.maestro_format import write_maestro
from accelsim.mapping.styles import STYLES
from accelsim.results import NetworkResult, write_json
from accelsim.sim.engine import SimOptions
from accelsim.workload.tables import available_networks

EXIT_USER_ERROR = 2


def _fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_USER_ERROR)


def _check_output(path: str | None, force: bool) -> None:
    """Refuse to overwrite an existing file unless --force."""
    if path is None:
        return
    p = Path(path)
    if p.exists() and not force:
        _fail(f"{path}: already exists; choose another name or pass --force to overwrite it")
    if not p.parent.exists():
        _fail(f"{path}: directory {p.parent} does not exist")


def _check_job_args(mapping_path: str | None, network: str | None, style: str | None) -> None:
    """--mapping FILE.m, or --network NAME with --style (simulate, analyze, compare)."""
    if (mapping_path is None) == (network is None):
        _fail("give exactly one of --mapping FILE.m or --network NAME (with --style)")
    if network is not None and style is None:
        _fail("--network needs --style; styles are: " + ", ".join(sorted(STYLES)))
    if mapping_path is not None and style is not None:
        _fail("--style applies to --network only; a mapping file carries its own dataflow")


def _load_jobs(hw_ref: str, overrides, mapping_path: str | None, network: str | None, style: str | None,
               layer: str | None):
    """(hardware spec, network name, jobs) of the checked job arguments; raises InputError."""
    hw = load_hardware(hw_ref, list(overrides))
    if mapping_path is not None:
        name, jobs = jobs_from_maestro(mapping_path, layer)
    else:
        name, jobs = jobs_from_network(network, style, hw, layer)
    return hw, name, jobs


@contextmanager
def _progress_bar(progress: bool | None, total_layers: int, name: str):
    """A tqdm bar over layers on stderr (default: when stderr is a terminal): yields the
    per-layer callback that advances it, or None when no bar is shown."""
    show = progress if progress is not None else sys.stderr.isatty()
    if not show or total_layers <= 1:
        yield None
        return
    from tqdm import tqdm

    with tqdm(total=total_layers, unit="layer", file=sys.stderr, desc=name) as bar:
        yield lambda done: bar.update(1)


def _write_csv(rows: list[dict], path: str) -> None:
    """Rows (dicts with the same keys) as a CSV file with a header line."""
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    click.echo(f"wrote {path}")


def _job_inputs(verb: str, hw_required: bool = True):
    """The options naming what to run, shared by simulate, analyze and compare: --hw, --mapping,
    --network, --style and --layer (``verb`` starts --layer's help)."""
    options = (
        click.option("--hw", "hw_ref", required=hw_required,
                     help="Preset name, hardware YAML file or MAESTRO hardware .m file."),
        click.option("--mapping", "mapping_path", type=click.Path(dir_okay=False), help="MAESTRO mapping file (.m)."),
        click.option("--network", help="Bundled network name or network YAML file (with --style)."),
        click.option("--style", type=click.Choice(sorted(STYLES)), help="Named dataflow style (with --network)."),
        click.option("--layer", help=f"{verb} only this layer."),
    )

    def apply(command):
        for option in reversed(options):
            command = option(command)
        return command

    return apply


@contextmanager
def _overflow_warnings():
    """Show every OverflowWarning (--allow-overflow) as one ``warning:`` line on stderr."""
    with warnings.catch_warnings():
        warnings.simplefilter("always", OverflowWarning)
        warnings.showwarning = lambda message, *args, **kwargs: click.echo(f"warning: {message}", err=True)
        yield


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="accelsim")
def main() -> None:
    """Cycle-level simulator of spatial DNN accelerators executing MAESTRO-style mappings."""


def _format_table(result: NetworkResult) -> str:
    header = ("layer", "type", "cycles", "MACs", "util%", "energy_uJ", "L1_req_B", "L2_req_B",
              "stall_noc", "stall_red", "stall_dram")
    rows = [
        (r.layer, r.op, f"{r.cycles:,}", f"{r.macs:,}", f"{100 * r.pe_utilization:.1f}",
         f"{r.energy_pj / 1e6:.3f}", str(r.l1_required_bytes), str(r.l2_required_bytes),
         f"{r.stall_cycles['distribution_noc']:,}", f"{r.stall_cycles['reduction']:,}",
         f"{r.stall_cycles['dram']:,}")
        for r in result.layers
    ]
    if len(result.layers) > 1:
        s = result.summary()
        stall = s["stall_cycles"]
        rows.append(("TOTAL", "", f"{s['cycles']:,}", f"{s['macs']:,}", f"{100 * s['pe_utilization']:.1f}",
                     f"{s['energy_pj'] / 1e6:.3f}", "", "", f"{stall['distribution_noc']:,}",
                     f"{stall['reduction']:,}", f"{stall['dram']:,}"))
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) if i < 2 else h.rjust(w) for i, (h, w) in enumerate(zip(header, widths)))]
    for row in rows:
        lines.append("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))))
    return "\n".join(lines)


# --set, --json and --csv as simulate and analyze take them
_set_option = click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
                           help="Override a hardware field, e.g. --set l2.size_bytes=65536 (repeatable).")
_json_option = click.option("--json", "json_out", type=click.Path(dir_okay=False),
                            help="Write per-layer results as a JSON list.")
_csv_option = click.option("--csv", "csv_out", type=click.Path(dir_okay=False),
                           help="Write per-layer results as CSV (MAESTRO column names).")


@main.command()
@_job_inputs("Simulate", hw_required=False)
@click.option("--scalesim-config", type=click.Path(dir_okay=False),
              help="SCALE-Sim .cfg (with --topology): our systolic model on SCALE-Sim's inputs, instead of --hw.")
@click.option("--topology", type=click.Path(dir_okay=False),
              help="SCALE-Sim topology CSV, convolution or GEMM form (with --scalesim-config).")
@click.option("--mode", type=click.Choice(["realistic", "maestro"]), default="realistic", show_default=True,
              help="realistic: contention, latencies, packets; maestro: MAESTRO's assumptions.")
@_set_option
@_json_option
@_csv_option
@click.option("--allow-overflow", is_flag=True, help="Simulate mappings whose tiles do not fit their buffers (warns).")
@click.option("--per-pe", is_flag=True, help="One event per PE and packet (slow; the reference for the grouped mode).")
@click.option("--trace", "trace_dir", type=click.Path(file_okay=False),
              help="Write execution traces into this directory (one subdirectory per layer).")
@click.option("--trace-format", default="perfetto,parquet,dram", show_default=True,
              help="Comma-separated trace formats: perfetto, parquet (CSV without pyarrow), csv, dram.")
@click.option("--trace-detail", type=click.Choice(["step", "transfer", "pe"]), default="transfer", show_default=True,
              help="step: one span per network and step; transfer: one per tensor burst; pe: per PE and packet.")
@click.option("--trace-components", metavar="LIST",
              help="Comma-separated components to trace: dram, distribution_noc, reduction_noc, pe_array, pe, "
                   "buffers (default: all).")
@click.option("--functional", is_flag=True,
              help="Move real values along the simulated transfers and check each layer's output (small layers).")
@click.option("--seed", type=int, default=0, show_default=True, help="Random operands of --functional.")
@click.option("--dtype", type=click.Choice(list(DTYPES)), default="int8", show_default=True,
              help="Operand type of --functional (integers compare exactly, fp32 within a rounding bound).")
@click.option("--unchecked", is_flag=True,
              help="With --functional, for testing mappers: run a mapping that fails the legality checks "
                   "(overlapping or gapped windows, reduction without a reduction network) and show what goes wrong.")
@click.option("--force", is_flag=True, help="Overwrite existing --json/--csv files and a non-empty --trace directory.")
@click.option("--progress/--no-progress", default=None, help="Progress bar (default: on when stderr is a terminal).")
def simulate(hw_ref, mapping_path, network, style, scalesim_config, topology, layer, mode, overrides, json_out,
             csv_out, allow_overflow, per_pe, trace_dir, trace_format, trace_detail, trace_components,
             functional, seed, dtype, unchecked, force, progress) -> None:
    """Simulate a mapping file, or a network under a named dataflow style, or SCALE-Sim's inputs.

    With --functional the exit status is 1 when a layer computes a wrong output."""
    if scalesim_config is not None or topology is not None:
        given = {"--hw": hw_ref, "--mapping": mapping_path, "--network": network, "--style": style,
                 "--layer": layer, "--mode": mode != "realistic", "--set": overrides, "--allow-overflow": allow_overflow,
                 "--per-pe": per_pe, "--trace": trace_dir, "--functional": functional, "--unchecked": unchecked}
        _simulate_scalesim(scalesim_config, topology, [name for name, value in given.items() if value],
                           json_out, csv_out, force, progress)
        return
    if hw_ref is None:
        _fail("missing option --hw (or run SCALE-Sim's inputs with --scalesim-config X.cfg --topology Y.csv)")
    _check_job_args(mapping_path, network, style)
    if unchecked and not functional:
        _fail("--unchecked needs --functional: an illegal mapping is only run to see what it computes")
    if functional and trace_dir is not None:
        _fail("--functional and --trace cannot be combined; run them separately (the timing is the same)")
    _check_output(json_out, force)
    _check_output(csv_out, force)
    if trace_dir is not None and Path(trace_dir).is_dir() and any(Path(trace_dir).iterdir()) and not force:
        _fail(f"{trace_dir}: directory is not empty; choose another or pass --force to write into it")
    try:
        hw, name, jobs = _load_jobs(hw_ref, overrides, mapping_path, network, style, layer)
        reports = []
        with _progress_bar(progress, len(jobs), name) as advance, _overflow_warnings():
            if functional:
                options = SimOptions(mode=mode, per_pe=per_pe, check_legality=not unchecked)
                result, reports = run_jobs_functional(name, jobs, hw, options, dtype, seed, allow_overflow, advance)
            elif trace_dir is None:
                result = run_jobs(name, jobs, hw, SimOptions(mode=mode, per_pe=per_pe), allow_overflow, advance)
            else:
                from accelsim.trace import TraceConfig, trace_jobs

                config = TraceConfig.parse(trace_format, trace_detail, trace_components)
                result = trace_jobs(name, jobs, hw, SimOptions(mode=mode, per_pe=per_pe), Path(trace_dir), config,
                                    allow_overflow, advance)
    except InputError as exc:
        _fail(str(exc))
    results = result.layers
    click.echo(f"{name} on {hw.name} ({mode} mode)")
    click.echo(_format_table(result))
    for report in reports:
        click.echo(report.text())
    if json_out:
        write_json(results, json_out, {"functional": [r.to_dict() for r in reports]} if functional else None)
        click.echo(f"wrote {json_out}")
    if csv_out:
        _write_csv([r.to_row() for r in results], csv_out)
    if trace_dir is not None:
        click.echo(f"wrote traces to {trace_dir}")
    if any(not report.passed for report in reports):
        sys.exit(1)


@main.command()
@_job_inputs("Analyze")
@click.option("--model", "model", type=click.Choice(["analytical", "maestro"]), default="analytical",
              show_default=True,
              help="analytical: our closed-form model; maestro: what the MAESTRO binary would print (its CSV "
                   "layout with --csv).")
@click.option("--mode", type=click.Choice(["maestro", "realistic"]), default="maestro", show_default=True,
              help="maestro: MAESTRO's assumptions (agrees with simulate --mode maestro); realistic: a rough "
                   "estimate with the hardware's multicast, L2 bandwidth caps and latencies.")
@_set_option
@_json_option
@_csv_option
@click.option("--allow-overflow", is_flag=True, help="Analyze mappings whose tiles do not fit their buffers (warns).")
@click.option("--force", is_flag=True, help="Overwrite existing --json/--csv files.")
def analyze(hw_ref, mapping_path, network, style, layer, model, mode, overrides, json_out, csv_out, allow_overflow,
            force) -> None:
    """Estimate a mapping file or a network with the fast analytical model (milliseconds per layer),
    or with the model of MAESTRO itself (--model maestro)."""
    from accelsim.analytical import bound_violations

    _check_job_args(mapping_path, network, style)
    if model == "maestro" and mode != "maestro":
        _fail("--model maestro has MAESTRO's assumptions only; drop --mode realistic")
    _check_output(json_out, force)
    _check_output(csv_out, force)
    maestro_csv_text = None
    try:
        hw, name, jobs = _load_jobs(hw_ref, overrides, mapping_path, network, style, layer)
        if model == "maestro":
            from accelsim.maestro import analyze_jobs as analyze_maestro
            from accelsim.maestro import csv_text

            result, analyses = analyze_maestro(name, jobs, hw)
            maestro_csv_text = csv_text(analyses)
        else:
            with _overflow_warnings():
                result = analyze_jobs(name, jobs, hw, mode, allow_overflow)
    except InputError as exc:
        _fail(str(exc))
    label = "model of MAESTRO" if model == "maestro" else f"analytical model, {mode} mode"
    click.echo(f"{name} on {hw.name} ({label})")
    click.echo(_format_table(result))
    for r in result.layers:
        for problem in bound_violations(r):
            click.echo(f"warning: {problem}", err=True)
    if json_out:
        write_json(result.layers, json_out)
        click.echo(f"wrote {json_out}")
    if csv_out and maestro_csv_text is not None:
        Path(csv_out).write_text(maestro_csv_text, encoding="utf-8")
        click.echo(f"wrote {csv_out}")
    elif csv_out:
        _write_csv([r.to_row() for r in result.layers], csv_out)


@main.command()
@_job_inputs("Lint")
@_set_option
@click.option("--json", "json_out", type=click.Path(dir_okay=False), help="Write the findings as JSON.")
@click.option("--force", is_flag=True, help="Overwrite an existing --json file.")
def lint(hw_ref, mapping_path, network, style, layer, overrides, json_out, force) -> None:
    """Say, for each layer, how MAESTRO's result for this mapping will be wrong: MACs it misses or
    double-counts, outputs inflated by stride, outputs of edge PEs it drops, idle PEs, buffers it
    does not enforce, layers it stops on. Exit status 0: clean, 1: findings, 2: bad input."""
    from accelsim.maestro.lint import lint_file_text, lint_job

    _check_job_args(mapping_path, network, style)
    _check_output(json_out, force)
    try:
        file_findings = lint_file_text(mapping_path) if mapping_path is not None else []
        hw, name, jobs = _load_jobs(hw_ref, overrides, mapping_path, network, style, layer)
        results = [lint_job(job, hw) for job in jobs]
    except InputError as exc:
        _fail(str(exc))
    click.echo(f"{name} on {hw.name}: what MAESTRO will get wrong")
    for finding in file_findings:
        click.echo(f"  file: [{finding.kind}] {finding.message}")
    for r in results:
        if not r.findings:
            click.echo(f"  {r.layer}: clean")
        for finding in r.findings:
            click.echo(f"  {r.layer}: [{finding.kind}] {finding.message}")
    count = len(file_findings) + sum(len(r.findings) for r in results)
    flagged = sum(1 for r in results if r.findings)
    click.echo(f"{count} finding(s) in {flagged} of {len(results)} layer(s)" + (" and the file" if file_findings else ""))
    if json_out:
        Path(json_out).write_text(json.dumps({"network": name, "hw": hw.name,
                                              "file": [f.__dict__ for f in file_findings],
                                              "layers": [r.to_dict() for r in results]}, indent=2),
                                  encoding="utf-8")
        click.echo(f"wrote {json_out}")
    sys.exit(1 if count else 0)


def _simulate_scalesim(config_path, topology_path, conflicting: list[str], json_out, csv_out, force, progress) -> None:
    """``simulate --scalesim-config X.cfg --topology Y.csv`` (see accelsim.scalesim)."""
    from accelsim.scalesim.command import (
        ACCEPTED_OPTIONS,
        format_scalesim_table,
        scalesim_json,
        scalesim_rows,
    )
    from accelsim.scalesim.config import read_scalesim_config
    from accelsim.scalesim.run import simulate_scalesim
    from accelsim.scalesim.topology import read_topology

    if config_path is None or topology_path is None:
        _fail("--scalesim-config and --topology go together: give both (SCALE-Sim's .cfg and topology CSV)")
    if conflicting:
        _fail(f"{', '.join(conflicting)} cannot be combined with --scalesim-config/--topology, which replace "
              f"--hw and --mapping/--network; that path takes only {', '.join(ACCEPTED_OPTIONS)}")
    _check_output(json_out, force)
    _check_output(csv_out, force)
    try:
        config, topology = read_scalesim_config(config_path), read_topology(topology_path)
        with _progress_bar(progress, len(topology.layers), topology.name) as advance:
            results = simulate_scalesim(config, topology, advance)
    except InputError as exc:
        _fail(str(exc))
    click.echo(format_scalesim_table(config, topology, results))
    if json_out:
        Path(json_out).write_text(scalesim_json(results), encoding="utf-8")
        click.echo(f"wrote {json_out}")
    if csv_out:
        _write_csv(scalesim_rows(results), csv_out)


@main.command()
@_job_inputs("Compare")
@click.option("--mode", type=click.Choice(["realistic", "maestro"]), default="realistic", show_default=True,
              help="Fidelity of the simulator and the models (maestro: they must agree).")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help="Override a hardware field (repeatable).")
@click.option("--model", "models", multiple=True, type=click.Choice(sorted(MODELS)),
              help="A cost model to compare (repeatable; default: analytical unless a file is given).")
@click.option("--maestro-csv", type=click.Path(dir_okay=False), help="MAESTRO's result CSV (layers matched by name).")
@click.option("--scalesim-report", type=click.Path(dir_okay=False),
              help="SCALE-Sim's COMPUTE_REPORT.csv (rows matched to the network's layers by order).")
@click.option("--attribution/--no-attribution", default=True, show_default=True,
              help="Split each cycle gap into causes (realistic mode: six more simulations per layer).")
@click.option("--brief", is_flag=True, help="Only the one-line-per-layer overview and the summary.")
@click.option("--json", "json_out", type=click.Path(dir_okay=False), help="Write the comparison as JSON.")
@click.option("--csv", "csv_out", type=click.Path(dir_okay=False), help="Write one row per layer and metric as CSV.")
@click.option("--allow-overflow", is_flag=True, help="Compare mappings whose tiles do not fit their buffers (warns).")
@click.option("--force", is_flag=True, help="Overwrite existing --json/--csv files.")
@click.option("--progress/--no-progress", default=None, help="Progress bar (default: on when stderr is a terminal).")
def compare(hw_ref, mapping_path, network, style, layer, mode, overrides, models, maestro_csv, scalesim_report,
            attribution, brief, json_out, csv_out, allow_overflow, force, progress) -> None:
    """Hold the simulator against cost models, MAESTRO's CSV and SCALE-Sim's report, per layer."""
    _check_job_args(mapping_path, network, style)
    _check_output(json_out, force)
    _check_output(csv_out, force)
    if not models and maestro_csv is None and scalesim_report is None:
        models = ("analytical",)
    try:
        hw, name, jobs = _load_jobs(hw_ref, overrides, mapping_path, network, style, layer)
        network_layers = positions = None  # SCALE-Sim's and MAESTRO's rows follow the whole network
        if (scalesim_report is not None or maestro_csv is not None) and layer is not None:
            all_jobs = _load_jobs(hw_ref, overrides, mapping_path, network, style, None)[2]
            network_layers = [j.layer.name for j in all_jobs]
            positions = [i for i, j in enumerate(all_jobs) if j.layer.name == layer]
        with _progress_bar(progress, len(jobs), name) as advance, _overflow_warnings():
            result = compare_jobs(name, jobs, hw, mode, models, maestro_csv, scalesim_report, network_layers,
                                  allow_overflow, attribution, advance, positions)
    except InputError as exc:
        _fail(str(exc))
    click.echo(format_comparison(result, detail=not brief))
    if json_out:
        with open(json_out, "w", encoding="utf-8") as f:
            json.dump(comparison_dict(result), f, indent=2)
        click.echo(f"wrote {json_out}")
    if csv_out:
        _write_csv(comparison_rows(result), csv_out)


@main.command()
@click.option("--hw", "hw_ref", required=True, help="Preset name or hardware file.")
@click.option("--network", required=True, help="Bundled network name or network YAML file.")
@click.option("--style", required=True, type=click.Choice(sorted(STYLES)))
@click.option("--layer", help="Only this layer.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the .m file here (default: stdout).")
@click.option("--force", is_flag=True, help="Overwrite an existing output file.")
def mapping(hw_ref, network, style, layer, overrides, output, force) -> None:
    """Write the MAESTRO mapping file a named style produces for a network."""
    _check_output(output, force)
    try:
        hw = load_hardware(hw_ref, list(overrides))
        name, jobs = jobs_from_network(network, style, hw, layer)
        text = write_maestro(to_maestro(name, jobs))
    except InputError as exc:
        _fail(str(exc))
    if output:
        Path(output).write_text(text, encoding="utf-8")
        click.echo(f"wrote {output}")
    else:
        click.echo(text, nl=False)


@main.command(name="list")
def list_things() -> None:
    """List hardware presets, bundled networks and dataflow styles."""
    click.echo("hardware presets: " + ", ".join(available_presets()))
    click.echo("networks:         " + ", ".join(available_networks()))
    click.echo("styles:           " + ", ".join(sorted(STYLES)))


@main.command()
@click.option("--hw", "hw_ref", required=True)
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE")
def hardware(hw_ref, overrides) -> None:
    """Print a hardware spec (after --set overrides) as YAML."""
    try:
        click.echo(dump_hardware(load_hardware(hw_ref, list(overrides))), nl=False)
    except InputError as exc:
        _fail(str(exc))


@main.command()
@click.option("--quick", is_flag=True, help="A smaller scenario (for CI smoke runs).")
@click.option("--search", "search_bench", is_flag=True,
              help="Instead: candidate screening throughput and worker speed-up of accelsim search.")
def bench(quick, search_bench) -> None:
    """Run the fixed benchmark scenario and print simulated cycles/s, events/s, peak memory."""
    if search_bench:
        from accelsim.search.bench import run_search_bench

        for line in run_search_bench(quick=quick):
            click.echo(line)
        return
    from accelsim.bench import run_bench

    for line in run_bench(quick=quick):
        click.echo(line)


@main.command()
@click.option("--out", "out_dir", default="validation", show_default=True, type=click.Path(file_okay=False),
              help="Directory for REPORT.md, results.csv and the PNG plots.")
@click.option("--quick", is_flag=True, help="Small simulation budget, no SCALE-Sim run (a smoke run).")
@click.option("--force", is_flag=True, help="Overwrite an existing report.")
def validate(out_dir, quick, force) -> None:
    """Run the papers' scenario sets, paper checks and SCALE-Sim parity; write the report.
    Run from the repository root (it reads validation/scalesim and validation/traces)."""
    import time

    from accelsim.validation import ValidationPaths, run_validation

    start = time.perf_counter()
    try:
        written = run_validation(ValidationPaths(Path(out_dir)), quick, force,
                                 lambda message: click.echo(message, err=True))
    except InputError as exc:
        _fail(str(exc))
    for path in written:
        click.echo(f"wrote {path}")
    click.echo(f"took {time.perf_counter() - start:.0f} s")


@main.command()
@click.argument("trace_dir", type=click.Path(file_okay=False))
@click.option("--bins", default=400, show_default=True, type=click.IntRange(1, 100000),
              help="Time bins per figure.")
@click.option("--window", metavar="FIRST:LAST", help="Only cycles FIRST to LAST (figure names get _FIRST-LAST).")
@click.option("--force", is_flag=True, help="Overwrite existing figures.")
def plot(trace_dir, bins, window, force) -> None:
    """Draw PNG figures (PE utilization, bandwidth, buffers, stalls) of a --trace directory."""
    try:
        from accelsim.trace.plot import layer_dirs, plot_layer

        cycles = None
        if window is not None:
            parts = window.split(":")
            if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
                raise InputError(f"--window {window}: expected FIRST:LAST, two cycle numbers such as 0:20000")
            cycles = (int(parts[0]), int(parts[1]))
        for layer_dir in layer_dirs(Path(trace_dir)):
            for path in plot_layer(layer_dir, bins, force, cycles):
                click.echo(f"wrote {path}")
    except InputError as exc:
        _fail(str(exc))


@main.command(name="search")
@click.option("--hw", "hw_ref", required=True, help="Preset name, hardware YAML file or MAESTRO hardware .m file.")
@click.option("--network", help="Bundled network name or network YAML file: search its layers.")
@click.option("--mapping", "mapping_path", type=click.Path(dir_okay=False),
              help="MAESTRO mapping file (.m): search its layers (their dataflows are not used).")
@click.option("--layer", help="Search only this layer.")
@_set_option
@click.option("--mapper", type=click.Choice(["gamma", "random", "exhaustive"]), default="gamma", show_default=True,
              help="gamma: GAMMA's genetic algorithm; random: uniform samples; exhaustive: every pruned genome.")
@click.option("--budget", type=int, default=2000, show_default=True, help="New schedules scored per layer.")
@click.option("--objective", type=click.Choice(["latency", "energy", "edp"]), default="latency", show_default=True,
              help="What to minimize: cycles, energy (pJ) or their product.")
@click.option("--model", default="analytical", show_default=True,
              help="analytical, sim, maestro, or two-stage (analytical screen, the simulator re-ranks --top-k).")
@click.option("--mode", type=click.Choice(["realistic", "maestro"]), default="realistic", show_default=True,
              help="Fidelity mode of the models.")
@click.option("--top-k", type=int, default=10, show_default=True, help="Candidates two-stage re-ranks per layer.")
@click.option("--workers", type=int, default=1, show_default=True, help="Local worker processes.")
@click.option("--scheduler", metavar="ADDR", help="Score on a Dask cluster, e.g. tcp://host:8786 (instead of --workers).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the mapper.")
@click.option("--max-levels", type=int, default=3, show_default=True, help="Most cluster levels of a genome (1-3).")
@click.option("--population", type=int, default=50, show_default=True, help="gamma: genomes per generation.")
@click.option("--min-utilization", type=float, default=0.5, show_default=True,
              help="exhaustive: prune genomes keeping fewer PEs busy than this share.")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Directory for candidates.parquet, best.m, summary.json, convergence.png.")
@click.option("--resume", is_flag=True, help="Continue the interrupted search saved in --out.")
@click.option("--progress/--no-progress", default=None, help="Progress bar (default: on when stderr is a terminal).")
def search_command(hw_ref, network, mapping_path, layer, overrides, mapper, budget, objective, model, mode, top_k,
                   workers, scheduler, seed, max_levels, population, min_utilization, out_dir, resume,
                   progress) -> None:
    """Search mappings of each layer; exit status 130 when interrupted (resume with --resume)."""
    from accelsim.search.executors import make_executor
    from accelsim.search.session import SearchSettings, run_search

    if workers < 1:
        _fail(f"--workers must be at least 1, got {workers}")
    if scheduler is not None and workers != 1:
        _fail("--workers and --scheduler exclude each other: the Dask cluster has its own workers")
    executor = None
    try:
        settings = SearchSettings(hw_ref, tuple(overrides), network, mapping_path, layer, mapper, budget, objective,
                                  model, mode, top_k, seed, max_levels, population, min_utilization)
        executor = make_executor(workers, scheduler)
        with _search_bar(progress, settings) as advance:
            summary = run_search(settings, Path(out_dir), executor, resume, advance)
    except InputError as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        click.echo(f"interrupted: what was scored is saved in {out_dir}; run the same command with --resume "
                   "to finish", err=True)
        sys.exit(130)
    finally:
        if executor is not None:
            executor.close()
    click.echo(_format_search(summary))
    click.echo(f"wrote {out_dir}")


@contextmanager
def _search_bar(progress: bool | None, settings):
    """A tqdm bar over the candidates to score, showing the best cost so far."""
    show = progress if progress is not None else sys.stderr.isatty()
    if not show:
        yield None
        return
    from tqdm import tqdm

    with tqdm(unit="cand", file=sys.stderr, desc="search") as bar:
        def advance(scored: int, best: float | None) -> None:
            bar.update(scored)
            if best is not None:
                bar.set_postfix_str(f"best {settings.objective} {best:,.4g}")
        yield advance


def _format_search(summary: dict) -> str:
    """One line per layer: candidates scored and legal, the best cost and two-stage fidelity."""
    objective = summary["settings"]["objective"]
    lines = [(f"{summary['network']} on {summary['hw']}: {summary['settings']['mapper']} search, "
              f"{summary['settings']['model']} model, {objective}")]
    header = ("layer", "scored", "legal", "best_cycles", "best_energy_uJ", "stopped", "spearman", "kendall", "regret")
    rows = []
    for layer in summary["layers"]:
        best, fidelity = layer["best"], layer["two_stage"] or {}
        def fmt(value, pattern):
            return pattern.format(value) if value is not None else "-"
        rows.append((layer["layer"], str(layer["scored"]), str(layer["legal"]),
                     fmt(best and best["cycles"], "{:,}"), fmt(best and best["energy_pj"] / 1e6, "{:.3f}"),
                     layer["stopped"], fmt(fidelity.get("spearman"), "{:.3f}"), fmt(fidelity.get("kendall"), "{:.3f}"),
                     fmt(fidelity.get("regret"), "{:.2%}")))
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    lines.append("  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(header, widths))))
    for row in rows:
        lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))))
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    main()
