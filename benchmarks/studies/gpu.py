"""Private PCA and covariance on PyTorch tensors, on a GPU where there is one.

Rows of unit norm (every row on the clipping radius) drawn on the device
(option ``device``: ``cuda`` when PyTorch sees a GPU, else ``cpu``). Under
scikit-learn's ``array_api_dispatch`` each fit reads the tensor where it
lives (dpcov's passes on the device, the noise and the ``d x d`` algebra on
the host), beside the floor, one ``X.T @ X`` by PyTorch on the same tensor
(synchronised), and scikit-learn's array-API ``PCA(n_components=10)``; with
the option ``numpy``, the same fits on a NumPy copy of the rows. Each cell
runs in a fresh process with ``SCIPY_ARRAY_API=1``; the smoke run stays in
this process on the CPU.
"""

import os
import warnings
from contextlib import contextmanager

import sklearn
from sklearn.decomposition import PCA as SklearnPCA

from dpcov.covariance import GaussianCovariance
from dpcov.decomposition import PCA

from ._speed import SpeedStudy

FLOOR = "X.T @ X (torch)"
GIVEN = dict(data_norm=1.0, random_state=0)
FITS = {
    "PCA (sklearn, array API)": lambda: SklearnPCA(10),
    "PCA(data_norm=1)": lambda: PCA(10, **GIVEN),
    "PCA (defaults)": lambda: PCA(10, random_state=0),
    "GaussianCovariance(data_norm=1, centred)": lambda: GaussianCovariance(
        assume_centered=True, **GIVEN
    ),
    "GaussianCovariance (defaults)": lambda: GaussianCovariance(random_state=0),
}


@contextmanager
def _dispatch():
    # scikit-learn asks for SciPy's array API flag; the fresh process sets it
    # before SciPy loads, the smoke run only for scikit-learn's check.
    old = os.environ.get("SCIPY_ARRAY_API")
    os.environ["SCIPY_ARRAY_API"] = "1"
    try:
        with sklearn.config_context(array_api_dispatch=True):
            yield
    finally:
        if old is None:
            del os.environ["SCIPY_ARRAY_API"]
        else:
            os.environ["SCIPY_ARRAY_API"] = old


def _calls(cell):
    import torch

    device = cell["device"] or ("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    X = torch.randn(cell["n"], cell["d"], dtype=getattr(torch, cell["dtype"]))
    X = X.to(device)
    X /= torch.linalg.vector_norm(X, dim=1, keepdim=True)
    inputs = {"torch": X, "numpy": X.cpu().numpy()} if cell["numpy"] else {"torch": X}

    def sync():
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    def timed(job, data):
        with _dispatch(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            job(data)
        sync()

    calls = {FLOOR: lambda: timed(lambda data: data.T @ data, X)}
    for name, make in FITS.items():
        for kind, data in inputs.items():
            job = lambda data, make=make: make().fit(data)  # noqa: E731
            timed(job, data[:10_000])  # warm-up: kernels, imports
            calls[f"{name} [{kind}]"] = lambda job=job, data=data: timed(job, data)
    cell["where"] = torch.cuda.get_device_name(0) if device == "cuda" else device
    return calls


STUDY = SpeedStudy(
    name="gpu",
    title=__doc__.splitlines()[0],
    caption="Fits of PyTorch tensors against PyTorch's X.T @ X",
    grid={"n": [10_000_000], "d": [1024], "dtype": ["float32"]},
    options={"device": None, "numpy": False, "fresh_process": True},
    calls=_calls,
    baseline=FLOOR,
    extra=lambda cell, name, call: {"device": cell["where"]},
    env={"SCIPY_ARRAY_API": "1"},
    repeats=3,
    quick={
        "n": [2_000],
        "d": [20],
        "dtype": ["float64"],
        "device": "cpu",
        "numpy": True,
        "fresh_process": False,
        "repeats": 2,
    },
)
