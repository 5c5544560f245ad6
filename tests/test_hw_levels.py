"""The memory hierarchy as data: ``HardwareSpec.levels`` and a hardware YAML's ``levels`` list,
which the loader expands into the ``l1``/``l2``/``dram`` fields the models read."""

from __future__ import annotations

import pytest
import yaml

from accelsim.errors import InputError
from accelsim.hw.loader import available_presets, dump_hardware, load_hardware


def _as_levels(name: str) -> str:
    """A preset's YAML with its hierarchy written as ``levels`` (from ``HardwareSpec.levels``)."""
    hw = load_hardware(name)
    data = yaml.safe_load(dump_hardware(hw))
    del data["l1"], data["l2"], data["dram"]["bandwidth_bytes_per_cycle"]
    data.pop("inner_levels", None)  # dumped only where there are some; they are in hw.levels
    data["levels"] = [lv.model_dump(mode="json", exclude_none=True) for lv in hw.levels]
    return yaml.safe_dump(data, sort_keys=False)


@pytest.mark.parametrize("name", available_presets())
def test_levels_are_shorthand_for_l1_l2_dram(tmp_path, name):
    """Every preset written with ``levels`` loads to the same spec (every field)."""
    path = tmp_path / f"{name}.yaml"
    path.write_text(_as_levels(name))
    assert load_hardware(path) == load_hardware(name)


def test_levels_view():
    """eyeriss_like: L1 512 B per PE, L2 110,592 B shared at 12 words/cycle, DRAM 12 B/cycle of
    1-byte words = 12 words/cycle; every level keeps every tensor."""
    l1, l2, dram = load_hardware("eyeriss_like").levels
    assert (l1.instances, l1.size_bytes, l2.instances, l2.size_bytes, l2.read_bandwidth_words_per_cycle) == (
        "per_pe", 512, "shared", 110592, 12)
    assert (dram.kind, dram.size_bytes, dram.read_bandwidth_words_per_cycle) == ("dram", None, 12)
    assert all(lv.keeps == ("input", "weight", "output") for lv in (l1, l2, dram))


def _load(tmp_path, levels: list[dict]) -> None:
    data = yaml.safe_load(_as_levels("eyeriss_like"))
    data["levels"] = levels
    path = tmp_path / "hw.yaml"
    path.write_text(yaml.safe_dump(data))
    load_hardware(path)


def test_levels_not_modelled_are_refused(tmp_path):
    """A second shared buffer, outputs bypassing L2, a bypass at L1 or DRAM, and both forms at
    once are each one InputError saying so (register files inside the PE and operands bypassing
    L2 are modelled: tests/test_inner_levels.py, tests/test_l2_bypass.py)."""
    l1 = {"name": "L1", "instances": "per_pe", "size_bytes": 128}
    l2 = {"name": "L2", "instances": "shared", "size_bytes": 262144, "read_bandwidth_words_per_cycle": 16,
          "write_bandwidth_words_per_cycle": 16}
    dram = {"name": "DRAM", "instances": "shared", "kind": "dram"}
    with pytest.raises(InputError, match="more than one shared buffer are not modelled yet"):
        _load(tmp_path, [l1, l2, {**l2, "name": "L3"}, dram])
    with pytest.raises(InputError, match="L2 keeps only input, weight; outputs bypassing the shared buffer are "
                                         "not modelled yet"):
        _load(tmp_path, [l1, {**l2, "keeps": ["input", "weight"]}, dram])
    with pytest.raises(InputError, match="L1 keeps only input, output; bypass is modelled at the register files "
                                         "inside a PE and at the shared buffer"):
        _load(tmp_path, [{**l1, "keeps": ["input", "output"]}, l2, dram])
    data = yaml.safe_load(_as_levels("eyeriss_like"))
    data["l1"] = {"size_bytes": 512}
    path = tmp_path / "both.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(InputError, match="give the hierarchy once"):
        load_hardware(path)
