"""One module per study (see ``benchmarks/harness/study.py``)."""
