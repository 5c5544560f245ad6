"""DRAM kinds: one module per kind (see :mod:`accelsim.hw.dram.base`). Every module of this
package is imported here, so adding a kind is adding one module."""

from __future__ import annotations

import importlib
import pkgutil

from accelsim.hw.dram.base import DRAM_KINDS, DramModel, latency_cycles, transfer_cycles

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["DRAM_KINDS", "DramModel", "latency_cycles", "transfer_cycles"]
