"""Workloads: the operator catalog, layers and networks as loop nests, and network layer tables."""

from accelsim.workload.operators import OPERATORS, Operator, OpType
from accelsim.workload.ops import Layer, Network
from accelsim.workload.tables import available_networks, load_network

__all__ = ["OPERATORS", "Layer", "Network", "Operator", "OpType", "available_networks", "load_network"]
