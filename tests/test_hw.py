"""Hardware presets, the YAML / MAESTRO loaders, --set overrides and readable errors."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from accelsim.errors import InputError
from accelsim.hw import HardwareSpec, available_presets, dump_hardware, load_hardware
from accelsim.hw.loader import parse_maestro_hw
from accelsim.hw.spec import (
    RF_ENERGY_PJ_BY_BYTES,
    SRAM_ENERGY_PJ_BY_BYTES,
    table_energy_pj,
)

REPO = Path(__file__).resolve().parents[1]
PACKAGE_PRESETS = REPO / "accelsim" / "hwconfigs"

# The "Scenario numbers from the papers" table of DESIGN.md (1 word = 1 byte unless noted):
# preset -> (PEs, rows, cols, L1 bytes per PE, L2 bytes, NoC words/cycle, word bytes, MHz)
DESIGN_TABLE = {
    # MARVEL Table 1: 168 PEs, 512 B, 108 KB, 2.4 GB/s at 200 MHz = 12 B/cycle.
    "eyeriss_like": (168, 12, 14, 512, 108 * 1024, 12, 1, 200),
    # MARVEL Table 1: 1024 PEs, 25.6 GB/s at 200 MHz = 128 B/cycle.
    "marvel_edge": (1024, 32, 32, 512, 108 * 1024, 128, 1, 200),
    # FLASH Table 4: 256 PEs, 0.5 KB, 100 KB, 32 GB/s at 1 GHz = 32 B/cycle.
    "flash_edge": (256, 16, 16, 512, 100 * 1024, 32, 1, 1000),
    # FLASH Table 4: 2048 PEs, 0.5 KB, 800 KB, 256 GB/s at 1 GHz.
    "flash_cloud": (2048, 32, 64, 512, 800 * 1024, 256, 1, 1000),
    # dMazeRunner Sec. 5: 16x16, 16-bit, 512 B RF, 128 KB SPM; three read networks x 1 word.
    "dmazerunner_16x16": (256, 16, 16, 512, 128 * 1024, 3, 2, 500),
    # SCALE-Sim 32x32: 3 x 64 kB SRAM (unified here); 32 rows + 32 cols enter per cycle.
    "tpu_like_32x32": (1024, 32, 32, 6, 3 * 64 * 1024, 64, 1, 1000),
    # MAESTRO data/hw/accelerator_1.m.
    "maestro_default": (256, 1, 256, 100, 3000, 1000, 1, 1000),
    # Eyeriss JSSC 2017 Table IV: 16-bit, 12 x 14 PEs, scratchpads 12 + 224 + 24 words = 520 B,
    # 108 KB global buffer; 200 MHz (MARVEL Table 1); three 4-word networks summed (assumed).
    "eyeriss_chip": (168, 12, 14, 520, 108 * 1024, 12, 2, 200),
    # STONNE's MAERI (issue 17): num_ms 64, dn_bw 8 (its README example); float words; an
    # SRAM that holds any layer.
    "stonne_maeri": (64, 1, 64, 65536, 1 << 30, 8, 4, 1000),
    # STONNE's 8x8 output-stationary mesh: rows + cols = 16 edge ports.
    "stonne_tpu": (64, 8, 8, 4096, 1 << 30, 16, 4, 1000),
    # Interstellar Sec. 6: 16 x 16 PEs, 16-bit, 400 MHz; Sec. 6.3: 16 B + 128 B register files
    # (the 128 B one is L1), 256 KB SRAM; a 16-word bus (assumed).
    "interstellar_rf2": (256, 16, 16, 128, 256 * 1024, 16, 2, 400),
}

MAESTRO_EXAMPLE = """\
num_pes: 256
l1_size_cstr: 100
l2_size_cstr: 3000
noc_bw_cstr: 1000
offchip_bw_cstr: 50
"""


def _good_mapping() -> dict:
    return yaml.safe_load((PACKAGE_PRESETS / "eyeriss_like.yaml").read_text())


def _write(tmp_path: Path, name: str, data) -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False))
    return path


def _error(ref, overrides=()) -> str:
    with pytest.raises(InputError) as info:
        load_hardware(ref, overrides)
    return str(info.value)


# ------------------------------------------------------------------------------ presets


def test_available_presets_are_those_of_the_design_table():
    assert available_presets() == sorted(DESIGN_TABLE)


@pytest.mark.parametrize("name", sorted(DESIGN_TABLE))
def test_preset_numbers_match_design_table(name):
    pes, rows, cols, l1, l2, noc, word, mhz = DESIGN_TABLE[name]
    spec = load_hardware(name)
    assert isinstance(spec, HardwareSpec)
    assert spec.name == name
    assert spec.source
    assert (spec.num_pes, spec.pe_array.rows, spec.pe_array.cols) == (pes, rows, cols)
    assert spec.l1.size_bytes == l1
    assert spec.l2.size_bytes == l2
    assert spec.distribution_noc.bandwidth_words_per_cycle == noc
    assert spec.word_size_bytes == word
    assert spec.clock_mhz == mhz
    # Interstellar Table 3 defaults, and buffer energies derived from the sizes.
    assert spec.energy.mac_pj == 0.075
    assert spec.energy.noc_hop_pj == 0.035
    assert spec.energy.dram_access_pj == 200
    assert spec.energy.l1_access_pj is None and spec.energy.l2_access_pj is None


@pytest.mark.parametrize("name", sorted(DESIGN_TABLE))
def test_preset_file_lists_every_field_and_documents_its_sources(name):
    text = (PACKAGE_PRESETS / f"{name}.yaml").read_text()
    assert text.startswith("#"), "a comment block saying where the numbers come from"
    assert "ASSUMPTION" in text.upper()
    data = yaml.safe_load(text)
    # inner_levels: only a design with register files inside the PE has them, written as the
    # levels list in place of l1 and l2
    fields = [f for f in HardwareSpec.model_fields if f != "inner_levels"]
    if "levels" in data:
        fields = [("levels" if f == "l1" else f) for f in fields if f != "l2"]
    assert list(data) == fields
    for section in ("pe_array", "l1", "l2", "distribution_noc", "reduction_noc", "dram", "energy"):
        if section not in data:
            continue
        model = HardwareSpec.model_fields[section].annotation
        assert set(data[section]) == set(model.model_fields), section


def test_preset_details():
    eyeriss = load_hardware("eyeriss_like")
    assert eyeriss.distribution_noc.kind == "bus" and eyeriss.distribution_noc.multicast
    assert eyeriss.reduction_noc.kind == "chain"
    assert eyeriss.dram.burst_bytes == 64  # MARVEL Table 1 DRAM block size

    for name in ("flash_edge", "flash_cloud"):
        assert load_hardware(name).reduction_noc.kind == "tree"

    dmz = load_hardware("dmazerunner_16x16")
    assert dmz.pe_array.mac_pipeline_latency_cycles == 2
    assert dmz.l2.size_bytes == 64 * 2048
    assert dmz.distribution_noc.multicast and dmz.distribution_noc.latency_cycles == 1
    assert dmz.reduction_noc.kind != "none"
    assert dmz.dram.model == "dmazerunner"
    assert (dmz.dram.setup_dma_cycles, dmz.dram.dma_cycles_per_byte) == (291, 0.24)
    assert dmz.dram.dma_clock_mhz == 3200

    tpu = load_hardware("tpu_like_32x32")
    assert tpu.distribution_noc.kind == "systolic" and not tpu.distribution_noc.multicast
    assert tpu.reduction_noc.kind == "chain"
    assert tpu.dram.bandwidth_bytes_per_cycle == 10
    assert tpu.l1.size_bytes >= tpu.word_size_bytes  # at least one weight

    maestro = load_hardware("maestro_default")
    assert maestro.dram.bandwidth_bytes_per_cycle == 50
    assert maestro.reduction_noc.latency_cycles_per_hop == 0


def test_top_level_hwconfigs_is_the_package_directory():
    top = REPO / "hwconfigs"
    if not top.exists():
        pytest.skip("no top-level hwconfigs in this checkout")
    assert top.resolve() == PACKAGE_PRESETS.resolve()
    assert sorted(p.stem for p in top.glob("*.yaml")) == available_presets()


def test_presets_load_from_any_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert load_hardware("flash_edge").num_pes == 256


@pytest.mark.parametrize("name", sorted(DESIGN_TABLE))
def test_dump_round_trip(name, tmp_path):
    spec = load_hardware(name)
    path = _write(tmp_path, f"{name}.yaml", dump_hardware(spec))
    assert load_hardware(path) == spec
    assert load_hardware(str(path)) == spec


# ------------------------------------------------------------------------------ energy


def test_energy_table_values():
    assert table_energy_pj(512, RF_ENERGY_PJ_BY_BYTES) == pytest.approx(0.96)
    assert table_energy_pj(128 * 1024, SRAM_ENERGY_PJ_BY_BYTES) == pytest.approx(13.5)
    # Between 64 KB (9 pJ) and 128 KB (13.5 pJ), log-log interpolation.
    e108 = table_energy_pj(108 * 1024, SRAM_ENERGY_PJ_BY_BYTES)
    assert 9 < e108 < 13.5
    # The RF table is linear in size (0.03 pJ per 16 B), so extrapolation below 16 B is too.
    assert table_energy_pj(8, RF_ENERGY_PJ_BY_BYTES) == pytest.approx(0.015)


def test_energy_derived_from_sizes_in_presets():
    """dMazeRunner's 512 B RF and 128 KB SPM are Interstellar table points: 0.96 and 13.5 pJ
    (the same numbers dMazeRunner's own model uses)."""
    dmz = load_hardware("dmazerunner_16x16")
    assert dmz.l1_energy_pj == pytest.approx(0.96)
    assert dmz.l2_energy_pj == pytest.approx(13.5)
    eyeriss = load_hardware("eyeriss_like")
    assert eyeriss.l1_energy_pj == pytest.approx(0.96)
    assert eyeriss.l2_energy_pj == pytest.approx(
        table_energy_pj(110592, SRAM_ENERGY_PJ_BY_BYTES)
    )


def test_explicit_energy_wins_over_table():
    spec = load_hardware("eyeriss_like", ["energy.l1_access_pj=0.5", "energy.l2_access_pj=7"])
    assert spec.l1_energy_pj == 0.5
    assert spec.l2_energy_pj == 7


# ------------------------------------------------------------------------------ overrides


def test_overrides_nested_int_bool_float():
    spec = load_hardware(
        "eyeriss_like",
        [
            "l2.size_bytes=65536",
            "distribution_noc.multicast=false",
            "dram.bandwidth_bytes_per_cycle=6.5",
            "clock_mhz=100",
            "name=mine",
        ],
    )
    assert spec.l2.size_bytes == 65536
    assert spec.distribution_noc.multicast is False
    assert spec.dram.bandwidth_bytes_per_cycle == 6.5
    assert spec.clock_mhz == 100
    assert spec.name == "mine"
    # untouched fields keep the preset's values
    assert spec.l1.size_bytes == 512


def test_override_rows_rederives_count():
    spec = load_hardware("eyeriss_like", ["pe_array.rows=8"])
    assert (spec.pe_array.rows, spec.pe_array.cols, spec.num_pes) == (8, 14, 112)
    spec = load_hardware("eyeriss_like", ["pe_array.rows=8", "pe_array.cols=8"])
    assert spec.num_pes == 64


def test_override_count_alone_gives_one_row():
    spec = load_hardware("eyeriss_like", ["pe_array.count=64"])
    assert (spec.pe_array.rows, spec.pe_array.cols, spec.num_pes) == (1, 64, 64)


def test_override_count_and_rows_must_agree():
    msg = _error("eyeriss_like", ["pe_array.count=64", "pe_array.rows=8"])
    assert "pe_array" in msg and "count 64" in msg


def test_override_whole_section_and_optional_field(tmp_path):
    spec = load_hardware("eyeriss_like", ["pe_array={rows: 4, cols: 4}"])
    assert spec.num_pes == 16
    data = _good_mapping()
    del data["energy"]  # optional section absent from the file
    path = _write(tmp_path, "noenergy.yaml", data)
    spec = load_hardware(path, ["energy.l1_access_pj=0.25"])
    assert spec.l1_energy_pj == 0.25


def test_override_value_goes_through_validation():
    msg = _error("eyeriss_like", ["l2.size_bytes=-3"])
    assert "hwconfigs/eyeriss_like.yaml" in msg
    assert "field l2.size_bytes" in msg and "greater than 0" in msg and "--set" in msg


@pytest.mark.parametrize(
    "item, expected",
    [
        ("l2size", "expected key=value"),
        ("=5", "expected key=value"),
        ("l2..size_bytes=5", "expected key=value"),
        ("l2.sise=3", "unknown key 'sise' in l2; valid keys: size_bytes, read_bandwidth"),
        ("bogus=3", "unknown key 'bogus' in the top level; valid keys: name, source"),
        ("l2.size_bytes.x=3", "'l2.size_bytes' is a value, not a section"),
        ("distribution_noc.multicast=[x", "value is not valid YAML"),
    ],
)
def test_bad_override(item, expected):
    msg = _error("eyeriss_like", [item])
    assert "hwconfigs/eyeriss_like.yaml" in msg
    assert expected in msg


def test_bool_is_not_a_number():
    msg = _error("eyeriss_like", ["l1.size_bytes=true"])
    assert "field l1.size_bytes" in msg and "boolean" in msg


# ------------------------------------------------------------------------------ MAESTRO files


def test_maestro_hw_file(tmp_path):
    path = _write(tmp_path, "accelerator_1.m", MAESTRO_EXAMPLE)
    spec = load_hardware(path)
    assert spec.name == "accelerator_1"
    assert spec.num_pes == 256
    assert spec.l1.size_bytes == 100
    assert spec.l2.size_bytes == 3000
    assert spec.distribution_noc.kind == "bus" and spec.distribution_noc.multicast
    assert spec.distribution_noc.bandwidth_words_per_cycle == 1000
    assert spec.l2.read_bandwidth_words_per_cycle == 1000
    assert spec.l2.write_bandwidth_words_per_cycle == 1000
    assert spec.dram.bandwidth_bytes_per_cycle == 50
    assert spec.word_size_bytes == 1
    assert spec.reduction_noc.kind == "tree"
    assert spec.distribution_noc.latency_cycles == 1
    assert spec.reduction_noc.latency_cycles_per_hop == 0


def test_maestro_file_equals_maestro_default_preset(tmp_path):
    path = _write(tmp_path, "accelerator_1.m", MAESTRO_EXAMPLE)
    from_file = load_hardware(path).model_dump(exclude={"name", "source"})
    preset = load_hardware("maestro_default").model_dump(exclude={"name", "source"})
    assert from_file == preset


def test_maestro_detected_by_content_with_comments_and_hops(tmp_path):
    text = (
        "// MAESTRO hardware\n"
        "num_pes: 64  // PEs\n"
        "l1_size_cstr: 256\r\n"
        "l2_size_cstr: 4096\n"
        "\n"
        "noc_bw_cstr: 32\n"
        "NoC_NumHops: 2\n"
        "offchip_bw_cstr: 8\n"
    )
    path = _write(tmp_path, "hw.txt", text)
    spec = load_hardware(path, ["pe_array.rows=8", "pe_array.cols=8"])
    assert spec.num_pes == 64 and spec.pe_array.rows == 8
    assert spec.distribution_noc.latency_cycles == 2
    assert spec.dram.bandwidth_bytes_per_cycle == 8


def test_maestro_older_key_spelling():
    data = parse_maestro_hw(
        "NumPEs: 1024\nL1Size: 512\nL2Size: 32768\nNoC_BW: 1024\nNoC_NumHops: 1\n"
        "offchip_bw_cstr: 64\n",
        source="accelerator_2.m",
    )
    spec = HardwareSpec.model_validate(data)
    assert (spec.num_pes, spec.l1.size_bytes, spec.l2.size_bytes) == (1024, 512, 32768)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("num_pes: 256\nl1_size: 100\n", ":2: unknown MAESTRO hardware key 'l1_size'"),
        ("num_pes: 256\nl1_size_cstr: 100\n", "l2_size_cstr, noc_bw_cstr, offchip_bw_cstr: required field missing"),
        ("num_pes: many\n", ":1: num_pes expects a whole number, got 'many'"),
        (MAESTRO_EXAMPLE.replace("3000", "-5"), ":3: l2_size_cstr must be > 0, got -5"),
        (MAESTRO_EXAMPLE + "num_pes: 8\n", ":6: num_pes given twice (first on line 1)"),
        ("num_pes\n", "key 'num_pes' has no value"),
    ],
)
def test_bad_maestro_file(tmp_path, text, expected):
    path = _write(tmp_path, "bad.m", text)
    msg = _error(path)
    assert str(path) in msg
    assert expected in msg


