"""A corpus of bad, hostile and huge inputs for every input kind and for command-line misuse.

Each :class:`Case` is a command line (``{d}`` stands for the case's own directory), the files it
needs, the exit status it must end with and the words its one ``error:`` line must hold (the
file and the line or field, and what was wrong). ``tests/test_corpus.py`` runs every case
through the CLI in-process and, in the slow run, in a subprocess under a memory limit.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EYERISS_YAML = (REPO / "accelsim" / "hwconfigs" / "eyeriss_like.yaml").read_text(encoding="utf-8")
SCALESIM_CFG = (REPO / "validation" / "scalesim" / "scale_ws.cfg").read_text(encoding="utf-8")

DIR = "dir"  # a file entry that is a directory
FIFO = "fifo"  # a named pipe (reading it would block)
SPARSE_65M = "sparse"  # a 65 MiB sparse file (over the input size limit)


@dataclass(frozen=True)
class Case:
    name: str
    args: tuple[str, ...]
    status: int
    needles: tuple[str, ...]
    files: dict[str, bytes | str] = field(default_factory=dict)


CASES: list[Case] = []


def case(name: str, args: str | tuple[str, ...], status: int, needles: tuple[str, ...] | str,
         **files: bytes | str) -> None:
    argv = tuple(args.split()) if isinstance(args, str) else args
    CASES.append(Case(name, argv, status, (needles,) if isinstance(needles, str) else needles,
                      {k.replace("__", "."): v for k, v in files.items()}))


def mapping(dims: str = "K: 8, C: 4, R: 3, S: 3, Y: 8, X: 8", dataflow: str = "SpatialMap(1,1) K;\n"
            "TemporalMap(1,1) C;\nTemporalMap(3,1) Y;\nTemporalMap(3,1) X;", layer_type: str = "CONV",
            stride: str = "Stride { X: 1, Y: 1 }", name: str = "conv1") -> str:
    """A one-layer .m file: Type on line 3, Stride on 4, Dimensions on 5, the Dataflow from 7."""
    return (f"Network tiny {{\n  Layer {name} {{\n    Type: {layer_type}\n    {stride}\n"
            f"    Dimensions {{ {dims} }}\n    Dataflow {{\n{dataflow}\n    }}\n  }}\n}}\n")


def yaml_hw(old: str, new: str) -> str:
    """The eyeriss_like preset with ``old`` replaced by ``new`` (must occur)."""
    assert old in EYERISS_YAML, old
    return EYERISS_YAML.replace(old, new, 1)


def network(*layers: str, head: str = "name: net\n") -> str:
    return head + "layers:\n" + "".join(f"  - {layer}\n" for layer in layers)


def cfg(old: str, new: str) -> str:
    assert old in SCALESIM_CFG, old
    return SCALESIM_CFG.replace(old, new, 1)


SIM = "simulate --hw eyeriss_like --mapping {d}/m.m"
NET = "simulate --hw eyeriss_like --network {d}/n.yaml --style nvdla_like"
HW = "simulate --hw {d}/hw.yaml --mapping {d}/m.m"
MHW = "simulate --hw {d}/hw.m --mapping {d}/m.m"
SCS = "simulate --scalesim-config {d}/s.cfg --topology {d}/t.csv"
CMP = "compare --hw eyeriss_like --mapping {d}/m.m --mode maestro --maestro-csv {d}/r.csv"
GOOD_M = mapping()
GOOD_TOPO = "Layer, M, N, K,\nfc1, 64, 128, 256,\n"
CSV_HEAD = "Neural Network Name, Layer Number, NumPEs, Runtime (Cycles), Num MACs\n"

# ----- MAESTRO mapping files (.m) ---------------------------------------------------------------
case("m-missing", SIM, 2, ("m.m", "mapping file not found"))
case("m-directory", SIM, 2, ("m.m", "is a directory"), m__m=DIR)
case("m-fifo", SIM, 2, ("m.m", "not a regular file"), m__m=FIFO)
case("m-device", "simulate --hw eyeriss_like --mapping /dev/zero", 2, ("/dev/zero", "not a regular file"))
case("m-too-large", SIM, 2, ("m.m", "input files are limited to"), m__m=SPARSE_65M)
case("m-not-utf8", SIM, 2, ("m.m:2:", "not UTF-8", "0xff"), m__m=b"// x\n\xff\xfe Network\n")
case("m-nul-bytes", SIM, 2, ("m.m:1:", "unexpected character"), m__m=b"Network \x00\x00 {}\n")
case("m-empty", SIM, 2, ("m.m", "no Network block"), m__m="")
case("m-comments-only", SIM, 2, ("m.m", "no Network block"), m__m="// nothing\n/* at all */\n")
case("m-two-networks", SIM, 2, ("m.m:14:", "exactly one Network"), m__m=GOOD_M + "Network b { }\n")
case("m-unclosed-brace", SIM, 2, ("m.m",), m__m=GOOD_M.rstrip("}\n"))
case("m-stray-brace", SIM, 2, ("m.m:14:", "stray '}'"), m__m=GOOD_M + "}\n")
case("m-unknown-toplevel", SIM, 2, ("m.m:1:", "unknown keyword 'Widget'"), m__m="Widget x {}\n" + GOOD_M)
case("m-no-type", SIM, 2, ("m.m", "Type"), m__m=GOOD_M.replace("    Type: CONV\n", ""))
case("m-unknown-type", SIM, 2, ("m.m:3:", "POOL"), m__m=mapping(layer_type="POOL"))
case("m-unknown-dim", SIM, 2, ("m.m:5:", "Q"), m__m=mapping(dims="K: 8, C: 4, R: 3, S: 3, Y: 8, X: 8, Q: 3"))
case("m-negative-dim", SIM, 2, ("m.m:5:", "K"), m__m=mapping(dims="K: -1, C: 4, R: 3, S: 3, Y: 8, X: 8"))
case("m-zero-dim", SIM, 2, ("m.m:5:", "K"), m__m=mapping(dims="K: 0, C: 4, R: 3, S: 3, Y: 8, X: 8"))
case("m-19-digits", SIM, 2, ("m.m:5:", "too large"),
     m__m=mapping(dims="K: 1000000000000000000, C: 4, R: 3, S: 3, Y: 8, X: 8"))
case("m-5000-digits", SIM, 2, ("m.m:5:", "too large"), m__m=mapping(dims=f"K: {'9' * 5000}, C: 4, R: 3, S: 3, Y: 8, X: 8"))
case("m-float-dim", SIM, 2, ("m.m:5:", "1.5"), m__m=mapping(dims="K: 1.5, C: 4, R: 3, S: 3, Y: 8, X: 8"))
case("m-unknown-constant", SIM, 2, ("m.m:5:", "unknown Constant 'KK'"),
     m__m=mapping(dims="K: KK, C: 4, R: 3, S: 3, Y: 8, X: 8"))
case("m-constant-twice", SIM, 2, ("m.m:2:", "KK"), m__m="Constant KK 4;\nConstant KK 5;\n" + GOOD_M)
case("m-deep-parentheses", SIM, 2, ("m.m", "nested too deeply"),
     m__m=mapping(dims=f"K: {'(' * 20000}8{')' * 20000}, C: 4, R: 3, S: 3, Y: 8, X: 8"))
case("m-product-overflows", SIM, 2, ("m.m:5:", "too large"),
     m__m=mapping(dims="K: 999999999 * 999999999 * 999999999, C: 4, R: 3, S: 3, Y: 8, X: 8"))
case("m-sz-unknown", SIM, 2, ("m.m:7:", "Sz(Q)"), m__m=mapping(dataflow="SpatialMap(Sz(Q),1) K;"))
case("m-directive-unknown-dim", SIM, 2, ("m.m:7:", "Q"), m__m=mapping(dataflow="SpatialMap(1,1) Q;"))
case("m-directive-missing-offset", SIM, 2, ("m.m:7:",), m__m=mapping(dataflow="SpatialMap(1) K;"))
case("m-directive-size-zero", SIM, 2, ("m.m:7:", "size"), m__m=mapping(dataflow="SpatialMap(0,1) K;"))
case("m-unknown-directive", SIM, 2, ("m.m:7:", "SpaceMap"), m__m=mapping(dataflow="SpaceMap(1,1) K;"))
case("m-cluster-too-big", SIM, 2, ("m.m", "Cluster"), m__m=mapping(
    dataflow="SpatialMap(1,1) K;\nTemporalMap(1,1) C;\nTemporalMap(3,1) Y;\nTemporalMap(3,1) X;\nCluster(1000,P);"))
# MAESTRO reads a map larger than its dimension as covering it (its own files rely on it), so
# one PE holds the whole layer: refused as an L1 overflow
case("m-size-over-dim", SIM, 2, ("m.m", "L1 overflow", "--allow-overflow"), m__m=mapping(dataflow="SpatialMap(9,9) K;"))
case("m-overlap", SIM, 2, ("m.m:8:", "overlap"), m__m=mapping(
    dataflow="SpatialMap(1,1) K;\nTemporalMap(2,1) C;\nTemporalMap(3,1) Y;\nTemporalMap(3,1) X;"))
case("m-gap", SIM, 2, ("m.m:8:", "gap"), m__m=mapping(
    dataflow="SpatialMap(1,1) K;\nTemporalMap(1,2) C;\nTemporalMap(3,1) Y;\nTemporalMap(3,1) X;"))
case("m-filter-over-input", SIM, 2, ("m.m", "filter 9x3 is larger than input"),
     m__m=mapping(dims="K: 8, C: 4, R: 9, S: 3, Y: 8, X: 8"))
case("m-stride-zero", SIM, 2, ("m.m:4:", "Stride X", "must be an integer >= 1"), m__m=mapping(stride="Stride { X: 0, Y: 1 }"))
case("m-does-not-fit", "simulate --hw eyeriss_like --set l1.size_bytes=4 --mapping {d}/m.m", 2,
     ("m.m", "does not fit", "--allow-overflow"), m__m=GOOD_M)
# MAESTRO keeps repeated layer names in order (its shipped files repeat them): runs
case("m-duplicate-layer", SIM, 0, (), m__m=GOOD_M.replace(
    "  }\n}\n", "  }\n" + mapping().split("\n", 1)[1].rsplit("}", 1)[0] + "}\n", 1))
case("m-no-such-layer", SIM + " --layer nope", 2, ("m.m", "no layer 'nope'"), m__m=GOOD_M)
case("m-too-large-to-count", SIM, 2, ("m.m:2", "too large to count exactly", "2^53"),
     m__m=mapping(dims="K: 100000000000000000, C: 576, R: 1, S: 1, Y: 1, X: 1"))
case("m-over-step-budget", SIM, 3, ("m.m:2", "over budget", "--max-steps", "accelsim analyze"),
     m__m=mapping(dims="K: 8, C: 4000000, R: 1, S: 1, Y: 1, X: 1000",
                  dataflow="SpatialMap(1,1) K;\nTemporalMap(1,1) C;\nTemporalMap(1,1) Y;\nTemporalMap(1,1) X;"))
case("m-long-line", SIM, 2, ("m.m:1:", "unexpected character"), m__m=" " * 1_000_000 + "@\n")
case("m-unterminated-comment", SIM, 2, ("m.m:1:", "never closed"), m__m="/* open\n" + GOOD_M)
case("m-empty-dataflow", SIM, 2, ("m.m", "Dataflow"), m__m=mapping(dataflow=""))
case("m-missing-dimension", SIM, 2, ("m.m", "R"), m__m=mapping(dims="K: 8, C: 4, S: 3, Y: 8, X: 8"))
case("m-gemm-with-y", SIM, 2, ("m.m:5:", "Y"), m__m=mapping(layer_type="GEMM", dims="M: 4, N: 4, K: 4, Y: 3",
                                                            dataflow="SpatialMap(1,1) M;", stride=""))

# ----- hardware YAML ----------------------------------------------------------------------------
case("hw-missing", "simulate --hw {d}/hw.yaml --mapping {d}/m.m", 2, ("hw.yaml", "not found"), m__m=GOOD_M)
case("hw-empty", HW, 2, ("hw.yaml", "empty"), hw__yaml="", m__m=GOOD_M)
case("hw-list", HW, 2, ("hw.yaml", "got a list"), hw__yaml="- 1\n- 2\n", m__m=GOOD_M)
case("hw-scalar", HW, 2, ("hw.yaml", "got a string"), hw__yaml="hello\n", m__m=GOOD_M)
case("hw-syntax", HW, 2, ("hw.yaml:", "invalid YAML"), hw__yaml=yaml_hw("  size_bytes: 512\n", "  size_bytes: [512\n"),
     m__m=GOOD_M)
case("hw-duplicate-key", HW, 2, ("hw.yaml:", "given twice"), hw__yaml=yaml_hw(
    "  size_bytes: 512\n", "  size_bytes: 512\n  size_bytes: 1024\n"), m__m=GOOD_M)
case("hw-unknown-top", HW, 2, ("hw.yaml", "field bogus", "unknown field"), hw__yaml=EYERISS_YAML + "bogus: 1\n",
     m__m=GOOD_M)
case("hw-unknown-nested", HW, 2, ("hw.yaml", "l1.bogus"), hw__yaml=yaml_hw(
    "  size_bytes: 512\n", "  size_bytes: 512\n  bogus: 3\n"), m__m=GOOD_M)
case("hw-missing-section", HW, 2, ("hw.yaml", "field l1", "required"), hw__yaml=yaml_hw(
    "l1:\n  size_bytes: 512\n  double_buffered: true\n", ""), m__m=GOOD_M)
case("hw-negative-size", HW, 2, ("hw.yaml", "l1.size_bytes", "greater than 0"), hw__yaml=yaml_hw(
    "  size_bytes: 512\n", "  size_bytes: -512\n"), m__m=GOOD_M)
case("hw-string-size", HW, 2, ("hw.yaml", "l1.size_bytes"), hw__yaml=yaml_hw(
    "  size_bytes: 512\n", "  size_bytes: big\n"), m__m=GOOD_M)
case("hw-bool-size", HW, 2, ("hw.yaml", "l1.size_bytes", "boolean"), hw__yaml=yaml_hw(
    "  size_bytes: 512\n", "  size_bytes: true\n"), m__m=GOOD_M)
case("hw-5000-digits", HW, 2, ("hw.yaml:", "5000 digits"), hw__yaml=yaml_hw(
    "  size_bytes: 512\n", f"  size_bytes: {'9' * 5000}\n"), m__m=GOOD_M)
case("hw-inf", HW, 2, ("hw.yaml", "dram.bandwidth_bytes_per_cycle", "finite"), hw__yaml=yaml_hw(
    "  bandwidth_bytes_per_cycle: 12", "  bandwidth_bytes_per_cycle: .inf"), m__m=GOOD_M)
case("hw-nan", HW, 2, ("hw.yaml", "clock_mhz", "finite"), hw__yaml=yaml_hw("clock_mhz: 200", "clock_mhz: .nan"),
     m__m=GOOD_M)
case("hw-float-overflow", HW, 2, ("hw.yaml", "clock_mhz", "finite"), hw__yaml=yaml_hw("clock_mhz: 200",
                                                                                       "clock_mhz: 1.0e400"),
     m__m=GOOD_M)
case("hw-python-tag", HW, 2, ("hw.yaml:", "constructor"), hw__yaml="name: !!python/object/apply:os.system ['true']\n",
     m__m=GOOD_M)
case("hw-alias-bomb", HW, 2, ("hw.yaml",), hw__yaml="a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(8))
    + "name: *i\n", m__m=GOOD_M)
case("hw-deep-nesting", HW, 2, ("hw.yaml", "nested too deeply"), hw__yaml="name: " + "[" * 20000 + "]" * 20000 + "\n",
     m__m=GOOD_M)
case("hw-bad-kind", HW, 2, ("hw.yaml", "distribution_noc.kind"), hw__yaml=yaml_hw("kind: bus", "kind: mesh"),
     m__m=GOOD_M)
case("hw-banks", HW, 2, ("hw.yaml", "l2.banks", "not modelled"), hw__yaml=yaml_hw(
    "  size_bytes: 110592\n", "  size_bytes: 110592\n  banks: 64\n"), m__m=GOOD_M)
case("hw-not-utf8", HW, 2, ("hw.yaml:1:", "not UTF-8"), hw__yaml=b"name: caf\xe9\n", m__m=GOOD_M)
case("hw-binary", HW, 2, ("hw.yaml",), hw__yaml=bytes(range(256)) * 4, m__m=GOOD_M)
case("hw-count-mismatch", HW, 2, ("hw.yaml", "pe_array", "count 7 != rows x cols = 168"),
     hw__yaml=yaml_hw("  count: 168\n", "  count: 7\n"), m__m=GOOD_M)
# both models' memory follows iteration cases and PE classes, not PEs: 10^9 PEs run in about 50 MB
case("hw-billion-pes", HW, 0, (),
     hw__yaml=yaml_hw("  count: 168\n  rows: 12\n  cols: 14\n", "  count: 1000000000\n"), m__m=GOOD_M)
case("hw-tiny-bandwidth", HW, 2, ("m.m", "too large to count exactly"), hw__yaml=yaml_hw(
    "  bandwidth_bytes_per_cycle: 12", "  bandwidth_bytes_per_cycle: 1.0e-300"), m__m=GOOD_M)
case("hw-huge-latency", HW, 2, ("m.m", "too large to count exactly"), hw__yaml=yaml_hw(
    "  latency_cycles: 0\n", "  latency_cycles: 100000000000000000000\n"), m__m=GOOD_M)
case("hw-word-size-zero", HW, 2, ("hw.yaml", "word_size_bytes"), hw__yaml=yaml_hw("word_size_bytes: 1",
                                                                                  "word_size_bytes: 0"), m__m=GOOD_M)
case("hw-two-documents", HW, 2, ("hw.yaml", "single document"), hw__yaml=EYERISS_YAML + "---\nname: x\n",
     m__m=GOOD_M)
case("hw-directory", HW, 2, ("hw.yaml", "is a directory"), hw__yaml=DIR, m__m=GOOD_M)
case("hw-unknown-preset", "simulate --hw nosuchpreset --mapping {d}/m.m", 2, ("nosuchpreset", "presets"),
     m__m=GOOD_M)
case("hw-empty-name", ("simulate", "--hw", "", "--mapping", "{d}/m.m"), 2, ("unknown hardware preset",),
     m__m=GOOD_M)
case("hw-huge-name-string", HW, 2, ("hw.yaml", "field name"), hw__yaml=yaml_hw("name: eyeriss_like",
                                                                             "name: [" + "x, " * 20000 + "x]"),
     m__m=GOOD_M)

# ----- MAESTRO hardware files -------------------------------------------------------------------
GOOD_MHW = "num_pes: 256\nl1_size_cstr: 100\nl2_size_cstr: 3000\nnoc_bw_cstr: 1000\noffchip_bw_cstr: 50\n"
case("mhw-missing-key", MHW, 2, ("hw.m", "offchip_bw_cstr", "required"), hw__m=GOOD_MHW.replace(
    "offchip_bw_cstr: 50\n", ""), m__m=GOOD_M)
case("mhw-unknown-key", MHW, 2, ("hw.m:6:", "unknown MAESTRO hardware key 'bogus'"), hw__m=GOOD_MHW + "bogus: 1\n",
     m__m=GOOD_M)
case("mhw-duplicate", MHW, 2, ("hw.m:6:", "given twice"), hw__m=GOOD_MHW + "num_pes: 8\n", m__m=GOOD_M)
case("mhw-fraction-pes", MHW, 2, ("hw.m:1:", "whole number"), hw__m=GOOD_MHW.replace("num_pes: 256", "num_pes: 2.5"),
     m__m=GOOD_M)
case("mhw-negative", MHW, 2, ("hw.m:2:", "must be > 0"), hw__m=GOOD_MHW.replace("l1_size_cstr: 100",
                                                                             "l1_size_cstr: -100"), m__m=GOOD_M)
case("mhw-no-value", MHW, 2, ("hw.m:6:", "no value"), hw__m=GOOD_MHW + "NoC_NumHops\n", m__m=GOOD_M)
case("mhw-not-number", MHW, 2, ("hw.m:4:", "expects a number"), hw__m=GOOD_MHW.replace("noc_bw_cstr: 1000",
                                                                                    "noc_bw_cstr: fast"),
     m__m=GOOD_M)
case("mhw-5000-digits", MHW, 2, ("hw.m:1:", "num_pes"), hw__m=GOOD_MHW.replace("num_pes: 256", f"num_pes: {'9' * 5000}"),
     m__m=GOOD_M)
case("mhw-not-utf8", MHW, 2, ("hw.m:1:", "not UTF-8"), hw__m=b"num_pes: 2\xff\n", m__m=GOOD_M)
case("mhw-empty", MHW, 2, ("hw.m", "required field missing"), hw__m="", m__m=GOOD_M)
case("mhw-negative-hops", MHW, 2, ("hw.m:6:", "NoC_NumHops must be >= 0"), hw__m=GOOD_MHW + "NoC_NumHops: -1\n",
     m__m=GOOD_M)
case("mhw-inf-bandwidth", MHW, 2, ("hw.m", "finite"), hw__m=GOOD_MHW.replace("offchip_bw_cstr: 50",
                                                                          "offchip_bw_cstr: inf"), m__m=GOOD_M)
case("mhw-nan-bandwidth", MHW, 2, ("hw.m",), hw__m=GOOD_MHW.replace("noc_bw_cstr: 1000", "noc_bw_cstr: nan"),
     m__m=GOOD_M)

# ----- --set ------------------------------------------------------------------------------------
SET = "simulate --hw eyeriss_like --mapping {d}/m.m --set "
case("set-no-equals", SET + "l2size", 2, ("--set", "expected key=value"), m__m=GOOD_M)
case("set-unknown-key", SET + "l2.sise=3", 2, ("--set", "unknown key 'sise'"), m__m=GOOD_M)
case("set-bad-yaml", SET + "distribution_noc.multicast=[x", 2, ("--set", "not valid YAML"), m__m=GOOD_M)
case("set-section", SET + "l2=5", 2, ("field l2",), m__m=GOOD_M)
case("set-long-number", SET + "l2.size_bytes=" + "9" * 5000, 2, ("--set", "5000 digits"), m__m=GOOD_M)
case("set-negative", SET + "l2.size_bytes=-1", 2, ("l2.size_bytes", "from --set"), m__m=GOOD_M)
case("set-string", SET + "pe_array.rows=many", 2, ("pe_array.rows", "from --set"), m__m=GOOD_M)
case("set-through-value", SET + "l2.size_bytes.x=1", 2, ("'l2.size_bytes' is a value",), m__m=GOOD_M)
case("set-zero-pes", SET + "pe_array.count=0", 2, ("pe_array.count",), m__m=GOOD_M)
case("set-inf", SET + "dram.bandwidth_bytes_per_cycle=.inf", 2, ("dram.bandwidth_bytes_per_cycle", "finite"),
     m__m=GOOD_M)
case("set-empty-key", SET + "=5", 2, ("--set", "expected key=value"), m__m=GOOD_M)

# ----- network YAML -----------------------------------------------------------------------------
FC = "{name: fc, type: FC, K: 4, C: 4}"
case("net-missing", NET, 2, ("n.yaml", "not found"))
case("net-empty", NET, 2, ("n.yaml", "empty file"), n__yaml="")
case("net-list", NET, 2, ("n.yaml", "got a list"), n__yaml="- 1\n")
case("net-unknown-top", NET, 2, ("n.yaml", "unknown top-level key"), n__yaml=network(FC) + "extra: 1\n")
case("net-duplicate-key", NET, 2, ("n.yaml:2:", "key 'name' given twice"), n__yaml="name: a\nname: b\n" + network(
    FC, head=""))
case("net-layers-not-list", NET, 2, ("n.yaml:2:", "field 'layers'"), n__yaml="name: n\nlayers: 5\n")
case("net-layers-empty", NET, 2, ("n.yaml:2:", "non-empty list"), n__yaml="name: n\nlayers: []\n")
case("net-layer-scalar", NET, 2, ("n.yaml:3:", "layer 0", "expected a mapping"), n__yaml=network("5"))
case("net-no-name", NET, 2, ("n.yaml:3:", "missing field 'name'"), n__yaml=network("{type: FC, K: 4, C: 4}"))
case("net-no-type", NET, 2, ("n.yaml:3:", "missing field 'type'"), n__yaml=network("{name: a, K: 4, C: 4}"))
case("net-unknown-type", NET, 2, ("n.yaml:3:", "unknown operator 'POOL'"), n__yaml=network(
    "{name: a, type: POOL, K: 4, C: 4}"))
case("net-missing-dim", NET, 2, ("n.yaml:3:", "missing field 'C'"), n__yaml=network("{name: a, type: FC, K: 4}"))
case("net-dim-1e20", NET, 2, ("n.yaml:3:", "field 'K'", "'1e20'"), n__yaml=network("{name: a, type: FC, K: 1e20, C: 4}"))
case("net-dim-float", NET, 2, ("n.yaml:3:", "field 'K'", "1.5"), n__yaml=network("{name: a, type: FC, K: 1.5, C: 4}"))
case("net-dim-negative", NET, 2, ("n.yaml:3:", "field 'K'", "-4"), n__yaml=network("{name: a, type: FC, K: -4, C: 4}"))
case("net-dim-bool", NET, 2, ("n.yaml:3:", "field 'K'", "True"), n__yaml=network("{name: a, type: FC, K: true, C: 4}"))
case("net-dim-5000-digits", NET, 2, ("n.yaml:3:", "5000 digits"), n__yaml=network(
    "{name: a, type: FC, K: " + "9" * 5000 + ", C: 4}"))
case("net-k-2-63", NET, 2, ("n.yaml layer 0 (a)", "too large to count exactly"), n__yaml=network(
    f"{{name: a, type: FC, K: {2**63 - 1}, C: 4}}"))
case("net-k-1e17", NET, 2, ("n.yaml layer 0 (a)", "too large to count exactly", "5.760e+19 MACs"), n__yaml=network(
    "{name: a, type: FC, K: 100000000000000000, C: 576}"))
# 6.4e11 MACs in about a second: repeated periods of steps are warped over exactly
case("net-huge-legal", NET, 0, (), n__yaml=network(
    "{name: a, type: FC, N: 64, K: 100000, C: 100000}"))
case("net-duplicate-layer", NET, 2, ("n.yaml:4:", "duplicate layer name"), n__yaml=network(FC, FC))
case("net-unknown-field", NET, 2, ("n.yaml:3:", "unknown field 'Q'"), n__yaml=network("{name: a, type: FC, K: 4, C: 4, Q: 1}"))
case("net-gemm-stride", NET, 2, ("n.yaml:3:", "no stride"), n__yaml=network(
    "{name: a, type: GEMM, M: 4, N: 4, K: 4, stride: 2}"))
case("net-stride-both", NET, 2, ("n.yaml:3:", "either 'stride'"), n__yaml=network(
    "{name: a, type: CONV2D, K: 4, C: 4, R: 3, S: 3, Y: 8, X: 8, stride: 2, stride_y: 2}"))
case("net-pwconv-r3", NET, 2, ("n.yaml:3:", "PWCONV"), n__yaml=network(
    "{name: a, type: PWCONV, K: 4, C: 4, R: 3, Y: 8, X: 8}"))
case("net-filter-over-input", NET, 2, ("n.yaml", "larger than input"), n__yaml=network(
    "{name: a, type: CONV2D, K: 4, C: 4, R: 9, S: 3, Y: 8, X: 8}"))
case("net-not-utf8", NET, 2, ("n.yaml:1:", "not UTF-8"), n__yaml=b"name: n\xe9t\n")
case("net-alias-bomb", NET, 2, ("n.yaml:", "alias bomb"), n__yaml=(
    "name: n\nlayers:\n  - name: a\n    type: FC\n    X: &x [1, 1, 1, 1, 1, 1, 1, 1, 1]\n"
    + "".join(f"    {d}: &{d.lower()} [" + ", ".join([f"*{p.lower()}"] * 9) + "]\n"
              for p, d in zip("XYSRCK", "YSRCKN"))))
# below the alias limit (9**5 values): loads, and the message shows the value cut short
case("net-alias-bomb-small", NET, 2, ("n.yaml:", "layer 0 (a)", "..."), n__yaml=(
    "name: n\nlayers:\n  - name: a\n    type: FC\n    X: &x [1, 1, 1, 1, 1, 1, 1, 1, 1]\n"
    + "".join(f"    {d}: &{d.lower()} [" + ", ".join([f"*{p.lower()}"] * 9) + "]\n"
              for p, d in zip("XYSR", "YSRC")) + "    K: 4\n"))
case("net-python-tag", NET, 2, ("n.yaml:1:", "constructor"), n__yaml="name: !!python/name:os.system\n")
case("net-huge-name", NET, 2, ("n.yaml:3:", "..."), n__yaml=network("{name: [" + "x, " * 20000 + "x], type: FC}"))
case("net-unknown-bundled", "simulate --hw eyeriss_like --network nosuchnet --style nvdla_like", 2,
     ("nosuchnet", "bundled networks are"))
case("net-no-such-layer", "simulate --hw eyeriss_like --network marvel15 --style nvdla_like --layer nope", 2,
     ("marvel15", "no layer 'nope'"))
case("net-directory", NET, 2, ("n.yaml", "is a directory"), n__yaml=DIR)

# ----- SCALE-Sim config -------------------------------------------------------------------------
case("cfg-missing", SCS, 2, ("s.cfg", "SCALE-Sim config not found"), t__csv=GOOD_TOPO)
case("cfg-not-utf8", SCS, 2, ("s.cfg:1:", "not UTF-8"), s__cfg=b"[general]\xff\n", t__csv=GOOD_TOPO)
case("cfg-no-section", SCS, 2, ("s.cfg:1:", "section header"), s__cfg="ArrayHeight: 32\n", t__csv=GOOD_TOPO)
case("cfg-duplicate-key", SCS, 2, ("s.cfg:", "given twice"), s__cfg=cfg("ArrayHeight:    32\n",
                                                                       "ArrayHeight: 32\nArrayHeight: 16\n"),
     t__csv=GOOD_TOPO)
case("cfg-duplicate-section", SCS, 2, ("s.cfg:", "section [layout] is given twice"), s__cfg=SCALESIM_CFG + "[layout]\n",
     t__csv=GOOD_TOPO)
case("cfg-missing-height", SCS, 2, ("s.cfg", "ArrayHeight"), s__cfg=cfg("ArrayHeight:    32\n", ""), t__csv=GOOD_TOPO)
case("cfg-height-text", SCS, 2, ("s.cfg:", "ArrayHeight", "positive integer"), s__cfg=cfg(
    "ArrayHeight:    32", "ArrayHeight: tall"), t__csv=GOOD_TOPO)
case("cfg-height-zero", SCS, 2, ("s.cfg:", "ArrayHeight", "positive integer"), s__cfg=cfg(
    "ArrayHeight:    32", "ArrayHeight: 0"), t__csv=GOOD_TOPO)
# a 10^8-row array: steps are folds, and memory follows steps, not rows
case("cfg-height-huge", SCS, 0, (), s__cfg=cfg("ArrayHeight:    32", "ArrayHeight: 100000000"),
     t__csv=GOOD_TOPO)
case("cfg-bad-dataflow", SCS, 2, ("s.cfg:", "Dataflow"), s__cfg=cfg("Dataflow : ws", "Dataflow : xy"), t__csv=GOOD_TOPO)
case("cfg-bad-interface", SCS, 2, ("s.cfg:", "InterfaceBandwidth"), s__cfg=cfg("InterfaceBandwidth: CALC",
                                                                             "InterfaceBandwidth: FAST"),
     t__csv=GOOD_TOPO)
case("cfg-bad-bandwidth", SCS, 2, ("s.cfg:", "Bandwidth"), s__cfg=cfg("Bandwidth : 10", "Bandwidth : ten"),
     t__csv=GOOD_TOPO)
case("cfg-sparsity", SCS, 2, ("s.cfg:", "sparsity"), s__cfg=cfg("SparsitySupport : false", "SparsitySupport : true"),
     t__csv=GOOD_TOPO)
case("cfg-unparsable-line", SCS, 2, ("s.cfg:", "cannot parse"), s__cfg=cfg("[layout]\n", "[layout]\n=== nonsense\n"),
     t__csv=GOOD_TOPO)
case("cfg-empty", SCS, 2, ("s.cfg",), s__cfg="", t__csv=GOOD_TOPO)
case("cfg-directory", SCS, 2, ("s.cfg", "is a directory"), s__cfg=DIR, t__csv=GOOD_TOPO)

# ----- SCALE-Sim topology -----------------------------------------------------------------------
case("topo-missing", SCS, 2, ("t.csv", "not found"), s__cfg=SCALESIM_CFG)
case("topo-empty", SCS, 2, ("t.csv",), s__cfg=SCALESIM_CFG, t__csv="")
case("topo-header-only", SCS, 2, ("t.csv",), s__cfg=SCALESIM_CFG, t__csv="Layer, M, N, K,\n")
case("topo-unknown-header", SCS, 2, ("t.csv:1:",), s__cfg=SCALESIM_CFG, t__csv="Name, A, B\nx, 1, 2\n")
case("topo-short-row", SCS, 2, ("t.csv:2:",), s__cfg=SCALESIM_CFG, t__csv="Layer, M, N, K,\nfc1, 64, 128,\n")
case("topo-text-value", SCS, 2, ("t.csv:2:",), s__cfg=SCALESIM_CFG, t__csv="Layer, M, N, K,\nfc1, 64, many, 2,\n")
case("topo-zero", SCS, 2, ("t.csv:2:",), s__cfg=SCALESIM_CFG, t__csv="Layer, M, N, K,\nfc1, 0, 1, 2,\n")
case("topo-negative", SCS, 2, ("t.csv:2:",), s__cfg=SCALESIM_CFG, t__csv="Layer, M, N, K,\nfc1, -4, 1, 2,\n")
case("topo-filter-over-ifmap", SCS, 2, ("t.csv:2:",), s__cfg=SCALESIM_CFG, t__csv=(
    "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,\n"
    "c, 4, 4, 9, 3, 3, 8, 1,\n"))
case("topo-not-utf8", SCS, 2, ("t.csv:2:", "not UTF-8"), s__cfg=SCALESIM_CFG, t__csv=b"Layer, M, N, K,\n\xff, 1, 2, 3,\n")
case("topo-1e8-gemm", SCS, 2, ("too large to count exactly",), s__cfg=SCALESIM_CFG,
     t__csv="Layer, M, N, K,\nbig, 100000000, 100000000, 100000000,\n")
case("topo-over-budget", SCS + " --max-steps 1000", 3, ("t.csv:2", "over budget", "4,032 steps", "--max-steps 4032"),
     s__cfg=SCALESIM_CFG, t__csv="Layer, M, N, K,\nbig, 2000, 2000, 1000,\n")
case("topo-directory", SCS, 2, ("t.csv", "is a directory"), s__cfg=SCALESIM_CFG, t__csv=DIR)

# ----- MAESTRO result CSV (compare --maestro-csv) -----------------------------------------------
case("csv-missing", CMP, 2, ("r.csv", "MAESTRO CSV not found"), m__m=GOOD_M)
case("csv-empty", CMP, 2, ("r.csv", "empty file"), m__m=GOOD_M, r__csv="")
case("csv-missing-columns", CMP, 2, ("r.csv:1:", "missing column"), m__m=GOOD_M, r__csv="a, b\n1, 2\n")
case("csv-row-length", CMP, 2, ("r.csv:2:", "expected 5 values"), m__m=GOOD_M, r__csv=CSV_HEAD + "tiny, conv1, 1\n")
case("csv-not-number", CMP, 2, ("r.csv:2:", "Runtime (Cycles)", "expected a number"), m__m=GOOD_M,
     r__csv=CSV_HEAD + "tiny, conv1, 256, many, 10\n")
case("csv-layer-twice", CMP, 2, ("r.csv:3:", "appears twice"), m__m=GOOD_M,
     r__csv=CSV_HEAD + "tiny, conv1, 256, 10, 10\ntiny, conv1, 256, 10, 10\n")
case("csv-layer-absent", CMP, 2, ("r.csv", "no row for layer(s) conv1"), m__m=GOOD_M,
     r__csv=CSV_HEAD + "tiny, other, 256, 10, 10\n")
case("csv-not-utf8", CMP, 2, ("r.csv:2:", "not UTF-8"), m__m=GOOD_M, r__csv=CSV_HEAD.encode() + b"\xff\n")
case("csv-numbered-layers", CMP, 2, ("r.csv", "numbers its layers"), m__m=GOOD_M, r__csv=CSV_HEAD + "tiny, 0, 256, 10, 10\n")
case("csv-directory", CMP, 2, ("r.csv", "is a directory"), m__m=GOOD_M, r__csv=DIR)
case("csv-scalesim-report-missing", "compare --hw eyeriss_like --mapping {d}/m.m --scalesim-report {d}/rep.csv", 2,
     ("rep.csv",), m__m=GOOD_M)

# ----- command-line misuse ----------------------------------------------------------------------
case("cli-no-hw", "simulate --mapping {d}/m.m", 2, ("missing option --hw",), m__m=GOOD_M)
case("cli-unknown-option", SIM + " --bogus", 2, ("No such option '--bogus'",), m__m=GOOD_M)
case("cli-unknown-command", "simulat --hw x", 2, ("No such command 'simulat'",))
case("cli-bad-mode", SIM + " --mode bogus", 2, ("--mode", "bogus"), m__m=GOOD_M)
case("cli-bad-style", "simulate --hw eyeriss_like --network marvel15 --style bogus", 2, ("--style", "bogus"))
case("cli-network-no-style", "simulate --hw eyeriss_like --network marvel15", 2, ("--network needs --style",))
case("cli-mapping-and-network", SIM + " --network marvel15 --style nvdla_like", 2, ("exactly one of",), m__m=GOOD_M)
case("cli-style-with-mapping", SIM + " --style nvdla_like", 2, ("--style applies to --network only",), m__m=GOOD_M)
case("cli-layer-twice", SIM + " --layer a --layer b", 2, ("--layer", "given 2 times"), m__m=GOOD_M)
case("cli-seed-negative", SIM + " --functional --seed -1", 2, ("--seed", "-1"), m__m=GOOD_M)
case("cli-seed-huge", SIM + " --functional --seed 99999999999999999999", 2, ("--seed",), m__m=GOOD_M)
case("cli-unchecked-alone", SIM + " --unchecked", 2, ("--unchecked needs --functional",), m__m=GOOD_M)
case("cli-functional-trace", SIM + " --functional --trace {d}/t", 2, ("cannot be combined",), m__m=GOOD_M)
case("cli-max-steps-zero", SIM + " --max-steps 0", 2, ("--max-steps",), m__m=GOOD_M)
case("cli-max-memory-text", SIM + " --max-memory lots", 2, ("--max-memory", "expected a size"), m__m=GOOD_M)
case("cli-bad-trace-format", SIM + " --trace {d}/t --trace-format bogus", 2, ("bogus",), m__m=GOOD_M)
case("cli-bad-trace-components", SIM + " --trace {d}/t --trace-components bogus", 2, ("bogus",), m__m=GOOD_M)
case("cli-bad-dtype", SIM + " --functional --dtype int3", 2, ("--dtype", "int3"), m__m=GOOD_M)
case("cli-scalesim-with-hw", SCS + " --hw eyeriss_like", 2, ("--hw cannot be combined",), s__cfg=SCALESIM_CFG,
     t__csv=GOOD_TOPO)
case("cli-scalesim-half", "simulate --scalesim-config {d}/s.cfg", 2, ("go together",), s__cfg=SCALESIM_CFG)
case("cli-maestro-model-realistic", "analyze --hw eyeriss_like --mapping {d}/m.m --model maestro --mode realistic", 2,
     ("--model maestro",), m__m=GOOD_M)
case("cli-compare-bad-model", "compare --hw eyeriss_like --mapping {d}/m.m --model oracle", 2, ("--model", "oracle"),
     m__m=GOOD_M)
case("cli-plot-bad-window", "plot {d} --window 5", 2, ("--window 5",))
case("cli-plot-not-a-trace", "plot {d}", 2, ("{d}",))
case("cli-plot-bins-zero", "plot {d} --bins 0", 2, ("--bins",))
case("cli-hardware-bad-set", "hardware --hw eyeriss_like --set nope", 2, ("--set", "expected key=value"))
case("cli-functional-too-large", "simulate --hw eyeriss_like --network marvel15 --style nvdla_like --layer L6_CONV1 "
     "--functional --max-memory 64M", 3, ("L6_CONV1", "over budget", "of memory", "--max-memory"))
case("cli-search-bad-workers", "search --hw eyeriss_like --network marvel15 --out {d}/s --workers 0", 2, ("--workers",))
case("cli-analyze-over-memory", "analyze --hw eyeriss_like --set pe_array.count=1000000000 --mapping {d}/m.m "
     "--max-memory 64M", 3, ("m.m", "over budget", "PE classes", "--max-memory"), m__m=GOOD_M)
case("cli-compare-over-budget", "compare --hw eyeriss_like --network marvel15 --style nvdla_like --layer L6_CONV1 "
     "--max-steps 10", 3, ("L6_CONV1", "over budget", "--max-steps"))

# ----- output paths -----------------------------------------------------------------------------
case("out-json-exists", SIM + " --json {d}/o.json", 2, ("--json", "o.json", "already exists"), m__m=GOOD_M,
     o__json="[]")
case("out-json-directory", SIM + " --json {d}/o.json", 2, ("o.json",), m__m=GOOD_M, o__json=DIR)
case("out-json-missing-dir", SIM + " --json {d}/no/o.json", 2, ("o.json", "does not exist"), m__m=GOOD_M)
case("out-json-unwritable", SIM + " --json /sys/o.json", 2, ("--json /sys/o.json", "cannot write in /sys"), m__m=GOOD_M)
case("out-csv-proc", "analyze --hw eyeriss_like --mapping {d}/m.m --csv /proc/o.csv", 2, ("--csv /proc/o.csv",),
     m__m=GOOD_M)
case("out-same-path", SIM + " --json {d}/o --csv {d}/o", 2, ("--json and --csv name the same path",), m__m=GOOD_M)
case("out-same-path-dotted", SIM + " --json {d}/o --csv {d}/./o", 2, ("name the same path",), m__m=GOOD_M)
case("out-trace-file", SIM + " --trace {d}/t", 2, ("--trace", "t"), m__m=GOOD_M, t="x")
case("out-trace-not-empty", SIM + " --trace {d}/t", 2, ("--trace", "not empty"), m__m=GOOD_M,
     **{"t/00_conv1/meta.json": "{}"})
case("out-trace-foreign", SIM + " --trace {d} --force", 2, ("not accelsim layer traces",), m__m=GOOD_M)
case("out-trace-missing-parent", SIM + " --trace {d}/no/t", 2, ("--trace", "does not exist"), m__m=GOOD_M)
case("out-mapping-exists", "mapping --hw eyeriss_like --network marvel15 --style nvdla_like -o {d}/o.m", 2,
     ("--out ", "already exists"), o__m="x")
case("out-mapping-missing-dir", "mapping --hw eyeriss_like --network marvel15 --style nvdla_like -o {d}/no/o.m", 2,
     ("--out ", "does not exist"))
case("out-compare-json-dir", CMP.replace(" --maestro-csv {d}/r.csv", "") + " --json {d}/o", 2, ("o",), m__m=GOOD_M, o=DIR)
case("out-lint-json-exists", "lint --hw eyeriss_like --mapping {d}/m.m --json {d}/o.json", 2, ("already exists",),
     m__m=GOOD_M, o__json="{}")
case("out-scalesim-json-unwritable", SCS + " --json /sys/o.json", 2, ("cannot write in /sys",), s__cfg=SCALESIM_CFG,
     t__csv=GOOD_TOPO)
case("out-validate-file", "validate --out {d}/f", 2, ("--out", "is a file"), f="x")

# ----- issue 22: the surfaces of the last round ---------------------------------------------------
GOOD_LN = (REPO / "examples" / "timeloop_style.yaml").read_text(encoding="utf-8")
LN = "simulate --hw eyeriss_like --mapping {d}/l.yaml"


def bomb(levels: int = 9) -> str:
    """A YAML flow list holding ``levels`` lists of nine aliases of the one before: 9**levels
    values if expanded, a few hundred bytes written."""
    items = ["&a0 [x, x, x, x, x, x, x, x, x]"] + [f"&a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]"
                                                  for i in range(1, levels)]
    return "[" + ", ".join(items) + "]"


def loopnest(field: str = "permutation", value: str = "C") -> str:
    """A one-layer loop-nest file (an FC of K = C = 4: K over four PEs, C in one PE's tile) whose
    L1 entry (line 4) has ``field: value``."""
    factors = "" if field == "factors" else "factors: C=4, "
    return ("problem: {name: fc, type: FC, K: 4, C: 4}\nmapping:\n"
            "  - {target: L2, type: spatial, factors: K=4}\n"
            f"  - {{target: L1, type: temporal, {factors}{field}: {value}}}\n")


# alias bombs in every field a loop-nest file formats: refused at load, at once
for _field in ("factors", "target", "type", "permutation", "fanout"):
    case(f"ln-alias-bomb-{_field}", LN, 2, ("l.yaml:", "alias bomb"), l__yaml=loopnest(_field, bomb()))
case("ln-alias-bomb-name", LN, 2, ("l.yaml:", "alias bomb"),
     l__yaml=f"name: {bomb()}\n" + loopnest())
case("ln-alias-bomb-timeloop-name", LN, 2, ("l.yaml:", "alias bomb"),
     l__yaml=GOOD_LN.replace("  name: conv3x3", f"  name: {bomb()}"))
case("ln-recursive-alias", LN, 2, ("l.yaml:", "recursive"), l__yaml=loopnest("fanout", "&r [1, *r]"))
case("ln-bomb-below-limit-factors", LN, 2, ("l.yaml:4:", "field 'factors'", "..."),
     l__yaml=loopnest("factors", bomb(6)))
case("ln-name-list", LN, 2, ("l.yaml:1:", "field 'name'", "expected the network's name"),
     l__yaml="name: [a, b]\n" + loopnest())
# a loop nest of one L1 entry (12 of 65 real Timeloop files): one step of the whole layer
case("ln-only-l1", LN, 0, (), l__yaml="problem: {name: fc, type: FC, K: 4, C: 4}\nmapping:\n"
     "  - {target: L1, type: temporal, factors: K=4 C=4}\n")
case("ln-timeloop-shape-string", LN, 0, (), l__yaml=GOOD_LN.replace("  name: conv3x3\n", "  shape: cnn-layer\n"))
case("ln-factor-float", LN, 2, ("l.yaml:3:", "'K'=2.9", "not a positive integer"),
     l__yaml=loopnest().replace("factors: K=4", "factors: {K: 2.9}"))
case("ln-factor-float-word", LN, 2, ("l.yaml:3:", "'K'='2.9'", "not a positive integer"),
     l__yaml=loopnest().replace("factors: K=4", "factors: K=2.9"))
case("ln-timeloop-float", LN, 2, ("l.yaml:7:", "M is 16.7", "positive integer"),
     l__yaml=GOOD_LN.replace("M: 32,", "M: 16.7,"))
case("ln-timeloop-missing", LN, 2, ("l.yaml:5:", "P is missing"), l__yaml=GOOD_LN.replace(" P: 14,", ""))
case("ln-timeloop-huge-string", LN, 2, ("l.yaml:7:", "C is", "..."),
     l__yaml=GOOD_LN.replace("C: 32,", f"C: '{'9' * 200_000}',"))

# ----- ONNX models (built with onnx.helper at import time; skipped without onnx) ----------------
try:
    import onnx as _onnx
    from onnx import TensorProto as _TP
    from onnx import helper as _helper
except ImportError:  # pragma: no cover - the onnx extra is not installed
    _onnx = None


def onnx_model(op: str, inputs: list[tuple[str, list[int]]], weights: list[tuple[str, list[int]]] = (),
               opset: int = 17, **attrs) -> bytes:
    """The bytes of a one-node model: graph inputs, weight initializers (zeros), node ``op``."""
    assert _onnx is not None
    graph = _helper.make_graph(
        [_helper.make_node(op, [n for n, _ in inputs] + [n for n, _ in weights], ["y"], name="node", **attrs)],
        "g", [_helper.make_tensor_value_info(n, _TP.FLOAT, s) for n, s in inputs],
        [_helper.make_tensor_value_info("y", _TP.FLOAT, None)],
        [_helper.make_tensor(n, _TP.FLOAT, s, [0.0] * (1 if not s else __import__("math").prod(s))) for n, s in weights])
    model = _helper.make_model(graph, opset_imports=[_helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model.SerializeToString()


IMP = "import-onnx {d}/x.onnx"
if _onnx is not None:
    case("onnx-conv-no-weight", IMP, 2, ("x.onnx", "node 'node' (Conv) has 1 input(s)", "weight"),
         x__onnx=onnx_model("Conv", [("x", [1, 3, 8, 8])]))
    case("onnx-batch-1e20", IMP + " --batch 100000000000000000000", 2, ("x.onnx", "batch size", "9,007,199,254,740,992"),
         x__onnx=onnx_model("Conv", [("x", [1, 3, 8, 8])], [("w", [4, 3, 3, 3])]))
    case("onnx-fifo", IMP, 2, ("x.onnx", "not a regular file"), x__onnx=FIFO)
    case("onnx-device", "import-onnx /dev/zero", 2, ("/dev/zero", "not a regular file"))
    case("onnx-directory", IMP, 2, ("x.onnx", "is a directory"), x__onnx=DIR)
    case("onnx-opset-99", IMP, 2, ("x.onnx", "opset 99"),
         x__onnx=onnx_model("Conv", [("x", [1, 3, 8, 8])], [("w", [4, 3, 3, 3])], opset=99))
    case("onnx-conv-transpose", IMP, 0, (), x__onnx=onnx_model("ConvTranspose", [("x", [1, 3, 8, 8])],
                                                              [("w", [3, 4, 3, 3])], strides=[2, 2]))
    case("onnx-einsum", IMP, 2, ("x.onnx", "node 'node' (Einsum) has multiply-accumulates accelsim does not import"),
         x__onnx=onnx_model("Einsum", [("a", [2, 3]), ("b", [3, 4])], equation="ij,jk->ik"))
    case("onnx-conv-transpose-padded", IMP, 2, ("x.onnx", "(ConvTranspose) has padding"),
         x__onnx=onnx_model("ConvTranspose", [("x", [1, 3, 8, 8])], [("w", [3, 4, 3, 3])], pads=[1, 1, 1, 1]))

# ----- accelsim plot on damaged traces (the golden trace of a small layer, then one thing broken) --
GOLDEN_TRACE = REPO / "traces" / "golden" / "00_conv"
TRACE_FILES = {name: (GOLDEN_TRACE / name).read_text(encoding="utf-8") for name in ("meta.json", "events.csv",
                                                                                       "counters.csv")}
PLOT = "plot {d}/t"


def trace(**changed: str | bytes) -> dict[str, str | bytes]:
    """The golden layer trace's files under ``t/`` with ``changed`` ones replaced (``events__csv``)."""
    files: dict[str, str | bytes] = {f"t__{name.replace('.', '__')}": text for name, text in TRACE_FILES.items()}
    files.update({f"t__{k}": v for k, v in changed.items()})
    return {k.replace("t__", "t/", 1): v for k, v in files.items()}


case("plot-corrupt-parquet", PLOT, 2, ("events.parquet", "not a readable Parquet file"), **trace(events__parquet=b"PAR1 not a parquet file PAR1"))
case("plot-empty-events-csv", PLOT, 2, ("events.csv", "empty file"), **trace(events__csv=""))
case("plot-text-in-integer-column", PLOT, 2, ("events.csv:3:", "expected an integer", "'soon'"), **trace(
    events__csv="\n".join(line if i != 2 else ",".join(["soon" if j == 2 else c for j, c in enumerate(line.split(","))])
                          for i, line in enumerate(TRACE_FILES["events.csv"].split("\n")))))
case("plot-short-row", PLOT, 2, ("events.csv:2:", "expected"), **trace(
    events__csv=TRACE_FILES["events.csv"].replace("\n", "\n1,2\n", 1)))
case("plot-meta-no-num-pes", PLOT, 2, ("meta.json", "'num_pes'"), **trace(
    meta__json=TRACE_FILES["meta.json"].replace('"num_pes": 4,', "")))
case("plot-meta-cycles-1e30", PLOT, 2, ("meta.json", "'cycles'", "2^53"), **trace(
    meta__json=re.sub(r'"cycles": \d+,', '"cycles": 1000000000000000000000000000000,', TRACE_FILES["meta.json"],
                      count=1)))  # whatever the golden trace's cycles are
case("plot-meta-list", PLOT, 2, ("meta.json", "JSON object"), **trace(meta__json="[]"))

# ----- search: output directory, saved settings, parts, scheduler -------------------------------
SRCH = ("search --hw eyeriss_like --network marvel15 --layer L3_Bottleneck4_3_2 --budget 5 --no-progress "
        "--out {d}/s")


def saved_settings() -> str:
    from accelsim.search.session import SearchSettings  # noqa: PLC0415 - only for these cases

    return json.dumps(SearchSettings(hw="eyeriss_like", network="marvel15", layer="L3_Bottleneck4_3_2",
                                     budget=5).to_dict())


for _name, _text in (("list", "[]"), ("null", "null"), ("string", '"x"')):
    case(f"search-settings-{_name}", SRCH + " --resume", 2, ("search.json", "expected the settings a search saved"),
         **{"s/search.json": _text})
case("search-part-zero-bytes", SRCH + " --resume", 2, ("part-000000.parquet", "not a whole part", "remove it"),
     **{"s/search.json": saved_settings(), "s/candidates.parquet/part-000000.parquet": b""})
case("search-part-corrupt", SRCH + " --resume", 2, ("part-000001.parquet", "not a whole part"),
     **{"s/search.json": saved_settings(), "s/candidates.parquet/part-000001.parquet": b"PAR1xxxxPAR1"})
case("search-out-empty", tuple(SRCH.split()[:-1]) + ("",), 2, ("--out is empty",))
case("search-out-under-a-file", SRCH.replace("{d}/s", "{d}/f/no/s"), 2, ("--out", "f is not a directory"), f="x")
case("search-out-unwritable", SRCH.replace("{d}/s", "/sys/s"), 2, ("--out /sys/s", "cannot write in /sys"))
case("search-out-file", SRCH, 2, ("--out", "is a file"), s="x")
case("search-scheduler-ucx", SRCH + " --scheduler ucx://127.0.0.1:1", 2, ("--scheduler ucx://", "tcp://HOST:PORT"))
case("validate-out-empty", ("validate", "--quick", "--out", ""), 2, ("--out is empty",))
case("validate-out-under-a-file", "validate --quick --out {d}/f/no/v", 2, ("--out", "f is not a directory"), f="x")
case("validate-out-unwritable", "validate --quick --out /sys/v", 2, ("--out /sys/v", "cannot write in /sys"))

# ----- MAESTRO result CSVs (compare --maestro-csv) ------------------------------------------------
for _name, _value in (("nan", "nan"), ("inf", "inf"), ("1e400", "1e400"), ("negative", "-5")):
    case(f"csv-runtime-{_name}", CMP, 2, ("r.csv:2:", "Runtime (Cycles)", "a number of at least 0"), m__m=GOOD_M,
         r__csv=CSV_HEAD + f"tiny, conv1, 256, {_value}, 10\n")
case("csv-macs-nan", CMP, 2, ("r.csv:2:", "Num MACs", "a number of at least 0"), m__m=GOOD_M,
     r__csv=CSV_HEAD + "tiny, conv1, 256, 10, nan\n")
case("csv-negative-count", CMP, 2, ("r.csv:2:", "input l1 read", "at least 0"), m__m=GOOD_M,
     r__csv=CSV_HEAD.rstrip("\n") + ", input l1 read\ntiny, conv1, 256, 10, 10, -3\n")
case("csv-200000-char-field", CMP, 2, ("r.csv:2:", "cannot read this row as CSV"), m__m=GOOD_M,
     r__csv=CSV_HEAD + "tiny, " + "x" * 200_000 + ", 256, 10, 10\n")
OURS_HEAD = "Neural Network Name,Layer Number,Runtime (Cycles),Num MACs,Status,accelsim Version\n"
case("csv-ours-no-status", CMP, 2, ("r.csv:1:", "without the column 'Status'"), m__m=GOOD_M,
     r__csv=OURS_HEAD.replace(",Status", "") + "tiny,conv1,10,10,0.1.0\n")
case("csv-ours-short-row", CMP, 2, ("r.csv:2:", "Num MACs", "at least 0"), m__m=GOOD_M,
     r__csv=OURS_HEAD.replace("Num MACs,Status", "Status,Num MACs") + "tiny,conv1,10,complete\n")
case("csv-ours-long-row", CMP, 2, ("r.csv:2:", "at most 6 values"), m__m=GOOD_M,
     r__csv=OURS_HEAD + "tiny,conv1,10,10,complete,0.1.0,extra\n")

# a name holding a newline: every message shows it escaped, never as a line of its own
case("net-name-newline", NET, 2, ("n.yaml:4:", "layer 1 (x\\nerror: y)", "duplicate layer name"),
     n__yaml=network('{name: "x\\nerror: y", type: FC, K: 4, C: 4}', '{name: "x\\nerror: y", type: FC, K: 4, C: 4}'))
case("net-name-carriage-return", NET + " --layer nope", 2, ("no layer 'nope'", "x\\rerror: y"),
     n__yaml=network('{name: "x\\rerror: y", type: FC, K: 4, C: 4}'))
# ----- budgets that hold (issue 22) --------------------------------------------------------------
case("search-budget-1e12", SRCH.replace("--budget 5", "--budget 1000000000000"), 3,
     ("--budget 1,000,000,000,000", "keeps every scored candidate in memory", "lower --budget"))
case("network-onnx-over-64mib", "analyze --hw eyeriss_like --network {d}/big.onnx --style nvdla_like", 2,
     ("big.onnx", "--network reads models of at most"), big__onnx=SPARSE_65M)
case("import-onnx-over-memory", "import-onnx {d}/big.onnx --max-memory 100M", 3,
     ("big.onnx", "5x its size", "--max-memory"), big__onnx=SPARSE_65M)
case("simulate-per-pe-over-an-hour",
     "simulate --hw tpu_like_32x32 --network dmazerunner6 --style nvdla_like --layer conv1 --per-pe", 3,
     ("bundled network dmazerunner6 layer 0 (conv1)", "the most a layer may take without --max-seconds"))
case("cli-max-seconds-zero", "simulate --hw eyeriss_like --network marvel15 --style nvdla_like --max-seconds 0", 2,
     ("--max-seconds",))
