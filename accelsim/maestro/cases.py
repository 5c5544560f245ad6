"""MAESTRO's iteration cases of one cluster level (its ``IterationAnalysis``).

Every directive has an Init state (once), possibly a Steady state (repeated) and an Edge state
(once, a partial last window or fewer active sub-units). A case is one state per directive; its
occurrence count is the product of its states' counts. Case 0 is all-Init.
"""

from __future__ import annotations

from dataclasses import dataclass

from accelsim.maestro.clusters import ClusterLevel
from accelsim.maestro.problem import DimTable, cdiv

INIT, STEADY, EDGE = "Init", "Steady", "Edge"


@dataclass(frozen=True)
class IterState:
    """The state of one directive in a case."""

    var: str
    position: str  # INIT, STEADY or EDGE
    occurrences: int
    unrolled: bool = False
    init_edge: bool = False  # the Init window already overruns the dimension
    sp_edge_edge: bool = False  # in a spatial edge step, the last active sub-unit gets a partial window

    @property
    def is_edge(self) -> bool:
        return self.position == EDGE or self.init_edge


@dataclass(frozen=True)
class Case:
    """One iteration case: a state per dimension and how often it occurs."""

    states: dict[str, IterState]
    occurrences: int

    def state(self, var: str) -> IterState:
        return self.states[var]

    @property
    def all_init(self) -> bool:
        return all(s.position == INIT for s in self.states.values())

    def label(self) -> str:
        return " ".join(f"{v}:{s.position}" for v, s in sorted(self.states.items()))


def _states(level: ClusterLevel, dims: DimTable) -> list[list[IterState]]:
    per_directive: list[list[IterState]] = []
    for d in level.dataflow:
        size, mapped, ofs = dims.size(d.var), d.size, d.offset
        states: list[IterState] = []
        if d.temporal:
            init_edge = size < mapped
            states.append(IterState(d.var, INIT, 1, size <= mapped, init_edge))
            steady = cdiv(size - mapped, ofs)
            if mapped < size and steady > 0:
                states.append(IterState(d.var, STEADY, steady))
            if not init_edge and steady * ofs + mapped < size:
                states.append(IterState(d.var, EDGE, 1))
        else:
            n = level.num_sub_clusters
            coverage = mapped + ofs * (n - 1)
            init_unroll, init_edge = size <= coverage, size < coverage
            states.append(IterState(d.var, INIT, 1, init_unroll, init_edge, init_edge))
            steady = cdiv(cdiv(size - mapped, ofs) + 1, n) - 1
            has_edge = (
                not init_unroll
                and (steady + 1) * (ofs * n) + coverage > size
                and steady * (ofs * n) + coverage != size
            )
            if coverage < size and steady > 0:
                states.append(IterState(d.var, STEADY, steady))
            remaining = size - (steady + 1) * ofs * n
            active = 1 if remaining < mapped else cdiv(remaining - mapped, ofs) + 1
            edge_edge = (active - 1) * ofs + mapped < remaining
            if not init_edge and has_edge:
                states.append(IterState(d.var, EDGE, 1, sp_edge_edge=edge_edge))
        per_directive.append(states)
    return per_directive


def iteration_cases(level: ClusterLevel, dims: DimTable) -> list[Case]:
    """All cases of a level in MAESTRO's order: case 0 all-Init, then every other combination
    (case c >= 1 is the mixed-radix number c - 1 with every digit advanced by one)."""
    per_directive = _states(level, dims)
    radices = [len(s) for s in per_directive]
    total = 1
    for r in radices:
        total *= r
    cases: list[Case] = []
    for c in range(total):
        digits: list[int] = []
        rest = c - 1
        for r in reversed(radices):
            digits.append(0 if c == 0 else (rest % r + 1) % r)
            rest //= r
        digits.reverse()
        chosen = [per_directive[i][digits[i]] for i in range(len(radices))]
        occurrences = 1
        states: dict[str, IterState] = {}
        for s in chosen:
            occurrences *= s.occurrences
            states[s.var] = s
        cases.append(Case(states, occurrences))
    return cases
