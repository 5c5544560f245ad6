"""The batch evaluator (accelsim.search): legality as data, caching, rows, genomes, executors."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelsim.analytical import analyze_layer
from accelsim.errors import MAPPING_REASONS
from accelsim.hw.loader import load_hardware
from accelsim.mapping.ast import ClusterDirective, MapDirective
from accelsim.mapping.compile import compile_mapping
from accelsim.mapping.styles import style_mapping
from accelsim.search.evaluate import is_float_metric
from accelsim.search import COLUMNS, Evaluator, Gene, Genome, InProcess, LocalProcesses, genome_from_directives
from accelsim.workload.ops import Layer, OpType

CONV = Layer.build("conv", OpType.CONV2D, {"K": 8, "C": 4, "R": 3, "S": 3, "Y": 8, "X": 8})
STRIDED = Layer.build("strided", OpType.CONV2D, {"K": 8, "C": 4, "R": 3, "S": 3, "Y": 9, "X": 9}, 2, 2)
GEMM = Layer.build("gemm", OpType.GEMM, {"M": 16, "N": 12, "K": 20})


def s(size: int, offset: int, dim: str) -> MapDirective:
    return MapDirective("spatial", size, offset, dim, 0)


def t(size: int, offset: int, dim: str) -> MapDirective:
    return MapDirective("temporal", size, offset, dim, 0)


GOOD = [s(1, 1, "K"), t(1, 1, "C"), t(3, 1, "Y"), t(3, 1, "X")]

# (layer, hardware overrides, candidate, reason)
BAD = {
    "unknown_dim": (CONV, (), [s(1, 1, "K"), t(1, 1, "Q")]),
    "duplicate_dim": (CONV, (), [s(1, 1, "K"), t(2, 2, "K")]),
    "size_exceeds_dim": (CONV, (), [s(1, 1, "K"), t(16, 16, "C")]),
    "cluster_too_big": (CONV, (), [s(1, 1, "K"), ClusterDirective(200, 0), s(1, 1, "C")]),
    "filter_split": (CONV, (), [s(1, 1, "K"), t(1, 1, "R"), t(3, 1, "Y")]),
    "window_too_small": (CONV, (), [s(1, 1, "K"), t(2, 1, "Y")]),
    "stride": (STRIDED, (), [s(1, 1, "K"), t(1, 1, "C"), t(3, 1, "Y")]),
    "coverage": (CONV, (), [s(2, 0, "K")]),
    "overlap": (CONV, (), [s(1, 1, "K"), t(3, 1, "C")]),
    "gap": (CONV, (), [s(1, 1, "K"), t(1, 2, "C")]),
    "diagonal": (CONV, (), [s(1, 1, "K"), s(1, 1, "C")]),
    # one PE holds the whole input (4x8x8), a filter (4x3x3) and its outputs (6x6): 328 words, doubled
    "l1_overflow": (CONV, (), [s(1, 1, "K")]),
    "l2_overflow": (CONV, ("l2.size_bytes=64",), GOOD),
    # a 2-byte double-buffered register file inside the PE cannot hold one word of each tensor
    "inner_overflow": (CONV, ("inner_levels=[{name: RF, instances: per_pe, size_bytes: 2}]",), GOOD),
    "no_reduction_network": (CONV, ("reduction_noc.kind=none",), [s(1, 1, "C"), t(1, 1, "K")]),
}


@pytest.mark.parametrize("reason", sorted(BAD))
def test_legality_reason_of_crafted_bad_candidate(reason):
    """Each crafted candidate is refused with its reason code in the row, never an exception;
    its cost is +inf and its fitness -inf."""
    layer, overrides, candidate = BAD[reason]
    with Evaluator(load_hardware("eyeriss_like", overrides), layer) as ev:
        row = ev.evaluate([candidate]).iloc[0]
    assert (row.status, row.reason) == ("illegal", reason), row.message
    assert row.cost == float("inf") and row.fitness == float("-inf")
    assert row.cycles is pd.NA
    assert row.message and "--allow-overflow" not in row.message


def test_every_mapping_reason_is_exercised():
    """A new reason code needs a crafted case above (``unknown_layer`` is about files; the
    ``no_*_equivalent`` codes about converting a mapping between the MAESTRO and loop-nest forms;
    ``inner_pins`` about register-file loops a mapping pins, which search candidates never do:
    tests/test_inner_pins.py)."""
    assert set(BAD) == set(MAPPING_REASONS) - {"unknown_layer", "no_directive_equivalent", "no_loopnest_equivalent",
                                                  "no_timeloop_equivalent", "inner_pins"}


def test_syntax_error_in_dataflow_text_is_a_row():
    with Evaluator("eyeriss_like", CONV) as ev:
        row = ev.evaluate(["SpatialMap(1,1) K; Bogus(1,1) C"]).iloc[0]
    assert (row.status, row.reason) == ("illegal", "syntax")
    assert "Bogus" in row.message


def test_row_equals_the_model_run_directly():
    """The analytical row carries exactly what analyze_layer reports for the same mapping."""
    hw = load_hardware("eyeriss_like")
    with Evaluator(hw, CONV, objective="edp") as ev:
        row = ev.evaluate([GOOD]).iloc[0]
    direct = analyze_layer(compile_mapping(CONV, GOOD, hw.num_pes), hw, "realistic")
    assert row.status == "ok" and row.model == "analytical"
    assert row.cycles == direct.cycles and row.energy_pj == direct.energy_pj
    assert row.cost == direct.cycles * direct.energy_pj == row.edp_pj_cycles
    assert row.input_dram_read == direct.accesses["input"].dram_read
    assert row.dram_words == sum(a.dram_read + a.dram_write for a in direct.accesses.values())
    assert list(ev.evaluate([GOOD]).columns) == list(COLUMNS)


def test_identical_schedules_are_scored_once():
    """Input windows written as Y or as Y', a dimension left out or written whole, and a
    non-looping directive moved: one schedule, one model run; repeats are not new."""
    spellings = [
        GOOD,
        "SpatialMap(1,1) K; TemporalMap(1,1) C; TemporalMap(Sz(R),1) Y; TemporalMap(Sz(S),1) X",
        [s(1, 1, "K"), t(1, 1, "C"), t(1, 1, "Y'"), t(1, 1, "X'"), t(3, 3, "R"), t(3, 3, "S")],
        [t(1, 1, "N"), s(1, 1, "K"), t(1, 1, "C"), t(1, 1, "Y'"), t(1, 1, "X'")],
    ]
    with Evaluator("eyeriss_like", CONV) as ev:
        frame = ev.evaluate(spellings + spellings)
        assert ev.model_runs == 1
        assert frame.key.nunique() == 1 and frame.cycles.nunique() == 1
        assert frame.new.tolist() == [True] + [False] * 7
        again = ev.evaluate(spellings[:1])
    assert not again.new.any() and ev.model_runs == 1


def test_limit_stops_at_new_schedules():
    """With limit 2 the third new schedule is not evaluated; a repeat before it still is."""
    a, b, c = GOOD, [s(1, 1, "K"), t(2, 2, "C"), t(3, 1, "Y"), t(3, 1, "X")], [s(2, 2, "K")]
    with Evaluator("eyeriss_like", CONV) as ev:
        frame = ev.evaluate([a, a, b, a, c, a], limit=2)
    assert len(frame) == 4 and frame.new.tolist() == [True, False, True, False]


def test_unknown_objective_or_model_is_an_input_error():
    from accelsim.errors import InputError

    with pytest.raises(InputError, match="unknown objective"):
        Evaluator("eyeriss_like", CONV, objective="speed")
    with pytest.raises(InputError, match="unknown model"):
        Evaluator("eyeriss_like", CONV, model="oracle")


def test_simulator_model_scores_like_the_simulator():
    from accelsim.sim.engine import SimOptions, simulate_layer

    hw = load_hardware("eyeriss_like")
    with Evaluator(hw, CONV, model="sim", mode="maestro") as ev:
        row = ev.evaluate([GOOD]).iloc[0]
    direct = simulate_layer(compile_mapping(CONV, GOOD, hw.num_pes), hw, SimOptions(mode="maestro"))
    assert (row["model"], row["mode"], row.cycles, row.energy_pj) == ("sim", "maestro", direct.cycles, direct.energy_pj)


# -------------------------------------------------------------------------------- genomes
def _genomes(layer: Layer, num_pes: int):
    """Random complete genomes of 1-3 levels for ``layer``, normalized."""
    dims = list(layer.loop_nest().dims)

    @st.composite
    def build(draw):
        n = draw(st.integers(1, 3))
        clusters = sorted(draw(st.lists(st.integers(1, num_pes), min_size=n - 1, max_size=n - 1)), reverse=True)
        levels = []
        for _ in range(n):
            order = draw(st.permutations(dims))
            levels.append(tuple(Gene(d, draw(st.integers(1, layer.loop_nest().dims[d]))) for d in order))
        return Genome(tuple(levels), tuple(clusters)).normalized(layer)

    return build()


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_genome_directives_round_trip(data):
    """genome -> directives -> genome is the identity (for normalized genomes), for convolutions
    and GEMMs, and the decoded directives compile with every window covering once."""
    layer = data.draw(st.sampled_from([CONV, STRIDED, GEMM]))
    genome = data.draw(_genomes(layer, 168))
    directives = genome.directives()
    assert genome_from_directives(layer, directives, 168) == genome
    compile_mapping(layer, directives, 168 * 4)  # coverage legal (clusters may exceed 168 here)


def test_style_mappings_as_genomes():
    """nvdla_like is a two-level genome; eyeriss_like (input rows sliding over SpatialMaps) is not."""
    from accelsim.errors import InputError

    hw = load_hardware("eyeriss_like")
    nvdla = style_mapping("nvdla_like", CONV, hw)
    genome = genome_from_directives(CONV, nvdla, hw.num_pes)
    assert len(genome.levels) == 2 and genome.levels[0][0] == Gene("K", 1)
    with Evaluator(hw, CONV) as ev:
        frame = ev.evaluate([nvdla, genome])
    assert frame.key.nunique() == 1
    with pytest.raises(InputError, match="genome"):
        genome_from_directives(CONV, style_mapping("eyeriss_like", CONV, hw), hw.num_pes)
    maeri = style_mapping("maeri_like", CONV, hw)  # four cluster levels: K, C, R, S
    with pytest.raises(InputError, match="a genome has at most 3 levels; this mapping has 4"):
        genome_from_directives(CONV, maeri, hw.num_pes)


def test_genome_text_and_decoding():
    """The thesis' Fig. 4.2 NVDLA-like genome: K across clusters, C within, 64-PE clusters."""
    genome = Genome(((Gene("K", 1), Gene("C", 64), Gene("R", 3), Gene("S", 3), Gene("X'", 3), Gene("Y'", 3)),
                     (Gene("C", 1), Gene("K", 1), Gene("Y'", 3), Gene("X'", 3), Gene("R", 3), Gene("S", 3))), (64,))
    assert genome.text() == "[K:1 C:64 R:3 S:3 X':3 Y':3] 64 [C:1 K:1 Y':3 X':3 R:3 S:3]"
    assert genome.directives()[:2] == (s(1, 1, "K"), t(64, 64, "C"))
    assert genome.directives()[6] == ClusterDirective(64, 0)
    with pytest.raises(ValueError, match="cluster sizes"):
        Genome(genome.levels, ())


