"""The ``accelsim`` command.

User mistakes (bad files, flags, mappings that do not fit) print one ``error:`` line naming
the file, line or field and exit with status 2; no traceback. They take one path: a command
calls :func:`_fail` or lets an InputError rise, and the group turns either into a
:class:`UserError`. Options several commands take are declared once below; related options
reach a command as one record (:class:`JobArgs`, :class:`OutputArgs`, ...).
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import json
import sys
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Callable, Iterator, NoReturn, Sequence

import click

from accelsim import __version__
from accelsim.api import (
    OverflowWarning,
    analyze_jobs,
    jobs_from_mapping_file,
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
from accelsim.errors import InputError, InputWarning
from accelsim.functional import DTYPES, FunctionalReport
from accelsim.hw.loader import available_presets, dump_hardware, load_hardware
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.jobs import Job
from accelsim.mapping.maestro_format import write_maestro
from accelsim.mapping.styles import STYLES
from accelsim.model_options import MODES, Mode
from accelsim.results import NetworkResult, write_json
from accelsim.sim.engine import SimOptions
from accelsim.text_table import format_table
from accelsim.workload.tables import available_networks

EXIT_USER_ERROR = 2
Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]  # what click.option returns


class UserError(click.ClickException):
    """A mistake in what the user gave us: printed as one ``error:`` line on stderr, exit status 2.
    Every command's InputError becomes one (see :class:`_Accelsim`)."""

    exit_code = EXIT_USER_ERROR

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"error: {self.format_message()}", err=True, file=file)


def _fail(message: str) -> NoReturn:
    """Stop the command with ``error: message`` and exit status 2."""
    raise UserError(message)


class _Accelsim(click.Group):
    """The ``accelsim`` group: the one error path and the one warning path. An InputError raised
    anywhere in a command (a bad file, field, mapping or option value) leaves it as a
    :class:`UserError`; a warning (OverflowWarning, InputWarning) is one ``warning:`` line."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            with _warning_lines():
                return super().invoke(ctx)
        except InputError as exc:
            raise UserError(str(exc)) from None


# ----- options, declared once -------------------------------------------------------------------
def _options(*options: Decorator) -> Decorator:
    """One decorator applying ``options`` in the order given (as --help lists them)."""
    def apply(command: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            command = option(command)
        return command

    return apply


def _record(cls: type, param: str, *options: Decorator) -> Decorator:
    """Declare ``options`` and hand the command one ``cls`` record as keyword ``param`` instead:
    the options' destinations are the record's fields."""
    fields = [f.name for f in dataclasses.fields(cls)]

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(command)
        def with_record(*args: Any, **kwargs: Any) -> Any:
            kwargs[param] = cls(**{name: kwargs.pop(name) for name in fields})
            return command(*args, **kwargs)

        return _options(*options)(with_record)

    return decorate


_set_option = click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
                           help="Override a hardware field, e.g. --set l2.size_bytes=65536 (repeatable).")
_progress_option = click.option("--progress/--no-progress", default=None,
                                help="Progress bar (default: on when stderr is a terminal).")


def _json_option(help: str = "Write per-layer results as a JSON list.") -> Decorator:
    return click.option("--json", "json_out", type=click.Path(dir_okay=False), help=help)


def _csv_option(help: str = "Write per-layer results as CSV (MAESTRO column names).") -> Decorator:
    return click.option("--csv", "csv_out", type=click.Path(dir_okay=False), help=help)


def _force_option(what: str = "--json/--csv files") -> Decorator:
    return click.option("--force", is_flag=True, help=f"Overwrite existing {what}.")


def _mode_option(default: Mode, help: str) -> Decorator:
    """--mode with ``default`` listed first."""
    choices = [default] + [m for m in MODES if m != default]
    return click.option("--mode", type=click.Choice(choices), default=default, show_default=True, help=help)


def _allow_overflow_option(verb: str) -> Decorator:
    return click.option("--allow-overflow", is_flag=True,
                        help=f"{verb} mappings whose tiles do not fit their buffers (warns).")


@dataclass(frozen=True)
class JobArgs:
    """What to run: hardware (``--hw`` and ``--set``) and a mapping file or a network under a
    style, optionally one layer."""

    hw_ref: str | None
    mapping_path: str | None
    network: str | None
    style: str | None
    layer: str | None
    overrides: tuple[str, ...]

    def check(self) -> None:
        """--mapping FILE.m, or --network NAME with --style."""
        if (self.mapping_path is None) == (self.network is None):
            _fail("give exactly one of --mapping FILE.m or --network NAME (with --style)")
        if self.network is not None and self.style is None:
            _fail("--network needs --style; styles are: " + ", ".join(sorted(STYLES)))
        if self.mapping_path is not None and self.style is not None:
            _fail("--style applies to --network only; a mapping file carries its own dataflow")

    def load(self, all_layers: bool = False) -> LoadedJobs:
        """The hardware spec and the jobs (every layer with ``all_layers``); raises InputError."""
        hw, name, jobs = _load_jobs(self.hw_ref or "", self.overrides, self.mapping_path, self.network, self.style,
                                    None if all_layers else self.layer)
        return LoadedJobs(hw, name, jobs)


@dataclass(frozen=True)
class LoadedJobs:
    """The hardware, the network's name and its jobs."""

    hw: HardwareSpec
    name: str
    jobs: list[Job]


