"""``l2.prefetch: free_space``: with a single-buffered L2, the next tile's new words are fetched
while the current tile is in use as soon as both fit in L2 (README, "Hardware fields")."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelsim.analytical.model import analyze_layer
from accelsim.errors import InputError
from accelsim.hw.loader import load_hardware
from accelsim.mapping.ast import MapDirective
from accelsim.mapping.compile import compile_mapping
from accelsim.mapping.jobs import jobs_from_network, prepare
from accelsim.sim.engine import LayerSimulation, SimOptions, simulate_layer
from accelsim.workload.ops import Layer


def S(size, offset, dim):
    return MapDirective("spatial", size, offset, dim, 0)


def T(size, offset, dim):
    return MapDirective("temporal", size, offset, dim, 0)


def _hw(prefetch: str, l2_bytes: int, pes: int = 1, extra: tuple[str, ...] = ()):
    """1-byte words; DRAM 1 byte/cycle with 1-byte bursts and no latency (a transfer of w
    words takes w cycles); L2 single-buffered; buses of 1 word/cycle, 1 cycle latency; 1 MAC
    per PE per cycle; L1 double-buffered (maestro_default)."""
    return load_hardware("maestro_default", [
        f"pe_array.count={pes}", "pe_array.macs_per_pe_per_cycle=1", "pe_array.mac_pipeline_latency_cycles=1",
        "l1.size_bytes=4096", f"l2.size_bytes={l2_bytes}", "l2.double_buffered=false", f"l2.prefetch={prefetch}",
        "l2.read_bandwidth_words_per_cycle=1", "l2.write_bandwidth_words_per_cycle=1",
        "distribution_noc.kind=bus", "distribution_noc.multicast=true",
        "distribution_noc.bandwidth_words_per_cycle=1", "distribution_noc.latency_cycles=1",
        "reduction_noc.kind=tree", "reduction_noc.bandwidth_words_per_cycle=1",
        "reduction_noc.latency_cycles_per_hop=1",
        "dram.model=simple", "dram.bandwidth_bytes_per_cycle=1", "dram.latency_cycles=0", "dram.burst_bytes=1",
        "word_size_bytes=1", *extra])


FC = Layer.build("fc", "FC", {"K": 3, "C": 4})
FC_MAPPING = [T(1, 1, "K"), S(1, 1, "C")]  # one PE: K outer, C inner, one MAC per step


@pytest.mark.parametrize("prefetch, cycles", [("free_space", 36), ("none", 44)])
def test_next_tile_is_fetched_while_the_current_one_computes(prefetch, cycles):
    """FC K=3, C=4 on one PE, L2 of 14 words. A tile is one output k: inputs 0..3 (4 words),
    weights (k, 0..3) (4), output k (1): 9 words; the whole layer (4 + 12 + 3 = 19) does not
    fit, so there are 3 tiles. (Two tiles whose words together fit would be one tile: the tile
    rule makes the tiles as large as L2 allows.) Tiles 1 and 2 keep the 4 inputs and bring 5
    new words (4 weights from DRAM, 1 output), so a tile and the next one's new words take
    9 + 5 = 14 <= 14 words.

    Each step sends 1 input and 1 weight word (2 cycles), arrives 1 cycle later and computes
    1 MAC; step s is sent at 8 + 2s..10 + 2s and computes at 11 + 2s..12 + 2s when its tile is
    in L2 by then. A tile's last step drains its output (1 cycle) and the DMA writes it back
    (1 cycle) after the reads that asked before.

    free_space: tile 0's 8 words 0..8; tile 1's 4 words at once, 8..12 (before step 4 is sent
    at 16); tile 2's once tile 0 has been distributed (its last step sent at 16): 16..20, before
    step 8 is sent at 24. So no step waits: step 11 computes 33..34, drains 34..35, and its
    write-back takes 35..36: 36 cycles.
    none: tile 1 waits for tile 0 to be distributed: 16..20, step 4 is sent at 20 instead of 16
    (4 cycles later); tile 2 likewise (28..32): 36 + 4 + 4 = 44 cycles.
    """
    hw = _hw(prefetch, 14)
    cm = compile_mapping(FC, FC_MAPPING, hw.num_pes)
    sim = LayerSimulation(cm, hw)
    r = sim.run()
    assert sim.tiles.count == 3
    assert [(sim.tiles.traffic(t).footprint_words, sim.tiles.traffic(t).kept_words) for t in range(3)] == \
        [(9, 0), (9, 4), (9, 4)]
    assert r.cycles == cycles
    # DRAM stalls: the array waits 8 cycles for tile 0 and 1 for the last write-back; without
    # prefetch also 18..20 for tile 1 and 30..32 for tile 2 (then 3 cycles for the operands)
    assert r.stall_cycles["dram"] == (9 if prefetch == "free_space" else 13)
    assert analyze_layer(cm, hw, "realistic").cycles == cycles


def test_one_word_short_waits_as_before():
    """With 13 words the tile and the next one's new words (14) do not fit: the fetch waits for
    the tile to be distributed, as without the option (44 cycles)."""
    for prefetch in ("free_space", "none"):
        hw = _hw(prefetch, 13)
        cm = compile_mapping(FC, FC_MAPPING, hw.num_pes)
        assert simulate_layer(cm, hw).cycles == 44
        assert analyze_layer(cm, hw, "realistic").cycles == 44


CONV = Layer.build("conv", "CONV2D", {"K": 4, "C": 3, "R": 3, "S": 3, "Y": 10, "X": 10})
CONV_MAPPINGS = {
    "k_spatial": [S(1, 1, "K"), T(1, 1, "C"), T(3, 1, "Y"), T(3, 1, "X"), T(3, 3, "R"), T(3, 3, "S")],
    "c_outer": [T(1, 1, "C"), S(1, 1, "K"), T(3, 1, "Y"), T(10, 10, "X"), T(3, 3, "R"), T(3, 3, "S")],
}


@settings(max_examples=12, deadline=None)
@given(mapping=st.sampled_from(sorted(CONV_MAPPINGS)), l2_bytes=st.integers(40, 450),
       dram=st.sampled_from([1, 2, 8]))
def test_simulator_warp_and_analytical_agree_with_prefetch(mapping, l2_bytes, dram):
    """Differential: with the option on, the simulator with and without warps and the
    analytical model give the same cycles and stalls (L2 sizes from below one tile, where the
    tile overflows L2 and nothing is fetched early, to several tiles)."""
    hw = _hw("free_space", l2_bytes, pes=4, extra=(f"dram.bandwidth_bytes_per_cycle={dram}",))
    cm = compile_mapping(CONV, CONV_MAPPINGS[mapping], hw.num_pes)
    warped = simulate_layer(cm, hw)
    plain = simulate_layer(cm, hw, SimOptions(fast_forward=False))
    model = analyze_layer(cm, hw, "realistic")
    assert warped.cycles == plain.cycles == model.cycles
    assert warped.stall_cycles == plain.stall_cycles == model.stall_cycles
    assert warped.accesses == plain.accesses == model.accesses


def test_a_warp_still_jumps_with_prefetch():
    """The option keeps warps (the pool of free words is part of the state a warp compares):
    fewer events than the unwarped run, same cycles (2026 with prefetch, 2473 without: 24 tiles
    of which each next one's new words fit beside the current one in 200 words)."""
    hw = _hw("free_space", 200, pes=4)
    cm = compile_mapping(CONV, CONV_MAPPINGS["k_spatial"], hw.num_pes)
    warped, plain = simulate_layer(cm, hw), simulate_layer(cm, hw, SimOptions(fast_forward=False))
    assert warped.cycles == plain.cycles < simulate_layer(cm, _hw("none", 200, pes=4)).cycles
    assert warped.events < plain.events


def test_maestro_mode_ignores_prefetch():
    """maestro mode idealizes double buffering, so the option changes nothing there."""
    cm = compile_mapping(FC, FC_MAPPING, 1)
    on, off = _hw("free_space", 14), _hw("none", 14)
    assert simulate_layer(cm, on, SimOptions(mode="maestro")).cycles == \
        simulate_layer(cm, off, SimOptions(mode="maestro")).cycles
    assert analyze_layer(cm, on, "maestro").cycles == analyze_layer(cm, off, "maestro").cycles


def test_prefetch_needs_a_single_buffered_l2():
    with pytest.raises(InputError, match="prefetch 'free_space' is for a single-buffered L2"):
        load_hardware("eyeriss_chip", ["l2.double_buffered=true"])


def test_prefetch_in_levels_is_for_l2_only(tmp_path):
    """Written as ``levels``, prefetch belongs to the shared buffer; on L1 it is refused."""
    path = tmp_path / "hw.yaml"
    path.write_text("""name: t
pe_array: {count: 4}
levels:
  - {name: L1, instances: per_pe, size_bytes: 64, prefetch: free_space}
  - {name: L2, instances: shared, size_bytes: 4096, read_bandwidth_words_per_cycle: 4,
     write_bandwidth_words_per_cycle: 4, double_buffered: false}
  - {name: DRAM, instances: shared, kind: dram, read_bandwidth_words_per_cycle: 4, write_bandwidth_words_per_cycle: 4}
distribution_noc: {kind: bus, bandwidth_words_per_cycle: 4}
reduction_noc: {kind: tree, bandwidth_words_per_cycle: 4}
dram: {}
""")
    with pytest.raises(InputError, match="L1: prefetch applies to the shared buffer"):
        load_hardware(path)
    path.write_text(path.read_text().replace(", prefetch: free_space}", "}").replace(
        "double_buffered: false}", "double_buffered: false, prefetch: free_space}"))
    assert load_hardware(path).l2.prefetch == "free_space"


def test_eyeriss_chip_conv3_models_agree():
    """eyeriss_chip sets the option; on CONV3 each pass's next new words (5,904) fit beside the
    pass (49,168 of 55,296 words): both models give the same cycles."""
    hw = load_hardware("eyeriss_chip")
    _, jobs = jobs_from_network("eyeriss_alexnet", None, hw)
    cm = prepare(next(j for j in jobs if j.layer.name == "CONV3"), hw)
    sim = simulate_layer(cm, hw)
    assert sim.cycles == analyze_layer(cm, hw, "realistic").cycles
    assert sim.cycles < simulate_layer(cm, load_hardware("eyeriss_chip", ["l2.prefetch=none"])).cycles
