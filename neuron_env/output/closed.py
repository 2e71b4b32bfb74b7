"""Standard streams the process was started without (``neuron-env doctor >&-``, a service whose
descriptors 1 and 2 are closed): Python sets ``sys.stdout`` to None, and the first report line
raised ``AttributeError: 'NoneType' object has no attribute 'write'`` with a traceback.

:func:`stand_in_for_closed` puts a stream in each such place: a closed stdout says, on the first
text written to it, that the report has nowhere to go (bad input, exit 2: ``-o FILE`` needs no
stdout and runs as usual); a closed stderr takes what it is given and shows nothing, as the
descriptor would have. Standard library only.
"""

from __future__ import annotations

import errno
import io
import os
import sys

from neuron_env.errors import BadInput


class _Closed(io.TextIOBase):
    """A text stream in place of a closed descriptor."""

    encoding = "utf-8"

    def __init__(self, refuse: bool) -> None:
        super().__init__()
        self._refuse = refuse

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        if text and self._refuse:
            self._refuse = False  # said once: the error envelope and the like are dropped
            raise BadInput(
                "Standard output is closed (e.g. '>&-'): the report has nowhere to go.",
                hint="Leave it open (e.g. > report.txt), or write the report to a file with -o "
                "FILE.",
            )
        return len(text)


def stand_in_for_closed() -> None:
    """A stand-in for each of ``sys.stdout`` and ``sys.stderr`` that is None."""
    if sys.stdout is None:
        sys.stdout = _Closed(refuse=True)
    if sys.stderr is None:
        sys.stderr = _Closed(refuse=False)


REFUSED = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO)
"""What a write to an open stdout can fail with: a full disk or quota under ``> report.txt``, a
file past its size limit, a terminal that hung up (a dropped ssh session)."""


def stdout_refused(exc: OSError) -> BadInput | None:
    """The error for a report standard output refused (exit 2, not the verdict's code: the
    report is lost), or None for another failure (a file's names its file). What stdout still
    buffers is sent to /dev/null, so the interpreter's own last flush fails no more."""
    if exc.filename is not None or exc.errno not in REFUSED:
        return None
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.close(null)
    except OSError:
        pass
    return BadInput(
        f"Standard output refused the report: {exc.strerror or exc} (e.g. a full disk under "
        "'> report.txt'); it is lost.",
        hint="Free some space there, or write the report elsewhere with -o FILE.",
    )