def _job_options(verb: str, hw_required: bool = True) -> Decorator:
    """--hw, --mapping, --network, --style, --layer and --set as one :class:`JobArgs` ``job``
    (simulate, analyze, compare, lint); ``verb`` starts --layer's help."""
    return _record(
        JobArgs, "job",
        click.option("--hw", "hw_ref", required=hw_required,
                     help="Preset name, hardware YAML file or MAESTRO hardware .m file."),
        click.option("--mapping", "mapping_path", type=click.Path(dir_okay=False),
                     help="MAESTRO mapping file (.m) or loop-nest mapping file (.yaml)."),
        click.option("--network", help="Bundled network name, network YAML file or ONNX model (with --style)."),
        click.option("--style", type=click.Choice(sorted(STYLES)), help="Named dataflow style (with --network)."),
        click.option("--layer", help=f"{verb} only this layer."),
        _set_option,
    )


@dataclass(frozen=True)
class OutputArgs:
    """Where results go: ``--json``, ``--csv`` and whether existing files may be overwritten."""

    json_out: str | None
    csv_out: str | None
    force: bool

    def check(self) -> None:
        _check_output(self.json_out, self.force)
        _check_output(self.csv_out, self.force)


def _output_options(json_option: Decorator | None = None, csv_option: Decorator | None = None,
                    force_what: str = "--json/--csv files") -> Decorator:
    """--json, --csv (default: per-layer results) and --force as one :class:`OutputArgs` ``out``."""
    return _record(OutputArgs, "out", json_option or _json_option(), csv_option or _csv_option(),
                   _force_option(force_what))


def _check_output(path: str | None, force: bool) -> None:
    """Refuse to overwrite an existing file unless --force."""
    if path is None:
        return
    p = Path(path)
    if p.exists() and not force:
        _fail(f"{path}: already exists; choose another name or pass --force to overwrite it")
    if not p.parent.exists():
        _fail(f"{path}: directory {p.parent} does not exist")


def _load_jobs(hw_ref: str, overrides: Sequence[str], mapping_path: str | None, network: str | None,
               style: str | None, layer: str | None) -> tuple[HardwareSpec, str, list[Job]]:
    """(hardware spec, network name, jobs) of checked job arguments; raises InputError."""
    hw = load_hardware(hw_ref, list(overrides))
    if mapping_path is not None:
        name, jobs = jobs_from_mapping_file(mapping_path, hw.num_pes, layer)
    else:
        name, jobs = jobs_from_network(network or "", style or "", hw, layer)
    return hw, name, jobs


