"""Workloads: DNN operators as loop nests, and network layer tables."""

from accelsim.workload.ops import Layer, Network, OpType
from accelsim.workload.tables import available_networks, load_network

__all__ = ["Layer", "Network", "OpType", "available_networks", "load_network"]
