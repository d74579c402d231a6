"""The benchmark harness: studies declared as grids, run and written alike.

A study is a short declaration (``benchmarks/studies/<name>.py``): its grid,
its data, its methods and its metric (:class:`Study`), or its timed calls
(:class:`TimingStudy`). The harness supplies what every study shares: the
seeding (repetition ``r`` uses seed ``r``, the same data and seed for every
method, so differences are paired), summaries with standard errors, same-run
timing ratios, the machine record, the JSON and reStructuredText writers, and
figures drawn from the same rows.

    python -m benchmarks list
    python -m benchmarks run tables --quick
    python -m benchmarks run tables --docs   # rewrites the docs' include
"""

from .data import TABLES, load_table, public_bounds
from .machine import machine_record
from .plot import line_figure, per_metric
from .report import rst_table, write_results
from .stats import bootstrap_interval, near_best, paired_se, ratio_se, summarize
from .study import Combined, Study, TimingStudy, all_studies, get_study
from .timing import peak_mib, time_calls

__all__ = [
    "TABLES",
    "Combined",
    "Study",
    "TimingStudy",
    "all_studies",
    "bootstrap_interval",
    "get_study",
    "line_figure",
    "load_table",
    "machine_record",
    "near_best",
    "paired_se",
    "per_metric",
    "peak_mib",
    "public_bounds",
    "ratio_se",
    "rst_table",
    "summarize",
    "time_calls",
    "write_results",
]
