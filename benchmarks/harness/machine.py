"""What a study records about the machine it ran on."""

import datetime
import os
import platform

import numpy as np
import scipy
import sklearn
from threadpoolctl import threadpool_info

import dpcov


def cpu_model():
    """The CPU's model name (from /proc/cpuinfo), or the platform's processor."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_record():
    """CPU, cores, versions and BLAS threads, and the date of the run."""
    blas = sorted(
        {
            f"{lib['internal_api']} {lib['version']} ({lib['num_threads']} threads)"
            for lib in threadpool_info()
            if lib["user_api"] == "blas"
        }
    )
    return {
        "date": datetime.date.today().isoformat(),
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "sklearn": sklearn.__version__,
        "dpcov": dpcov.__version__,
        "blas": blas,
    }


def machine_line(record):
    """One line for a table's caption."""
    blas = "; ".join(record["blas"]) or "no BLAS found"
    return (
        f"{record['cpu']}, {record['cores']} cores, Python {record['python']}, "
        f"NumPy {record['numpy']}, SciPy {record['scipy']}, scikit-learn "
        f"{record['sklearn']}, dpcov {record['dpcov']}, {blas}; {record['date']}"
    )