# -------------------------------------------------------------------------------- executors
def _candidates():
    out = []
    for k in (1, 2, 4, 8):
        for c in (1, 2, 4):
            out.append([s(k, k, "K"), t(c, c, "C"), t(3, 1, "Y"), t(3, 1, "X")])
    out.append([s(1, 1, "K")])  # illegal: L1 overflow
    return out


def test_local_processes_give_identical_results():
    with Evaluator("eyeriss_like", CONV, executor=InProcess()) as ev:
        serial = ev.evaluate(_candidates())
    pool = LocalProcesses(2)
    try:
        with Evaluator("eyeriss_like", CONV, executor=pool) as ev:
            parallel = ev.evaluate(_candidates())
    finally:
        pool.close()
    columns = [c for c in COLUMNS if c != "wall_seconds"]
    assert serial[columns].equals(parallel[columns])


def test_local_workers_hand_back_batches_with_their_tags_and_errors():
    """Three batches on two workers (one runs, one waits in each pipe, one waits in the parent):
    each comes back under its tag with screen_batch's results; a batch screen_batch raises on
    (a dataflow that is not a sequence of directives) raises the same exception here; a worker
    killed while it scores ends the wait with a ResourceError instead of a hang."""
    from accelsim.errors import ResourceError
    from accelsim.search.models import screen_batch

    with Evaluator("eyeriss_like", CONV) as ev:
        task = ev.task
    batches = [[tuple(d)] for d in _candidates()[:3]]
    pool = LocalProcesses(2)
    try:
        for tag, batch in zip("abc", batches):
            pool.submit(task, batch, tag)
        def facts(results):  # all but the wall time
            return [(r.key, r.legal, r.outcome.status, r.outcome.metrics) for r in results]

        back = {tag: facts(out) for tag, out in (pool.next_done() for _ in range(3))}
        assert back == {tag: facts(screen_batch(task, batch)) for tag, batch in zip("abc", batches)}
        pool.submit(task, [None], "bad")  # type: ignore[list-item]
        with pytest.raises(TypeError):
            pool.next_done()
        for worker in pool._pool:  # stopped, so that no worker can hand the batch back before it is killed
            os.kill(worker.process.pid, signal.SIGSTOP)  # (a one-candidate batch takes a worker about 3 ms)
        pool.submit(task, batches[0], "killed")
        for worker in pool._pool:
            worker.process.kill()
        with pytest.raises(ResourceError, match="worker process ended"):
            pool.next_done()
    finally:
        pool.close()


