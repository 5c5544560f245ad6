"""Regenerate the Timeloop reference set: copy each (architecture, problem, mapping) triple, run timeloop-model.

Usage (from the repository root)::

    python validation/timeloop/run_timeloop.py --build TIMELOOP_BUILD_DIR \
        --exercises-head DIR --exercises-2022 DIR --timeloop DIR --timeloop-python DIR --gamma DIR \
        validation/timeloop

``TIMELOOP_BUILD_DIR`` holds ``timeloop-model`` and ``libtimeloop-mapper.so`` (v3.0.3); each other
directory is a checkout of one source repository at the commit ``SOURCES`` names. For every triple
the script copies the files, as the repository has them, into ``triples/<triple_id>/``, prepares
timeloop-model's input (only where v3.0.3 cannot read the file as written: see ``adapt_v4_spelling``),
runs timeloop-model in a temporary directory and parses its ``timeloop-model.stats.txt`` into
``references.csv`` (one row per triple) and ``accesses.csv`` (one row per triple, storage level and
tensor). Needs PyYAML. Tests never run it.
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass

import yaml

# source key: (repository, commit, command-line option giving its checkout)
SOURCES = {
    "2024": ("Accelergy-Project/timeloop-accelergy-exercises", "2d5510807128e9bd5f1cad0705cdf2ec4612fd4e",
             "exercises_head"),
    "2022": ("Accelergy-Project/timeloop-accelergy-exercises", "778460fb63ce6c3724b6fd6b5a0482bc5d8c2a25",
             "exercises_2022"),
    "timeloop": ("NVlabs/timeloop", "4cf6d4cd043bc2a5d2eb02afa9063d7117a4dc11", "timeloop"),
    "timeloop-python": ("Accelergy-Project/timeloop-python", "b8aaf2cde220df7c2ba9d051984fc360f20b57b2",
                        "timeloop_python"),
    "gamma": ("maestro-project/gamma-timeloop", "48a2cf905c04fa2a1b59328fc981977faabd53e5", "gamma"),
}

ISPASS_HEAD = "workspace/tutorial_exercises/01_accelergy_timeloop_2020_ispass"
ISPASS_OLD = "workspace/exercises/2020.ispass/timeloop"
DESIGNS_HEAD = "workspace/example_designs/example_designs"
ISCA_OLD = "workspace/exercises/2021.isca/designs"


@dataclass(frozen=True)
class Triple:
    """One timeloop-model run: the files given to it, in order, and how they were prepared."""

    triple_id: str
    era: str  # a SOURCES key: "2024" / "2022" (the exercises' two commits) or another repository
    files: tuple[str, ...]  # repository paths, in timeloop-model's argument order
    frontend_dump: bool = False  # files[0] is the 2024 front end's parsed-processed-input.yaml
    v4_spelling: bool = False  # the files use the v4 spelling (data_spaces, read_write): respelled for v3
    reference_stats: str = ""  # the repository's own stats file for this run (Timeloop v4), if any
    user_files: tuple[str, ...] = ()  # the 2024 source files a user writes (not given to v3.0.3)
    note: str = ""


def _head_model(name: str, sub: str, variant: str, arch: str, prob: str, mapping: str) -> Triple:
    """A 2024 model exercise: the front end's dump (mapping included) plus the user's source files."""
    out = f"{ISPASS_HEAD}/timeloop/{sub}/ref-output" + (f"/{variant}" if variant else "")
    base = f"{ISPASS_HEAD}/timeloop/{sub}"
    return Triple(f"ex2024_{name}", "2024", (f"{out}/parsed-processed-input.yaml",), frontend_dump=True,
                  reference_stats=f"{out}/timeloop-model.stats.txt",
                  user_files=(f"{base}/arch/{arch}", f"{base}/prob/{prob}", f"{base}/map/{mapping}"))


def _head_mapped(triple_id: str, out: str, user: tuple[str, ...], note: str = "") -> Triple:
    """A 2024 mapper result: the front end's dump plus the mapping timeloop-mapper wrote; ``user``
    the v4 source files of the run (architecture, problem, for the Sparseloop designs their
    mapping)."""
    return Triple(triple_id, "2024", (f"{out}/parsed-processed-input.yaml", f"{out}/timeloop-mapper.map.yaml"),
                  frontend_dump=True, reference_stats=f"{out}/timeloop-mapper.stats.txt", user_files=user,
                  note=note)


def _design_user_files(design: str, sparseloop: bool) -> tuple[str, ...]:
    """An example design's v4 sources: its architecture, its own problem or the default one."""
    base = f"{DESIGNS_HEAD}/{design}"
    if sparseloop:  # the two mapspace-search designs have no mapping file of their own
        searched = design.endswith(("04.2.2-eyeriss-like-gating-mapspace-search", "04.2.3-eyeriss-like-onchip-compression"))
        return (f"{base}/arch.yaml", f"{base}/problem.yaml") + (() if searched else (f"{base}/mapping.yaml",))
    if design == "sparse_tensor_core_like":
        return (f"{base}/arch.yaml", f"{base}/problem.yaml")
    return (f"{base}/arch.yaml", f"{DESIGNS_HEAD}/_include/default_problem.yaml")