# ------------------------------------------------------------------------------ bad inputs


def test_missing_field(tmp_path):
    data = _good_mapping()
    del data["l1"]["size_bytes"]
    path = _write(tmp_path, "missing.yaml", data)
    msg = _error(path)
    assert msg == f"{path}: field l1.size_bytes: required field missing"


def test_missing_section(tmp_path):
    data = _good_mapping()
    del data["dram"]
    path = _write(tmp_path, "nodram.yaml", data)
    assert _error(path) == f"{path}: field dram: required field missing"


def test_negative_field_names_file_field_and_line(tmp_path):
    text = (PACKAGE_PRESETS / "eyeriss_like.yaml").read_text().replace(
        "read_bandwidth_words_per_cycle: 12", "read_bandwidth_words_per_cycle: -1"
    )
    path = _write(tmp_path, "foo.yaml", text)
    line = next(
        i for i, line in enumerate(text.splitlines(), 1) if "read_bandwidth_words_per_cycle: -1" in line
    )
    msg = _error(path)
    assert msg.startswith(
        f"{path}: field l2.read_bandwidth_words_per_cycle: Input should be greater than 0"
    )
    assert "got -1" in msg and f"line {line}" in msg


def test_unknown_field(tmp_path):
    data = _good_mapping()
    data["l2"]["bankz"] = 2
    path = _write(tmp_path, "unknown.yaml", data)
    msg = _error(path)
    assert str(path) in msg
    assert "field l2.bankz: unknown field" in msg
    assert "read_bandwidth_words_per_cycle" in msg  # lists the valid fields


