"""The ``accelsim`` command.

Every command goes through one error path (:class:`_Accelsim`): a mistake in an input, an
option or an output path prints one ``error:`` line naming the file, line or field and exits
with status 2; a run over its budget or out of memory or disk exits with 3; Ctrl-C and SIGTERM
exit with 130 and 143 after writing every finished layer; a functional mismatch (and ``compare
--fail-on-disagree`` finding a disagreement) exits with 1; a bug in accelsim exits with 70.
Never a traceback (``ACCELSIM_TRACEBACK=1`` shows one for a bug).
"""

from __future__ import annotations

import errno
import json
import os
import signal
import sys
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, NoReturn

import click

from accelsim import __version__
from accelsim.api import (OverflowWarning, RunObserver, analyze_jobs, jobs_from_maestro, jobs_from_network,
                          run_jobs, run_jobs_functional, to_maestro)
from accelsim.budget import DEFAULT_MAX_STEPS, Budget, format_bytes, format_seconds, parse_size
from accelsim.compare import MODELS, compare_jobs, comparison_dict, comparison_rows, format_comparison
from accelsim.compare.run import Comparison
from accelsim.errors import (EXIT_FAILED, EXIT_INPUT, EXIT_INTERNAL, EXIT_RESOURCES, EXIT_SIGINT, EXIT_SIGTERM,
                             InputError, ResourceError)
from accelsim.functional import DTYPES, FunctionalReport
from accelsim.hw.loader import available_presets, dump_hardware, load_hardware
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.compile import CompiledMapping
from accelsim.mapping.maestro_format import write_maestro
from accelsim.mapping.styles import STYLES
from accelsim.output_files import check_outputs, clear_trace_dir, write_atomic
from accelsim.outputs import InputFile, Provenance, ResultFiles, csv_text, hardware_sha256, layer_total_row
from accelsim.progress import ProgressDisplay, choose_style
from accelsim.results import LayerResult, NetworkResult
from accelsim.sim.engine import SimOptions
from accelsim.sim.estimate import LayerEstimate, RunKind, check_budget, estimate_layer
from accelsim.workload.tables import available_networks, load_network

# errno values that mean the machine ran out of room, not that a path is wrong
_OUT_OF_ROOM = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.ENOMEM, errno.EIO}


def _error(message: str, status: int) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(status)


def _fail(message: str) -> NoReturn:
    """A mistake in the command line: one ``error:`` line, exit status 2."""
    _error(message, EXIT_INPUT)


