"""Writing several files, all or none."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import os
import tempfile


def _chmod_default(path):
    # mkstemp makes owner-only files; give the result the permissions of a
    # file created the ordinary way (0o666 minus the umask).
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)


def write_atomically(writers):
    """Write several files, all or none.

    Each file is written to a temporary file in its destination directory;
    only when all are written are they renamed into place (``os.replace``).
    On any failure the temporary files are removed.

    Parameters
    ----------
    writers : list of (path, callable)
        Destination and a function that writes the content to a binary file
        object.
    """
    temporaries = []
    try:
        for path, write in writers:
            path = os.path.abspath(path)
            fd, tmp = tempfile.mkstemp(
                dir=os.path.dirname(path),
                prefix=f".{os.path.basename(path)}.",
                suffix=".tmp",
            )
            temporaries.append(tmp)
            with os.fdopen(fd, "wb") as handle:
                write(handle)
            _chmod_default(tmp)
        for (path, _), tmp in zip(writers, temporaries, strict=True):
            os.replace(tmp, path)
    finally:
        for tmp in temporaries:
            if os.path.exists(tmp):
                os.remove(tmp)