def test_a_worker_pipe_reset_or_broken_is_a_worker_that_ended():
    """A killed worker's pipe may read as reset (ConnectionResetError, seen in a CI rehearsal)
    rather than closed (EOFError), and a batch sent to it may meet a broken pipe
    (BrokenPipeError): both end the wait with the ResourceError of a worker that ended, never an
    internal error. The two errors are raised by the connection here, so the test does not
    depend on which one the kernel gives."""
    from accelsim.errors import ResourceError

    with Evaluator("eyeriss_like", CONV) as ev:
        task = ev.task
    batch = [tuple(_candidates()[0])]

    def reset(*_args):
        raise ConnectionResetError(104, "Connection reset by peer")

    def broken(*_args):
        raise BrokenPipeError(32, "Broken pipe")

    pool = LocalProcesses(1)
    try:
        pool.submit(task, batch, "a")
        worker = pool._pool[0]
        worker.process.kill()
        worker.process.join()
        worker.conn.recv = reset  # the kill makes the pipe readable; reading it raises the reset
        with pytest.raises(ResourceError, match=r"worker process ended while scoring \(exit status -9"):
            pool.next_done()
    finally:
        pool.close()
    pool = LocalProcesses(1)
    try:
        pool._pool[0].conn.send = broken
        with pytest.raises(ResourceError, match="worker process ended while scoring"):
            pool.submit(task, batch, "a")
    finally:
        pool.close()


