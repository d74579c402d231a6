"""The package, docs, examples and README cite papers, not internal notes.

The papers dpcov implements are cited by authors, year and section, lemma or
algorithm (e.g. "Dong, Liang and Yi (2022), Lemma 11"). The names of the
project's internal working notes (numbered paper extracts and the algorithm
write-ups based on them) mean nothing to a user, and a numbered one reads like
a ``random_state``. This test fails if one of those names, or a remark about
text lost when a paper was extracted, appears in a tracked file of the scanned
paths; the phrases themselves are in ``_PATTERNS`` below, assembled from
pieces so that this file does not match a plain search of the repository.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Scanned paths, relative to the repository root.
SCANNED = (
    "dpcov",
    "docs",
    "examples",
    "benchmarks",
    "tools",
    "README.md",
    "CONTRIBUTING.md",
)

#: Build outputs under docs/ (not sources).
BUILD_OUTPUTS = ("docs/_build/", "docs/generated/", "docs/auto_examples/")

#: Files never scanned: this one (it spells the patterns).
EXCLUDED = {Path(__file__).resolve().relative_to(ROOT).as_posix()}

# A word break inside a phrase: spaces, or a line break followed by the
# indentation and comment marker of a continued comment.
_GAP = r"(?:[ \t]*\n[ \t]*(?:#+[ \t]*)?|[ \t]+)"
_SEED = "se" + "ed"
_SPEC = "sp" + "ec"
_EXTRACTION = "extr" + "action"

#: (label, compiled pattern), all case-insensitive.
_PATTERNS = [
    (
        "numbered note (" + _SEED + " 00x)",
        re.compile(r"\b" + _SEED + r"s?" + _GAP + r"?00", re.IGNORECASE),
    ),
    (
        "the " + _SPEC,
        re.compile(r"\bthe" + _GAP + _SPEC + r"\b", re.IGNORECASE),
    ),
    (
        "lost in " + _EXTRACTION,
        re.compile(r"\blost" + _GAP + "in" + _GAP + _EXTRACTION + r"\b", re.IGNORECASE),
    ),
    (
        "survive " + _EXTRACTION,
        re.compile(
            r"\bsurviv\w*" + _GAP + r"(?:the" + _GAP + r")?" + _EXTRACTION + r"\b",
            re.IGNORECASE,
        ),
    ),
]


def _wanted(path):
    if path in EXCLUDED or path.startswith(BUILD_OUTPUTS):
        return False
    return path in SCANNED or path.startswith(tuple(p + "/" for p in SCANNED))


def _git_files():
    """Tracked files under the scanned paths, or None without a git checkout."""
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        return None
    try:
        out = subprocess.run(
            [git, "ls-files", "-z", "--", *SCANNED],
            cwd=ROOT,
            capture_output=True,
            check=True,
            timeout=60,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    files = [name for name in out.decode("utf-8", "replace").split("\0") if name]
    return files or None


def _walked_files():
    """Every file under the scanned paths (no git: e.g. an unpacked archive)."""
    files = []
    for name in SCANNED:
        top = ROOT / name
        if top.is_file():
            files.append(name)
            continue
        for folder, subfolders, names in os.walk(top):
            subfolders[:] = [
                s for s in subfolders if s != "__pycache__" and not s.startswith(".")
            ]
            for file_name in names:
                path = Path(folder, file_name).relative_to(ROOT).as_posix()
                files.append(path)
    return files


def _scanned_files():
    files = _git_files()
    if files is None:
        files = _walked_files()
    return sorted(name for name in files if _wanted(name))


def _read_text(path):
    """The file's text, or None for a binary or unreadable file."""
    try:
        data = (ROOT / path).read_bytes()
    except OSError:
        return None
    if b"\0" in data:
        return None
    return data.decode("utf-8", "replace")


def _hits(text):
    for label, pattern in _PATTERNS:
        for match in pattern.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            yield line, label, " ".join(match.group(0).split())


def test_patterns_catch_the_phrases():
    positives = [
        "as in " + _SEED + " 000, Lemma 11",
        _SEED.title() + "s 001-004",
        "see " + _SEED + "\n    # 002 for the proof",
        "The " + _SPEC + "'s default",
        "the\n    " + _SPEC + " recommends",
        "the formula was lost in " + _EXTRACTION,
        "lost in\n" + _EXTRACTION,
        "did not survive " + _EXTRACTION,
        "survived the " + _EXTRACTION,
    ]
    negatives = [
        "random_" + _SEED + "=0",
        "a " + _SEED + " of 1000",
        "the " + _SPEC + "trum of the matrix",
        "the " + _SPEC + "ification",
        "feature " + _EXTRACTION,
    ]
    for text in positives:
        assert list(_hits(text)), text
    for text in negatives:
        assert not list(_hits(text)), text


def test_no_internal_note_names():
    if not any((ROOT / name).exists() for name in SCANNED):
        pytest.skip("none of the scanned paths is present in this installation")
    files = _scanned_files()
    if not files:
        pytest.skip("no files to scan")
    found = []
    for path in files:
        text = _read_text(path)
        if text is None:
            continue
        for line, label, phrase in _hits(text):
            found.append(f"{path}:{line}: {phrase!r} ({label})")
    assert not found, (
        "cite the paper (authors, year, section/lemma/algorithm) instead of the "
        "internal note names:\n" + "\n".join(found)
    )