@contextmanager
def _progress_bar(progress: bool | None, total_layers: int, name: str) -> Iterator[Callable[[Any], None] | None]:
    """A tqdm bar over layers on stderr (default: when stderr is a terminal): yields the
    per-layer callback that advances it, or None when no bar is shown."""
    show = progress if progress is not None else sys.stderr.isatty()
    if not show or total_layers <= 1:
        yield None
        return
    from tqdm import tqdm

    with tqdm(total=total_layers, unit="layer", file=sys.stderr, desc=name) as bar:
        def advance(done: Any) -> None:
            bar.update(1)

        yield advance


def _write_csv(rows: list[dict[str, Any]], path: str) -> None:
    """Rows (dicts with the same keys) as a CSV file with a header line."""
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    click.echo(f"wrote {path}")


@contextmanager
def _warning_lines() -> Iterator[None]:
    """Show every OverflowWarning (--allow-overflow) and InputWarning (e.g. ONNX nodes left out)
    as one ``warning:`` line on stderr."""
    with warnings.catch_warnings():
        warnings.simplefilter("always", OverflowWarning)
        warnings.simplefilter("always", InputWarning)
        warnings.showwarning = lambda message, *args, **kwargs: click.echo(f"warning: {message}", err=True)
        yield


@click.group(cls=_Accelsim, context_settings={"help_option_names": ["-h", "--help"]})
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
    return format_table(header, rows, left=(0, 1))


@dataclass(frozen=True)
class ScaleSimArgs:
    """``--scalesim-config`` and ``--topology``: SCALE-Sim's own inputs instead of --hw and a mapping."""

    scalesim_config: str | None
    topology: str | None

    @property
    def given(self) -> bool:
        return self.scalesim_config is not None or self.topology is not None


@dataclass(frozen=True)
class TraceArgs:
    """``--trace DIR`` and how to trace (formats, detail, components)."""

    trace_dir: str | None
    trace_format: str
    trace_detail: str
    trace_components: str | None


@dataclass(frozen=True)
class FunctionalArgs:
    """``--functional`` (values along the transfers, output checked) and its operands."""

    enabled: bool
    seed: int
    dtype: str
    unchecked: bool


@main.command()
@_job_options("Simulate", hw_required=False)
@_record(ScaleSimArgs, "scalesim",
         click.option("--scalesim-config", type=click.Path(dir_okay=False),
                      help="SCALE-Sim .cfg (with --topology): our systolic model on SCALE-Sim's inputs, instead of --hw."),
         click.option("--topology", type=click.Path(dir_okay=False),
                      help="SCALE-Sim topology CSV, convolution or GEMM form (with --scalesim-config)."))
@_mode_option("realistic", "realistic: contention, latencies, packets; maestro: MAESTRO's assumptions.")
@_output_options(force_what="--json/--csv files and a non-empty --trace directory")
@_allow_overflow_option("Simulate")
@click.option("--per-pe", is_flag=True, help="One event per PE and packet (slow; the reference for the grouped mode).")
@_record(TraceArgs, "trace",
         click.option("--trace", "trace_dir", type=click.Path(file_okay=False),
                      help="Write execution traces into this directory (one subdirectory per layer)."),
         click.option("--trace-format", default="perfetto,parquet,dram", show_default=True,
                      help="Comma-separated trace formats: perfetto, parquet (CSV without pyarrow), csv, dram."),
         click.option("--trace-detail", type=click.Choice(["step", "transfer", "pe"]), default="transfer",
                      show_default=True,
                      help="step: one span per network and step; transfer: one per tensor burst; pe: per PE and packet."),
         click.option("--trace-components", metavar="LIST",
                      help="Comma-separated components to trace: dram, distribution_noc, reduction_noc, pe_array, pe, "
                           "buffers (default: all)."))
