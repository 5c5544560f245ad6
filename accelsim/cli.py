"""The ``accelsim`` command.

User mistakes (bad files, flags, mappings that do not fit) print one ``error:`` line naming
the file, line or field and exit with status 2; no traceback.
"""

from __future__ import annotations

import csv
import sys
import warnings
from pathlib import Path

import click

from accelsim import __version__
from accelsim.api import OverflowWarning, jobs_from_maestro, jobs_from_network, run_jobs, to_maestro
from accelsim.errors import InputError
from accelsim.hw.loader import available_presets, dump_hardware, load_hardware
from accelsim.mapping.maestro_format import write_maestro
from accelsim.mapping.styles import STYLES
from accelsim.sim.engine import SimOptions
from accelsim.sim.results import NetworkResult, write_json
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


@main.command()
@click.option("--hw", "hw_ref", required=True, help="Preset name, hardware YAML file or MAESTRO hardware .m file.")
@click.option("--mapping", "mapping_path", type=click.Path(dir_okay=False), help="MAESTRO mapping file (.m).")
@click.option("--network", help="Bundled network name or network YAML file (with --style).")
@click.option("--style", type=click.Choice(sorted(STYLES)), help="Named dataflow style (with --network).")
@click.option("--layer", help="Simulate only this layer.")
@click.option("--mode", type=click.Choice(["realistic", "maestro"]), default="realistic", show_default=True,
              help="realistic: contention, latencies, packets; maestro: MAESTRO's assumptions.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Override a hardware field, e.g. --set l2.size_bytes=65536 (repeatable).")
@click.option("--json", "json_out", type=click.Path(dir_okay=False), help="Write per-layer results as a JSON list.")
@click.option("--csv", "csv_out", type=click.Path(dir_okay=False), help="Write per-layer results as CSV (MAESTRO column names).")
@click.option("--allow-overflow", is_flag=True, help="Simulate mappings whose tiles do not fit their buffers (warns).")
@click.option("--per-pe", is_flag=True, help="One event per PE and packet (slow; the reference for the grouped mode).")
@click.option("--force", is_flag=True, help="Overwrite existing --json/--csv files.")
@click.option("--progress/--no-progress", default=None, help="Progress bar (default: on when stderr is a terminal).")
def simulate(hw_ref, mapping_path, network, style, layer, mode, overrides, json_out, csv_out,
             allow_overflow, per_pe, force, progress) -> None:
    """Simulate a mapping file, or a network under a named dataflow style."""
    if (mapping_path is None) == (network is None):
        _fail("give exactly one of --mapping FILE.m or --network NAME (with --style)")
    if network is not None and style is None:
        _fail("--network needs --style; styles are: " + ", ".join(sorted(STYLES)))
    if mapping_path is not None and style is not None:
        _fail("--style applies to --network only; a mapping file carries its own dataflow")
    _check_output(json_out, force)
    _check_output(csv_out, force)
    try:
        hw = load_hardware(hw_ref, list(overrides))
        if mapping_path is not None:
            name, jobs = jobs_from_maestro(mapping_path, layer)
        else:
            name, jobs = jobs_from_network(network, style, hw, layer)
        show = progress if progress is not None else sys.stderr.isatty()
        bar = None
        if show and len(jobs) > 1:
            from tqdm import tqdm

            bar = tqdm(total=len(jobs), unit="layer", file=sys.stderr, desc=name)

        with warnings.catch_warnings():
            warnings.simplefilter("always", OverflowWarning)
            warnings.showwarning = lambda message, *args, **kwargs: click.echo(f"warning: {message}", err=True)
            result = run_jobs(name, jobs, hw, SimOptions(mode=mode, per_pe=per_pe), allow_overflow,
                              (lambda done: bar.update(1)) if bar is not None else None)
        if bar is not None:
            bar.close()
    except InputError as exc:
        _fail(str(exc))
    results = result.layers
    click.echo(f"{name} on {hw.name} ({mode} mode)")
    click.echo(_format_table(result))
    if json_out:
        write_json(results, json_out)
        click.echo(f"wrote {json_out}")
    if csv_out:
        rows = [r.to_row() for r in results]
        with open(csv_out, "w", encoding="utf-8", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        click.echo(f"wrote {csv_out}")


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
def bench(quick) -> None:
    """Run the fixed benchmark scenario and print simulated cycles/s, events/s, peak memory."""
    from accelsim.bench import run_bench

    for line in run_bench(quick=quick):
        click.echo(line)


if __name__ == "__main__":  # pragma: no cover
    main()
