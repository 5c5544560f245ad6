"""What accelsim writes when names are hostile (issue 22): CSV cells a spreadsheet would run as
formulas are quoted, MAESTRO-format names it cannot write bare are quoted CSV fields and read
back whole, a name with a newline never starts a line of the terminal table; and the MAESTRO
model analyses accelsim's FC layers (they came out with 0 MACs and INT64_MIN delays)."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from accelsim.cli import main
from accelsim.output_files import FORMULA_LEADS, from_spreadsheet_safe, spreadsheet_safe
from accelsim.text_table import printable

REPO = Path(__file__).resolve().parents[1]
NAMES = ['=HYPERLINK("http://x")', "x\nerror: injected", "+1", "@sum", "-2", "plain"]

def _network(tmp_path: Path) -> Path:
    path = tmp_path / "n.yaml"
    path.write_text("name: '@net'\nlayers:\n" + "".join(
        f"  - {{name: \"{name.replace(chr(34), chr(92) + chr(34)).replace(chr(10), chr(92) + 'n')}\", type: FC, "
        f"K: 4, C: {4 * (i + 1)}}}\n" for i, name in enumerate(NAMES)), encoding="utf-8")
    return path


def _run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_spreadsheet_safe_quotes_formula_leads_only():
    """OWASP's rule: a cell starting with = + - @ tab or CR gets a leading quote; others and the
    quote's removal on reading are exact inverses."""
    for cell, safe in [("=1+1", "'=1+1"), ("+1", "'+1"), ("-2", "'-2"), ("@x", "'@x"), ("\tx", "'\tx"),
                       ("\rx", "'\rx"), ("conv1", "conv1"), ("'=x", "'=x"), ("", "")]:
        assert spreadsheet_safe(cell) == safe
        assert from_spreadsheet_safe(safe) == cell or cell.startswith("'")


def test_simulate_csv_quotes_formulas_and_the_table_escapes_newlines(tmp_path):
    """Every text cell of simulate's CSV that starts a formula is quoted; the terminal table
    shows the newline as \\n, so no line of stdout starts with ``error:``; compare reads our CSV
    back and finds every layer by its real name."""
    net, out = _network(tmp_path), tmp_path / "o.csv"
    result = _run("simulate", "--hw", "eyeriss_like", "--network", str(net), "--style", "nvdla_like",
                  "--csv", str(out), "--no-progress")
    assert result.exit_code == 0, result.output
    assert not [line for line in result.output.splitlines() if line.startswith("error:")]
    assert "x\\nerror: injected" in result.output
    rows = list(csv.DictReader(out.open(encoding="utf-8", newline="")))
    assert [r["Layer Number"] for r in rows[:-1]] == [spreadsheet_safe(n) for n in NAMES]
    assert {r["Neural Network Name"] for r in rows} == {"'@net"}
    for row in rows:
        assert not any(str(v).startswith(("=", "+", "-", "@")) for v in row.values()), row
    back = _run("compare", "--hw", "eyeriss_like", "--network", str(net), "--style", "nvdla_like",
                "--maestro-csv", str(out))
    assert back.exit_code == 0, back.output
    assert "6/6 layers agree" in back.output


def test_maestro_csv_quotes_names_it_cannot_write_bare(tmp_path):
    """The MAESTRO model's CSV (unquoted, as MAESTRO prints it) writes a name holding a newline
    or a quote as a quoted field and a formula lead with a single quote; compare reads it back
    matching every layer, and no row has MAESTRO's INT64_MIN delays."""
    net, out = _network(tmp_path), tmp_path / "m.csv"
    result = _run("analyze", "--hw", "eyeriss_like", "--network", str(net), "--style", "nvdla_like",
                  "--model", "maestro", "--csv", str(out))
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    assert "-9223372036854775808" not in text
    assert "'@net," in text and ",'+1," in text
    back = _run("compare", "--hw", "eyeriss_like", "--network", str(net), "--style", "nvdla_like",
                "--mode", "maestro", "--maestro-csv", str(out), "--json", str(tmp_path / "c.json"))
    assert back.exit_code == 0, back.output
    assert "x\\nerror: injected" in back.output and "\nerror:" not in back.output


