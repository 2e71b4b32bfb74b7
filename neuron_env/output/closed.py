"""Standard streams the process was started without (``neuron-env doctor >&-``, a service whose
descriptors 1 and 2 are closed): Python sets ``sys.stdout`` to None, and the first report line
raised ``AttributeError: 'NoneType' object has no attribute 'write'`` with a traceback.

:func:`stand_in_for_closed` puts a stream in each such place: a closed stdout says, on the first
text written to it, that the report has nowhere to go (bad input, exit 2: ``-o FILE`` needs no
stdout and runs as usual); a closed stderr takes what it is given and shows nothing, as the
descriptor would have. Standard library only.
"""

from __future__ import annotations

import io
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