def test_several_problems_are_all_listed(tmp_path):
    data = _good_mapping()
    data["distribution_noc"]["kind"] = "mesh"
    data["l2"]["size_bytes"] = "108KB"
    path = _write(tmp_path, "multi.yaml", data)
    msg = _error(path)
    assert msg.startswith(f"{path}: 2 problems")
    assert "field l2.size_bytes:" in msg and "'108KB'" in msg
    assert "field distribution_noc.kind:" in msg and "'mesh'" in msg


def test_bad_pe_shape(tmp_path):
    data = _good_mapping()
    data["pe_array"]["count"] = 100
    path = _write(tmp_path, "shape.yaml", data)
    msg = _error(path)
    assert str(path) in msg and "field pe_array: count 100 != rows x cols = 168" in msg


def test_bad_yaml_gives_line(tmp_path):
    text = "name: x\npe_array:\n  rows: [4\n  cols: 4\n"
    path = _write(tmp_path, "bad.yaml", text)
    msg = _error(path)
    assert msg.startswith(f"{path}:4: invalid YAML")
    assert "started on line 3" in msg


def test_duplicate_key_is_an_error(tmp_path):
    path = _write(tmp_path, "dup.yaml", "name: a\nname: b\n")
    msg = _error(path)
    assert msg.startswith(f"{path}:2:") and "key 'name' given twice (first on line 1)" in msg