def _old_model(name: str, sub: str, arch: str, prob: str, mapping: str) -> Triple:
    """A 2020 ISPASS model exercise as the repository had it in 2022 (v3.0.3 reads it as written)."""
    base = f"{ISPASS_OLD}/{sub}"
    return Triple(f"ex2022_{name}", "2022", (f"{base}/arch/{arch}", f"{base}/prob/{prob}", f"{base}/map/{mapping}"))


def _old_isca(name: str, sub: str, files: tuple[str, ...], note: str) -> Triple:
    """A 2021 ISCA (Sparseloop) design as the repository had it in 2022."""
    return Triple(f"isca2022_{name}", "2022", tuple(f"{ISCA_OLD}/{sub}/{f}" for f in files), note=note)


SP = "sparse: densities/sparse optimisations; counts are Timeloop's sparse counts"

TRIPLES: list[Triple] = [
    _head_model("00_conv1d_1level", "00-model-conv1d-1level", "", "1level.arch.yaml", "conv1d.prob.yaml",
                "conv1d-1level.map.yaml"),
    _head_model("01_conv1d_2level_os", "01-model-conv1d-2level", "os", "2level.arch.yaml", "conv1d.prob.yaml",
                "conv1d-2level-os.map.yaml"),
    _head_model("01_conv1d_2level_ws", "01-model-conv1d-2level", "ws", "2level.arch.yaml", "conv1d.prob.yaml",
                "conv1d-2level-ws.map.yaml"),
    _head_model("02_conv1d_oc_2level_os", "02-model-conv1d+oc-2level", "no-tiling", "2level.arch.yaml",
                "conv1d+oc.prob.yaml", "conv1d+oc-2level-os.map.yaml"),
    _head_model("02_conv1d_oc_2level_os_tiled", "02-model-conv1d+oc-2level", "tiling", "2level.arch.yaml",
                "conv1d+oc.prob.yaml", "conv1d+oc-2level-os-tiled.map.yaml"),
    _head_model("03_conv1d_oc_3level", "03-model-conv1d+oc-3level", "no-bypass", "3level.arch.yaml",
                "conv1d+oc.prob.yaml", "conv1d+oc-3level.map.yaml"),
    _head_model("03_conv1d_oc_3level_bypass", "03-model-conv1d+oc-3level", "bypass", "3level.arch.yaml",
                "conv1d+oc.prob.yaml", "conv1d+oc-3level-bypass.map.yaml"),
    _head_model("04_conv1d_oc_ic_3levelspatial_cp", "04-model-conv1d+oc-3levelspatial", "cp",
                "3levelspatial.arch.yaml", "conv1d+oc+ic.prob.yaml", "conv1d+oc+ic-3levelspatial-cp-ws.map.yaml"),
    _head_model("04_conv1d_oc_ic_3levelspatial_kp", "04-model-conv1d+oc-3levelspatial", "kp",
                "3levelspatial.arch.yaml", "conv1d+oc+ic.prob.yaml", "conv1d+oc+ic-3levelspatial-kp-ws.map.yaml"),
    *[_head_mapped(f"ex2024_05_mapper_{v}", f"{ISPASS_HEAD}/timeloop/05-mapper-conv1d+oc-3level/ref-output/{v}",
                   (f"{ISPASS_HEAD}/timeloop/05-mapper-conv1d+oc-3level/arch/3level.arch.yaml",
                    f"{ISPASS_HEAD}/timeloop/05-mapper-conv1d+oc-3level/prob/conv1d+oc.prob.yaml"))
      for v in ("baked", "freebypass", "null")],
    _head_mapped("ex2024_06_mapper_eyeriss_vgg02_l5", f"{ISPASS_HEAD}/timeloop/06-mapper-convlayer-eyeriss/ref-output",
                 (f"{ISPASS_HEAD}/timeloop/06-mapper-convlayer-eyeriss/arch/eyeriss_like.yaml",
                  f"{ISPASS_HEAD}/timeloop/06-mapper-convlayer-eyeriss/prob/VGG02_layer5.yaml")),
    *[_head_mapped(f"ex2024_tla_eyeriss_{v}", f"{ISPASS_HEAD}/timeloop+accelergy/ref-output/{v}",
                   (f"{ISPASS_HEAD}/timeloop+accelergy/arch/arch.yaml", f"{ISPASS_HEAD}/timeloop+accelergy/prob/prob.yaml"),
                   note="user architecture is a Jinja template (psum/input datawidths)")
      for v in ("intmac", "fpmac")],
    _head_mapped("ex2024_dse_tutorial", "workspace/tutorial_exercises/02_interface_and_design_space_exploration_2024/"
                 "outputs", tuple(f"workspace/tutorial_exercises/02_interface_and_design_space_exploration_2024/"
                                  f"inputs/{f}.yaml" for f in ("arch", "problem", "variables"))),
    *[_head_mapped(f"design2024_{d}", f"{DESIGNS_HEAD}/{d}/ref_outputs/default_problem", _design_user_files(d, False))
      for d in ("eyeriss_like", "simba_like", "simple_output_stationary", "simple_weight_stationary")],
    _head_mapped("design2024_sparse_tensor_core_like", f"{DESIGNS_HEAD}/sparse_tensor_core_like/ref_outputs/"
                 "default_problem", _design_user_files("sparse_tensor_core_like", False), note=SP),
    *[_head_mapped(f"design2024_sparseloop_{d}", f"{DESIGNS_HEAD}/sparseloop/{d}/ref_outputs/default_problem",
                   _design_user_files(f"sparseloop/{d}", True), note=SP)
      for d in ("01.2.1-DUDU-dot-product", "01.2.2-SUDU-dot-product", "01.2.3-SCDU-dot-product", "02.2.1-spMspM",
                "02.2.2-spMspM-tiled", "03.2.1-conv1d", "03.2.2-conv1d+oc", "03.2.3-conv1d+oc-spatial",
                "04.2.1-eyeriss-like-gating", "04.2.2-eyeriss-like-gating-mapspace-search",
                "04.2.3-eyeriss-like-onchip-compression")],
    _old_model("00_conv1d_1level", "00-model-conv1d-1level", "1level.arch.yaml", "conv1d.prob.yaml",
               "conv1d-1level.map.yaml"),
    _old_model("01_conv1d_2level_os", "01-model-conv1d-2level", "2level.arch.yaml", "conv1d.prob.yaml",
               "conv1d-2level-os.map.yaml"),
    _old_model("01_conv1d_2level_ws", "01-model-conv1d-2level", "2level.arch.yaml", "conv1d.prob.yaml",
               "conv1d-2level-ws.map.yaml"),
    _old_model("02_conv1d_oc_2level_os", "02-model-conv1d+oc-2level", "2level.arch.yaml", "conv1d+oc.prob.yaml",
               "conv1d+oc-2level-os.map.yaml"),
    _old_model("02_conv1d_oc_2level_os_tiled", "02-model-conv1d+oc-2level", "2level.arch.yaml",
               "conv1d+oc.prob.yaml", "conv1d+oc-2level-os-tiled.map.yaml"),
    _old_model("03_conv1d_oc_3level", "03-model-conv1d+oc-3level", "3level.arch.yaml", "conv1d+oc.prob.yaml",
               "conv1d+oc-3level.map.yaml"),
    _old_model("03_conv1d_oc_3level_bypass", "03-model-conv1d+oc-3level", "3level.arch.yaml", "conv1d+oc.prob.yaml",
               "conv1d+oc-3level-bypass.map.yaml"),
    _old_model("04_conv1d_oc_ic_3levelspatial_cp", "04-model-conv1d+oc-3levelspatial", "3levelspatial.arch.yaml",
               "conv1d+oc+ic.prob.yaml", "conv1d+oc+ic-3levelspatial-cp-ws.map.yaml"),
    _old_model("04_conv1d_oc_ic_3levelspatial_kp", "04-model-conv1d+oc-3levelspatial", "3levelspatial.arch.yaml",
               "conv1d+oc+ic.prob.yaml", "conv1d+oc+ic-3levelspatial-kp-ws.map.yaml"),
    _old_isca("01.2.1_DUDU_dot_product", "01.2.1-DUDU-dot-product",
              ("arch/1level.arch.yaml", "prob/dot-product.prob.yaml", "map/dot-product-1level.yaml"), ""),
    _old_isca("01.2.2_SUDU_dot_product", "01.2.2-SUDU-dot-product",
              ("arch/1level.arch.yaml", "prob/dot-product.prob.yaml", "map/dot-product-1level.yaml",
               "sparse-opt/gateBZ.yaml"), SP),
    _old_isca("01.2.3_SCDU_dot_product", "01.2.3-SCDU-dot-product",
              ("arch/1level.arch.yaml", "prob/dot-product.prob.yaml", "map/dot-product-1level.yaml",
               "sparse-opt/cpA.skipBZ.yaml"), SP),
    _old_isca("02.2.1_spMspM", "02.2.1-spMspM",
              ("arch/2level.arch.yaml", "prob/spmspm.prob.yaml", "map/mm-2level.yaml",
               "sparse-opt/compress-AB-skippingZ.yaml"), SP),
    _old_isca("02.2.2_spMspM_tiled", "02.2.2-spMspM-tiled",
              ("arch/2level.arch.yaml", "prob/spmspm.prob.yaml", "map/mm.2level.tiled.yaml",
               "sparse-opt/compress-A-pretiled-B-skippingZ.yaml"), SP),
    _old_isca("03.2.1_conv1d", "03.2.1-conv1d",
              ("arch/2level.arch.yaml", "prob/conv1d.prob.yaml", "map/conv1d.map.yaml",
               "sparse-opt/compressW.skipIO.yaml"), SP),
    _old_isca("03.2.2_conv1d_oc", "03.2.2-conv1d+oc",
              ("arch/2level.arch.yaml", "prob/conv1d+oc.prob.yaml", "map/compressW.skipIO.yaml",
               "sparse-opt/compress-weights.yaml"), SP),
    _old_isca("03.2.3_conv1d_oc_spatial", "03.2.3-conv1d+oc-spatial",
              ("arch/2level.arch.spatial.yaml", "prob/conv1d+oc.prob.yaml", "map/2level.spatial.conv1d+oc.yaml",
               "sparse-opt/compress-weights.yaml"), SP),
    _old_isca("04.2.1_eyeriss_like_gating", "04.2.1-eyeriss-like-gating",
              ("arch/arch.yaml", "prob/layer3.yaml", "mapping/layer3.yaml", "sparse_opt/eyeriss_like.yaml"), SP),
    Triple("timeloop_unit_test_conv1d", "timeloop", ("src/unit-test/configs/arch.yaml",
                                                     "src/unit-test/configs/conv1d.yaml",
                                                     "src/unit-test/configs/mapping.yaml"),
           note="Timeloop's own unit-test configuration"),
    Triple("timeloop_python_two_level_mm", "timeloop-python", ("tests/test_configs/two_level.arch.yaml",
                                                               "tests/test_configs/mm.workload.yaml",
                                                               "tests/test_configs/mapping.yaml"),
           v4_spelling=True, note="timeloop-python's test configuration"),
    Triple("gamma_report", "gamma", ("src/report/arch.yaml", "src/report/problem.yaml", "src/report/map.yaml"),
           note="a mapping GAMMA found (its report folder)"),
]