@_record(FunctionalArgs, "functional",
         click.option("--functional", "enabled", is_flag=True,
                      help="Move real values along the simulated transfers and check each layer's output (small layers)."),
         click.option("--seed", type=int, default=0, show_default=True, help="Random operands of --functional."),
         click.option("--dtype", type=click.Choice(list(DTYPES)), default="int8", show_default=True,
                      help="Operand type of --functional (integers compare exactly, fp32 within a rounding bound)."),
         click.option("--unchecked", is_flag=True,
                      help="With --functional, for testing mappers: run a mapping that fails the legality checks "
                           "(overlapping or gapped windows, reduction without a reduction network) and show what goes "
                           "wrong."))
@_progress_option
def simulate(job: JobArgs, scalesim: ScaleSimArgs, mode: Mode, out: OutputArgs, allow_overflow: bool, per_pe: bool,
             trace: TraceArgs, functional: FunctionalArgs, progress: bool | None) -> None:
    """Simulate a mapping file, or a network under a named dataflow style, or SCALE-Sim's inputs.

    With --functional the exit status is 1 when a layer computes a wrong output."""
    if scalesim.given:
        given = {"--hw": job.hw_ref, "--mapping": job.mapping_path, "--network": job.network, "--style": job.style,
                 "--layer": job.layer, "--mode": mode != "realistic", "--set": job.overrides,
                 "--allow-overflow": allow_overflow, "--per-pe": per_pe, "--trace": trace.trace_dir,
                 "--functional": functional.enabled, "--unchecked": functional.unchecked}
        _simulate_scalesim(scalesim, [name for name, value in given.items() if value], out, progress)
        return
    if job.hw_ref is None:
        _fail("missing option --hw (or run SCALE-Sim's inputs with --scalesim-config X.cfg --topology Y.csv)")
    job.check()
    if functional.unchecked and not functional.enabled:
        _fail("--unchecked needs --functional: an illegal mapping is only run to see what it computes")
    if functional.enabled and trace.trace_dir is not None:
        _fail("--functional and --trace cannot be combined; run them separately (the timing is the same)")
    out.check()
    trace_dir = Path(trace.trace_dir) if trace.trace_dir is not None else None
    if trace_dir is not None and trace_dir.is_dir() and any(trace_dir.iterdir()) and not out.force:
        _fail(f"{trace.trace_dir}: directory is not empty; choose another or pass --force to write into it")
    loaded = job.load()
    reports: list[FunctionalReport] = []
    options = SimOptions(mode=mode, per_pe=per_pe, check_legality=not functional.unchecked)
    with _progress_bar(progress, len(loaded.jobs), loaded.name) as advance:
        if functional.enabled:
            result, reports = run_jobs_functional(loaded.name, loaded.jobs, loaded.hw, options, functional.dtype,
                                                  functional.seed, allow_overflow, advance)
        elif trace_dir is None:
            result = run_jobs(loaded.name, loaded.jobs, loaded.hw, options, allow_overflow, advance)
        else:
            from accelsim.trace import TraceConfig, trace_jobs

            config = TraceConfig.parse(trace.trace_format, trace.trace_detail, trace.trace_components)
            result = trace_jobs(loaded.name, loaded.jobs, loaded.hw, options, trace_dir, config, allow_overflow,
                                advance)
    click.echo(f"{loaded.name} on {loaded.hw.name} ({mode} mode)")
    click.echo(_format_table(result))
    for report in reports:
        click.echo(report.text())
    if out.json_out:
        write_json(result.layers, out.json_out,
                   {"functional": [r.to_dict() for r in reports]} if functional.enabled else None)
        click.echo(f"wrote {out.json_out}")
    if out.csv_out:
        _write_csv([r.to_row() for r in result.layers], out.csv_out)
    if trace_dir is not None:
        click.echo(f"wrote traces to {trace.trace_dir}")
    if any(not report.passed for report in reports):
        sys.exit(1)


