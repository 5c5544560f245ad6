"""Network-on-chip kinds: one module per kind (see :mod:`accelsim.hw.noc.base`). Every module
of this package is imported here, so adding a kind is adding one module."""

from __future__ import annotations

import importlib
import pkgutil

from accelsim.hw.noc.base import (
    DISTRIBUTION_KINDS,
    REDUCTION_KINDS,
    DistributionNetwork,
    ReductionNetwork,
    port_block_pes,
)

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["DISTRIBUTION_KINDS", "REDUCTION_KINDS", "DistributionNetwork", "ReductionNetwork", "port_block_pes"]
