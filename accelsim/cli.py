"""The ``accelsim`` command.

Every failure takes one path, the group's (:class:`_Accelsim`), and prints one ``error:`` line
with a documented exit status (README, "Limits and exit codes"): a mistake in an input, an
option or an output path (a command calls :func:`_fail` or lets an InputError rise) exits with
2; a run over its budget or out of memory or disk with 3; Ctrl-C and SIGTERM with 130 and 143,
after writing every finished layer; a bug in accelsim with 70. A functional mismatch (and
``compare --fail-on-disagree`` finding a disagreement) exits with 1. Never a traceback
(``ACCELSIM_TRACEBACK=1`` shows one for a bug). Options several commands take are declared
once below; related options reach a command as one record (:class:`JobArgs`, :class:`OutputArgs`,
...).
"""

from __future__ import annotations

import dataclasses
import errno
import functools
import json
import os
import time
import signal
import sys
import threading
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Callable, Iterator, NoReturn, Sequence, TypeVar

import click

from accelsim import __version__
from accelsim.api import (
    OverflowWarning,
    RunObserver,
    analyze_jobs,
    jobs_from_mapping_file,
    jobs_from_network,
    run_jobs,
    run_jobs_functional,
    to_maestro,
)
from accelsim.budget import (DEFAULT_MAX_LAYER_SECONDS, DEFAULT_MAX_STEPS, DEFAULT_MAX_STEPS_UNWARPED, Budget, ceil_size,
                             format_bytes, format_seconds, parse_size)
from accelsim.compare import (
    compare_jobs,
    comparison_dict,
    comparison_rows,
    format_comparison,
)
from accelsim.compare.run import Comparison
from accelsim.errors import (
    EXIT_FAILED,
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_RESOURCES,
    EXIT_SIGINT,
    EXIT_SIGTERM,
    InputError,
    InputWarning,
    ResourceError,
    end_signals_by_default,
)
from accelsim.functional import DTYPES, FunctionalReport
from accelsim.hw.loader import available_presets, dump_hardware, load_hardware
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.compile import CompiledMapping
from accelsim.mapping.jobs import Job
from accelsim.mapping.maestro_format import write_maestro
from accelsim.mapping.styles import STYLES
from accelsim.cost_models import other_models
from accelsim.model_options import MODES, Mode
from accelsim.output_files import check_output_directory, check_outputs, clear_trace_dir, is_stdout, write_atomic
from accelsim.outputs import InputFile, Provenance, ResultFiles, Rewrites, csv_text, hardware_sha256, layer_total_row
from accelsim.progress import ProgressDisplay, choose_style
from accelsim.results import LayerResult, NetworkResult
from accelsim.sim.engine import SimOptions
from accelsim.sim.estimate import LayerEstimate, RunKind, check_budget, estimate_layer
from accelsim.text_table import format_table, printable
from accelsim.workload.tables import available_networks, network_file

EXIT_USER_ERROR = EXIT_INPUT
# errno values that mean the machine ran out of room, not that a path is wrong
_OUT_OF_ROOM = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.ENOMEM, errno.EIO}
Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]  # what click.option returns
F = TypeVar("F", bound=Callable[..., Any])


class UserError(click.ClickException):
    """A mistake in what the user gave us: printed as one ``error:`` line on stderr, exit status 2.
    Every command's InputError becomes one (see :class:`_Accelsim`)."""

    exit_code = EXIT_USER_ERROR

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"error: {self.format_message()}", err=True, file=file)


def _fail(message: str) -> NoReturn:
    """Stop the command with ``error: message`` and exit status 2."""
    raise UserError(message)


def _error(message: str, status: int) -> NoReturn:
    click.echo(f"error: {_message_lines(message)}", err=True)
    sys.exit(status)


def _message_lines(message: str) -> str:
    """A message as the lines we print: its own continuation lines (indented: the problems a
    hardware file lists) kept; a newline or other control character that came from a name in
    the input (a layer named ``x\\nerror: y``) escaped, so no line of ours is one it wrote."""
    first, *rest = message.split("\n")
    out = printable(first)
    for line in rest:
        out += ("\n" if line[:1].isspace() else "\\n") + printable(line)
    return out


class Stopped(BaseException):
    """SIGINT or SIGTERM arrived during a run (a BaseException, so no ``except Exception``
    swallows it)."""

    def __init__(self, signal_name: str, status: int | None = None):
        # built from its arguments alone, so a copy of it (the engine's snapshots copy what
        # processes hold, a failed process's exception included) is the same stop
        super().__init__(signal_name, status)
        self.signal_name = signal_name
        self.status = status if status is not None else EXIT_SIGINT if signal_name == "SIGINT" else EXIT_SIGTERM


def _start_time_budget(max_seconds: float | None) -> None:
    """``--max-seconds``: after ``max_seconds`` of wall time the command stops as on a signal
    (:class:`Stopped`, finished layers kept) with exit status 3; the timer ends with the command
    (outside the main thread, where it cannot be set, there is none)."""
    if max_seconds is None:
        return

    def over(signum: int, frame: Any) -> None:
        raise Stopped(f"the time budget (--max-seconds {max_seconds:g})", EXIT_RESOURCES)

    try:
        previous = signal.signal(signal.SIGALRM, over)
    except (ValueError, AttributeError):
        return

    def end() -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)

    click.get_current_context().call_on_close(end)
    signal.setitimer(signal.ITIMER_REAL, max_seconds)


@contextmanager
def _stop_on_signals() -> Iterator[None]:
    """Turn SIGINT and SIGTERM into :class:`Stopped` while a run is going (outside the main
    thread, where handlers cannot be set, nothing changes)."""
    def stop(signum: int, frame: Any) -> None:
        raise Stopped(signal.Signals(signum).name)

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
    """The ``accelsim`` group: the one error path and the one warning path. An InputError raised
    anywhere in a command (a bad file, field, mapping or option value) leaves it as a
    :class:`UserError` (exit 2); a usage mistake is one ``error:`` line (2); a ResourceError or
    MemoryError exits with 3, a stop by SIGINT/SIGTERM with 130/143, an unexpected exception (a
    bug) with 70; a warning (OverflowWarning, InputWarning) is one ``warning:`` line."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            with _warning_lines():
                return super().invoke(ctx)
        except InputError as exc:
            raise UserError(str(exc)) from None
        except BrokenPipeError:  # here, before click turns it into exit status 1
            os._exit(141)  # the reader of our output went away (e.g. `| head`); nothing to say

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        _ACTIVITY.clear()
        try:
            status = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except UserError as exc:
            _error(exc.format_message(), exc.exit_code)
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
                                help="A progress bar within each layer (default: a bar on a terminal, progress "
                                     "lines on stderr otherwise; --no-progress: neither).")


def _layer_option(verb: str) -> Callable[[F], F]:
    """``--layer NAME``, refused when given twice (click would keep the last silently)."""
    def one(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> str | None:
        if len(values) > 1:
            raise click.BadParameter(f"given {len(values)} times ({', '.join(values)}); give it once "
                                     "(or leave it out for every layer)")
        return values[0] if values else None

    return click.option("--layer", multiple=True, callback=one, help=f"{verb} only this layer.")


def _max_memory_option(command: F) -> F:
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
                             "quarters of the tightest of physical memory, the address-space limit (ulimit -v) and "
                             "the cgroup's memory limit).")(command)


def _max_seconds_option(command: F) -> F:
    """``--max-seconds S``: the command's wall-time budget."""
    return click.option("--max-seconds", type=click.FloatRange(min=0, min_open=True), default=None,
                        help=f"Stop after this many seconds of wall time (exit status 3, finished layers kept) and "
                             f"refuse up front a layer estimated to take longer (default: no limit on the run; a "
                             f"layer estimated over {DEFAULT_MAX_LAYER_SECONDS:,.0f} s is refused).")(command)