def test_maestro_model_analyses_fc_as_the_conv_it_is(tmp_path):
    """An FC of K = C = 4 (nvdla_like: K over PEs, C within) is a CONV with R = S = Y = X = 1: the
    MAESTRO model gives it K x C = 16 MACs and the cycles of the same layer written as CONV (it
    gave 0 and 0: with its own Type no output rows Y', X' were derived)."""
    fc = tmp_path / "fc.m"
    _run("mapping", "--hw", "eyeriss_like", "--network", str(_one_fc(tmp_path)), "--style", "nvdla_like",
         "-o", str(fc))
    conv = tmp_path / "conv.m"
    conv.write_text(fc.read_text(encoding="utf-8").replace("Type: FC", "Type: CONV"), encoding="utf-8")
    results = {}
    for path in (fc, conv):
        out = tmp_path / f"{path.stem}.json"
        result = _run("analyze", "--hw", "eyeriss_like", "--mapping", str(path), "--model", "maestro",
                      "--json", str(out))
        assert result.exit_code == 0, result.output
        results[path.stem] = json.loads(out.read_text())[0]
    assert results["fc"]["macs"] == 16 and results["fc"]["cycles"] > 0
    assert results["fc"]["cycles"] == results["conv"]["cycles"]
    assert results["fc"]["accesses"] == results["conv"]["accesses"]


def _one_fc(tmp_path: Path) -> Path:
    path = tmp_path / "fc.yaml"
    path.write_text("name: t\nlayers:\n  - {name: fc, type: FC, K: 4, C: 4}\n", encoding="utf-8")
    return path


def test_ctrl_c_while_the_cli_loads_is_one_error_line():
    """The entry point imports the command line; a KeyboardInterrupt during that import (Ctrl-C in
    the first few tenths of a second) is one ``error: interrupted`` line and exit status 130."""
    code = ("import sys\n"
            "class Stop:\n"
            "    def find_spec(self, name, path, target=None):\n"
            "        if name == 'accelsim.cli':\n"
            "            raise KeyboardInterrupt\n"
            "sys.meta_path.insert(0, Stop())\n"
            "from accelsim.entry import main\n"
            "main()\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 130 and done.stderr == "error: interrupted\n", done.stderr


@pytest.mark.parametrize("entry", ["from accelsim.entry import main", "import runpy; main = lambda: runpy.run_module("
                                   "'accelsim.cli', run_name='__main__')"])
def test_a_signal_after_the_command_finished_takes_its_default_action(entry):
    """Once a command has finished (here ``accelsim list``, exit 0), SIGINT and SIGTERM are back
    at their default action before the interpreter shuts down, through both entry points (the
    ``accelsim`` script and ``python -m accelsim.cli``): a Ctrl-C during the shutdown ends the
    process by the signal instead of meeting Python's handler half torn down (a CI run once
    aborted there with "Fatal Python error"). The atexit hook runs after the entry point's
    ``finally`` and before the interpreter resets the handlers itself, so without the reset it
    prints Python's own handler for SIGINT."""
    code = ("import atexit, signal, sys\n"
            "atexit.register(lambda: sys.stderr.write(f'{signal.getsignal(signal.SIGINT)!r} '\n"
            "                                         f'{signal.getsignal(signal.SIGTERM)!r}\\n'))\n"
            f"{entry}\n"
            "sys.argv = ['accelsim', 'list']\n"
            "main()\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert done.stderr == "<Handlers.SIG_DFL: 0> <Handlers.SIG_DFL: 0>\n", done.stderr


def test_maestro_model_analyses_pwconv(tmp_path):
    """MobileNetV2's first pointwise layer (K = 16, C = 32, 112 x 112 outputs) under the MAESTRO
    model: 16 x 32 x 112 x 112 = 6,422,528 MACs and a positive runtime (it gave 0 and 0, as FC)."""
    out = tmp_path / "pw.json"
    result = _run("analyze", "--hw", "eyeriss_like", "--network", "mobilenetv2", "--style", "nvdla_like",
                  "--layer", "bottleneck1_1_3", "--model", "maestro", "--json", str(out))
    assert result.exit_code == 0, result.output
    row = json.loads(out.read_text())[0]
    assert row["op"] == "PWCONV" and row["macs"] == 16 * 32 * 112 * 112 == 6_422_528 and row["cycles"] > 0


@given(st.text())
def test_safe_cells_and_printable_names_hold_for_any_text(text):
    """For any text: a spreadsheet-safe cell never starts a formula and reads back as the text
    (unless the text itself starts with a quote before a formula lead); a printable name has no
    line break and is all printable."""
    safe = spreadsheet_safe(text)
    assert not safe.startswith(FORMULA_LEADS)
    if not (text.startswith("'") and text[1:].startswith(FORMULA_LEADS)):
        assert from_spreadsheet_safe(safe) == text
    shown = printable(text)
    assert len(shown.splitlines()) <= 1 and shown.isprintable()