@main.command()
@_job_options("Analyze")
@click.option("--model", "model", type=click.Choice(["analytical", "maestro"]), default="analytical",
              show_default=True,
              help="analytical: our closed-form model; maestro: what the MAESTRO binary would print (its CSV "
                   "layout with --csv).")
@_mode_option("maestro", "maestro: MAESTRO's assumptions (agrees with simulate --mode maestro); realistic: a rough "
                         "estimate with the hardware's multicast, L2 bandwidth caps and latencies.")
@_output_options()
@_allow_overflow_option("Analyze")
def analyze(job: JobArgs, model: str, mode: Mode, out: OutputArgs, allow_overflow: bool) -> None:
    """Estimate a mapping file or a network with the fast analytical model (milliseconds per layer),
    or with the model of MAESTRO itself (--model maestro)."""
    from accelsim.analytical import bound_violations

    job.check()
    if model == "maestro" and mode != "maestro":
        _fail("--model maestro has MAESTRO's assumptions only; drop --mode realistic")
    out.check()
    maestro_csv_text = None
    loaded = job.load()
    if model == "maestro":
        from accelsim.maestro import analyze_jobs as analyze_maestro
        from accelsim.maestro import csv_text

        result, analyses = analyze_maestro(loaded.name, loaded.jobs, loaded.hw)
        maestro_csv_text = csv_text(analyses)
    else:
        result = analyze_jobs(loaded.name, loaded.jobs, loaded.hw, mode, allow_overflow)
    label = "model of MAESTRO" if model == "maestro" else f"analytical model, {mode} mode"
    click.echo(f"{loaded.name} on {loaded.hw.name} ({label})")
    click.echo(_format_table(result))
    for r in result.layers:
        for problem in bound_violations(r):
            click.echo(f"warning: {problem}", err=True)
    if out.json_out:
        write_json(result.layers, out.json_out)
        click.echo(f"wrote {out.json_out}")
    if out.csv_out and maestro_csv_text is not None:
        Path(out.csv_out).write_text(maestro_csv_text, encoding="utf-8")
        click.echo(f"wrote {out.csv_out}")
    elif out.csv_out:
        _write_csv([r.to_row() for r in result.layers], out.csv_out)


@main.command()
@_job_options("Lint")
@_json_option("Write the findings as JSON.")
@_force_option("--json file")
def lint(job: JobArgs, json_out: str | None, force: bool) -> None:
    """Say, for each layer, how MAESTRO's result for this mapping will be wrong: MACs it misses or
    double-counts, outputs inflated by stride, outputs of edge PEs it drops, idle PEs, buffers it
    does not enforce, layers it stops on. Exit status 0: clean, 1: findings, 2: bad input."""
    from accelsim.maestro.lint import lint_file_text, lint_job

    job.check()
    _check_output(json_out, force)
    file_findings = lint_file_text(job.mapping_path) if job.mapping_path is not None else []
    loaded = job.load()
    results = [lint_job(j, loaded.hw) for j in loaded.jobs]
    click.echo(f"{loaded.name} on {loaded.hw.name}: what MAESTRO will get wrong")
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
        Path(json_out).write_text(json.dumps({"network": loaded.name, "hw": loaded.hw.name,
                                              "file": [f.__dict__ for f in file_findings],
                                              "layers": [r.to_dict() for r in results]}, indent=2),
                                  encoding="utf-8")
        click.echo(f"wrote {json_out}")
    sys.exit(1 if count else 0)


