"""Test helpers shared by the unit tests and the benchmarks (not part of the installed package)."""