# Attribute names the 2024 front end writes with underscores that timeloop-model v3.0.3 reads hyphenated.
V3_ATTRIBUTE_NAMES = {"cluster_size": "cluster-size", "multiple_buffering": "multiple-buffering",
                      "min_utilization": "min-utilization", "network_type": "network-type"}


def _rename_keys(node: object) -> object:
    """Every mapping key of V3_ATTRIBUTE_NAMES renamed, recursively."""
    if isinstance(node, dict):
        return {V3_ATTRIBUTE_NAMES.get(k, k): _rename_keys(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_rename_keys(v) for v in node]
    return node


def _hyphenate_keys(node: object) -> object:
    """Every mapping key with its underscores turned into hyphens, recursively (v3's sparse-optimisation keys)."""
    if isinstance(node, dict):
        return {k.replace("_", "-"): _hyphenate_keys(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_hyphenate_keys(v) for v in node]
    return node


def adapt_v4_spelling(src: str, dst: str) -> None:
    """A problem/architecture file written with v4 key spellings, in the spelling v3.0.3 reads:
    problem ``data_spaces`` -> ``data-spaces`` and ``read_write`` -> ``read-write``."""
    with open(src) as fh:
        doc = yaml.safe_load(fh)
    if "problem" in doc:
        _respell_problem(doc["problem"])
    with open(dst, "w") as fh:
        yaml.safe_dump(doc, fh, sort_keys=False)


def _respell_problem(problem: dict) -> None:
    """``data_spaces`` -> ``data-spaces`` and each data space's ``read_write`` -> ``read-write``, in place."""
    shape = problem["shape"]
    if "data_spaces" not in shape:
        return
    spaces = shape.pop("data_spaces")
    for space in spaces:
        if "read_write" in space:
            space["read-write"] = space.pop("read_write")
    shape["data-spaces"] = spaces


def adapt_frontend_dump(src: str, dst: str) -> None:
    """The 2024 front end's parsed-processed-input.yaml in the spelling timeloop-model v3.0.3 reads.

    Renames (meaning unchanged): problem ``data_spaces`` -> ``data-spaces`` and each data space's
    ``read_write`` -> ``read-write``; attributes in V3_ATTRIBUTE_NAMES. Drops the mapper's search
    inputs (``architecture_constraints``, ``mapper``, ``mapspace``), which do not change a model run,
    and an empty ``mapping: []`` (it would hide the mapping file given after it). Sparse designs:
    the density distribution ``fixed_structured`` -> ``fixed-structured`` and every key under
    ``sparse_optimizations`` hyphenated (``action_optimization`` -> ``action-optimization``, ...).
    """
    with open(src) as fh:
        doc = yaml.safe_load(fh)
    _respell_problem(doc["problem"])
    for key in ("architecture_constraints", "mapper", "mapspace"):
        doc.pop(key, None)
    if not doc.get("mapping"):
        doc.pop("mapping", None)
    doc["architecture"] = _rename_keys(doc["architecture"])
    for density in (doc["problem"].get("instance", {}).get("densities") or {}).values():
        if isinstance(density, dict) and density.get("distribution") == "fixed_structured":
            density["distribution"] = "fixed-structured"
    if "sparse_optimizations" in doc:
        doc["sparse_optimizations"] = _hyphenate_keys(doc["sparse_optimizations"])
    with open(dst, "w") as fh:
        yaml.safe_dump(doc, fh, sort_keys=False)


# ---------------------------------------------------------------------------------------------
# Parsing timeloop-model.stats.txt
# ---------------------------------------------------------------------------------------------

_KEY = re.compile(r"^\s+([A-Za-z][^:]*?)\s*:\s*(.*)$")


def parse_stats(text: str) -> tuple[dict[str, object], list[dict[str, object]]]:
    """Summary values and per (storage level, tensor) counts of one stats file."""
    summary: dict[str, object] = {}
    accesses: list[dict[str, object]] = []
    section = text.split("\nNetworks\n")[0]
    blocks = re.split(r"^Level (\d+)\n-+\n", section, flags=re.M)
    compute: dict[str, str] = {}
    for i in range(1, len(blocks), 2):
        level_index, body = int(blocks[i]), blocks[i + 1]
        name = re.search(r"^=== (.*) ===", body, flags=re.M).group(1)
        if "Computes (total)" in body:
            compute = {m.group(1): m.group(2) for m in map(_KEY.match, body.splitlines()) if m}
            summary["compute_level"] = name
            continue
        level_cycles = re.search(r"^\s+Cycles\s*: (\d+)", body, flags=re.M)
        tensors = re.split(r"^    ([A-Za-z_0-9]+):\n", body.split("    STATS\n")[-1], flags=re.M)
        for j in range(1, len(tensors), 2):
            vals = {m.group(1): m.group(2) for m in map(_KEY.match, tensors[j + 1].splitlines()) if m}
            sparse = "Actual scalar reads (per-instance)" in vals
            if not sparse and "Scalar reads (per-instance)" not in vals:
                continue
            inst = float(vals["Utilized instances (max)"])
            row: dict[str, object] = {
                "level_index": level_index, "level": name, "tensor": tensors[j],
                "level_cycles": int(level_cycles.group(1)) if level_cycles else "",
                "utilized_instances": int(inst),
                "partition_size": int(vals.get("Partition size", "0")),
                "utilized_capacity": int(vals.get("Utilized capacity", "0")),
            }
            for kind in ("reads", "updates", "fills"):
                per = int(vals[f"Actual scalar {kind} (per-instance)" if sparse else f"Scalar {kind} (per-instance)"])
                row[f"{kind}_per_instance"] = per
                row[f"{kind}_total"] = int(round(per * inst))
                row[f"algorithmic_{kind}_per_instance"] = (
                    int(vals[f"Algorithmic scalar {kind} (per-instance)"]) if sparse else per)
            accesses.append(row)
    for line in text.split("\nSummary Stats\n")[-1].splitlines():
        if ":" in line and not line.startswith(" "):
            key, value = line.split(":", 1)
            summary[key.strip()] = value.strip()
    summary["compute_cycles"] = int(compute.get("Cycles", "0"))
    summary["computes"] = int(compute.get("Actual Computes (total)", compute.get("Computes (total)", "0")))
    summary["algorithmic_computes"] = int(compute.get("Algorithmic Computes (total)",
                                                      compute.get("Computes (total)", "0")))
    summary["compute_instances"] = int(compute.get("Utilized instances", "0"))
    return summary, accesses


def reference_cycles(path: str) -> str:
    """The cycles of the repository's own stats file (its Timeloop version), '' when absent."""
    if not path or not os.path.exists(path):
        return ""
    with open(path) as fh:
        m = re.search(r"^Cycles: (\d+)", fh.read().split("Summary Stats")[-1], flags=re.M)
    return m.group(1) if m else ""


def copied_names(triple: Triple) -> list[str]:
    """The name each of a triple's files gets in ``triples/<triple_id>/``, files then user files:
    its own name (user files prefixed ``user_``), or, where two files of the triple share a name
    (the 2021 ISCA designs keep problem and mapping as ``prob/layer3.yaml`` and
    ``mapping/layer3.yaml``), each of those prefixed with its folder's name (``prob_layer3.yaml``)."""
    names = [("user_" if k >= len(triple.files) else "") + rel.split("/")[-1]
             for k, rel in enumerate(triple.files + triple.user_files)]
    return [f"{rel.split('/')[-2]}_{name}" if names.count(name) > 1 else name
            for rel, name in zip(triple.files + triple.user_files, names)]


def run_triple(triple: Triple, build: str, roots: dict[str, str], out_dir: str
               ) -> tuple[dict[str, object], list[dict[str, object]]]:
    """Copy one triple's files, run timeloop-model, and return its references.csv row and accesses rows."""
    root = roots[triple.era]
    dest = os.path.join(out_dir, "triples", triple.triple_id)
    os.makedirs(dest, exist_ok=True)
    copied = copied_names(triple)
    for rel, name in zip(triple.files + triple.user_files, copied):
        shutil.copyfile(os.path.join(root, rel), os.path.join(dest, name))
    repository, commit, _ = SOURCES[triple.era]
    row: dict[str, object] = {
        "triple_id": triple.triple_id, "era": triple.era, "source_repository": repository,
        "source_commit": commit,
        "source_files": ";".join(triple.files), "copied_files": ";".join(copied[:len(triple.files)]),
        "user_files": ";".join(copied[len(triple.files):]),
        "adapted": "frontend_dump" if triple.frontend_dump else "v4_spelling" if triple.v4_spelling else "none",
        "note": triple.note,
        "reference_cycles_timeloop_v4": reference_cycles(os.path.join(root, triple.reference_stats))
        if triple.reference_stats else "",
    }
    with tempfile.TemporaryDirectory() as work:
        args = []
        for k, rel in enumerate(triple.files):
            src = os.path.join(root, rel)
            if k == 0 and triple.frontend_dump:
                adapted = os.path.join(work, "input.yaml")
                adapt_frontend_dump(src, adapted)
                args.append(adapted)
            elif triple.v4_spelling:
                adapted = os.path.join(work, f"input{k}.yaml")
                adapt_v4_spelling(src, adapted)
                args.append(adapted)
            else:
                args.append(src)
        env = dict(os.environ, LD_LIBRARY_PATH=build)
        proc = subprocess.run([os.path.join(build, "timeloop-model"), *args], cwd=work, env=env,
                              capture_output=True, text=True, timeout=600)
        stats_path = os.path.join(work, "timeloop-model.stats.txt")
        if proc.returncode != 0 or not os.path.exists(stats_path):
            errors = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "ERROR" in ln or "rror" in ln]
            row["status"] = "refused: " + (errors[0].strip() if errors else f"exit {proc.returncode}")[:200]
            return row, []
        with open(stats_path) as fh:
            summary, accesses = parse_stats(fh.read())
    cycles = int(summary["Cycles"])
    row.update(status="ok", cycles=cycles, compute_cycles=summary["compute_cycles"],
               compute_bound=cycles == summary["compute_cycles"], computes=summary["computes"],
               algorithmic_computes=summary["algorithmic_computes"],
               compute_instances=summary["compute_instances"], utilization=summary.get("Utilization", ""),
               energy_uJ=summary.get("Energy", "").replace(" uJ", ""))
    for acc in accesses:
        acc["triple_id"] = triple.triple_id
    row["counts_equal_v4_reference"] = counts_match_reference(accesses, os.path.join(root, triple.reference_stats)
                                                              ) if triple.reference_stats else ""
    return row, accesses


def counts_match_reference(accesses: list[dict[str, object]], path: str) -> str:
    """'True' when every (level, tensor) read/update/fill count equals the repository's own stats file."""
    if not os.path.exists(path):
        return ""
    with open(path) as fh:
        _, ref = parse_stats(fh.read())
    key = ("level", "tensor", "reads_total", "updates_total", "fills_total")
    ours = sorted(tuple(a[k] for k in key) for a in accesses)
    return str(bool(ours) and ours == sorted(tuple(a[k] for k in key) for a in ref))


def _write_csv(path: str, rows: list[dict[str, object]], first: list[str]) -> None:
    """Rows as CSV, the union of their keys as columns, ``first`` leading."""
    columns = list(first)
    for r in rows:
        columns += [k for k in r if k not in columns]
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns, restval="")
        writer.writeheader()
        writer.writerows(rows)


