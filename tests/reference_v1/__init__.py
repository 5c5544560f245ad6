"""Test-only reference: the simulator's profile and engine as they were before issue 9 (cost
per step x PE), frozen, so the differential tests can compare the new ones against them."""
