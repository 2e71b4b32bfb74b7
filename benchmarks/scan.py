"""How much does ``neuron-env scan`` cost next to merely parsing the same files?

Side by side in one run, median of N alternating runs each, both in a fresh interpreter:

* ``neuron-env scan TREE --format json`` (walk, parse, resolve names, match every rule, render);
* the baseline: ``ast.parse`` of the same files (those scan walks: no virtualenvs,
  site-packages or hidden directories), nothing else.

TREE defaults to this interpreter's standard library (few torch uses: shows the cost of files that
cannot match). Point it at PyTorch's own sources, the worst case for the rules (every file imports
torch), e.g. ``--tree .venv/lib/python3.11/site-packages/torch``.

Usage: python benchmarks/scan.py [--tree DIR] [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from neuron_env.scan.engine import ScanOptions, python_files

NEURON_ENV = Path(sys.executable).with_name("neuron-env")
PARSE_ALL = """
import ast, pathlib, sys, warnings
warnings.simplefilter("ignore")
for path in pathlib.Path(sys.argv[1]).read_text().splitlines():
    try:
        ast.parse(pathlib.Path(path).read_bytes())
    except (SyntaxError, ValueError):
        pass
"""


def timed(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tree", type=Path, default=Path(sysconfig.get_paths()["stdlib"]))
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    files = [str(path) for path, _ in python_files([args.tree], ScanOptions(args.tree))]
    listing = Path(tempfile.mkdtemp()) / "files.txt"
    listing.write_text("\n".join(files))
    commands = {
        "ast.parse of the same files (baseline)": [sys.executable, "-c", PARSE_ALL, str(listing)],
        "neuron-env scan": [str(NEURON_ENV), "scan", str(args.tree), "--format", "json"],
    }
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.runs):  # alternate, so background load hits both alike
        for name, argv in commands.items():
            samples[name].append(timed(argv))
    print(f"{args.tree}: {len(files)} files, median of {args.runs} runs")
    medians = {name: statistics.median(values) for name, values in samples.items()}
    for name, seconds in medians.items():
        print(f"  {name:<40} {seconds:6.2f} s")
    baseline, scan = medians.values()
    print(f"  scan / parse: {scan / baseline:.2f}×")


if __name__ == "__main__":
    main()
