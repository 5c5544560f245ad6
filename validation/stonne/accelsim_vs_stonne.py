"""accelsim's realistic mode beside STONNE on the cases of ``cases.csv`` that STONNE ran correctly:
each case's mapping (``mappings/``) on the ``stonne_*`` preset with STONNE's flags as ``--set``,
simulated; printed as a table of cycles (ours, STONNE's, ratio), input L2 reads against STONNE's
SRAM input reads, and words forwarded between neighbouring PEs against STONNE's
``ms_input_forwardings`` (MAERI only)::

    PYTHONPATH=. python validation/stonne/accelsim_vs_stonne.py [CONV|FC|GEMM ...]

With operations named, only those cases (about 10 s for the 31 CONV cases on the shared 2-core
machine). ``tests/test_stonne_reference.py`` checks the same numbers."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

from accelsim.hw.loader import load_hardware
from accelsim.mapping.jobs import jobs_from_maestro, prepare
from accelsim.sim.engine import simulate_layer
from accelsim.text_table import format_table

HERE = Path(__file__).resolve().parent


def case_hardware(row: dict[str, str]):
    """The case's preset with STONNE's flags as overrides."""
    if row["network"] == "MAERI":
        return load_hardware("stonne_maeri", [f"pe_array.count={row['num_ms']}",
                                              f"distribution_noc.bandwidth_words_per_cycle={row['dn_bw']}",
                                              f"reduction_noc.bandwidth_words_per_cycle={row['rn_bw']}"])
    return load_hardware("stonne_tpu", [f"pe_array.rows={row['ms_rows']}", f"pe_array.cols={row['ms_cols']}",
                                        f"distribution_noc.bandwidth_words_per_cycle={row['dn_bw']}",
                                        f"reduction_noc.bandwidth_words_per_cycle={row['rn_bw']}"])


def main(operations: list[str]) -> None:
    rows = [r for r in csv.DictReader((HERE / "cases.csv").open(newline=""))
            if r["status"] == "ok" and (not operations or r["operation"] in operations)]
    table = []
    for r in rows:
        hw = case_hardware(r)
        _, jobs = jobs_from_maestro(HERE / "mappings" / f"{r['case_id']}.m")
        result = simulate_layer(prepare(jobs[0], hw), hw)
        maeri = r["network"] == "MAERI"
        table.append([r["case_id"], f"{result.cycles:,}", f"{int(r['cycles']):,}",
                      f"{result.cycles / int(r['cycles']):.3f}",
                      f"{result.accesses['input'].l2_read:,}", f"{int(r['sram_input_reads']):,}",
                      f"{result.forwarded_words:,}", f"{int(r['ms_input_forwardings']):,}" if maeri else "-"])
    print(format_table(["case", "ours", "STONNE", "ours/STONNE", "input L2 reads", "STONNE's",
                        "forwarded", "STONNE's"], table))


if __name__ == "__main__":
    main(sys.argv[1:])
