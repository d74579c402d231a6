"""dpcov's benchmarks: ``python -m benchmarks list`` (not part of the package)."""