@pytest.mark.parametrize("text, expected", [("", "the file is empty"), ("- 1\n- 2\n", "got a list")])
def test_not_a_mapping(tmp_path, text, expected):
    path = _write(tmp_path, "odd.yaml", text)
    msg = _error(path)
    assert str(path) in msg and expected in msg


def test_unknown_preset_lists_available():
    msg = _error("eyeriss")
    assert "unknown hardware preset 'eyeriss'" in msg
    for name in DESIGN_TABLE:
        assert name in msg


def test_file_not_found(tmp_path):
    path = tmp_path / "nowhere.yaml"
    assert _error(path) == f"{path}: file not found"
    assert _error("configs/nowhere.m") == "configs/nowhere.m: file not found"


def test_directory_is_not_a_file(tmp_path):
    assert "is a directory" in _error(tmp_path)


def test_errors_never_leak_exceptions_other_than_input_error(tmp_path):
    """A grab bag of broken inputs: each must be an InputError naming the file."""
    bad = {
        "a.yaml": "name: x\n",
        "b.yaml": "name: x\npe_array: 5\nl1: {}\n",
        "c.yaml": "{{{{",
        "d.yaml": "name: [1, 2]\n",
        "e.m": "",
        "f.m": "num_pes: 1 2\n",
    }
    for fname, text in bad.items():
        path = _write(tmp_path, fname, text)
        with pytest.raises(InputError) as info:
            load_hardware(path)
        assert str(path) in str(info.value), fname


def test_l2_banks_not_modelled_says_so(tmp_path):
    """l2.banks was validated but never read; it is gone, and a file that still has it is told why."""
    data = yaml.safe_load((PACKAGE_PRESETS / "eyeriss_like.yaml").read_text(encoding="utf-8"))
    data["l2"]["banks"] = 4
    path = tmp_path / "hw.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(InputError, match=r"field l2.banks: banks are not modelled .*remove the field"):
        load_hardware(str(path))


@pytest.mark.parametrize("value", [".inf", "-.inf", ".nan"])
def test_infinite_or_nan_number_refused(value):
    with pytest.raises(InputError, match=r"field dram.bandwidth_bytes_per_cycle: .*finite number"):
        load_hardware("eyeriss_like", [f"dram.bandwidth_bytes_per_cycle={value}"])
