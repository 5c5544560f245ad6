"""Register-file loops pinned in accelsim's loop-nest files: entries after the L1 entry name the
register files inside the PE (Timeloop's factors per level); the counts by hand of
tests/test_inner_pins.py's weight-stationary nest, the same pins as the Python ``Job``, the
file written back by ``accelsim mapping --format loopnest``, and one ``error:`` line per bad
pin."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from accelsim.errors import InputError
from accelsim.mapping.compile import InnerPins, PinnedLevel
from accelsim.mapping.jobs import jobs_from_loopnest, prepare
from accelsim.mapping.loopnest_format import parse_loopnest, write_loopnest
from accelsim.search import Evaluator
from accelsim.search.executors import InProcess
from tests.test_inner_levels import RF7, RF24, SMALL, _hw
from tests.test_inner_pins import L

ROOT = Path(__file__).resolve().parents[1]
PROBLEM = "problem: {name: small, type: CONV2D, K: 2, C: 1, R: 3, S: 3, Y: 5, X: 5}\n"
# L1's own loops R3 S3 K2 (permutation innermost first), RF1 adds Y'3 (Timeloop's P), RF0 X'3 (Q)
WEIGHT_STATIONARY = PROBLEM + """mapping:
  - {target: L1, type: temporal, factors: K=2 R=3 S=3, permutation: KSR}
  - {target: RF1, type: temporal, factors: P=3}
  - {target: RF0, type: temporal, factors: Q=3}
