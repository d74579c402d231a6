"""A tiny text progress bar for the command line (no dependency).

It redraws one line, ``\\r[#####     ] 12/40 label``, on a stream (standard
error by default), ends it with a newline when closed, and does nothing at all
when disabled. By default it is enabled only when the stream is a terminal, so
logs and pipes get no carriage returns.

Examples
--------
>>> import io
>>> stream = io.StringIO()
>>> with Progress(4, stream=stream, enabled=True, width=8) as bar:
...     bar.update(label="fit")
...     bar.update(3, label="done")
>>> stream.getvalue().split("\\r")[-1]
'[########] 4/4 done\\n'
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import shutil
import sys


class Progress:
    """Progress bar over ``total`` steps, redrawn in place on ``stream``.

    Parameters
    ----------
    total : int
        Number of steps.
    stream : file-like, default=None
        Where the bar goes (``sys.stderr`` when None).
    enabled : bool or None, default=None
        False makes every method a no-op; None enables the bar when ``stream``
        is a terminal.
    width : int, default=30
        Characters between the brackets.
    """

    def __init__(self, total, *, stream=None, enabled=None, width=30):
        self.stream = sys.stderr if stream is None else stream
        if enabled is None:
            enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.total, self.enabled, self.width = max(int(total), 1), enabled, width
        self.count, self.label, self._drawn = 0, "", 0

    def update(self, advance=1, label=None):
        """Advance by ``advance`` steps (0 just relabels) and redraw."""
        self.count = min(self.count + advance, self.total)
        self.label = self.label if label is None else label
        if self.enabled:
            filled = self.width * self.count // self.total
            bar = "#" * filled + " " * (self.width - filled)
            text = f"[{bar}] {self.count}/{self.total} {self.label}"
            # A wrapped line cannot be redrawn by "\r": cut at the terminal.
            text = text[: shutil.get_terminal_size().columns - 1]
            self.stream.write("\r" + text.ljust(self._drawn))
            self.stream.flush()
            self._drawn = len(text)

    def echo(self, line, file=None):
        """Print ``line`` to ``file`` (stdout) above the bar, then redraw it."""
        if self.enabled and self._drawn:
            self.stream.write("\r" + " " * self._drawn + "\r")
            self._drawn = 0
        print(line, file=sys.stdout if file is None else file, flush=True)
        if self.enabled:
            self.update(0)

    def close(self):
        """End the bar's line (once)."""
        if self.enabled and self._drawn:
            self.stream.write("\n")
            self.stream.flush()
        self._drawn = 0
        self.enabled = False

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()