def _max_steps_option(help: str) -> Callable[[F], F]:
    return click.option("--max-steps", type=click.IntRange(1), default=None, help=help)


def _budget_options(command: F) -> F:
    """``--max-steps``, ``--max-memory`` and ``--max-seconds``: the budget of a simulation."""
    command = _max_seconds_option(_max_memory_option(command))
    return _max_steps_option(f"Refuse a layer with more simulated steps (its estimate is printed; default "
                             f"{DEFAULT_MAX_STEPS:,}, or {DEFAULT_MAX_STEPS_UNWARPED:,} when every step's events "
                             "run: --trace, --per-pe, --functional).")(command)


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
    timeloop: tuple[str, ...] = ()
    dram_layouts: tuple[str, ...] = ()

    def check(self) -> None:
        """--mapping FILE.m, or --network NAME with --style (or a table giving its layers' dataflows),
        or Timeloop's files (--timeloop)."""
        if self.hw_ref is None and not self.timeloop:
            _fail("missing option --hw (or give Timeloop's files with --timeloop)")
        if sum((self.mapping_path is not None, self.network is not None, bool(self.timeloop))) != 1:
            _fail("give exactly one of --mapping FILE.m, --network NAME (with --style) or --timeloop FILE (repeated)")
        if self.network is None and self.style is not None:
            _fail("--style applies to --network only; a mapping file carries its own dataflow")

    def load(self, all_layers: bool = False) -> LoadedJobs:
        """The hardware spec and the jobs (every layer with ``all_layers``); raises InputError."""
        if self.timeloop:
            from accelsim.mapping.timeloop_files import load_timeloop

            t = load_timeloop(list(dict.fromkeys(self.timeloop)), self.overrides, self.hw_ref)
            return LoadedJobs(t.hw, t.name, t.jobs)
        hw, name, jobs = _load_jobs(self.hw_ref or "", self.overrides, self.mapping_path, self.network, self.style,
                                    None if all_layers else self.layer)
        if self.dram_layouts:
            from accelsim.mapping.layouts import with_dram_layouts

            jobs = with_dram_layouts(jobs, self.dram_layouts, hw)
        return LoadedJobs(hw, name, jobs)


@dataclass(frozen=True)
class LoadedJobs:
    """The hardware, the network's name and its jobs."""

    hw: HardwareSpec
    name: str
    jobs: list[Job]


def _job_options(verb: str) -> Decorator:
    """--hw, --mapping, --network, --style, --layer, --set and --timeloop as one :class:`JobArgs`
    ``job`` (simulate, analyze, compare, lint, mapping); ``verb`` starts --layer's help."""
    return _record(
        JobArgs, "job",
        click.option("--hw", "hw_ref",
                     help="Preset name, hardware YAML file or MAESTRO hardware .m file (required unless --timeloop)."),
        click.option("--mapping", "mapping_path", type=click.Path(dir_okay=False),
                     help="MAESTRO mapping file (.m) or loop-nest mapping file (.yaml)."),
        click.option("--network", help="Bundled network name, network YAML file or ONNX model (with --style)."),
        click.option("--style", type=click.Choice(sorted(STYLES)),
                     help="Named dataflow style (with --network; without it, the dataflows the network's table gives)."),
        _layer_option(verb),
        _set_option,
        click.option("--timeloop", "timeloop", multiple=True, type=click.Path(dir_okay=False),
                     help="Timeloop's YAML files (architecture, problem, mapping; repeat the option), read as "
                          "timeloop-model reads them; the architecture is the hardware unless --hw is given."),
        click.option("--dram-layout", "dram_layouts", multiple=True,
                     help="A tensor's DRAM layout, ROLE=AXIS,... outermost first (e.g. input=N,Y,C,X), or 'marvel' "
                          "(each layer's by MARVEL's distinct-block model); repeatable. Default: channel-last."),
    )


@dataclass(frozen=True)
class OutputArgs:
    """Where results go: ``--json``, ``--csv`` and whether existing files may be overwritten."""

    json_out: str | None
    csv_out: str | None
    force: bool

    def check(self, directories: dict[str, str | None] | None = None) -> None:
        """Every output path, before any work (see :func:`accelsim.output_files.check_outputs`)."""
        check_outputs({"--json": self.json_out, "--csv": self.csv_out}, self.force, directories)

    @property
    def paths(self) -> list[str]:
        """The files written (standard output, ``-``, left out)."""
        return [p for p in (self.json_out, self.csv_out) if p is not None and not is_stdout(p)]

    @property
    def to_stdout(self) -> bool:
        """Whether --json or --csv is ``-`` (standard output): the report then goes to stderr."""
        return is_stdout(self.json_out) or is_stdout(self.csv_out)


def _output_options(json_option: Decorator | None = None, csv_option: Decorator | None = None,
                    force_what: str = "--json/--csv files") -> Decorator:
    """--json, --csv (default: per-layer results) and --force as one :class:`OutputArgs` ``out``."""
    return _record(OutputArgs, "out", json_option or _json_option(), csv_option or _csv_option(),
                   _force_option(force_what))


def _load_jobs(hw_ref: str, overrides: Sequence[str], mapping_path: str | None, network: str | None,
               style: str | None, layer: str | None) -> tuple[HardwareSpec, str, list[Job]]:
    """(hardware spec, network name, jobs) of checked job arguments; raises InputError."""
    hw = load_hardware(hw_ref, list(overrides))
    if mapping_path is not None:
        name, jobs = jobs_from_mapping_file(mapping_path, hw.num_pes, layer)
    else:
        name, jobs = jobs_from_network(network or "", style, hw, layer)
    return hw, name, jobs


@contextmanager
def _warning_lines() -> Iterator[None]:
    """Show every OverflowWarning (--allow-overflow) and InputWarning (e.g. ONNX nodes left out)
    as one ``warning:`` line on stderr."""
    with warnings.catch_warnings():
        warnings.simplefilter("always", OverflowWarning)
        warnings.simplefilter("always", InputWarning)
        warnings.showwarning = lambda message, *args, **kwargs: click.echo(f"warning: {_message_lines(str(message))}",
                                                                          err=True)
        yield


class _Run(RunObserver):
    """One command's run of the layers ``names``: the up-front budget check of each compiled
    layer (with ``checker``), the progress display, the result of each finished layer handed
    to ``record``, and the layer going on or next (for a stop)."""

    def __init__(self, name: str, names: list[str], progress: bool | None,
                 record: Callable[[int, LayerResult], None],
                 checker: Callable[[CompiledMapping], LayerEstimate | None], show: bool = True,
                 before_first: Callable[[], None] | None = None):
        style = choose_style(progress, sys.stderr) if show else "off"
        heartbeat = _heartbeat_seconds()
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
    """The up-front check of each layer of a simulation: its estimate, refused over ``budget``."""
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
        with _stop_on_signals(), _warning_lines():
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


def _provenance(command: str, hw: HardwareSpec, network: str, mode: str, overrides: Sequence[str],
                hw_ref: str | None = None, mapping_path: str | None = None, network_ref: str | None = None,
                style: str | None = None, model: str = "simulator", options: dict[str, Any] | None = None,
                files: tuple[tuple[str, str], ...] = ()) -> Provenance:
    """What a command ran: the files it read (with their hashes) and everything that changes results."""
    inputs = []
    if hw_ref is not None and Path(hw_ref).is_file():
        inputs.append(InputFile.of("hardware", hw_ref))
    if mapping_path is not None:
        inputs.append(InputFile.of("mapping", mapping_path))
    source = network_file(network_ref) if network_ref is not None else None
    if source is not None:  # found without reading it again (an ONNX model is imported once)
        inputs.append(InputFile.of("network", source))
    inputs += [InputFile.of(role, path) for role, path in files]
    return Provenance(command, network, hw.name, hardware_sha256(hw), mode, style, tuple(overrides), tuple(inputs),
                      model, options={k: v for k, v in (options or {}).items() if v not in (None, False, (), "")})


