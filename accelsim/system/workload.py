"""Jobs for a system: layers of networks, each with a batch size, in arrival order.

A job is one layer of one network at a batch size (the layer's ``N``, or a GEMM's ``M``, or a
BMM's ``B``, times the batch). Jobs come from a workload file::

    name: my_jobs
    jobs:
      - {network: resnet18, batch: 2}                   # every layer, in order
      - {network: bert_base, layers: [enc1_q, enc1_k]}  # some layers (batch 1)

or from ``--network A --network B`` (every layer of each), or from one of MAGMA's workload
groups (``vision``, ``language``, ``recommendation``, ``mix``) of bundled networks. Several
networks' layers arrive interleaved (round robin, one layer of each in turn), and the first
``group_size`` jobs form the group (MAGMA's default group: 100 jobs).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import zip_longest
from pathlib import Path
from typing import Sequence

from accelsim.errors import InputError
from accelsim.input_files import load_yaml, read_text
from accelsim.workload.operators import operator
from accelsim.workload.ops import Layer
from accelsim.workload.tables import load_network

# MAGMA's task groups (thesis Sec. 7.3.1) from the networks we bundle
GROUPS: dict[str, tuple[str, ...]] = {
    "vision": ("resnet18", "mobilenetv2", "resnet50", "vgg16", "alexnet"),
    "language": ("bert_base",),
    "recommendation": ("dlrm", "flash_mlp"),
}
GROUPS["mix"] = GROUPS["vision"] + GROUPS["language"] + GROUPS["recommendation"]
DEFAULT_GROUP_SIZE = 100
BATCH_DIMS = {"GEMM": "M", "BMM": "B"}  # the batch dimension where it is not N


@dataclass(frozen=True)
class WorkloadJob:
    """Job ``index`` (its arrival order): ``layer`` of ``network`` at ``batch``."""

    index: int
    network: str
    layer: Layer
    batch: int

    @property
    def name(self) -> str:
        return f"{self.network}/{self.layer.name}"


def batched(layer: Layer, batch: int) -> Layer:
    """``layer`` with its batch dimension (a GEMM's rows M, a BMM's B, else N) times ``batch``."""
    if batch == 1:
        return layer
    dim = BATCH_DIMS.get(layer.op.value, "N")
    if dim not in operator(layer.op).dims:
        raise InputError(f"layer {layer.name!r} ({layer.op.value}) has no batch dimension")
    sizes = dict(layer.sizes)
    sizes[dim] *= batch
    return replace(layer, sizes=sizes)


def interleave(per_network: list[list[tuple[str, Layer, int]]], group_size: int | None) -> list[WorkloadJob]:
    """Round robin over the networks' layer lists; the first ``group_size`` jobs (all: None)."""
    order = [item for row in zip_longest(*per_network) for item in row if item is not None]
    if group_size is not None:
        order = order[:group_size]
    return [WorkloadJob(i, net, batched(layer, batch), batch) for i, (net, layer, batch) in enumerate(order)]


def every_layer(networks: Sequence[str], batch: int) -> list[list[tuple[str, Layer, int]]]:
    """Per network (bundled name or file): (network, layer, batch) of each of its layers."""
    return [[(net.name, layer, batch) for layer in net.layers] for net in map(load_network, networks)]


def network_jobs(networks: Sequence[str], batch: int = 1, group_size: int | None = None) -> list[WorkloadJob]:
    """Every layer of each network (bundled name or file), interleaved."""
    return interleave(every_layer(networks, batch), group_size)


def load_workload(ref: str, networks: Sequence[str] = (), batch: int = 1,
                  group_size: int | None = DEFAULT_GROUP_SIZE) -> tuple[str, list[WorkloadJob]]:
    """(name, jobs) of a workload group or file, plus every layer of ``networks``."""
    if batch < 1:
        raise InputError(f"--batch must be at least 1, got {batch}")
    if ref in GROUPS:
        names = list(GROUPS[ref]) + list(networks)
        return ref, network_jobs(names, batch, group_size)
    path = Path(ref)
    if not path.is_file() and "/" not in ref and not ref.endswith((".yaml", ".yml")):
        raise InputError(f"unknown workload {ref!r} (and no such file); groups: {', '.join(GROUPS)}; "
                         "or give the path of a workload YAML file")
    doc = load_yaml(read_text(path, "workload file"), ref)
    data = doc.data
    if not isinstance(data, dict) or not isinstance(data.get("jobs"), list) or not data["jobs"]:
        raise InputError("a workload file must be a mapping with a non-empty list 'jobs'", source=ref,
                         line=doc.line(("jobs",)))
    unknown = sorted(set(data) - {"name", "jobs", "source", "notes"})
    if unknown:
        raise InputError(f"unknown field(s) {', '.join(unknown)}; expected name, jobs", source=ref,
                         line=doc.line((unknown[0],)))
    per_network: list[list[tuple[str, Layer, int]]] = []
    for i, entry in enumerate(data["jobs"]):
        line = doc.line(("jobs", i))
        if not isinstance(entry, dict) or not isinstance(entry.get("network"), str):
            raise InputError(f"jobs[{i}]: expected a mapping with 'network' (and 'layers', 'batch')", source=ref,
                             line=line)
        extra = sorted(set(entry) - {"network", "layers", "batch"})
        if extra:
            raise InputError(f"jobs[{i}]: unknown field(s) {', '.join(extra)}; expected network, layers, batch",
                             source=ref, line=line)
        b = entry.get("batch", batch)
        if isinstance(b, bool) or not isinstance(b, int) or b < 1:
            raise InputError(f"jobs[{i}].batch: expected a positive integer, got {b!r}", source=ref, line=line)
        try:
            net = load_network(entry["network"])
            wanted = entry.get("layers")
            if wanted is None:
                layers = list(net.layers)
            elif isinstance(wanted, list) and all(isinstance(w, str) for w in wanted):
                layers = [net.layer(w) for w in wanted]
            else:
                raise InputError(f"jobs[{i}].layers: expected a list of layer names")
        except InputError as err:
            raise InputError(f"jobs[{i}]: {err}", source=ref, line=line) from None
        per_network.append([(net.name, layer, b) for layer in layers])
    name = data.get("name", path.stem)
    return str(name), interleave(per_network + every_layer(networks, batch), None)