def test_dask_local_cluster_gives_identical_results():
    distributed = pytest.importorskip("distributed")
    with Evaluator("eyeriss_like", CONV) as ev:
        serial = ev.evaluate(_candidates())
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) \
            as cluster, distributed.Client(cluster) as client:
        with Evaluator("eyeriss_like", CONV, scheduler=client) as ev:
            assert ev.executor.workers == 2
            remote = ev.evaluate(_candidates())
    columns = [c for c in COLUMNS if c != "wall_seconds"]
    assert serial[columns].equals(remote[columns])


def test_loop_nest_candidates():
    """A Timeloop-style loop nest is scored like the directives it converts to (one schedule);
    a nest the converter refuses is an illegal row with the converter's reason."""
    from dataclasses import replace

    from accelsim.mapping.loopnest_format import load_loopnest, loopnest_dataflow
    from accelsim.search import dataflow_text

    _, nests = load_loopnest(Path(__file__).resolve().parents[1] / "examples" / "timeloop_style.yaml")
    nest = nests[0]
    with Evaluator("eyeriss_like", nest.layer) as ev:
        frame = ev.evaluate([nest, loopnest_dataflow(nest, 168)])
    assert frame["encoding"].tolist() == ["loopnest", "directives"]
    assert frame["key"].nunique() == 1 and frame["status"].tolist() == ["ok", "ok"]
    assert frame["dataflow"].iloc[0] == dataflow_text(loopnest_dataflow(nest, 168))
    assert frame["candidate"].iloc[0].startswith("DRAM:temporal[")
    # factors of R that do not cover it: refused as coverage, a row and no exception
    entries = list(nest.entries)
    l1 = entries[-1]
    entries[-1] = replace(l1, factors={**l1.factors, "R": 2})
    with Evaluator("eyeriss_like", nest.layer) as ev:
        row = ev.evaluate([replace(nest, entries=tuple(entries))]).iloc[0]
    assert (row.status, row.reason) == ("illegal", "coverage") and "factors of R" in row.message