class Stopped(BaseException):
    """SIGINT or SIGTERM arrived during a run (a BaseException, so no ``except Exception``
    swallows it)."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signal_name = signal.Signals(signum).name
        self.status = EXIT_SIGINT if signum == signal.SIGINT else EXIT_SIGTERM


@contextmanager
def _stop_on_signals() -> Iterator[None]:
    """Turn SIGINT and SIGTERM into :class:`Stopped` while a run is going (outside the main
    thread, where handlers cannot be set, nothing changes)."""
    def stop(signum: int, frame: Any) -> None:
        raise Stopped(signum)

    try:
        previous = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    except ValueError:
        previous = {}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


class _Accelsim(click.Group):
    """The ``accelsim`` group, with the one error path every command shares."""

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        _ACTIVITY.clear()
        try:
            status = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.UsageError as exc:
            where = f"{exc.ctx.command_path}: " if exc.ctx is not None else ""
            help_hint = f" (see {exc.ctx.command_path} --help)" if exc.ctx is not None else ""
            _error(f"{where}{exc.format_message()}{help_hint}", EXIT_INPUT)
        except click.ClickException as exc:
            _error(exc.format_message(), EXIT_INPUT)
        except (click.Abort, KeyboardInterrupt):
            _error("interrupted", EXIT_SIGINT)
        except Stopped as exc:
            _error(f"stopped by {exc.signal_name}", exc.status)
        except InputError as exc:
            _error(str(exc), EXIT_INPUT)
        except ResourceError as exc:
            _error(str(exc), EXIT_RESOURCES)
        except MemoryError as exc:
            _error(f"out of memory{_activity_text()}{f' ({exc})' if str(exc) else ''}; try a smaller layer, "
                   "--max-memory to be refused before running out, or `accelsim analyze`", EXIT_RESOURCES)
        except BrokenPipeError:
            os._exit(141)  # the reader of our output went away (e.g. `| head`); nothing to say
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            _error(f"{where}{exc.strerror or exc}", EXIT_RESOURCES if exc.errno in _OUT_OF_ROOM else EXIT_INPUT)
        except RecursionError:
            _error(f"an input is nested too deeply{_activity_text()}", EXIT_INPUT)
        except Exception as exc:  # noqa: BLE001 - the last resort: a bug, reported in one line
            if os.environ.get("ACCELSIM_TRACEBACK"):
                raise
            _error(f"internal error (a bug in accelsim {__version__}){_activity_text()}: "
                   f"{type(exc).__name__}: {exc}; please report it (ACCELSIM_TRACEBACK=1 shows where)",
                   EXIT_INTERNAL)
        sys.exit(status if isinstance(status, int) else 0)


_ACTIVITY: list[str] = []  # what the command is doing, for a MemoryError or internal error message


def _activity_text() -> str:
    return f" while {_ACTIVITY[-1]}" if _ACTIVITY else ""


@contextmanager
def _doing(what: str) -> Iterator[None]:
    """Name what the command does (for the message of an error it cannot foresee; kept when
    one escapes, so the error path can say it)."""
    _ACTIVITY.append(what)
    yield
    _ACTIVITY.pop()


def _layer_option(verb: str) -> Callable[[Any], Any]:
    """``--layer NAME``, refused when given twice (click would keep the last silently)."""
    def one(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> str | None:
        if len(values) > 1:
            raise click.BadParameter(f"given {len(values)} times ({', '.join(values)}); give it once "
                                     "(or leave it out for every layer)")
        return values[0] if values else None

    return click.option("--layer", multiple=True, callback=one, help=f"{verb} only this layer.")


def _max_memory_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--max-memory SIZE``: refuse a layer whose estimated peak memory is larger."""
    def memory(ctx: click.Context, param: click.Parameter, value: str | None) -> int:
        if value is None:
            return 0
        try:
            return parse_size(value)
        except ValueError as exc:
            raise click.BadParameter(str(exc)) from None

    return click.option("--max-memory", metavar="SIZE", callback=memory,
                        help="Refuse a layer whose estimated peak memory is larger (e.g. 8G; default: three "
                             "quarters of this machine's memory).")(command)


def _budget_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--max-steps`` and ``--max-memory``: the budget one layer's simulation may spend."""
    command = _max_memory_option(command)
    return click.option("--max-steps", type=click.IntRange(1), default=DEFAULT_MAX_STEPS, show_default=True,
                        help="Refuse a layer with more simulated steps (its estimate is printed).")(command)


class _Run(RunObserver):
    """One command's run of the layers ``names``: the up-front budget check of each compiled
    layer (with ``checker``), the progress display, the result of each finished layer handed
    to ``record``, and the layer going on or next (for a stop)."""

    def __init__(self, name: str, names: list[str], progress: bool | None,
                 record: Callable[[int, LayerResult], None],
                 checker: Callable[[CompiledMapping], LayerEstimate | None], show: bool = True,
                 before_first: Callable[[], None] | None = None):
        style = choose_style(progress, sys.stderr) if show else "off"
        heartbeat = float(os.environ.get("ACCELSIM_HEARTBEAT_SECONDS", "30") or 30)
        self.display = ProgressDisplay(name, len(names), style, heartbeat_seconds=heartbeat)
        self.name = name
        self.names = names
        self.layers = len(names)
        self.record = record
        self.checker = checker
        self.before_first = before_first
        self.estimates: list[LayerEstimate | None] = []
        self.finished = 0

    @property
    def current(self) -> str | None:
        """The layer running, or the next one between two layers (None once all have run)."""
        return self.names[self.finished] if self.finished < self.layers else None

    def check(self, cm: CompiledMapping) -> None:
        self.estimates.append(self.checker(cm))

    def layer_started(self, index: int, cm: CompiledMapping) -> None:
        if index == 0:
            self._announce()
            if self.before_first is not None:
                self.before_first()
        estimate = self.estimates[index] if index < len(self.estimates) else None
        self.display.layer_started(index, cm.layer.name, cm.steps, estimate.describe() if estimate else "",
                                   estimate.wall_seconds if estimate else 0.0)

    def steps(self, steps_done: int, steps_total: int) -> None:
        self.display.steps(steps_done, steps_total)

    def layer_finished(self, index: int, result: LayerResult) -> None:
        self.display.layer_finished(f"{result.cycles:,} cycles")
        self.record(index, result)
        self.finished += 1

    def _announce(self) -> None:
        """Before a long run: its estimated time and the largest layer's memory."""
        known = [e for e in self.estimates if e is not None]
        seconds = sum(e.wall_seconds for e in known)
        if self.display.style == "off" or seconds < 10:
            return
        peak = max(known, key=lambda e: e.peak_bytes)
        click.echo(f"accelsim: {self.name}: {self.layers} layer(s), about {format_seconds(seconds)} in all "
                   f"(estimate; the most memory: {peak.layer}, {format_bytes(peak.peak_bytes)})", err=True)


