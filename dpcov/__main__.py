"""``python -m dpcov ...``: the command line of :mod:`dpcov.cli`."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