def _job_provenance(command: str, job: JobArgs, loaded: LoadedJobs, mode: str, model: str = "simulator",
                    options: dict[str, Any] | None = None,
                    files: tuple[tuple[str, str], ...] = ()) -> Provenance:
    files = tuple(("timeloop", path) for path in dict.fromkeys(job.timeloop)) + files
    return _provenance(command, loaded.hw, loaded.name, mode, job.overrides, job.hw_ref, job.mapping_path,
                       job.network, job.style, model, options, files)


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
@_job_options("Simulate")
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
         click.option("--seed", type=click.IntRange(0, 2**32 - 1), default=0, show_default=True,
                      help="Random operands of --functional (0 to 2**32 - 1)."),
         click.option("--dtype", type=click.Choice(list(DTYPES)), default="int8", show_default=True,
                      help="Operand type of --functional (integers compare exactly, fp32 within a rounding bound)."),
         click.option("--unchecked", is_flag=True,
                      help="With --functional, for testing mappers: run a mapping that fails the legality checks "
                           "(overlapping or gapped windows, reduction without a reduction network) and show what goes "
                           "wrong."))
@_budget_options
@_progress_option
def simulate(job: JobArgs, scalesim: ScaleSimArgs, mode: Mode, out: OutputArgs, allow_overflow: bool, per_pe: bool,
             trace: TraceArgs, functional: FunctionalArgs, max_steps: int | None, max_memory: int,
             max_seconds: float | None, progress: bool | None) -> None:
    """Simulate a mapping file, or a network under a named dataflow style, or SCALE-Sim's inputs.

    With --functional the exit status is 1 when a layer computes a wrong output."""
    _start_time_budget(max_seconds)
    budget = Budget(max_steps, max_memory, max_seconds)
    if scalesim.given:
        given = {"--hw": job.hw_ref, "--mapping": job.mapping_path, "--network": job.network, "--style": job.style,
                 "--layer": job.layer, "--mode": mode != "realistic", "--set": job.overrides,
                 "--allow-overflow": allow_overflow, "--per-pe": per_pe, "--trace": trace.trace_dir,
                 "--functional": functional.enabled, "--unchecked": functional.unchecked, "--timeloop": job.timeloop}
        _simulate_scalesim(scalesim, [name for name, value in given.items() if value], out, progress, budget)
        return
    if job.hw_ref is None and not job.timeloop:
        _fail("missing option --hw (or run SCALE-Sim's inputs with --scalesim-config X.cfg --topology Y.csv, or "
              "Timeloop's files with --timeloop)")
    job.check()
    if functional.unchecked and not functional.enabled:
        _fail("--unchecked needs --functional: an illegal mapping is only run to see what it computes")
    if functional.enabled and trace.trace_dir is not None:
        _fail("--functional and --trace cannot be combined; run them separately (the timing is the same)")
    out.check({"--trace": trace.trace_dir})
    trace_dir = Path(trace.trace_dir) if trace.trace_dir is not None else None
    config = None
    if trace_dir is not None:
        from accelsim.trace import TraceConfig, trace_jobs

        config = TraceConfig.parse(trace.trace_format, trace.trace_detail, trace.trace_components)
    loaded = job.load()
    options = SimOptions(mode=mode, per_pe=per_pe, check_legality=not functional.unchecked)
    prov = _job_provenance("simulate", job, loaded, mode, options={
        "per_pe": per_pe, "allow_overflow": allow_overflow,
        "functional": f"{functional.dtype} seed {functional.seed}" if functional.enabled else None,
        "unchecked": functional.unchecked})
    files = ResultFiles(out.json_out, out.csv_out, prov, layer_total_row)
    reports: list[FunctionalReport] = []

    def record(index: int, result: LayerResult) -> None:
        files.add_result(result, {"functional": reports[index].to_dict()} if functional.enabled else None)

    kind = RunKind(per_pe=per_pe, unrolled=trace_dir is not None, functional=functional.enabled)
    run = _Run(loaded.name, [j.layer.name for j in loaded.jobs], progress, record,
               _simulation_budget(kind, budget),
               before_first=(lambda: clear_trace_dir(str(trace_dir))) if trace_dir is not None and out.force else None)
    with _running(run, _stop_files(files, run)), _doing(f"simulating {loaded.name}"):
        if functional.enabled:
            result, _ = run_jobs_functional(loaded.name, loaded.jobs, loaded.hw, options, functional.dtype,
                                            functional.seed, allow_overflow, run, run.check, reports, budget)
        elif trace_dir is None:
            result = run_jobs(loaded.name, loaded.jobs, loaded.hw, options, allow_overflow, run, check=run.check)
        else:
            assert config is not None
            result = trace_jobs(loaded.name, loaded.jobs, loaded.hw, options, trace_dir, config, allow_overflow,
                                run, run.check, prov.to_dict())
        files.close()
    click.echo(_header(prov), err=out.to_stdout)  # with --json - or --csv -, stdout holds only that file
    click.echo(_format_table(result), err=out.to_stdout)
    for report in reports:
        click.echo(report.text(), err=out.to_stdout)
    for path in files.paths:
        click.echo(f"wrote {path}", err=True)
    if trace_dir is not None:
        click.echo(f"wrote traces to {trace.trace_dir}", err=True)
    if any(not report.passed for report in reports):
        sys.exit(EXIT_FAILED)


@main.command()
@_job_options("Analyze")
@click.option("--model", "model", type=click.Choice(other_models()), default="analytical",
              show_default=True,
              help="analytical: our closed-form model; maestro: what the MAESTRO binary would print (its CSV "
                   "layout with --csv).")
@_mode_option("maestro", "maestro: MAESTRO's assumptions (agrees with simulate --mode maestro); realistic: a rough "
                         "estimate with the hardware's multicast, L2 bandwidth caps and latencies. The default differs "
                         "from simulate's on purpose: the model is exact only in maestro mode, so compare it with "
                         "simulate --mode maestro.")
@_output_options()
@_allow_overflow_option("Analyze")
@_max_memory_option
@_max_seconds_option
@_max_steps_option("Accepted so that a simulation's arguments can be reused as they are; the models take no "
                   "steps, so it limits nothing.")