def _simulate_scalesim(scalesim: ScaleSimArgs, conflicting: list[str], out: OutputArgs, progress: bool | None) -> None:
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

    if scalesim.scalesim_config is None or scalesim.topology is None:
        _fail("--scalesim-config and --topology go together: give both (SCALE-Sim's .cfg and topology CSV)")
    if conflicting:
        _fail(f"{', '.join(conflicting)} cannot be combined with --scalesim-config/--topology, which replace "
              f"--hw and --mapping/--network; that path takes only {', '.join(ACCEPTED_OPTIONS)}")
    out.check()
    config, topology = read_scalesim_config(scalesim.scalesim_config), read_topology(scalesim.topology)
    with _progress_bar(progress, len(topology.layers), topology.name) as advance:
        results = simulate_scalesim(config, topology, advance)
    click.echo(format_scalesim_table(config, topology, results))
    if out.json_out:
        Path(out.json_out).write_text(scalesim_json(results), encoding="utf-8")
        click.echo(f"wrote {out.json_out}")
    if out.csv_out:
        _write_csv(scalesim_rows(results), out.csv_out)


@main.command()
@_job_options("Compare")
@_mode_option("realistic", "Fidelity of the simulator and the models (maestro: they must agree).")
@click.option("--model", "models", multiple=True, type=click.Choice(sorted(MODELS)),
              help="A cost model to compare (repeatable; default: analytical unless a file is given).")
@click.option("--maestro-csv", type=click.Path(dir_okay=False),
              help="MAESTRO's result CSV (rows matched by position when they follow the network, else by name).")
@click.option("--scalesim-report", type=click.Path(dir_okay=False),
              help="SCALE-Sim's COMPUTE_REPORT.csv (rows matched to the network's layers by order).")
@click.option("--attribution/--no-attribution", default=True, show_default=True,
              help="Split each cycle gap into causes (realistic mode: six more simulations per layer).")
@click.option("--brief", is_flag=True, help="Only the one-line-per-layer overview and the summary.")
@_output_options(_json_option("Write the comparison as JSON."), _csv_option("Write one row per layer and metric as CSV."))
@_allow_overflow_option("Compare")
@_progress_option
def compare(job: JobArgs, mode: Mode, models: tuple[str, ...], maestro_csv: str | None, scalesim_report: str | None,
            attribution: bool, brief: bool, out: OutputArgs, allow_overflow: bool, progress: bool | None) -> None:
    """Hold the simulator against cost models, MAESTRO's CSV and SCALE-Sim's report, per layer."""
    job.check()
    out.check()
    if not models and maestro_csv is None and scalesim_report is None:
        models = ("analytical",)
    loaded = job.load()
    network_layers = positions = None  # SCALE-Sim's and MAESTRO's rows follow the whole network
    if (scalesim_report is not None or maestro_csv is not None) and job.layer is not None:
        all_jobs = job.load(all_layers=True).jobs
        network_layers = [j.layer.name for j in all_jobs]
        positions = [i for i, j in enumerate(all_jobs) if j.layer.name == job.layer]
    with _progress_bar(progress, len(loaded.jobs), loaded.name) as advance:
        result = compare_jobs(loaded.name, loaded.jobs, loaded.hw, mode, models, maestro_csv, scalesim_report,
                              network_layers, allow_overflow, attribution, advance, positions)
    click.echo(format_comparison(result, detail=not brief))
    if out.json_out:
        with open(out.json_out, "w", encoding="utf-8") as f:
            json.dump(comparison_dict(result), f, indent=2)
        click.echo(f"wrote {out.json_out}")
    if out.csv_out:
        _write_csv(comparison_rows(result), out.csv_out)


@main.command()
@_job_options("Write")
@click.option("--format", "form", type=click.Choice(["maestro", "loopnest"]), default="maestro", show_default=True,
              help="maestro: a MAESTRO .m file; loopnest: a loop-nest YAML file (Timeloop-style).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the file here (default: stdout).")