def _simulation_budget(kind: RunKind, budget: Budget) -> Callable[[CompiledMapping], LayerEstimate]:
    def check(cm: CompiledMapping) -> LayerEstimate:
        estimate = estimate_layer(cm, kind)
        check_budget(estimate, budget, cm.layer.source)
        return estimate

    return check


@contextmanager
def _running(run: _Run, on_stop: Callable[[str], list[str]] | None = None) -> Iterator[None]:
    """Run layers with SIGINT/SIGTERM turned into a clean stop: ``on_stop(cause)`` keeps the
    finished layers (and marks the one going on) in the result files and returns their paths;
    the exit status is 130 or 143. Out of memory in a layer marks it too."""
    try:
        with _stop_on_signals(), _overflow_warnings():
            yield
    except Stopped as exc:
        run.display.close()
        paths = on_stop(exc.signal_name) if on_stop is not None else []
        kept = f"; {run.finished} finished layer(s) kept in {', '.join(paths)}" if paths else ""
        where = f" during layer {run.current!r}" if run.current else ""
        _error(f"stopped by {exc.signal_name}{where} ({run.finished} of {run.layers} layers finished){kept}",
               exc.status)
    except MemoryError:
        run.display.close()
        if on_stop is not None and run.current is not None:
            try:
                on_stop("out of memory")
            except ResourceError:
                pass
        raise
    finally:
        run.display.close()


def _stop_files(files: ResultFiles, run: _Run) -> Callable[[str], list[str]]:
    """The ``on_stop`` of a run writing ``files``: mark the layer going on, keep the rest."""
    def stop(cause: str) -> list[str]:
        files.stop(run.current or "", cause)
        return files.paths

    return stop


def _provenance(command: str, hw: HardwareSpec, network: str, mode: str, overrides: tuple[str, ...],
                hw_ref: str | None = None, mapping_path: str | None = None, network_ref: str | None = None,
                style: str | None = None, model: str = "simulator", options: dict[str, Any] | None = None,
                files: tuple[tuple[str, str], ...] = ()) -> Provenance:
    """What a command ran: the files it read (with their hashes) and everything that changes results."""
    inputs = []
    if hw_ref is not None and Path(hw_ref).is_file():
        inputs.append(InputFile.of("hardware", hw_ref))
    if mapping_path is not None:
        inputs.append(InputFile.of("mapping", mapping_path))
    if network_ref is not None:
        source = load_network(network_ref).source
        if Path(source).is_file():
            inputs.append(InputFile.of("network", source))
    inputs += [InputFile.of(role, path) for role, path in files]
    return Provenance(command, network, hw.name, hardware_sha256(hw), mode, style, tuple(overrides), tuple(inputs),
                      model, options={k: v for k, v in (options or {}).items() if v not in (None, False, (), "")})


def _header(p: Provenance) -> str:
    """The first line of a command's report: what ran."""
    parts = [f"{p.mode} mode" if p.model == "simulator" else f"{p.model}, {p.mode} mode"]
    if p.style:
        parts.append(f"style {p.style}")
    parts += [f"--set {o}" for o in p.overrides]
    parts += [f"{k.replace('_', '-')} {v}" for k, v in p.options.items()]
    parts.append(f"hardware sha256 {p.hardware_sha256[:12]}")
    parts.append(f"accelsim {p.accelsim_version}")
    return f"{p.network} on {p.hardware} ({'; '.join(parts)})"


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