def _frame_row_by_row(rows: list[dict], ev: Evaluator) -> pd.DataFrame:
    """The frame as it was built before it was built column by column: from the rows, then each
    metric column converted (the reference for the test below)."""
    frame = pd.DataFrame(rows, columns=list(ev.columns))
    for column in ev.metric_columns:
        frame[column] = frame[column].astype("float64" if is_float_metric(column) else "Int64")
    frame["new"] = frame["new"].astype(bool)
    return frame


@pytest.mark.parametrize("overrides", [(), ("inner_levels=[{name: RF, instances: per_pe, size_bytes: 64}]",)])
@pytest.mark.parametrize("which", ["mixed", "ok only", "illegal only", "none"])
def test_frame_is_the_rows_frame(overrides, which):
    """evaluate() builds its frame column by column (Evaluator._frame); it equals, values and dtypes, the frame
    pandas builds from the same rows (ok rows with every reason and message missing: an object
    column; illegal rows: every metric missing; a design with register files: their columns;
    an empty frame)."""
    hw = load_hardware("eyeriss_like", overrides)
    good = [GOOD, [s(1, 1, "K"), t(2, 2, "C"), t(3, 1, "Y"), t(3, 1, "X")]]
    bad = [BAD[reason][2] for reason in ("coverage", "overlap", "gap")] + ["SpatialMap(1,1) K; Bogus(1,1) C"]
    candidates = {"mixed": good + bad + good, "ok only": good, "illegal only": bad, "none": []}[which]
    with Evaluator(hw, CONV) as ev:
        rows = ev.rows(candidates)
        frame = ev._frame(rows)  # what evaluate() returns for these rows
    pd.testing.assert_frame_equal(frame, _frame_row_by_row(rows, ev), check_exact=True)
    ok_rows = {"mixed": 4, "ok only": 2, "illegal only": 0, "none": 0}[which]  # GOOD's two, twice in mixed
    assert len(frame) == len(candidates) and frame["status"].eq("ok").sum() == ok_rows
