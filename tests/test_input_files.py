"""The one text reader and the one YAML loader every input kind goes through."""

from __future__ import annotations

import os

import pytest

from accelsim import input_files
from accelsim.errors import InputError
from accelsim.input_files import load_yaml, read_csv_rows, read_text


def test_missing_directory_device_and_pipe(tmp_path):
    with pytest.raises(InputError, match=r"nope\.m: mapping file not found$"):
        read_text(tmp_path / "nope.m", "mapping file")
    with pytest.raises(InputError, match="is a directory, not a network file"):
        read_text(tmp_path, "network file")
    with pytest.raises(InputError, match="not a regular file"):
        read_text("/dev/zero", "hardware file")  # would never end
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file"):
        read_text(fifo, "hardware file")  # would block


def test_unreadable_file(tmp_path):
    f = tmp_path / "secret.yaml"
    f.write_text("a: 1\n", encoding="utf-8")
    f.chmod(0)
    if os.access(f, os.R_OK):
        pytest.skip("running as a user who can read any file")
    with pytest.raises(InputError, match="secret.yaml: cannot read hardware file: Permission denied"):
        read_text(f, "hardware file")


def test_not_utf8_names_line_and_offset(tmp_path):
    """b'ok\\n' is 3 bytes, so the 0xff on line 2 is at offset 3."""
    f = tmp_path / "t.csv"
    f.write_bytes(b"ok\n\xff,1\n")
    with pytest.raises(InputError) as info:
        read_text(f, "SCALE-Sim topology")
    assert str(info.value) == (f"{f}:2: SCALE-Sim topology is not UTF-8 text (byte 0xff at offset 3 cannot be "
                               "decoded); save it as UTF-8")


def test_bom_dropped_and_size_limit(tmp_path, monkeypatch):
    f = tmp_path / "a.m"
    f.write_bytes(b"\xef\xbb\xbfNetwork")
    assert read_text(f, "mapping file") == "Network"
    monkeypatch.setattr(input_files, "MAX_INPUT_BYTES", 4)
    with pytest.raises(InputError, match="mapping file is 10 bytes; input files are limited to 4 bytes"):
        read_text(f, "mapping file")


def test_csv_rows_lines_and_trailing_commas(tmp_path):
    f = tmp_path / "t.csv"
    f.write_text("a, b,\n\n1 ,2,,\n", encoding="utf-8")
    assert read_csv_rows(f, "CSV") == [(1, ["a", "b"]), (3, ["1", "2"])]


def test_yaml_duplicate_key_names_both_lines():
    with pytest.raises(InputError) as info:
        load_yaml("a: 1\nb:\n  c: 2\n  c: 3\n", "x.yaml")
    assert str(info.value) == "x.yaml:4: invalid YAML: key 'c' given twice (first on line 3) at column 3"


def test_yaml_huge_integer_refused_with_line():
    with pytest.raises(InputError, match=r"x.yaml:2: invalid YAML: an integer of 5000 digits is too large"):
        load_yaml("a: 1\nb: " + "9" * 5000 + "\n", "x.yaml")
    assert load_yaml("a: " + "9" * 30, "x.yaml").data == {"a": int("9" * 30)}


@pytest.mark.parametrize("text, needle", [
    ("!!python/object/apply:os.system ['true']", "could not determine a constructor"),
    ("a: [1, 2\n", "expected ',' or ']'"),
    ("a: 1\n---\nb: 2\n", "expected a single document"),
    ("a: " + "[" * 5000 + "]" * 5000, "nested too deeply"),
])
def test_yaml_refusals(text, needle):
    with pytest.raises(InputError, match=r"x\.yaml") as info:
        load_yaml(text, "x.yaml")
    assert needle in str(info.value)


def test_yaml_lines_of_keys_and_items():
    doc = load_yaml("name: n\nlayers:\n  - {name: a, K: 4}\n  - name: b\n    K: 8\n", "n.yaml")
    assert doc.lines[("layers",)] == 2
    assert doc.lines[("layers", 0, "K")] == 3
    assert doc.lines[("layers", 1)] == 4 and doc.lines[("layers", 1, "K")] == 5
    assert doc.line(("layers", 1, "missing")) == 4


def test_yaml_alias_bomb_is_refused_at_its_line():
    """Nine levels of nine aliases: 9**9 leaves if expanded. Level i expands to E(i) = 1 + 9 E(i-1)
    values, E(0) = 10: E(6) = 5,380,840 is the first over the limit. The walk goes depth-first from
    the last key's value, so when level 6 completes it has seen 20 distinct nodes (the root, the
    ten levels' lists, a0's nine scalars): refused at line 7 (a6) with 5,380,840 - 20 values, at
    once."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 10):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    with pytest.raises(InputError, match=r"bomb.yaml:7: invalid YAML: aliases expand this value by 5,380,820 or"):
        load_yaml("\n".join(lines) + "\n", "bomb.yaml")


def test_yaml_aliases_below_the_limit_load_and_recursion_is_refused():
    """Shared values are fine (three copies of a two-item list); an anchor holding an alias to
    itself is refused with its line."""
    doc = load_yaml("a: &x [1, 2]\nb: *x\nc: [*x, *x]\n", "ok.yaml")
    assert doc.data == {"a": [1, 2], "b": [1, 2], "c": [[1, 2], [1, 2]]}
    with pytest.raises(InputError, match=r"r.yaml:2: invalid YAML: an alias refers to the anchor it is inside"):
        load_yaml("a: 1\nb: &b [1, {c: *b}]\n", "r.yaml")
