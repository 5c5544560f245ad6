"""Test-only reference: the analytical model's per-PE demand computation as it was before
issue 19 (cost cases x PEs), frozen, so the differential tests can check that the shared demand
table (accelsim.mapping.demand, accelsim.mapping.tiles) gives the same counts."""
