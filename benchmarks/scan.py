"""What does ``neuron-env scan`` cost, and how right is it on the corpus?

Side by side in one run, median of N alternating runs each, every command in a fresh interpreter:

1. ``neuron-env scan TREE --format json`` (walk, parse, resolve names, match every rule, render)
   against the baseline ``ast.parse`` of the same files (those scan walks), nothing else.
   TREE defaults to this interpreter's standard library (few torch uses: shows the cost of files
   that cannot match); ``--tree .venv/lib/python3.11/site-packages/torch`` is the worst case for
   the rules (every file imports torch).
2. The text report against the JSON report for thousands of findings (a generated file with
   ``--findings`` of them, 6,000 by default: more than GitHub's SARIF limit).
3. Precision and recall on tests/data/scan/corpus, overall and per rule: every ``# expect: rule``
   annotation (``# expect at line N: rule`` in a Dockerfile) is a finding that must be reported
   on that line (of that notebook cell), anything else reported is a false positive; the
   ``traps_*`` files hold only look-alikes.

Usage: python benchmarks/scan.py [--tree DIR] [--runs N] [--findings N]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections import Counter
from pathlib import Path

from neuron_env.matrix import load_matrix
from neuron_env.scan import rules_for, scan_file
from neuron_env.scan.engine import ScanOptions, scanned_files

NEURON_ENV = Path(sys.executable).with_name("neuron-env")
CORPUS = Path(__file__).resolve().parent.parent / "tests" / "data" / "scan" / "corpus"
EXPECT = re.compile(r"#\s*expect:\s*([\w\-, ]+)")
EXPECT_AT = re.compile(r"^#\s*expect at line (\d+):\s*([\w\-, ]+)$")
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


def side_by_side(commands: dict[str, list[str]], runs: int) -> dict[str, float]:
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):  # alternate, so background load hits both alike
        for name, argv in commands.items():
            samples[name].append(timed(argv))
    medians = {name: statistics.median(values) for name, values in samples.items()}
    for name, seconds in medians.items():
        print(f"  {name:<44} {seconds:6.2f} s")
    return medians


def scan_against_parse(tree: Path, runs: int) -> None:
    files = [str(each.path) for each in scanned_files([tree], ScanOptions(tree))]
    listing = Path(tempfile.mkdtemp()) / "files.txt"
    listing.write_text("\n".join(files))
    print(f"{tree}: {len(files)} files, median of {runs} runs")
    baseline, scan = side_by_side(
        {
            "ast.parse of the same files (baseline)": [
                sys.executable,
                "-c",
                PARSE_ALL,
                str(listing),
            ],
            "neuron-env scan": [str(NEURON_ENV), "scan", str(tree), "--format", "json"],
        },
        runs,
    ).values()
    print(f"  scan / parse: {scan / baseline:.2f}×, {len(files) / scan:,.0f} files/s")


def text_against_json(findings: int, runs: int) -> None:
    many = Path(tempfile.mkdtemp()) / "many.py"
    lines = ["import torch", *(f"x{i} = torch.ones(1).to('xla')" for i in range(findings))]
    many.write_text("\n".join(lines) + "\n")
    print(f"one file with {findings:,} findings, median of {runs} runs")
    scan = [str(NEURON_ENV), "scan", str(many)]
    as_json, as_text = side_by_side(
        {
            "--format json": [*scan, "--format", "json"],
            "--format text": [*scan, "--format", "text"],
        },
        runs,
    ).values()
    print(f"  text / json: {as_text / as_json:.2f}×")


def expected(path: Path) -> Counter[tuple[int | None, int, str]]:
    if path.suffix == ".ipynb":
        notebook = json.loads(path.read_text(encoding="utf-8"))
        parts = [(n, "".join(c["source"])) for n, c in enumerate(notebook["cells"], start=1)]
    else:
        parts = [(None, path.read_text(encoding="utf-8"))]
    wanted: Counter[tuple[int | None, int, str]] = Counter()
    for cell, text in parts:
        for number, line in enumerate(text.splitlines(), start=1):
            if match := EXPECT.search(line):
                wanted.update((cell, number, rule.strip()) for rule in match.group(1).split(","))
            elif at := EXPECT_AT.match(line):
                rules = at.group(2).split(",")
                wanted.update((cell, int(at.group(1)), rule.strip()) for rule in rules)
    return wanted


def corpus_precision_recall() -> None:
    rules = rules_for(load_matrix().get(None))
    files = [p for p in sorted(CORPUS.iterdir()) if p.is_file() and p.suffix != ".md"]
    per_rule: dict[str, Counter[str]] = {}
    for path in files:
        if path.read_text(encoding="utf-8").startswith("# release:"):
            continue  # written for another release's rules
        found = Counter((f.cell, f.span.line, f.rule.id) for f in scan_file(path, path.name, rules))
        wanted = expected(path)
        for part, kind in (
            (found & wanted, "true"),
            (found - wanted, "false"),
            (wanted - found, "missed"),
        ):
            for (_, _, rule), n in part.items():
                per_rule.setdefault(rule, Counter())[kind] += n
    total = sum((c for c in per_rule.values()), Counter())
    traps = sum(1 for p in files if p.name.startswith("traps_"))
    print(
        f"corpus: {len(files)} files ({traps} of look-alikes only), "
        f"{total['true'] + total['missed']} expected findings"
    )
    print(f"  {'rule':<24} {'precision':>9} {'recall':>7}  sites")
    for rule, counts in [("all rules", total), *sorted(per_rule.items())]:
        found, labelled = counts["true"] + counts["false"], counts["true"] + counts["missed"]
        precision = counts["true"] / found if found else 1.0
        recall = counts["true"] / labelled if labelled else 1.0
        print(f"  {rule:<24} {precision:>9.1%} {recall:>7.1%}  {labelled}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tree", type=Path, default=Path(sysconfig.get_paths()["stdlib"]))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--findings", type=int, default=6000)
    args = parser.parse_args()
    scan_against_parse(args.tree, args.runs)
    text_against_json(args.findings, args.runs)
    corpus_precision_recall()


if __name__ == "__main__":
    main()