def main(argv: list[str]) -> int:
    """Run every triple; write triples/, references.csv and accesses.csv into the output directory."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", required=True, help="folder of timeloop-model v3.0.3")
    for repository, commit, option in SOURCES.values():
        parser.add_argument("--" + option.replace("_", "-"), dest=option, required=True,
                            help=f"checkout of {repository} at {commit[:12]}")
    parser.add_argument("out_dir")
    args = parser.parse_args(argv[1:])
    build, out_dir = os.path.abspath(args.build), os.path.abspath(args.out_dir)
    roots = {key: os.path.abspath(getattr(args, option)) for key, (_, _, option) in SOURCES.items()}
    refs, accs = [], []
    for triple in TRIPLES:
        row, accesses = run_triple(triple, build, roots, out_dir)
        print(f"{triple.triple_id}: {row['status']} cycles={row.get('cycles', '')} "
              f"ref={row['reference_cycles_timeloop_v4']}", flush=True)
        refs.append(row)
        accs += accesses
    _write_csv(os.path.join(out_dir, "references.csv"), refs, ["triple_id", "era", "status", "cycles",
                                                                "compute_cycles", "compute_bound"])
    _write_csv(os.path.join(out_dir, "accesses.csv"), accs, ["triple_id", "level_index", "level", "tensor"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
