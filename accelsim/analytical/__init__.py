"""A fast, closed-form (MAESTRO-style) cost model over the same compiled mapping the simulator
executes; it shares no cost arithmetic with :mod:`accelsim.sim`.

``analyze_layer(cm, hw, mode="maestro")`` returns a :class:`~accelsim.results.LayerResult`
with ``model="analytical"``; ``bound_violations(result)`` lists the lower bounds an estimate
falls below.
"""

from accelsim.analytical.model import analyze_layer
from accelsim.bounds import bound_violations

__all__ = ["analyze_layer", "bound_violations"]
