"""Bad input through the real ``accelsim simulate`` command.

Every user mistake must exit with status 2 and print one ``error:`` message that names the
file and line (``.m`` files) or the field path (hardware files) and says what was expected,
never a Python traceback. Also: the ``--allow-overflow`` escape hatch, refusal to overwrite
outputs without ``--force`` and the shape of a good run's JSON/CSV output.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from accelsim.cli import main

REPO = Path(__file__).resolve().parents[1]
EYERISS_YAML = REPO / "accelsim" / "hwconfigs" / "eyeriss_like.yaml"

ACCESS_KEYS = {"l1_read", "l1_write", "l2_read", "l2_write", "dram_read", "dram_write"}

# One small CONV layer; the dataflow starts on line 7 (one directive per line).
GOOD_DIMS = "K: 8, C: 4, R: 3, S: 3, Y: 8, X: 8"
GOOD_DATAFLOW = [
    "SpatialMap(1,1) K;",
    "TemporalMap(1,1) C;",
    "TemporalMap(3,1) Y;",
    "TemporalMap(3,1) X;",
]
FIRST_DIRECTIVE_LINE = 7


def mapping_text(dataflow: list[str], dims: str = GOOD_DIMS, name: str = "tiny") -> str:
    lines = [
        f"Network {name} {{",  # 1
        "  Layer conv1 {",  # 2
        "    Type: CONV",  # 3
        "    Stride { X: 1, Y: 1 }",  # 4
        f"    Dimensions {{ {dims} }}",  # 5
        "    Dataflow {",  # 6
        *(f"      {d}" for d in dataflow),  # 7 ...
        "    }",
        "  }",
        "}",
    ]
    return "\n".join(lines) + "\n"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def run(*args: str):
    """Invoke ``accelsim simulate ARGS`` in-process."""
    return CliRunner().invoke(main, ["simulate", *args], catch_exceptions=True)


def assert_user_error(result, *needles: str) -> str:
    """Exit 2, stderr starts with ``error:``, mentions every needle, no traceback."""
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"unexpected exception {result.exception!r}\n{result.output}"
    )
    assert result.exit_code == 2, f"exit {result.exit_code}\n{result.output}"
    err = result.stderr
    assert err.startswith("error:"), err
    assert "Traceback" not in result.output
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, f"{needle!r} not in {err!r}"
    return err


# --------------------------------------------------------------------------------------------
# malformed .m files: (dataflow, expected line, key phrases)

LINE = FIRST_DIRECTIVE_LINE
BAD_DATAFLOWS = {
    "unknown_directive": (
        ["SpatialMap(1,1) K;", "SpaceMap(1,1) K;"], LINE + 1,
        ["unknown directive 'SpaceMap'", "expected SpatialMap, TemporalMap, Cluster"],
    ),
    "unknown_dimension": (
        ["SpatialMap(1,1) K;", "TemporalMap(1,1) C;", "TemporalMap(1,1) Q;"], LINE + 2,
        ["unknown dimension 'Q'", "allowed:"],
    ),
    "size_zero": (
        ["SpatialMap(1,1) K;", "TemporalMap(0,1) C;"], LINE + 1,
        ["must be an integer >= 1", "got 0"],
    ),
    "negative_size": (
        ["SpatialMap(-2,1) K;"], LINE,
        ["must be an integer >= 1", "got -2"],
    ),
    "negative_offset": (
        ["SpatialMap(1,1) K;", "TemporalMap(1,-1) C;"], LINE + 1,
        ["offset", "must be an integer >= 1", "got -1"],
    ),
    "overlapping_windows": (
        ["TemporalMap(3,1) K;", "SpatialMap(1,1) C;"], LINE,
        ["overlap", "computed twice"],
    ),
    "gapped_windows": (
        ["SpatialMap(1,1) K;", "TemporalMap(1,2) C;"], LINE + 1,
        ["leave gaps", "never be computed"],
    ),
    "y_window_smaller_than_filter": (
        ["SpatialMap(1,1) K;", "TemporalMap(2,1) Y;"], LINE + 1,
        ["cannot hold the whole filter", "R=3", "Sz(R)"],
    ),
    "dimension_mapped_twice": (
        ["SpatialMap(1,1) K;", "TemporalMap(2,2) K;"], LINE + 1,
        ["mapped twice", f"line {LINE}"],
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_DATAFLOWS))
def test_malformed_dataflow(tmp_path, case):
    dataflow, line, phrases = BAD_DATAFLOWS[case]
    path = write(tmp_path, f"{case}.m", mapping_text(dataflow))
    result = run("--hw", "eyeriss_like", "--mapping", str(path))
    assert_user_error(result, f"{path}:{line}:", *phrases)


def test_directive_larger_than_dimension_covers_it(tmp_path):
    """MAESTRO's convention: a map larger than its dimension covers the dimension (its tile
    below is min(size, dimension)); the run equals the one with the exact size."""
    dims = "K: 8, C: 64, R: 3, S: 3, Y: 8, X: 8"
    big = write(tmp_path, "big.m", mapping_text(["SpatialMap(1,1) K;", "TemporalMap(128,128) C;"], dims))
    exact = write(tmp_path, "exact.m", mapping_text(["SpatialMap(1,1) K;", "TemporalMap(64,64) C;"], dims))
    outputs = [run("--hw", "eyeriss_like", "--mapping", str(p), "--allow-overflow") for p in (big, exact)]
    assert [r.exit_code for r in outputs] == [0, 0]
    assert outputs[0].stdout == outputs[1].stdout


def test_cluster_larger_than_array(tmp_path):
    path = write(tmp_path, "cluster.m",
                 mapping_text(["SpatialMap(1,1) K;", "Cluster(512,P);", "SpatialMap(1,1) C;"]))
    result = run("--hw", "eyeriss_like", "--mapping", str(path))
    assert_user_error(result, f"{path}:{LINE + 1}:", "Cluster(512,P)", "168 PEs")


def test_missing_closing_brace(tmp_path):
    # the Network's closing '}' (last line) is missing: reported at the line it was opened
    text = mapping_text(GOOD_DATAFLOW).rstrip("\n").rsplit("\n", 1)[0] + "\n"
    path = write(tmp_path, "open.m", text)
    result = run("--hw", "eyeriss_like", "--mapping", str(path))
    assert_user_error(result, f"{path}:1:", "unbalanced braces", "never closed")


def test_missing_brace_inside_layer(tmp_path):
    # Dimensions block not closed: reported where the next block starts
    text = mapping_text(GOOD_DATAFLOW).replace(f"{{ {GOOD_DIMS} }}", f"{{ {GOOD_DIMS}")
    path = write(tmp_path, "dims.m", text)
    result = run("--hw", "eyeriss_like", "--mapping", str(path))
    assert_user_error(result, f"{path}:6:", "unbalanced braces", "Dimensions", "missing '}'")


def test_stray_closing_brace(tmp_path):
    text = mapping_text(GOOD_DATAFLOW) + "}\n"
    stray_line = text.count("\n")
    path = write(tmp_path, "stray.m", text)
    result = run("--hw", "eyeriss_like", "--mapping", str(path))
    assert_user_error(result, f"{path}:{stray_line}:", "stray '}'")


def test_unknown_layer_type(tmp_path):
    path = write(tmp_path, "type.m", mapping_text(GOOD_DATAFLOW).replace("Type: CONV", "Type: POOL"))
    result = run("--hw", "eyeriss_like", "--mapping", str(path))
    assert_user_error(result, f"{path}:3:", "'POOL'", "not supported", "CONV")


def test_not_utf8_and_empty_files(tmp_path):
    binary = tmp_path / "binary.m"
    binary.write_bytes(b"\xff\xfe\x00junk")
    assert_user_error(run("--hw", "eyeriss_like", "--mapping", str(binary)), str(binary), "not UTF-8")
    empty = write(tmp_path, "empty.m", "")
    assert_user_error(run("--hw", "eyeriss_like", "--mapping", str(empty)), f"{empty}:1:", "no Network block")


def test_unknown_layer_selected(good_m):
    result = run("--hw", "eyeriss_like", "--mapping", str(good_m), "--layer", "conv9")
    assert_user_error(result, str(good_m), "no layer 'conv9'", "conv1")


def test_spatial_reduction_without_reduction_network(tmp_path):
    dataflow = ["TemporalMap(1,1) K;", "SpatialMap(1,1) C;", "TemporalMap(3,1) Y;", "TemporalMap(3,1) X;"]
    path = write(tmp_path, "red.m", mapping_text(dataflow))
    result = run("--hw", "eyeriss_like", "--mapping", str(path), "--set", "reduction_noc.kind=none")
    assert_user_error(result, f"{path}:{LINE + 1}:", "SpatialMap(1,1) C", "no reduction network")


def test_missing_mapping_file(tmp_path):
    path = tmp_path / "nowhere.m"
    result = run("--hw", "eyeriss_like", "--mapping", str(path))
    assert_user_error(result, str(path), "not found")


# --------------------------------------------------------------------------------------------
# hardware files and --set


def _hw_file(tmp_path: Path, mutate) -> Path:
    data = yaml.safe_load(EYERISS_YAML.read_text(encoding="utf-8"))
    mutate(data)
    path = tmp_path / "hw.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture
def good_m(tmp_path) -> Path:
    return write(tmp_path, "good.m", mapping_text(GOOD_DATAFLOW))


def test_hw_missing_required_field(tmp_path, good_m):
    hw = _hw_file(tmp_path, lambda d: d["l2"].pop("size_bytes"))
    result = run("--hw", str(hw), "--mapping", str(good_m))
    assert_user_error(result, str(hw), "l2.size_bytes", "required field missing")


def test_hw_negative_field(tmp_path, good_m):
    def mutate(d):
        d["l1"]["size_bytes"] = -512

    hw = _hw_file(tmp_path, mutate)
    result = run("--hw", str(hw), "--mapping", str(good_m))
    assert_user_error(result, str(hw), "l1.size_bytes", "greater than 0", "-512")


def test_hw_unknown_field(tmp_path, good_m):
    def mutate(d):
        d["l2"]["bogus_field"] = 3

    hw = _hw_file(tmp_path, mutate)
    result = run("--hw", str(hw), "--mapping", str(good_m))
    assert_user_error(result, str(hw), "l2.bogus_field", "unknown field", "valid fields here", "size_bytes")


def test_hw_yaml_syntax_error(tmp_path, good_m):
    text = EYERISS_YAML.read_text(encoding="utf-8").replace("  double_buffered: true\n", "  double_buffered: [1\n", 1)
    hw = write(tmp_path, "broken.yaml", text)
    line = text.splitlines().index("  double_buffered: [1") + 1
    result = run("--hw", str(hw), "--mapping", str(good_m))
    err = assert_user_error(result, str(hw), "invalid YAML")
    # the parser notices the unclosed '[' at the next key; the message names a line near it
    assert any(f"{hw}:{n}:" in err for n in range(line, line + 3)), err


def test_set_unknown_key(good_m):
    result = run("--hw", "eyeriss_like", "--mapping", str(good_m), "--set", "l2.bogus=3")
    assert_user_error(result, "eyeriss_like", "l2.bogus", "unknown key 'bogus'", "valid keys")


def test_set_missing_equals(good_m):
    result = run("--hw", "eyeriss_like", "--mapping", str(good_m), "--set", "l2.size_bytes")
    assert_user_error(result, "eyeriss_like", "l2.size_bytes", "expected key=value")


def test_set_negative_value(good_m):
    result = run("--hw", "eyeriss_like", "--mapping", str(good_m), "--set", "l2.size_bytes=-5")
    assert_user_error(result, "eyeriss_like", "l2.size_bytes", "greater than 0", "from --set")


def test_unknown_preset(good_m):
    result = run("--hw", "no_such_preset", "--mapping", str(good_m))
    assert_user_error(result, "unknown hardware preset 'no_such_preset'", "eyeriss_like")


# --------------------------------------------------------------------------------------------
# mappings that do not fit their buffers

OVERFLOW_DIMS = "K: 8, C: 64, R: 3, S: 3, Y: 8, X: 8"
OVERFLOW_DATAFLOW = ["SpatialMap(1,1) K;", "TemporalMap(64,64) C;", "TemporalMap(3,1) Y;", "TemporalMap(3,1) X;"]


def test_buffer_overflow_refused(tmp_path):
    path = write(tmp_path, "ovf.m", mapping_text(OVERFLOW_DATAFLOW, OVERFLOW_DIMS))
    out = tmp_path / "ovf.json"
    result = run("--hw", "eyeriss_like", "--mapping", str(path), "--json", str(out))
    # per PE: input 64 x 3 x 3 + weight 64 x 3 x 3 + 1 output word, double-buffered, 1 B words
    err = assert_user_error(result, str(path), "L1 overflow", "2306 bytes", "512 bytes", "--allow-overflow")
    assert "conv1" in err
    assert not out.exists()


def test_buffer_overflow_allowed(tmp_path):
    path = write(tmp_path, "ovf.m", mapping_text(OVERFLOW_DATAFLOW, OVERFLOW_DIMS))
    out = tmp_path / "ovf.json"
    result = run("--hw", "eyeriss_like", "--mapping", str(path), "--allow-overflow", "--json", str(out))
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith("warning:"), result.stderr
    assert "L1 overflow" in result.stderr and "2306 bytes" in result.stderr
    assert "Traceback" not in result.output
    rows = json.loads(out.read_text())
    assert rows[0]["l1_required_bytes"] == 2306
    assert rows[0]["macs"] == 8 * 64 * 9 * 36


def test_l2_overflow_refused(tmp_path, good_m):
    result = run("--hw", "eyeriss_like", "--mapping", str(good_m), "--set", "l2.size_bytes=64")
    assert_user_error(result, str(good_m), "L2 overflow", "64 bytes")


# --------------------------------------------------------------------------------------------
# output safety


@pytest.mark.parametrize("flag", ["--json", "--csv"])
def test_existing_output_refused_then_forced(tmp_path, good_m, flag):
    out = tmp_path / "out.dat"
    out.write_text("keep me\n", encoding="utf-8")
    result = run("--hw", "eyeriss_like", "--mapping", str(good_m), flag, str(out))
    assert_user_error(result, str(out), "already exists", "--force")
    assert out.read_text(encoding="utf-8") == "keep me\n"

    result = run("--hw", "eyeriss_like", "--mapping", str(good_m), flag, str(out), "--force")
    assert result.exit_code == 0, result.output
    assert out.read_text(encoding="utf-8") != "keep me\n"
    if flag == "--json":
        assert isinstance(json.loads(out.read_text()), list)


def test_output_directory_missing(tmp_path, good_m):
    out = tmp_path / "no_dir" / "out.json"
    result = run("--hw", "eyeriss_like", "--mapping", str(good_m), "--json", str(out))
    assert_user_error(result, str(out), "does not exist")


# --------------------------------------------------------------------------------------------
# flag combinations


def test_network_without_style():
    result = run("--hw", "eyeriss_like", "--network", "resnet18")
    assert_user_error(result, "--network needs --style", "nvdla_like")


def test_mapping_and_network(good_m):
    result = run("--hw", "eyeriss_like", "--mapping", str(good_m), "--network", "resnet18",
                 "--style", "nvdla_like")
    assert_user_error(result, "exactly one of --mapping", "--network")


def test_neither_mapping_nor_network():
    result = run("--hw", "eyeriss_like")
    assert_user_error(result, "exactly one of --mapping", "--network")


def test_unknown_network():
    result = run("--hw", "eyeriss_like", "--network", "no_such_net", "--style", "nvdla_like")
    assert_user_error(result, "unknown network 'no_such_net'", "resnet18")


def test_style_with_mapping(good_m):
    result = run("--hw", "eyeriss_like", "--mapping", str(good_m), "--style", "nvdla_like")
    assert_user_error(result, "--style applies to --network only")


# --------------------------------------------------------------------------------------------
# a good run


def test_good_run_table_json_csv(tmp_path, good_m):
    js, cs = tmp_path / "out.json", tmp_path / "out.csv"
    result = run("--hw", "eyeriss_like", "--mapping", str(good_m), "--json", str(js), "--csv", str(cs))
    assert result.exit_code == 0, result.output
    # without a terminal, one progress line per layer on stderr, then what was written
    lines = result.stderr.splitlines()
    assert lines[0].startswith("accelsim: tiny [1/1] conv1: done in ") and lines[1:] == [f"wrote {js}", f"wrote {cs}"]
    assert "wrote" not in result.stdout  # stdout holds only the report
    assert result.stdout.startswith("tiny on eyeriss_like (realistic mode; hardware sha256 ")
    header = result.stdout.splitlines()[1].split()
    assert header[:4] == ["layer", "type", "cycles", "MACs"]
    assert result.stdout.splitlines()[2].split()[:2] == ["conv1", "CONV2D"]

    rows = json.loads(js.read_text(encoding="utf-8"))
    assert isinstance(rows, list) and len(rows) == 1
    row = rows[0]
    for key in ("layer", "cycles", "macs", "pe_utilization", "energy_pj", "l1_required_bytes",
                "l2_required_bytes", "accesses"):
        assert key in row
    assert row["layer"] == "conv1"
    assert row["macs"] == 8 * 4 * 3 * 3 * 6 * 6
    assert row["cycles"] > 0 and 0 < row["pe_utilization"] <= 1
    assert set(row["accesses"]) == {"input", "weight", "output"}
    for tensor in ("input", "weight", "output"):
        assert set(row["accesses"][tensor]) == ACCESS_KEYS
        assert all(isinstance(v, int) and v >= 0 for v in row["accesses"][tensor].values())

    with cs.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        assert "Runtime (Cycles)" in reader.fieldnames
        assert "Num MACs" in reader.fieldnames
        csv_rows = list(reader)
    assert [r["Status"] for r in csv_rows] == ["complete", "total"]
    assert csv_rows[0]["Layer Number"] == "conv1" and csv_rows[0]["Neural Network Name"] == "tiny"
    assert int(csv_rows[0]["Runtime (Cycles)"]) == row["cycles"] == int(csv_rows[1]["Runtime (Cycles)"])
    assert int(csv_rows[0]["Num MACs"]) == row["macs"]


def test_good_run_maestro_mode(good_m):
    result = run("--hw", "eyeriss_like", "--mapping", str(good_m), "--mode", "maestro")
    assert result.exit_code == 0, result.output
    assert "(maestro mode;" in result.stdout


# --------------------------------------------------------------------------------------------
# end to end through a real interpreter


def _subprocess(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "accelsim.cli", "simulate", *args],
        capture_output=True, text=True, cwd=cwd, timeout=120,
    )


def test_subprocess_malformed_mapping(tmp_path):
    path = write(tmp_path, "bad.m", mapping_text(["SpatialMap(1,1) K;", "SpaceMap(1,1) K;"]))
    proc = _subprocess("--hw", "eyeriss_like", "--mapping", str(path), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error:"), proc.stderr
    assert f"{path}:{LINE + 1}:" in proc.stderr
    assert "unknown directive 'SpaceMap'" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert proc.stdout == ""


def test_subprocess_bad_hardware_and_good_run(tmp_path):
    hw = _hw_file(tmp_path, lambda d: d["l2"].pop("size_bytes"))
    path = write(tmp_path, "good.m", mapping_text(GOOD_DATAFLOW))
    proc = _subprocess("--hw", str(hw), "--mapping", str(path), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error:") and "l2.size_bytes" in proc.stderr
    assert "Traceback" not in proc.stderr

    out = tmp_path / "out.json"
    proc = _subprocess("--hw", "eyeriss_like", "--mapping", str(path), "--json", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert json.loads(out.read_text())[0]["macs"] == 8 * 4 * 3 * 3 * 6 * 6


def test_per_pe_run_matches_grouped(tmp_path):
    """--per-pe once crashed with a simpy 'Negative delay' traceback when a network's bandwidth
    (here the reduction network's, 3 words/cycle) made packet times non-integral."""
    text = "\n".join([
        "Network g {",
        "  Layer g1 {",
        "    Type: GEMM",
        "    Dimensions { M: 3, N: 1, K: 1 }",
        "    Dataflow { SpatialMap(1,1) M; }",
        "  }",
        "}",
    ]) + "\n"
    path = write(tmp_path, "gemm.m", text)
    sets = ["--set", "reduction_noc.bandwidth_words_per_cycle=3", "--set", "dram.bandwidth_bytes_per_cycle=1"]
    outs = {}
    for flag in ([], ["--per-pe"]):
        out = tmp_path / f"out{len(flag)}.json"
        result = run("--hw", "eyeriss_like", "--mapping", str(path), *sets, *flag, "--json", str(out))
        assert result.exit_code == 0, result.output
        assert "Traceback" not in result.output
        outs[bool(flag)] = json.loads(out.read_text())[0]
    assert outs[True]["cycles"] == outs[False]["cycles"]
    assert outs[True]["macs"] == outs[False]["macs"] == 3


def test_bench_quick_prints_its_figures():
    """`accelsim bench --quick` runs and reports cycles/s, events/s and peak memory."""
    result = CliRunner().invoke(main, ["bench", "--quick"])
    assert result.exit_code == 0, result.output
    assert "simulated cycles/s" in result.output and "events/s" in result.output
    assert "peak memory" in result.output