@_progress_option
def analyze(job: JobArgs, model: str, mode: Mode, out: OutputArgs, allow_overflow: bool, max_memory: int,
            max_seconds: float | None, max_steps: int | None, progress: bool | None) -> None:
    """Estimate a mapping file or a network with the fast analytical model (milliseconds per layer),
    or with the model of MAESTRO itself (--model maestro)."""
    from accelsim.analytical import bound_violations
    from accelsim.analytical.estimate import check_analysis_budget

    _start_time_budget(max_seconds)
    job.check()
    if model == "maestro" and mode != "maestro":
        _fail("--model maestro has MAESTRO's assumptions only; drop --mode realistic")
    out.check()
    loaded = job.load()
    label = "model of MAESTRO" if model == "maestro" else "analytical model"
    prov = _job_provenance("analyze", job, loaded, mode, label, {"allow_overflow": allow_overflow})
    files = ResultFiles(out.json_out, None if model == "maestro" else out.csv_out, prov, layer_total_row)
    budget = Budget(max_memory_bytes=max_memory, max_seconds=max_seconds)

    def check(cm: CompiledMapping) -> None:
        check_analysis_budget(cm, budget, cm.layer.source)

    run = _Run(loaded.name, [j.layer.name for j in loaded.jobs], progress, lambda index, r: files.add_result(r), check,
               show=progress is True)
    with _running(run, _stop_files(files, run)), _doing(f"analyzing {loaded.name}"):
        if model == "maestro":
            from accelsim.maestro import analyze_jobs as analyze_maestro
            from accelsim.maestro import csv_text as maestro_csv_text

            result, analyses = analyze_maestro(loaded.name, loaded.jobs, loaded.hw)
            for r in result.layers:
                files.add_result(r)
            if out.csv_out:
                write_atomic(out.csv_out, maestro_csv_text(analyses))
                if any(a.num_levels > 1 for a in analyses):
                    click.echo("note: the CSV's energy reproduces MAESTRO's, which for a mapping of several cluster "
                               "levels counts the previous layer's L1 accesses (quirk energy_stale_l1_counts); the "
                               "table's energy_uJ counts each layer's own", err=True)
        else:
            result = analyze_jobs(loaded.name, loaded.jobs, loaded.hw, mode, allow_overflow, run, run.check)
        files.close()
    click.echo(_header(prov), err=out.to_stdout)
    click.echo(_format_table(result), err=out.to_stdout)
    for r in result.layers:
        for problem in bound_violations(r):
            click.echo(f"warning: {problem}", err=True)
    for path in out.paths:
        click.echo(f"wrote {path}", err=True)


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
    check_outputs({"--json": json_out}, force)
    file_findings = lint_file_text(job.mapping_path) if job.mapping_path is not None else []
    loaded = job.load()
    results = [lint_job(j, loaded.hw) for j in loaded.jobs]
    say = functools.partial(click.echo, err=is_stdout(json_out))  # --json -: stdout holds only the JSON
    say(f"{loaded.name} on {loaded.hw.name}: what MAESTRO will get wrong")
    for finding in file_findings:
        say(f"  file: [{finding.kind}] {finding.message}")
    for r in results:
        if not r.findings:
            say(f"  {r.layer}: clean")
        for finding in r.findings:
            say(f"  {r.layer}: [{finding.kind}] {finding.message}")
    count = len(file_findings) + sum(len(r.findings) for r in results)
    flagged = sum(1 for r in results if r.findings)
    say(f"{count} finding(s) in {flagged} of {len(results)} layer(s)" + (" and the file" if file_findings else ""))
    if json_out:
        write_atomic(json_out, json.dumps({"network": loaded.name, "hw": loaded.hw.name,
                                           "file": [f.__dict__ for f in file_findings],
                                           "layers": [r.to_dict() for r in results]}, indent=2) + "\n")
        if not is_stdout(json_out):
            say(f"wrote {json_out}", err=True)
    sys.exit(1 if count else 0)