@_force_option("output file")
def mapping(job: JobArgs, form: str, output: str | None, force: bool) -> None:
    """Write the mapping a named style produces for a network, or convert a mapping file, as a
    MAESTRO .m file or a loop-nest YAML file."""
    from accelsim.mapping.compile import compile_mapping
    from accelsim.mapping.loopnest_format import loopnest_of, write_loopnest

    job.check()
    _check_output(output, force)
    loaded = job.load()
    if form == "maestro":
        text = write_maestro(to_maestro(loaded.name, loaded.jobs))
    else:
        nests = [loopnest_of(compile_mapping(j.layer, j.dataflow, loaded.hw.num_pes, source=j.source))
                 for j in loaded.jobs]
        text = write_loopnest(loaded.name, nests)
    if output:
        Path(output).write_text(text, encoding="utf-8")
        click.echo(f"wrote {output}")
    else:
        click.echo(text, nl=False)


@main.command(name="import-onnx")
@click.argument("model", type=click.Path(dir_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="Write the network table (YAML) here (default: stdout).")
@click.option("--batch", type=click.IntRange(min=1), help="Batch size (default: the model's; 1 where it is symbolic).")
@click.option("--strict", is_flag=True, help="Refuse a model with nodes accelsim does not simulate instead of "
                                             "skipping them.")
@_force_option("output file")
def import_onnx_command(model: str, output: str | None, batch: int | None, strict: bool, force: bool) -> None:
    """Turn an ONNX model into a network table to read, edit and run with --network."""
    from accelsim.workload.onnx_import import import_onnx
    from accelsim.workload.tables import network_yaml

    _check_output(output, force)
    imported = import_onnx(model, batch, strict)
    notes = f"batch {imported.batch}" + (f"; {imported.skipped_summary()}" if imported.skipped else "")
    text = network_yaml(imported.network, source=f"imported from {Path(model).name}", notes=notes)
    if imported.skipped:
        click.echo(f"warning: {model}: {imported.skipped_summary()}", err=True)
    if output:
        Path(output).write_text(text, encoding="utf-8")
        click.echo(f"wrote {output} ({len(imported.network.layers)} layers, {imported.network.macs:,} MACs)")
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
@_set_option
def hardware(hw_ref: str, overrides: tuple[str, ...]) -> None:
    """Print a hardware spec (after --set overrides) as YAML."""
    click.echo(dump_hardware(load_hardware(hw_ref, list(overrides))), nl=False)


@main.command()
@click.option("--quick", is_flag=True, help="Smaller versions of the scenarios (a CI smoke run).")
@click.option("--scenario", "only", multiple=True,
              type=click.Choice(["alexnet-tpu", "resnet50-eyeriss", "marvel15-layer", "vgg16-maeri", "wide-array"]),
              help="Run only this scenario (repeatable).")
@click.option("--search", "search_bench", is_flag=True,
              help="Instead: candidate screening throughput and worker speed-up of accelsim search.")
@click.option("--against-scalesim", is_flag=True,
              help="Instead: SCALE-Sim and accelsim on the same AlexNet layer and array, alternating "
                   "(needs the scalesim extra).")
@click.option("--layer", default="conv2", show_default=True, help="With --against-scalesim: the AlexNet layer.")
@click.option("--rounds", default=2, show_default=True, type=click.IntRange(1),
              help="With --against-scalesim: how many times each tool runs.")
def bench(quick: bool, only: tuple[str, ...], search_bench: bool, against_scalesim: bool, layer: str,
          rounds: int) -> None:
    """Speed and memory of the simulator on fixed scenarios, each against its target."""
    if search_bench:
        from accelsim.search.bench import run_search_bench

        for line in run_search_bench(quick=quick):
            click.echo(line)
        return
    from accelsim.bench import against_scalesim as versus, run_bench

    if against_scalesim:
        try:
            import scalesim  # noqa: F401
        except ImportError:
            _fail("--against-scalesim needs SCALE-Sim: pip install 'accelsim[scalesim]'")
        if layer not in ("conv1", "conv2", "conv3", "conv4", "conv5"):
            _fail(f"--layer {layer!r}: expected one of conv1, conv2, conv3, conv4, conv5")
        for line in versus(layer, rounds):
            click.echo(line)
        return
    for line in run_bench(quick=quick, only=tuple(only)):
        click.echo(line)


@main.command()
@click.option("--out", "out_dir", default="validation", show_default=True, type=click.Path(file_okay=False),
              help="Directory for REPORT.md, results.csv and the PNG plots.")
@click.option("--quick", is_flag=True, help="Small simulation budget, no SCALE-Sim run (a smoke run).")
@_force_option("report")
def validate(out_dir: str, quick: bool, force: bool) -> None:
    """Run the papers' scenario sets, paper checks and SCALE-Sim parity; write the report.
    Run from the repository root (it reads validation/scalesim and validation/traces)."""
    import time

    from accelsim.validation import ValidationPaths, run_validation

    start = time.perf_counter()
    written = run_validation(ValidationPaths(Path(out_dir)), quick, force, lambda message: click.echo(message, err=True))
    for path in written:
        click.echo(f"wrote {path}")
    click.echo(f"took {time.perf_counter() - start:.0f} s")


@main.command()
@click.argument("trace_dir", type=click.Path(file_okay=False))
@click.option("--bins", default=400, show_default=True, type=click.IntRange(1, 100000),
              help="Time bins per figure.")
@click.option("--window", metavar="FIRST:LAST", help="Only cycles FIRST to LAST (figure names get _FIRST-LAST).")
@_force_option("figures")
def plot(trace_dir: str, bins: int, window: str | None, force: bool) -> None:
    """Draw PNG figures (PE utilization, bandwidth, buffers, stalls) of a --trace directory."""
    from accelsim.trace.plot import layer_dirs, plot_layer

    cycles = None
    if window is not None:
        parts = window.split(":")
        if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
            _fail(f"--window {window}: expected FIRST:LAST, two cycle numbers such as 0:20000")
        cycles = (int(parts[0]), int(parts[1]))
    for layer_dir in layer_dirs(Path(trace_dir)):
        for path in plot_layer(layer_dir, bins, force, cycles):
            click.echo(f"wrote {path}")


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
@_mode_option("realistic", "Fidelity mode of the models.")
@click.option("--top-k", type=int, default=10, show_default=True, help="Candidates two-stage re-ranks per layer.")
@click.option("--workers", type=int, default=1, show_default=True, help="Local worker processes.")
@click.option("--scheduler", metavar="ADDR", help="Score on a Dask cluster, e.g. tcp://host:8786 (instead of --workers).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the mapper.")
@click.option("--max-levels", type=int, default=3, show_default=True, help="Most cluster levels of a genome (1-3).")
@click.option("--population", type=int, default=50, show_default=True, help="gamma: genomes per generation.")
@click.option("--min-utilization", type=float, default=0.5, show_default=True,
              help="exhaustive: prune genomes keeping fewer PEs busy than this share.")
@click.option("--work-budget", type=float, default=None,
              help="Most work the scoring model may spend on one candidate (analytical: iteration cases x PEs, "
                   "default 200000; sim: steps x PEs, default 1000000); candidates above are skipped.")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Directory for candidates.parquet, best.m, summary.json, convergence.png.")
@click.option("--resume", is_flag=True, help="Continue the interrupted search saved in --out.")
@_progress_option
def search_command(hw_ref, network, mapping_path, layer, overrides, mapper, budget, objective, model, mode, top_k,
                   workers, scheduler, seed, max_levels, population, min_utilization, work_budget, out_dir,
                   resume, progress) -> None:
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
                                  model, mode, top_k, seed, max_levels, population, min_utilization, work_budget)
        executor = make_executor(workers, scheduler)
        with _search_bar(progress, settings) as advance:
            summary = run_search(settings, Path(out_dir), executor, resume, advance)
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
    return "\n".join(lines + [format_table(header, rows)])


if __name__ == "__main__":  # pragma: no cover
    main()
