"""The command line's shared machinery (accelsim/cli.py): one error path, options declared once
and handed to commands as records, one table renderer."""

from __future__ import annotations

import click
from click.testing import CliRunner

from accelsim.cli import EXIT_USER_ERROR, JobArgs, OutputArgs, UserError, _fail, _job_options, _output_options, main
from accelsim.text_table import format_table, table_lines


def _run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_an_input_error_anywhere_is_one_error_line_and_status_2():
    """Raised deep inside the hardware loader, not caught by the command itself."""
    result = _run("hardware", "--hw", "no_such_preset")
    assert result.exit_code == EXIT_USER_ERROR == 2
    lines = result.output.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "no_such_preset" in lines[0]
    assert "Traceback" not in result.output


def test_fail_is_a_click_exception_with_the_documented_status():
    try:
        _fail("--window x: expected FIRST:LAST")
    except UserError as exc:
        assert isinstance(exc, click.ClickException) and exc.exit_code == 2
    result = _run("plot", "nowhere", "--window", "x")
    assert result.exit_code == 2 and result.output == "error: --window x: expected FIRST:LAST, two cycle numbers such as 0:20000\n"


def test_shared_options_reach_a_command_as_records():
    seen = {}

    @click.command()
    @_job_options("Try")
    @_output_options()
    def probe(job: JobArgs, out: OutputArgs) -> None:
        seen["job"], seen["out"] = job, out

    result = CliRunner().invoke(probe, ["--hw", "eyeriss_like", "--network", "marvel15", "--style", "nvdla_like",
                                        "--set", "l1.size_bytes=64", "--set", "l2.banks=2", "--json", "o.json"])
    assert result.exit_code == 0, result.output
    assert seen["job"] == JobArgs("eyeriss_like", None, "marvel15", "nvdla_like", None,
                                  ("l1.size_bytes=64", "l2.banks=2"))
    assert seen["out"] == OutputArgs("o.json", None, False)
    assert [p.name for p in probe.params] == ["hw_ref", "mapping_path", "network", "style", "layer", "overrides", "timeloop",
                                              "dram_layouts",
                                              "json_out", "csv_out", "force"]


def test_table_renderer_aligns_and_strips():
    """Two spaces between columns; left columns padded on the right, the others on the left;
    no trailing blanks (an empty last cell)."""
    assert table_lines([["name", "n"], ["a", "1,000"], ["bb", ""]]) == ["name      n", "a     1,000", "bb"]
    assert format_table(("k", "layer", "v"), [("1", "x", "22")], left=(1,)) == "k  layer   v\n1  x      22"