def _simulate_scalesim(scalesim: ScaleSimArgs, conflicting: list[str], out: OutputArgs, progress: bool | None,
                       budget: Budget) -> None:
    """``simulate --scalesim-config X.cfg --topology Y.csv`` (see accelsim.scalesim)."""
    from accelsim.scalesim.command import ACCEPTED_OPTIONS, format_scalesim_table, scalesim_rows
    from accelsim.scalesim.config import read_scalesim_config
    from accelsim.scalesim.run import ScaleSimLayerResult, simulate_scalesim
    from accelsim.scalesim.topology import read_topology
    from accelsim.scalesim.translate import translate

    if scalesim.scalesim_config is None or scalesim.topology is None:
        _fail("--scalesim-config and --topology go together: give both (SCALE-Sim's .cfg and topology CSV)")
    if conflicting:
        _fail(f"{', '.join(conflicting)} cannot be combined with --scalesim-config/--topology, which replace "
              f"--hw and --mapping/--network; that path takes only {', '.join(ACCEPTED_OPTIONS)}")
    out.check()
    config, topology = read_scalesim_config(scalesim.scalesim_config), read_topology(scalesim.topology)
    translated = translate(config, topology)
    prov = _provenance("simulate", translated.hw, topology.name, "realistic", (),
                       files=(("scalesim_config", scalesim.scalesim_config), ("topology", scalesim.topology)),
                       options={"systolic_fold": config.dataflow})
    files = ResultFiles(out.json_out, out.csv_out, prov, _scalesim_total_row)

    def record(item: ScaleSimLayerResult) -> None:
        files.add(item.to_dict(), scalesim_rows([item])[0], item)

    run = _Run(topology.name, [j.layer.name for j in translated.jobs], progress, lambda index, result: None,
               _simulation_budget(RunKind(unrolled=True), budget))
    with _running(run, _stop_files(files, run)), _doing(f"simulating {topology.name}"):
        results = simulate_scalesim(config, topology, record, run, run.check)
        files.close()
    click.echo(format_scalesim_table(config, topology, results), err=out.to_stdout)
    for path in files.paths:
        click.echo(f"wrote {path}", err=True)


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
@_job_options("Compare")
@_mode_option("realistic", "Fidelity of the simulator and the models (maestro: they must agree).")
@click.option("--model", "models", multiple=True, type=click.Choice(other_models()),
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
@click.option("--fail-on-disagree", is_flag=True,
              help="Exit with status 1 when a source disagrees with the simulator (for CI gates).")
@_budget_options
@_progress_option
def compare(job: JobArgs, mode: Mode, models: tuple[str, ...], maestro_csv: str | None, scalesim_report: str | None,
            attribution: bool, brief: bool, out: OutputArgs, allow_overflow: bool, fail_on_disagree: bool,
            max_steps: int | None, max_memory: int, max_seconds: float | None, progress: bool | None) -> None:
    """Hold the simulator against cost models, MAESTRO's CSV and SCALE-Sim's report, per layer.

    With --fail-on-disagree the exit status is 1 when a source disagrees with the simulator."""
    _start_time_budget(max_seconds)
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
    given = (("maestro_csv", maestro_csv), ("scalesim_report", scalesim_report))
    prov = _job_provenance("compare", job, loaded, mode, options={
        "models": ",".join(models), "no_attribution": not attribution, "allow_overflow": allow_overflow},
        files=tuple((role, path) for role, path in given if path is not None))
    simulations = 1 + (6 if attribution and mode == "realistic" else 0)
    run = _Run(loaded.name, [j.layer.name for j in loaded.jobs], progress, lambda index, result: None,
               _simulation_budget(RunKind(simulations=simulations), Budget(max_steps, max_memory, max_seconds)))
    partial: list[Comparison] = []

    rewrites = Rewrites()

    def write(comparison: Comparison, status: str, stopped_by: str = "") -> None:
        if status == "incomplete" and not rewrites.due():  # the files catch up at most about once a second
            return
        document = {**comparison_dict(comparison), "status": status, "provenance": prov.to_dict()}
        if stopped_by:
            document["stopped_by"] = stopped_by
            document["stopped_in"] = run.current
        final = status != "incomplete"  # standard output gets the last version only
        with rewrites.timed():
            if out.json_out and (final or not is_stdout(out.json_out)):
                write_atomic(out.json_out, json.dumps(document, indent=2) + "\n")
            if out.csv_out and (final or not is_stdout(out.csv_out)):
                columns = {"Status": status, **prov.csv_columns()}
                write_atomic(out.csv_out, csv_text([{**row, **columns} for row in comparison_rows(comparison)]))

    def progress_so_far(comparison: Comparison) -> None:
        partial[:] = [comparison]
        write(comparison, "incomplete" if len(comparison.layers) < len(loaded.jobs) else "complete")

    def stop(cause: str) -> list[str]:
        if not partial:
            return []
        write(partial[0], "interrupted", cause)
        return out.paths

    with _running(run, stop), _doing(f"comparing {loaded.name}"):
        result = compare_jobs(loaded.name, loaded.jobs, loaded.hw, mode, models, maestro_csv, scalesim_report,
                              network_layers, allow_overflow, attribution, progress_so_far, positions, run, run.check)
    click.echo(_header(prov), err=out.to_stdout)
    click.echo(format_comparison(result, detail=not brief), err=out.to_stdout)
    for path in out.paths:
        click.echo(f"wrote {path}", err=True)
    if fail_on_disagree and any(problems for lc in result.layers for problems in lc.exceptions().values()):
        sys.exit(EXIT_FAILED)


@main.command()
@_job_options("Write")
@click.option("--format", "form", type=click.Choice(["maestro", "loopnest", "timeloop"]), default="maestro",
              show_default=True,
              help="maestro: a MAESTRO .m file; loopnest: a loop-nest YAML file (Timeloop-style); timeloop: one "
                   "layer's architecture, problem and mapping as timeloop-model reads them (with --layer).")
@click.option("-o", "--out", "--output", "output", type=click.Path(dir_okay=False),
              help="Write the file here (default: stdout; --output is the old spelling).")
@_force_option("output file")
def mapping(job: JobArgs, form: str, output: str | None, force: bool) -> None:
    """Write the mapping a named style produces for a network, or convert a mapping file, as a
    MAESTRO .m file, a loop-nest YAML file or Timeloop's files (one layer)."""
    from accelsim.mapping.compile import compile_mapping
    from accelsim.mapping.loopnest_format import loopnest_of, write_loopnest

    job.check()
    if job.dram_layouts:
        _fail("--dram-layout: a mapping file does not carry DRAM layouts; give the option to simulate, analyze, "
              "compare or lint instead")
    check_outputs({"--out": output}, force)
    loaded = job.load()
    pinned = next((j for j in loaded.jobs if j.inner_pins is not None), None)
    if pinned is not None and form == "maestro":
        _fail(f"{pinned.source}: layer {pinned.layer.name!r} pins loops to register files inside the PE, which "
              f"--format {form} cannot write; use --format loopnest or --format timeloop")
    if form == "maestro":
        text = write_maestro(to_maestro(loaded.name, loaded.jobs))
    elif form == "timeloop":
        from accelsim.mapping.jobs import compile_job
        from accelsim.mapping.timeloop_writer import write_timeloop

        if len(loaded.jobs) != 1:
            _fail(f"--format timeloop writes one layer; {loaded.name} has {len(loaded.jobs)}: choose one with --layer")
        one = loaded.jobs[0]
        text = write_timeloop(compile_job(one, loaded.hw), loaded.hw)
    else:
        nests = [dataclasses.replace(loopnest_of(compile_mapping(j.layer, j.dataflow, loaded.hw.num_pes, source=j.source)),
                         inner_pins=j.inner_pins) for j in loaded.jobs]
        text = write_loopnest(loaded.name, nests)
    if output and not is_stdout(output):
        write_atomic(output, text)
        click.echo(f"wrote {output}", err=True)
    else:
        click.echo(text, nl=False)


@main.command()
@click.option("--system", "system_ref", required=True, metavar="PRESET|FILE",
              help="Sub-accelerators sharing one channel: magma_s1 ... magma_s6 or a system YAML file.")
@click.option("--workload", required=True, metavar="GROUP|FILE",
              help="Jobs: vision, language, recommendation, mix (MAGMA's groups) or a workload YAML file.")
@click.option("--network", "networks", multiple=True, metavar="NAME",
              help="Also every layer of this network (bundled or file; repeatable).")
@click.option("--scheduler", type=click.Choice(["magma", "herald", "aimt", "random"]), default="magma",
              show_default=True, help="Who decides which sub-accelerator runs which job in which order.")
@click.option("--compare", "compare", multiple=True, type=click.Choice(["magma", "herald", "aimt", "random"]),
              help="Also schedule with these and simulate theirs (repeatable).")
@click.option("--budget", type=click.IntRange(1), default=2000, show_default=True,
              help="Schedules scored by magma and random.")
@click.option("--score", type=click.Choice(["alg1", "sim"]), default="alg1", show_default=True,
              help="Score schedules by MAGMA's Algorithm 1 on the job table (fast) or by simulating them.")
@click.option("--bandwidth-gbps", type=float, default=None, help="The channel's bandwidth (GB/s) instead of the system's.")
@click.option("--batch", type=click.IntRange(1), default=1, show_default=True, help="Batch size of every job.")
@click.option("--group-size", type=click.IntRange(1), default=100, show_default=True,
              help="Jobs of a workload group (the first ones in arrival order).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of magma and random.")
@click.option("--top-k", type=click.IntRange(1), default=2, show_default=True,
              help="With --score alg1: magma's best schedules simulated (with its seeds); the best simulated wins.")
@click.option("--attribute-gap", is_flag=True,
              help="Split the gap to Algorithm 1 into burstiness, arbitration and latency (simulates every job alone).")
@click.option("--json", "json_out", type=click.Path(dir_okay=False), help="Write the report as JSON.")
@click.option("--trace", "trace_out", type=click.Path(dir_okay=False),
              help="Write a Perfetto (Chrome JSON) trace: one track per sub-accelerator, one for the channel.")
@click.option("--plot", "plot_out", type=click.Path(dir_okay=False),
              help="Write a PNG of the running jobs' bandwidth demand against the channel over time.")
@_force_option("--json/--trace/--plot files")
@_budget_options
@_progress_option
def multicore(system_ref: str, workload: str, networks: tuple[str, ...], scheduler: str, compare: tuple[str, ...],
              budget: int, score: str, bandwidth_gbps: float | None, batch: int, group_size: int, seed: int,
              top_k: int, attribute_gap: bool, json_out: str | None, trace_out: str | None, plot_out: str | None,
              force: bool,
              max_steps: int | None, max_memory: int, max_seconds: float | None, progress: bool | None) -> None:
    """Schedule jobs on several sub-accelerators sharing one off-chip channel and simulate them."""
    from accelsim.system.command import MulticoreSettings, report_json, run_multicore
    from accelsim.system.trace import demand_plot, perfetto_json

    _start_time_budget(max_seconds)
    check_outputs({"--json": json_out, "--trace": trace_out, "--plot": plot_out}, force)
    settings = MulticoreSettings(system_ref, workload, networks, scheduler, budget, bandwidth_gbps, batch,
                                 group_size, score, seed, compare, attribute_gap, top_k)  # type: ignore[arg-type]
    say = (lambda line: click.echo(f"accelsim: {line}", err=True)) if progress is not False else None
    with _stop_on_signals(), _doing(f"running {workload} on {system_ref}"):
        report = run_multicore(settings, Budget(max_steps, max_memory, max_seconds), say)
    files = tuple((role, path) for role, path in (("system", system_ref), ("workload", workload))
                  if Path(path).is_file())
    prov = Provenance("multicore", report.workload, report.system.name, report.system.sha256, "realistic",
                      inputs=tuple(InputFile.of(role, path) for role, path in files),
                      options={k: v for k, v in dataclasses.asdict(settings).items() if v not in (None, (), "")})
    click.echo(f"{report.workload} ({len(report.jobs)} jobs) on {report.system.name} "
               f"({report.system.channel.bandwidth_gbps:g} GB/s, {report.system.channel.arbitration}; "
               f"accelsim {__version__})")
    click.echo(report.text())
    if json_out is not None:
        write_atomic(json_out, report_json(report, prov.to_dict()))
        click.echo(f"wrote {json_out}")
    if trace_out is not None:
        write_atomic(trace_out, perfetto_json(report))
        click.echo(f"wrote {trace_out}")
    if plot_out is not None:
        demand_plot(report, plot_out)
        click.echo(f"wrote {plot_out}")


@main.command(name="import-onnx")
@click.argument("model", type=click.Path(dir_okay=False))
@click.option("-o", "--out", "--output", "output", type=click.Path(dir_okay=False),
              help="Write the network table (YAML) here (default: stdout).")
@click.option("--batch", type=click.IntRange(min=1), help="Batch size (default: the model's; 1 where it is symbolic).")
@click.option("--strict", is_flag=True, help="Refuse a model with nodes accelsim does not simulate instead of "
                                             "skipping them.")
@_force_option("output file")
@_max_memory_option
def import_onnx_command(model: str, output: str | None, batch: int | None, strict: bool, force: bool,
                        max_memory: int) -> None:
    """Turn an ONNX model into a network table to read, edit and run with --network."""
    from accelsim.workload.onnx_import import import_onnx
    from accelsim.workload.tables import network_yaml

    check_outputs({"--out": output}, force)
    _check_onnx_memory(model, Budget(max_memory_bytes=max_memory))
    imported = import_onnx(model, batch, strict)
    notes = f"batch {imported.batch}" + (f"; {imported.skipped_summary()}" if imported.skipped else "")
    text = network_yaml(imported.network, source=f"imported from {Path(model).name}", notes=notes)
    if imported.skipped:
        click.echo(f"warning: {model}: {imported.skipped_summary()}", err=True)
    if output and not is_stdout(output):
        write_atomic(output, text)
        click.echo(f"wrote {output} ({len(imported.network.layers)} layers, {imported.network.macs:,} MACs)", err=True)
    else:
        click.echo(text, nl=False)


# Peak memory of importing an ONNX model per byte of the file: the parsed protobuf and the copy
# shape inference makes (a 400 MB model took 2 GB, issue 22).
ONNX_BYTES_PER_FILE_BYTE = 5


def _check_onnx_memory(model: str, budget: Budget) -> None:
    """Refuse, before reading it, a model whose import would need more memory than ``budget``."""
    try:
        size = os.stat(model).st_size
    except OSError:
        return  # the importer says what is wrong with the path
    need = ONNX_BYTES_PER_FILE_BYTE * size
    if need > budget.memory_bytes:
        raise ResourceError(f"{model}: importing this {format_bytes(size)} model takes about {format_bytes(need)} of "
                            f"memory ({ONNX_BYTES_PER_FILE_BYTE}x its size), over --max-memory "
                            f"{format_bytes(budget.memory_bytes)}; pass --max-memory {ceil_size(need)} if the "
                            "machine has it")


@main.command(name="list")
def list_things() -> None:
    """List hardware presets, bundled networks and dataflow styles."""
    click.echo("hardware presets: " + ", ".join(available_presets()))
    click.echo("networks:         " + ", ".join(available_networks()))
    click.echo("styles:           " + ", ".join(sorted(STYLES)))


@main.command()
@click.option("--hw", "hw_ref", help="Preset name, hardware YAML file or MAESTRO hardware .m file.")
@click.option("--timeloop", "timeloop", multiple=True, type=click.Path(dir_okay=False),
              help="Timeloop's YAML files (repeat the option): the spec accelsim models the architecture with, "
                   "and which of its levels became which accelsim level.")
@_set_option
def hardware(hw_ref: str | None, timeloop: tuple[str, ...], overrides: tuple[str, ...]) -> None:
    """Print a hardware spec (after --set overrides) as YAML."""
    if (hw_ref is None) == (not timeloop):
        _fail("give --hw or --timeloop FILE (repeated)")
    if not timeloop:
        click.echo(dump_hardware(load_hardware(hw_ref or "", list(overrides))), nl=False)
        return
    from accelsim.mapping.timeloop_files import read_files, timeloop_job

    texts = read_files(list(dict.fromkeys(timeloop)))
    t = timeloop_job(texts, overrides, mapping_used=None)
    lines = ["# Timeloop's storage levels, innermost first -> accelsim's level:"]
    lines += [f"#   {lv.name}: {lv.instances}, keeps {', '.join(lv.keeps) or 'nothing'} -> {t.roles[lv.name]}"
              for lv in t.levels]
    click.echo("\n".join(lines) + "\n" + dump_hardware(t.hw), nl=False)


@main.command()
@click.option("--quick", is_flag=True, help="Smaller versions of the scenarios (a CI smoke run).")
@click.option("--scenario", "only", multiple=True,
              type=click.Choice(["alexnet-tpu", "resnet50-eyeriss", "marvel15-layer", "vgg16-maeri", "wide-array",
                                 "functional-conv3", "many-layers"]),
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
@click.option("-o", "--out", "out_dir", default="validation", show_default=True, type=click.Path(file_okay=False),
              help="Directory for REPORT.md, results.csv and the PNG plots.")
@click.option("--quick", is_flag=True, help="Small simulation budget, no SCALE-Sim run (a smoke run).")
@_force_option("report")
def validate(out_dir: str, quick: bool, force: bool) -> None:
    """Run the papers' scenario sets, paper checks and SCALE-Sim parity; write the report.
    Run from the repository root (it reads validation/scalesim and validation/traces)."""
    import time

    from accelsim.validation import ValidationPaths, run_validation, summary_line

    start = time.perf_counter()
    check_output_directory("--out", out_dir, parents=True)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with _doing("validating"):
        written = run_validation(ValidationPaths(out), quick, force, lambda message: click.echo(message, err=True))
    for path in written:
        click.echo(f"wrote {path}", err=True)
    summary = summary_line(out)
    if summary:
        click.echo(summary)
    click.echo(f"took {time.perf_counter() - start:.0f} s", err=True)


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
            click.echo(f"wrote {path}", err=True)


@main.command(name="search")
@click.option("--hw", "hw_ref",
              help="Preset name, hardware YAML file or MAESTRO hardware .m file (required unless --timeloop).")
@click.option("--timeloop", "timeloop", multiple=True, type=click.Path(dir_okay=False),
              help="Timeloop's YAML files (repeat the option): search its problem's layer on its architecture "
                   "(or on --hw); a mapping among them is not used.")
@click.option("--network", help="Bundled network name or network YAML file: search its layers.")
@click.option("--mapping", "mapping_path", type=click.Path(dir_okay=False),
              help="MAESTRO mapping file (.m) or loop-nest mapping file (.yaml): search its layers (their "
                   "dataflows are not used).")
@_layer_option("Search")
@_set_option
@click.option("--mapper", type=click.Choice(["gamma", "random", "exhaustive", "marvel", "ng-ga", "ng-de", "ng-cma",
                                           "ng-tbpsa", "ng-pso", "ng-oneplusone", "ng-portfolio"]),
              default="gamma", show_default=True,
              help="gamma: GAMMA's genetic algorithm; random: uniform samples; exhaustive: every pruned genome; "
                   "marvel: MARVEL's decoupled mapper (off-chip tile by the distinct-block model, then the pruned "
                   "on-chip space inside it; --min-utilization is its bound p); "
                   "ng-*: Nevergrad's GA, DE, CMA-ES, TBPSA, PSO, (1+1)-ES, portfolio (pip install "
                   "'accelsim[nevergrad]').")
@click.option("--budget", type=int, default=2000, show_default=True, help="New schedules scored per layer.")
@click.option("--objective", type=click.Choice(["latency", "energy", "edp", "latency-area"]), default="latency",
              show_default=True,
              help="What to minimize: cycles, energy (pJ), their product; latency-area (cycles x mm^2): --co-search.")
@click.option("--model", default="analytical", show_default=True,
              help="analytical, sim, maestro, or two-stage (analytical screen, the simulator re-ranks --top-k).")
@click.option("--co-search", "co_search", is_flag=True,
              help="Search the hardware too (DiGamma): PE count, L1, L2 (--hw-range) with every layer's mapping; "
                   "--hw gives the rest; --budget counts designs; writes hw.yaml and best.m.")
@click.option("--hw-range", "hw_ranges", multiple=True, metavar="FIELD=LOW:HIGH",
              help="co-search: a hardware gene's range (pe_array.count, l1.size_bytes, l2.size_bytes, "
                   "distribution_noc.bandwidth_words_per_cycle); repeat the option.")
@click.option("--area-budget-mm2", type=float, default=None,
              help="co-search: designs whose PEs, L1s and L2 (MAESTRO's 28 nm table) exceed this are illegal.")
@click.option("--size-buffers", is_flag=True,
              help="co-search: size L1 and L2 to the mappings' need instead of searching them.")
@click.option("--vary-layers", type=float, default=None,
              help="co-search: layers whose genome a child varies, on average (>= 0; default 4).")
@click.option("--mutate-hw", type=float, default=None,
              help="co-search: probability of Mutate-HW per child (0..1; default 0.5).")
@click.option("--fill-area", type=float, default=None,
              help="co-search: probability per child of Fill-area, the buffers raised to the most the area budget "
                   "allows (0..1; default 0).")
@click.option("--refine", type=float, default=None,
              help="co-search: share of --budget spent last on the best design's hardware, its mappings only "
                   "(0..1, below 1; default 0).")
@_mode_option("realistic", "Fidelity mode of the models.")
@click.option("--top-k", type=int, default=10, show_default=True, help="Candidates two-stage re-ranks per layer.")
@click.option("--workers", type=int, default=1, show_default=True, help="Local worker processes.")
@click.option("--scheduler", metavar="ADDR", help="Score on a Dask cluster, e.g. tcp://host:8786 (instead of --workers).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the mapper.")
@click.option("--max-levels", type=int, default=3, show_default=True, help="Most cluster levels of a genome (1-3).")
@click.option("--population", type=int, default=50, show_default=True, help="gamma: genomes per generation.")
@click.option("--min-utilization", type=float, default=0.5, show_default=True,
              help="exhaustive: prune genomes keeping fewer PEs busy than this share.")
@click.option("--unique-reuse", is_flag=True,
              help="exhaustive: keep one loop order per distinct operand reuse (dMazeRunner's Table 2).")
@click.option("--work-budget", type=float, default=None,
              help="Most work the scoring model may spend on one candidate (analytical: iteration cases x PEs, "
                   "default 200000; sim: iteration cases, default 200000); candidates above are skipped.")
@click.option("--offchip-genes", is_flag=True,
              help="gamma/random: genomes also pin the L2 tile and the order of the loops over L2 tiles "
                   "(MARVEL's off-chip subspace; README: Search).")
@click.option("--style-seeds/--no-style-seeds", default=True, show_default=True,
              help="Score the named styles' mappings of each layer first (GAMMA starts from those that are "
                   "genomes), so the best is never worse than the best style under the scoring model.")
@click.option("-o", "--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Directory for candidates.parquet, best.m, summary.json, convergence.png.")
@click.option("--resume", is_flag=True, help="Continue the interrupted search saved in --out.")
@_max_seconds_option
@_max_memory_option
@_progress_option
def search_command(hw_ref, timeloop, network, mapping_path, layer, overrides, mapper, budget, objective, model,
                   co_search, hw_ranges, area_budget_mm2, size_buffers, vary_layers, mutate_hw, fill_area, refine, mode, top_k, workers, scheduler, seed, max_levels, population, min_utilization, unique_reuse, work_budget,
                   offchip_genes, style_seeds, out_dir, resume, max_seconds, max_memory, progress) -> None:
    """Search mappings of each layer; exit status 130 when interrupted, 3 over --max-seconds or
    --max-memory (resume with --resume)."""
    from accelsim.search.executors import available_cores, make_executor
    from accelsim.search.session import SearchSettings, run_search

    _start_time_budget(max_seconds)
    if workers < 1:
        _fail(f"--workers must be at least 1, got {workers}")
    if scheduler is not None and workers != 1:
        _fail("--workers and --scheduler exclude each other: the Dask cluster has its own workers")
    check_output_directory("--out", out_dir, parents=True)
    cores = available_cores()
    if workers > cores:
        click.echo(f"warning: --workers {workers}: only {cores} core(s) available to this process; using {cores}",
                   err=True)
        workers = cores
    _check_search_memory(budget, Budget(max_memory_bytes=max_memory))
    executor = None
    try:
        settings = SearchSettings(hw_ref, tuple(overrides), network, mapping_path, layer, mapper, budget, objective,
                                  model, mode, top_k, seed, max_levels, population, min_utilization, work_budget,
                                  style_seeds, tuple(timeloop), unique_reuse, co_search, tuple(hw_ranges),
                                  area_budget_mm2, size_buffers, vary_layers, mutate_hw, offchip_genes, fill_area,
                                  refine)
        with _stop_on_signals():  # SIGTERM too: the workers are stopped below, the parent says one line
            executor = make_executor(workers, scheduler)
            with _search_bar(progress, settings) as advance:
                summary = run_search(settings, Path(out_dir), executor, resume, advance)
    except (KeyboardInterrupt, Stopped) as exc:
        stop = exc if isinstance(exc, Stopped) else Stopped("SIGINT")
        _error(f"stopped by {stop.signal_name}: what was scored is saved in {out_dir}; run the same command with "
               "--resume to finish", stop.status)
    finally:
        if executor is not None:
            executor.close()
    click.echo(_format_search(summary))
    click.echo(f"wrote {out_dir}", err=True)


# What one scored candidate costs a layer's search in memory (its rows in the search's frames,
# the evaluator's cache entries), a guard rather than a forecast: re-measured with tracemalloc
# on marvel15 L3_Bottleneck4_3_2 (analytical model), the peak grew by 6.5 kB per candidate
# between 400 random candidates and fewer, by about 14.5 kB per candidate between GAMMA budgets
# of 100 and 500, and not at all between 200 and 1,000 (the first layer's set-up dominates);
# the largest figure, rounded up.
SEARCH_BYTES_PER_CANDIDATE = 16384
SEARCH_BASE_BYTES = 300 * 2**20  # the process with pandas, pyarrow and the models loaded


def _check_search_memory(budget: int, limit: Budget) -> None:
    """Refuse a --budget whose candidates of one layer would not fit in the memory budget."""
    need = SEARCH_BASE_BYTES + budget * SEARCH_BYTES_PER_CANDIDATE
    if need > limit.memory_bytes:
        raise ResourceError(f"--budget {budget:,}: a layer's search keeps every scored candidate in memory, an "
                            f"estimated {format_bytes(need)}, over --max-memory {format_bytes(limit.memory_bytes)}; "
                            f"lower --budget (at most {(limit.memory_bytes - SEARCH_BASE_BYTES) // SEARCH_BYTES_PER_CANDIDATE:,} "
                            f"fits) or pass --max-memory {ceil_size(need)} if the machine has it")


HEARTBEAT_LAYERS = 4  # layers in flight a search's heartbeat names (the others are counted)


def _heartbeat_seconds() -> float:
    """Seconds between progress lines without a terminal (``ACCELSIM_HEARTBEAT_SECONDS``, default 30)."""
    return float(os.environ.get("ACCELSIM_HEARTBEAT_SECONDS", "30") or 30)


@dataclass
class _LayerBeat:
    """A layer in flight, as the heartbeat and the bar see it: new rows scored, best cost so far,
    when it started (monotonic seconds)."""

    scored: int = 0
    best: float | None = None
    start: float = field(default_factory=time.monotonic)


class _InFlight:
    """The layers a search has in flight, in the order started, and the candidates scored in
    all; fed with the search's progress calls (0 rows when a layer starts, ``done`` when it
    ends, else a batch's new rows and its layer's best so far)."""

    def __init__(self) -> None:
        self.layers: dict[str, _LayerBeat] = {}
        self.total = 0

    def update(self, scored: int, best: float | None, layer: str, done: bool) -> None:
        self.total += scored
        if not layer:
            return
        if done:
            self.layers.pop(layer, None)
            return
        beat = self.layers.setdefault(layer, _LayerBeat())
        beat.scored += scored
        beat.best = best if best is not None else beat.best

    def named(self, label: Callable[[str, _LayerBeat], str]) -> str:
        """The first :data:`HEARTBEAT_LAYERS` layers in flight as ``label`` writes each (from its
        printable name and record), and how many more."""
        shown = ", ".join(label(printable(name), beat) for name, beat in list(self.layers.items())[:HEARTBEAT_LAYERS])
        more = len(self.layers) - HEARTBEAT_LAYERS
        return shown + (f" and {more} more" if more > 0 else "")


class _SearchHeartbeat:
    """Without a terminal: a line on stderr every ``every`` seconds while a search runs, naming
    the layer, what it has scored and its best, also when nothing was scored meanwhile (the
    exhaustive mapper may walk millions of genomes that its pruning discards before any model
    runs); with several layers in flight (several workers), every one of them in network order
    with its new rows of ``budget`` (the first :data:`HEARTBEAT_LAYERS` named, the rest counted).
    Called with each batch's new rows (0 when a layer starts; ``done`` when it ends)."""

    def __init__(self, objective: str, every: float, budget: int):
        self.objective, self.every, self.budget = objective, every, budget
        self.lock = threading.Lock()
        self.flight = _InFlight()
        self.last_shown = 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._beat, name="accelsim-heartbeat", daemon=True)
        self.thread.start()

    def __call__(self, scored: int, best: float | None, layer: str = "", done: bool = False) -> None:
        with self.lock:
            self.flight.update(scored, best, layer, done)

    def line(self) -> str:
        """The status line now (and the count it was last shown at moves on)."""
        with self.lock:
            total = self.flight.total
            quiet = total == self.last_shown
            self.last_shown = total
            layers = list(self.flight.layers.items())
            if not layers:
                return f"accelsim: search: no layer in flight ({total:,} candidates scored in all)"
            idle = (f"; none in the last {format_seconds(self.every)}: the mapper{' is' if len(layers) == 1 else 's are'} "
                    f"still proposing candidates {'its' if len(layers) == 1 else 'their'} pruning discards before "
                    "scoring") if quiet else ""
            if len(layers) == 1:
                name, beat = layers[0]
                shown = f", best {self.objective} {beat.best:,.4g}" if beat.best is not None else ""
                return (f"accelsim: search: layer {printable(name)}: {beat.scored:,} candidates scored{shown}, "
                        f"{format_seconds(time.monotonic() - beat.start)} on it ({total:,} in all){idle}")
            named = self.flight.named(lambda name, beat: f"{name} ({beat.scored:,}/{self.budget:,})")
            return (f"accelsim: search: {len(layers)} layers at once, {named}; {total:,} candidates "
                    f"scored in all{idle}")

    def _beat(self) -> None:
        while not self.done.wait(self.every):
            click.echo(self.line(), err=True)

    def close(self) -> None:
        self.done.set()
        self.thread.join()


@contextmanager
def _search_bar(progress: bool | None, settings):
    """A tqdm bar over the candidates to score, showing the layer and the best cost so far (on a
    terminal or with --progress); without a terminal a line on stderr every 30 s
    (:class:`_SearchHeartbeat`); nothing with --no-progress."""
    style = choose_style(progress, sys.stderr)
    if style == "off":
        yield None
        return
    if style == "lines":
        heartbeat = _SearchHeartbeat(settings.objective, _heartbeat_seconds(), settings.budget)
        try:
            yield heartbeat
        finally:
            heartbeat.close()
        return
    from tqdm import tqdm

    flight = _InFlight()
    with tqdm(unit="cand", file=sys.stderr, desc="search") as bar:
        def advance(scored: int, best: float | None, layer: str = "", done: bool = False) -> None:
            flight.update(scored, best, layer, done)
            description, postfix = _bar_labels(flight, settings.objective)
            bar.set_description_str(description, refresh=False)
            bar.set_postfix_str(postfix, refresh=False)
            bar.update(scored)
        yield advance


def _bar_labels(flight: _InFlight, objective: str) -> tuple[str, str]:
    """The search bar's description and postfix: one layer in flight is named with its best
    cost so far; several are counted and named (the first :data:`HEARTBEAT_LAYERS`), since one
    best cost cannot stand for layers of different sizes."""
    if len(flight.layers) == 1:
        name, beat = next(iter(flight.layers.items()))
        return f"search {printable(name)}", f"best {objective} {beat.best:,.4g}" if beat.best is not None else ""
    if not flight.layers:
        return "search", ""
    return f"search {len(flight.layers)} layers at once ({flight.named(lambda name, _beat: name)})", ""


def _format_search(summary: dict) -> str:
    """One line per layer: candidates scored and legal, the best cost and two-stage fidelity
    (a co-search: the best design's hardware, area and network cost)."""
    objective = summary["settings"]["objective"]
    if summary.get("co_search"):
        best = summary["best"]
        found = (f"best: {best['hw']}, {best['area_mm2']:.4f} mm^2, {best['cycles']:,.0f} cycles, "
                 f"{best['energy_pj'] / 1e6:.3f} uJ" if best else "no legal design found")
        return (f"{summary['network']}: co-search of {len(summary['layers'])} layer(s), {objective}: "
                f"{summary['scored']} designs scored, {summary['legal']} legal ({summary['stopped']}); {found}")
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
    simulate = [f"{printable(layer['layer'])}: best.m has no DRAM layouts; simulate it with those it was scored "
                f"with: {layer['simulate']}" for layer in summary["layers"] if layer.get("simulate")]
    return "\n".join(lines + [format_table(header, rows)] + _style_lines(summary) + simulate)


def _style_lines(summary: dict) -> list[str]:
    """Per layer: the best named style under the scoring (screening) model and how much the
    search's best beats it."""
    objective, model = summary["settings"]["objective"], summary["settings"]["model"]
    screen = "analytical" if model == "two-stage" else model
    lines = []
    for layer in summary["layers"]:
        costs = {style: cost for style, cost in (layer.get("styles") or {}).items() if cost is not None}
        found = layer.get("screen_best_cost")
        if not costs or found is None:
            continue
        style = min(costs, key=lambda name: costs[name])
        gain = (costs[style] - found) / costs[style] if costs[style] else 0.0
        verdict = (f"the search's best is {gain:.1%} lower" if gain > 0 else "the search found nothing better")
        lines.append(f"{printable(layer['layer'])}: best named style {style}, {objective} {costs[style]:,.4g} "
                     f"({screen} model); {verdict} ({found:,.4g})")
    return lines


if __name__ == "__main__":  # pragma: no cover
    try:
        main()
    finally:
        end_signals_by_default()