def _job_inputs(verb: str, hw_required: bool = True):
    """The options naming what to run, shared by simulate, analyze and compare: --hw, --mapping,
    --network, --style and --layer (``verb`` starts --layer's help)."""
    options = (
        click.option("--hw", "hw_ref", required=hw_required,
                     help="Preset name, hardware YAML file or MAESTRO hardware .m file."),
        click.option("--mapping", "mapping_path", type=click.Path(dir_okay=False), help="MAESTRO mapping file (.m)."),
        click.option("--network", help="Bundled network name or network YAML file (with --style)."),
        click.option("--style", type=click.Choice(sorted(STYLES)), help="Named dataflow style (with --network)."),
        _layer_option(verb),
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
@click.option("--seed", type=click.IntRange(0, 2**32 - 1), default=0, show_default=True,
              help="Random operands of --functional (0 to 2**32 - 1).")
@click.option("--dtype", type=click.Choice(list(DTYPES)), default="int8", show_default=True,
              help="Operand type of --functional (integers compare exactly, fp32 within a rounding bound).")
@click.option("--unchecked", is_flag=True,
              help="With --functional, for testing mappers: run a mapping that fails the legality checks "
                   "(overlapping or gapped windows, reduction without a reduction network) and show what goes wrong.")
@_budget_options
@click.option("--force", is_flag=True, help="Overwrite existing --json/--csv files and replace the traces in a "
                                            "--trace directory.")
@click.option("--progress/--no-progress", default=None,
              help="A progress bar within each layer (default: a bar on a terminal, progress lines on stderr "
                   "otherwise; --no-progress: neither).")
def simulate(hw_ref, mapping_path, network, style, scalesim_config, topology, layer, mode, overrides, json_out,
             csv_out, allow_overflow, per_pe, trace_dir, trace_format, trace_detail, trace_components,
             functional, seed, dtype, unchecked, max_steps, max_memory, force, progress) -> None:
    """Simulate a mapping file, or a network under a named dataflow style, or SCALE-Sim's inputs.

    With --functional the exit status is 1 when a layer computes a wrong output."""
    budget = Budget(max_steps, max_memory)
    if scalesim_config is not None or topology is not None:
        given = {"--hw": hw_ref, "--mapping": mapping_path, "--network": network, "--style": style,
                 "--layer": layer, "--mode": mode != "realistic", "--set": overrides, "--allow-overflow": allow_overflow,
                 "--per-pe": per_pe, "--trace": trace_dir, "--functional": functional, "--unchecked": unchecked}
        _simulate_scalesim(scalesim_config, topology, [name for name, value in given.items() if value],
                           json_out, csv_out, force, progress, budget)
        return
    if hw_ref is None:
        _fail("missing option --hw (or run SCALE-Sim's inputs with --scalesim-config X.cfg --topology Y.csv)")
    _check_job_args(mapping_path, network, style)
    if unchecked and not functional:
        _fail("--unchecked needs --functional: an illegal mapping is only run to see what it computes")
    if functional and trace_dir is not None:
        _fail("--functional and --trace cannot be combined; run them separately (the timing is the same)")
    check_outputs({"--json": json_out, "--csv": csv_out}, force, {"--trace": trace_dir})
    config = None
    if trace_dir is not None:
        from accelsim.trace import TraceConfig, trace_jobs

        config = TraceConfig.parse(trace_format, trace_detail, trace_components)
    hw, name, jobs = _load_jobs(hw_ref, overrides, mapping_path, network, style, layer)
    options = SimOptions(mode=mode, per_pe=per_pe, check_legality=not unchecked)
    prov = _provenance("simulate", hw, name, mode, overrides, hw_ref, mapping_path, network, style,
                       options={"per_pe": per_pe, "allow_overflow": allow_overflow,
                                "functional": f"{dtype} seed {seed}" if functional else None,
                                "unchecked": unchecked})
    files = ResultFiles(json_out, csv_out, prov, layer_total_row)
    reports: list[FunctionalReport] = []

    def record(index: int, result: LayerResult) -> None:
        files.add_result(result, {"functional": reports[index].to_dict()} if functional else None)

    kind = RunKind(per_pe=per_pe, unrolled=trace_dir is not None, functional=functional)
    run = _Run(name, [j.layer.name for j in jobs], progress, record, _simulation_budget(kind, budget),
               before_first=(lambda: clear_trace_dir(trace_dir)) if trace_dir is not None and force else None)
    with _running(run, _stop_files(files, run)), _doing(f"simulating {name}"):
        if functional:
            result, _ = run_jobs_functional(name, jobs, hw, options, dtype, seed, allow_overflow, run, run.check,
                                            reports)
        elif trace_dir is None:
            result = run_jobs(name, jobs, hw, options, allow_overflow, run, check=run.check)
        else:
            assert config is not None
            result = trace_jobs(name, jobs, hw, options, Path(trace_dir), config, allow_overflow, run, run.check,
                                prov.to_dict())
    click.echo(_header(prov))
    click.echo(_format_table(result))
    for report in reports:
        click.echo(report.text())
    for path in files.paths:
        click.echo(f"wrote {path}")
    if trace_dir is not None:
        click.echo(f"wrote traces to {trace_dir}")
    if any(not report.passed for report in reports):
        sys.exit(EXIT_FAILED)


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
@_max_memory_option
@click.option("--force", is_flag=True, help="Overwrite existing --json/--csv files.")
def analyze(hw_ref, mapping_path, network, style, layer, model, mode, overrides, json_out, csv_out, allow_overflow,
            max_memory, force) -> None:
    """Estimate a mapping file or a network with the fast analytical model (milliseconds per layer),
    or with the model of MAESTRO itself (--model maestro)."""
    from accelsim.analytical import bound_violations
    from accelsim.analytical.estimate import check_analysis_budget

    _check_job_args(mapping_path, network, style)
    if model == "maestro" and mode != "maestro":
        _fail("--model maestro has MAESTRO's assumptions only; drop --mode realistic")
    check_outputs({"--json": json_out, "--csv": csv_out}, force)
    hw, name, jobs = _load_jobs(hw_ref, overrides, mapping_path, network, style, layer)
    label = "model of MAESTRO" if model == "maestro" else "analytical model"
    prov = _provenance("analyze", hw, name, mode, overrides, hw_ref, mapping_path, network, style, label,
                       {"allow_overflow": allow_overflow})
    files = ResultFiles(json_out, None if model == "maestro" else csv_out, prov, layer_total_row)
    budget = Budget(max_memory_bytes=max_memory)

    def check(cm: CompiledMapping) -> None:
        check_analysis_budget(cm, budget, cm.layer.source)

    run = _Run(name, [j.layer.name for j in jobs], False, lambda index, r: files.add_result(r), lambda cm: check(cm),
               show=False)
    with _running(run, _stop_files(files, run)), _doing(f"analyzing {name}"):
        if model == "maestro":
            from accelsim.maestro import analyze_jobs as analyze_maestro, csv_text

            result, analyses = analyze_maestro(name, jobs, hw)
            for r in result.layers:
                files.add_result(r)
            if csv_out:
                write_atomic(csv_out, csv_text(analyses))
        else:
            result = analyze_jobs(name, jobs, hw, mode, allow_overflow, run, run.check)
    click.echo(_header(prov))
    click.echo(_format_table(result))
    for r in result.layers:
        for problem in bound_violations(r):
            click.echo(f"warning: {problem}", err=True)
    for path in (json_out, csv_out):
        if path:
            click.echo(f"wrote {path}")


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
    check_outputs({"--json": json_out}, force)
    file_findings = lint_file_text(mapping_path) if mapping_path is not None else []
    hw, name, jobs = _load_jobs(hw_ref, overrides, mapping_path, network, style, layer)
    results = [lint_job(job, hw) for job in jobs]
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
        write_atomic(json_out, json.dumps({"network": name, "hw": hw.name, "file": [f.__dict__ for f in file_findings],
                                           "layers": [r.to_dict() for r in results]}, indent=2))
        click.echo(f"wrote {json_out}")
    sys.exit(1 if count else 0)


def _simulate_scalesim(config_path, topology_path, conflicting: list[str], json_out, csv_out, force, progress,
                       budget: Budget) -> None:
    """``simulate --scalesim-config X.cfg --topology Y.csv`` (see accelsim.scalesim)."""
    from accelsim.scalesim.command import ACCEPTED_OPTIONS, format_scalesim_table, scalesim_rows
    from accelsim.scalesim.config import read_scalesim_config
    from accelsim.scalesim.run import ScaleSimLayerResult, simulate_scalesim
    from accelsim.scalesim.topology import read_topology
    from accelsim.scalesim.translate import translate

    if config_path is None or topology_path is None:
        _fail("--scalesim-config and --topology go together: give both (SCALE-Sim's .cfg and topology CSV)")
    if conflicting:
        _fail(f"{', '.join(conflicting)} cannot be combined with --scalesim-config/--topology, which replace "
              f"--hw and --mapping/--network; that path takes only {', '.join(ACCEPTED_OPTIONS)}")
    check_outputs({"--json": json_out, "--csv": csv_out}, force)
    config, topology = read_scalesim_config(config_path), read_topology(topology_path)
    translated = translate(config, topology)
    hw = translated.hw
    prov = _provenance("simulate", hw, topology.name, "realistic", (),
                       files=(("scalesim_config", config_path), ("topology", topology_path)),
                       options={"systolic_fold": config.dataflow})
    files = ResultFiles(json_out, csv_out, prov, _scalesim_total_row)

    def record(item: ScaleSimLayerResult) -> None:
        files.add(item.to_dict(), scalesim_rows([item])[0], item)

    run = _Run(topology.name, [job.layer.name for job in translated.jobs], progress, lambda index, result: None,
               _simulation_budget(RunKind(unrolled=True), budget))
    with _running(run, _stop_files(files, run)), _doing(f"simulating {topology.name}"):
        results = simulate_scalesim(config, topology, record, run, run.check)
    click.echo(format_scalesim_table(config, topology, results))
    for path in files.paths:
        click.echo(f"wrote {path}")


def _scalesim_total_row(items: list[Any]) -> dict[str, Any]:
    """The CSV's total row of a SCALE-Sim-input run: SCALE-Sim's cycle columns summed, then the
    layers' total (:func:`accelsim.outputs.total_result`)."""
    from accelsim.scalesim.command import scalesim_rows

    rows = scalesim_rows(items)
    summed = {column: sum(row[column] for row in rows) for column in
              ("Total Cycles", "Stall Cycles", "Compute Cycles", "Prefetch Stall Cycles", "Run Stall Cycles",
               "Tail Stall Cycles", "Folds")}
    return {"LayerID": "", **summed, "Dataflow": rows[0]["Dataflow"],
            **layer_total_row([item.result for item in items])}


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
@click.option("--fail-on-disagree", is_flag=True,
              help="Exit with status 1 when a source disagrees with the simulator (for CI gates).")
@_budget_options
@click.option("--force", is_flag=True, help="Overwrite existing --json/--csv files.")
@click.option("--progress/--no-progress", default=None,
              help="A progress bar within each layer (default: a bar on a terminal, progress lines on stderr "
                   "otherwise; --no-progress: neither).")
def compare(hw_ref, mapping_path, network, style, layer, mode, overrides, models, maestro_csv, scalesim_report,
            attribution, brief, json_out, csv_out, allow_overflow, fail_on_disagree, max_steps, max_memory, force,
            progress) -> None:
    """Hold the simulator against cost models, MAESTRO's CSV and SCALE-Sim's report, per layer.

    With --fail-on-disagree the exit status is 1 when a source disagrees with the simulator."""
    _check_job_args(mapping_path, network, style)
    check_outputs({"--json": json_out, "--csv": csv_out}, force)
    if not models and maestro_csv is None and scalesim_report is None:
        models = ("analytical",)
    hw, name, jobs = _load_jobs(hw_ref, overrides, mapping_path, network, style, layer)
    network_layers = None  # SCALE-Sim rows are matched by position in the whole network
    if scalesim_report is not None and layer is not None:
        all_jobs = _load_jobs(hw_ref, overrides, mapping_path, network, style, None)[2]
        network_layers = [j.layer.name for j in all_jobs]
    given = (("maestro_csv", maestro_csv), ("scalesim_report", scalesim_report))
    prov = _provenance("compare", hw, name, mode, overrides, hw_ref, mapping_path, network, style,
                       options={"models": ",".join(models), "no_attribution": not attribution,
                                "allow_overflow": allow_overflow},
                       files=tuple((role, path) for role, path in given if path is not None))
    simulations = 1 + (6 if attribution and mode == "realistic" else 0)
    run = _Run(name, [j.layer.name for j in jobs], progress, lambda index, result: None,
               _simulation_budget(RunKind(simulations=simulations), Budget(max_steps, max_memory)))
    partial: list[Comparison] = []

    def write(comparison: Comparison, status: str, stopped_by: str = "") -> None:
        document = {**comparison_dict(comparison), "status": status, "provenance": prov.to_dict()}
        if stopped_by:
            document["stopped_by"] = stopped_by
            document["stopped_in"] = run.current
        if json_out:
            write_atomic(json_out, json.dumps(document, indent=2) + "\n")
        if csv_out:
            columns = {"Status": status, **prov.csv_columns()}
            write_atomic(csv_out, csv_text([{**row, **columns} for row in comparison_rows(comparison)]))

    def progress_so_far(comparison: Comparison) -> None:
        partial[:] = [comparison]
        write(comparison, "incomplete" if len(comparison.layers) < len(jobs) else "complete")

    def stop(cause: str) -> list[str]:
        if not partial:
            return []
        write(partial[0], "interrupted", cause)
        return [path for path in (json_out, csv_out) if path]

    with _running(run, stop), _doing(f"comparing {name}"):
        result = compare_jobs(name, jobs, hw, mode, models, maestro_csv, scalesim_report, network_layers,
                              allow_overflow, attribution, progress_so_far, run, run.check)
    click.echo(_header(prov))
    click.echo(format_comparison(result, detail=not brief))
    for path in (json_out, csv_out):
        if path:
            click.echo(f"wrote {path}")
    if fail_on_disagree and any(problems for lc in result.layers for problems in lc.exceptions().values()):
        sys.exit(EXIT_FAILED)


@main.command()
@click.option("--hw", "hw_ref", required=True, help="Preset name or hardware file.")
@click.option("--network", required=True, help="Bundled network name or network YAML file.")
@click.option("--style", required=True, type=click.Choice(sorted(STYLES)))
@_layer_option("Map")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the .m file here (default: stdout).")
@click.option("--force", is_flag=True, help="Overwrite an existing output file.")
def mapping(hw_ref, network, style, layer, overrides, output, force) -> None:
    """Write the MAESTRO mapping file a named style produces for a network."""
    check_outputs({"--output": output}, force)
    hw = load_hardware(hw_ref, list(overrides))
    name, jobs = jobs_from_network(network, style, hw, layer)
    text = write_maestro(to_maestro(name, jobs))
    if output:
        write_atomic(output, text)
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
    click.echo(dump_hardware(load_hardware(hw_ref, list(overrides))), nl=False)


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
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        _fail(f"--out {out_dir}: exists and is not a directory")
    out.mkdir(parents=True, exist_ok=True)
    with _doing("validating"):
        written = run_validation(ValidationPaths(out), quick, force, lambda message: click.echo(message, err=True))
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
    from accelsim.trace.plot import layer_dirs, plot_layer

    cycles = None
    if window is not None:
        parts = window.split(":")
        if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
            raise InputError(f"--window {window}: expected FIRST:LAST, two cycle numbers such as 0:20000")
        cycles = (int(parts[0]), int(parts[1]))
    with _doing(f"plotting {trace_dir}"):
        for layer_dir in layer_dirs(Path(trace_dir)):
            for path in plot_layer(layer_dir, bins, force, cycles):
                click.echo(f"wrote {path}")


@main.command(name="search")
@click.option("--hw", "hw_ref", required=True, help="Preset name, hardware YAML file or MAESTRO hardware .m file.")
@click.option("--network", help="Bundled network name or network YAML file: search its layers.")
@click.option("--mapping", "mapping_path", type=click.Path(dir_okay=False),
              help="MAESTRO mapping file (.m): search its layers (their dataflows are not used).")
@_layer_option("Search")
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