"""
PINS = InnerPins(L("R3 S3 K2"), (PinnedLevel("RF0", L("X'3")), PinnedLevel("RF1", L("Y'3"))))


def _design(tmp_path):
    return _hw(tmp_path, [{**RF7, "keeps": ["weight"]}, RF24])


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "import sys; from accelsim.cli import main; sys.exit(main())", *args],
                          cwd=cwd, capture_output=True, text=True, env={"PYTHONPATH": str(ROOT), "PATH": ""})


def test_pins_read_from_a_loop_nest_file(tmp_path):
    """The file's register-file entries become the Job's pins (the step's tile: L1's factors
    times theirs, the whole layer in one step) and give the counts tests/test_inner_pins.py
    derives by hand for these pins: RF0 weights 162 / 18; RF1 inputs 162 / 41, weights 18 / 18,
    outputs 324 / 324."""
    path = tmp_path / "ws.yaml"
    path.write_text(WEIGHT_STATIONARY)
    hw = _design(tmp_path)
    _, jobs = jobs_from_loopnest(path, hw.num_pes)
    assert jobs[0].inner_pins == PINS
    cm = prepare(jobs[0], hw)
    assert cm.steps == 1 and cm.inner_pins == PINS
    out = tmp_path / "r.json"
    done = _cli("simulate", "--hw", str(tmp_path / "tiny_rf.yaml"), "--mapping", str(path), "--mode", "maestro",
                "--json", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())[0]
    assert result["inner_loops"] == {"RF0": ["X'"], "RF1": ["Y'", "X'"]}
    assert result["level_accesses"]["RF0"] == {"weight": {"read": 162, "write": 18}}
    assert result["level_accesses"]["RF1"] == {"input": {"read": 162, "write": 41}, "weight": {"read": 18, "write": 18},
                                               "output": {"read": 324, "write": 324}}


def test_written_back_with_its_pins(tmp_path):
    """``accelsim mapping --format loopnest`` writes the L1 entry with L1's own loops and one
    entry per register file; read again, it gives the same pins and dataflow."""
    path = tmp_path / "ws.yaml"
    path.write_text(WEIGHT_STATIONARY)
    _design(tmp_path)
    done = _cli("mapping", "--hw", str(tmp_path / "tiny_rf.yaml"), "--mapping", str(path), "--format", "loopnest",
                cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "target: RF1" in done.stdout and "target: RF0" in done.stdout
    _, again = parse_loopnest(done.stdout)
    _, first = parse_loopnest(WEIGHT_STATIONARY)
    assert again[0].inner_pins == first[0].inner_pins == PINS
    assert write_loopnest("x", again) == write_loopnest("x", parse_loopnest(write_loopnest("x", again))[1])


@pytest.mark.parametrize(("mapping", "message"), [
    ("  - {target: L1, type: temporal, factors: K=2 R=3 S=3, permutation: KSR}\n"
     "  - {target: RF9, type: temporal, factors: P=3 Q=3, permutation: QP}\n",
     "the mapping pins loops to RF9; tiny_rf has RF0, RF1 (innermost first)"),
    ("  - {target: L1, type: temporal, factors: K=2 R=3 S=3}\n"
     "  - {target: RF1, type: temporal, factors: P=3}\n  - {target: RF0, type: temporal, factors: Q=3}\n",
     "bad.yaml:3: layer 'small' mapping entry 0: field 'permutation': give the order of K, R, S"),
    ("  - {target: L1, type: temporal, factors: K=2 R=3 S=3, permutation: KSR}\n"
     "  - {target: RF1, type: spatial, factors: P=3}\n  - {target: RF0, type: temporal, factors: Q=3}\n",
     "bad.yaml:4: layer 'small' mapping entry 1: register file RF1: expected type temporal"),
    ("  - {target: L1, type: temporal, factors: K=2 R=3 S=3, permutation: KSR}\n"
     "  - {target: RF1, type: temporal, factors: P=3}\n  - {target: RF1, type: temporal, factors: Q=3}\n",
     "bad.yaml:5: layer 'small': register file RF1 has two entries"),
    ("  - {target: RF1, type: temporal, factors: P=3}\n"
     "  - {target: L1, type: temporal, factors: K=2 R=3 S=3 Q=3, permutation: KSRQ}\n",
     "bad.yaml:3: layer 'small' mapping entry 0: field 'target': 'RF1' is not DRAM, L2 or L1"),
    ("  - {target: L1, type: temporal, factors: K=2 R=3 S=3, permutation: KSR}\n"
     "  - {target: RF1, type: temporal, factors: P=3}\n  - {target: L2, type: temporal, factors: Q=3}\n",
     "entry for L2 comes after one for L1"),
])
def test_bad_pins_are_one_error_line(tmp_path, mapping, message):
    """Pins naming register files the design lacks, an L1 entry whose loop order is not given,
    a spatial register-file entry, a register file given twice, a register file before L1 and a
    storage level after the register files: exit status 2, one ``error:`` line naming the file
    (and the line, where the file has it) and what was expected."""
    path = tmp_path / "bad.yaml"
    path.write_text(PROBLEM + "mapping:\n" + mapping)
    _design(tmp_path)
    done = _cli("simulate", "--hw", str(tmp_path / "tiny_rf.yaml"), "--mapping", str(path), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}") and message in lines[0], done.stderr
    assert "Traceback" not in done.stderr


def test_pins_on_a_design_without_register_files_are_refused(tmp_path):
    """eyeriss_like has no register file inside the PE: the pins are refused, not dropped."""
    path = tmp_path / "ws.yaml"
    path.write_text(WEIGHT_STATIONARY)
    done = _cli("simulate", "--hw", "eyeriss_like", "--mapping", str(path), cwd=tmp_path)
    assert done.returncode == 2 and "pins loops to RF0, RF1; eyeriss_like has none" in done.stderr


def test_written_as_timeloop_files_with_its_pins(tmp_path):
    """``accelsim mapping --format timeloop`` writes RF1 and RF0 as storage levels inside the PE
    (outermost first, 24 and 7 one-byte words), RF0 keeping only weights (a bypass entry), and
    each file's loops (RF1 P=3, RF0 Q=3; L1's M=2 R=3 S=3, permutation innermost first MSR):
    simulated from those files (``--timeloop``, the same hardware), every level's counts are the
    hand-derived ones of test_pins_read_from_a_loop_nest_file (RF0 weights 162 / 18, RF1 inputs
    162 / 41, ...) and the cycles are the loop nest's."""
    path = tmp_path / "ws.yaml"
    path.write_text(WEIGHT_STATIONARY)
    _design(tmp_path)
    tl = tmp_path / "tl.yaml"
    done = _cli("mapping", "--hw", str(tmp_path / "tiny_rf.yaml"), "--mapping", str(path), "--format", "timeloop",
                "-o", str(tl), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = tl.read_text()
    assert "- name: RF1\n          class: regfile\n          attributes:\n            depth: 24\n" in text
    assert "- name: RF0\n          class: regfile\n          attributes:\n            depth: 7\n" in text
    assert text.index("name: RF1") < text.index("name: RF0") < text.index("name: MACC")
    assert ("- target: RF1\n  type: temporal\n  factors: C=1 M=1 R=1 S=1 N=1 P=3 Q=1\n" in text
            and "- target: RF0\n  type: temporal\n  factors: C=1 M=1 R=1 S=1 N=1 P=1 Q=3\n" in text)
    assert "factors: C=1 M=2 R=3 S=3 N=1 P=1 Q=1\n  permutation: MSR" in text
    assert "- target: RF0\n  type: bypass\n  keep: [Weights]\n  bypass: [Inputs, Outputs]" in text
    results = []
    for args in (["--mapping", str(path)], ["--timeloop", str(tl)]):
        out = tmp_path / "r.json"
        done = _cli("simulate", "--hw", str(tmp_path / "tiny_rf.yaml"), *args, "--mode", "maestro", "--json", str(out),
                    "--force", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        results.append(json.loads(out.read_text())[0])
    assert results[1]["level_accesses"] == results[0]["level_accesses"]
    assert results[1]["level_accesses"]["RF0"] == {"weight": {"read": 162, "write": 18}}
    assert results[1]["level_accesses"]["RF1"] == {"input": {"read": 162, "write": 41},
                                                   "weight": {"read": 18, "write": 18},
                                                   "output": {"read": 324, "write": 324}}
    assert results[1]["cycles"] == results[0]["cycles"]


@pytest.mark.parametrize("inner, message", [
    # the default rule: RF0 (weights, 7 words) holds S3 R3 of the step's loops (...C R S), 9 > 7, so S3;
    # RF1 (inputs, 1 word) holds none, fewer than RF0 below it: Timeloop's levels nest
    ([{**RF7, "keeps": ["weight"]}, {**RF24, "size_bytes": 1, "keeps": ["input"]}],
     "register file RF1 holds fewer loops than the one below it"),
    ([{**RF7, "double_buffered": True}], "a double-buffered register file"),
])
def test_timeloop_files_refuse_what_they_cannot_say(tmp_path, inner, message):
    """What Timeloop's levels inside a PE cannot say is one ``error:`` line (exit 2), no file."""
    path = tmp_path / "one.yaml"
    path.write_text(PROBLEM + "mapping:\n  - {target: L1, type: temporal, factors: K=2 R=3 S=3 P=3 Q=3}\n")
    _hw(tmp_path, inner)
    done = _cli("mapping", "--hw", str(tmp_path / "tiny_rf.yaml"), "--mapping", str(path), "--format", "timeloop",
                "-o", str(tmp_path / "tl.yaml"), cwd=tmp_path)
    lines = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert done.returncode == 2 and len(lines) == 1 and "no Timeloop equivalent: " + message in lines[0], done.stderr
    assert not (tmp_path / "tl.yaml").exists() and "Traceback" not in done.stderr


def test_other_formats_and_search_candidates_refuse_pins(tmp_path):
    """A MAESTRO .m file cannot carry the pins (one error line), and a pinned loop nest given
    to the search evaluator is an illegal row (reason inner_pins)."""
    path = tmp_path / "ws.yaml"
    path.write_text(WEIGHT_STATIONARY)
    hw = _design(tmp_path)
    done = _cli("mapping", "--hw", str(tmp_path / "tiny_rf.yaml"), "--mapping", str(path), "--format", "maestro",
                cwd=tmp_path)
    assert done.returncode == 2 and "--format maestro cannot write; use --format loopnest" in done.stderr
    _, nests = parse_loopnest(WEIGHT_STATIONARY)
    with Evaluator(hw, SMALL, "analytical", "maestro", executor=InProcess()) as ev:
        row = ev.evaluate([nests[0]]).iloc[0]
    assert (row["status"], row["reason"]) == ("illegal", "inner_pins")


def test_parse_error_is_an_input_error():
    """Parsing alone (no hardware): a register file given twice is an InputError with its line."""
    text = PROBLEM + ("mapping:\n  - {target: L1, type: temporal, factors: K=2, permutation: K}\n"
                      "  - {target: RF0, type: temporal, factors: P=3}\n  - {target: RF0, type: temporal, factors: Q=3}\n")
    with pytest.raises(InputError, match="register file RF0 has two entries") as err:
        parse_loopnest(text, "x.yaml")
    assert err.value.line == 5
