"""Refresh ``matrices/parsed.json`` after editing a shipped matrix file (a maintainer tool).

Run from a checkout: ``python scripts/refresh_parsed.py [DIR]``. It lives here, not in the
package, because only maintainers write ``parsed.json``: the wheel ships the file, never the tool.
The reading, validating and writing are the library's (:mod:`neuron_env.matrix.parsed`); this
file holds the command line and what an interrupt means for the file on disk.
"""

from __future__ import annotations

import sys
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent
# The checkout's own neuron_env renders the checkout's files, whichever neuron-env is installed.
sys.path.insert(0, str(CHECKOUT))

from neuron_env.errors import EXIT_BAD_INPUT, EXIT_FAILED  # noqa: E402
from neuron_env.escape import terminal  # noqa: E402
from neuron_env.matrix.parsed import PARSED_FILE, render, write  # noqa: E402
from neuron_env.signals import (  # noqa: E402
    held_interrupts,
    interrupt_exit_code,
    sigterm_as_interrupt,
)

USAGE = "usage: python scripts/refresh_parsed.py [DIR]"
HELP = f"""{USAGE}

Refresh DIR's parsed.json (default: the checkout's matrices/) after editing its *.toml files.
Every file is read and validated as the loader does, then parsed.json is replaced atomically.

Exit status: 0 written, 1 cannot write, 2 a file that is not a valid release (or no files),
130 interrupted (the message says whether parsed.json was replaced).

Example, after editing matrices/2.34.0.toml in a checkout:
  python scripts/refresh_parsed.py"""


def main(argv: list[str]) -> int:
    """Refresh DIR's (default: the checkout's ``matrices/``) ``parsed.json``."""
    if argv[:1] in (["-h"], ["--help"]):
        print(HELP)
        return 0
    if len(argv) > 1:
        print(USAGE, file=sys.stderr)
        return EXIT_BAD_INPUT
    directory = Path(argv[0]) if argv else CHECKOUT / "matrices"
    problem = _unusable(directory)
    if problem:
        print(f"error: {terminal(str(directory))} {problem}.", file=sys.stderr)
        return EXIT_BAD_INPUT
    return refresh(directory, len(list(directory.glob("*.toml"))))


def _unusable(directory: Path) -> str | None:
    if not directory.is_dir():
        return "is not a directory"
    if not any(directory.glob("*.toml")):
        return "holds no *.toml matrix files"
    return None


def refresh(directory: Path, count: int) -> int:
    """Render and replace ``parsed.json``. Ctrl-C or SIGTERM while the files are read stops the
    refresh with nothing written; during the write they wait for the replace, so that what is
    said is what happened."""
    target: Path | None = None
    late = False  # a signal that came once parsed.json was replaced
    try:
        with sigterm_as_interrupt():
            text = render(directory)
            with held_interrupts() as held:
                target = write(directory, text)
            late = bool(held)
    except KeyboardInterrupt:
        if target is None:
            print(
                f"Interrupted. The refresh of {PARSED_FILE} was stopped. "
                f"{PARSED_FILE} is as it was.",
                file=sys.stderr,
            )
            return interrupt_exit_code()
        late = True
    except ValueError as exc:  # a file that does not load: bad input
        print(f"error: {terminal(str(exc))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as exc:
        print(f"error: cannot write {PARSED_FILE}: {terminal(str(exc))}", file=sys.stderr)
        return EXIT_FAILED
    print(f"Wrote {terminal(str(target))} ({count} matrix file{'s' if count != 1 else ''}).")
    if late:
        print("Interrupted after the refresh had finished.", file=sys.stderr)
        return interrupt_exit_code()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
