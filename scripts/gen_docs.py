"""Write docs/_generated/: the real output of neuron-env's commands, for the documentation site.

Every command page of the site includes its command's ``--help`` and, where a command can run
anywhere without changing anything, what it prints, all taken from the installed ``neuron-env``
by this script, so the pages cannot drift from the tool. Each file is one console block:
``$ neuron-env ARGS`` and its output (stdout and stderr as one stream).

Usage: python scripts/gen_docs.py [--out DIR] [--capture --torch-python PATH]
(a maintainer tool, not in the wheel)
A test regenerates into a temporary folder and compares the bytes; run this after changing a
help text or an output, and commit docs/_generated/.

Timings differ on every run, so ``collectives``' table and chart come from one real run kept in
docs/_captured/collectives-gloo.json (``--capture`` runs it again: gloo, 2 ranks, on this
machine), rendered by the package's own text and chart renderers: table and chart always agree.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from neuron_env.collectives.html_report import chart
from neuron_env.collectives.models import CollectivesResult, Failure, Peak, Row
from neuron_env.collectives.output import COLLECTIVES
from neuron_env.output.formats import CollectivesFormat

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "_generated"
SCAN_SAMPLE = ROOT / "tests" / "data" / "scan" / "corpus" / "xla_training_script.py"
COLLECTIVES_CAPTURE = ROOT / "docs" / "_captured" / "collectives-gloo.json"
COLLECTIVES_ARGS = ["collectives", "--backend", "gloo", "--nproc-per-node", "2", "--python",
                    ".venv-torch/bin/python", "--sizes", "8,128,2K,32K,512K,8M,32M"]  # fmt: skip

# Commands that read only the shipped matrix (or a sample file) and change nothing: the same
# output on every machine. (name of the file, arguments).
EXAMPLES: list[tuple[str, list[str]]] = [
    ("matrix-list", ["matrix", "list"]),
    (
        "matrix-resolve",
        [
            "matrix",
            "resolve",
            "--torch",
            "2.14",
            "--python-version",
            "3.12",
            "--os",
            "ubuntu-26.04",
        ],
    ),
    ("matrix-resolve-unsupported", ["matrix", "resolve", "--torch", "2.15"]),
    ("doctor-list-checks", ["doctor", "--list-checks"]),
    ("install-system", ["install", "--system", "--os", "ubuntu-26.04"]),
    ("selftest-list", ["selftest", "--list"]),
    ("scan-example", ["scan", "train.py"]),
]


def neuron_env() -> list[str]:
    """The console script beside this interpreter: the help then says ``neuron-env``."""
    script = Path(sys.executable).parent / "neuron-env"
    if not script.is_file():
        sys.exit(f"error: {script} not found: install neuron-env into this environment first.")
    return [str(script)]


def clean_env(columns: int = 100) -> dict[str, str]:
    """A fixed width and no colour, and none of the user's neuron-env settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEURON_ENV_")}
    env.update(
        COLUMNS=str(columns), LINES="50", NO_COLOR="1", TERM="dumb", PYTHONIOENCODING="utf-8"
    )
    env.pop("FORCE_COLOR", None)
    return env


def run(args: list[str], cwd: Path) -> str:
    """What ``neuron-env ARGS`` prints, as a console block."""
    # A printed command names neuron-env by this checkout's absolute path (a fresh shell would not
    # find it): shown as plain neuron-env, and left unwrapped so no page depends on that path.
    helping = "--help" in args
    done = subprocess.run(
        [*neuron_env(), *args],
        cwd=cwd,
        env=clean_env(100 if helping else 1000),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
    text = done.stdout.replace(neuron_env()[0], "neuron-env")
    body = "\n".join(line.rstrip() for line in text.rstrip().splitlines())
    return f"```console\n$ neuron-env {' '.join(args)}\n{body}\n```\n"


def subcommands(help_text: str) -> list[str]:
    """The names listed under ``Commands:`` in a group's help."""
    names, listing = [], False
    for line in help_text.splitlines():
        if line.startswith("Commands:"):
            listing = True
        elif listing and line.startswith("  ") and not line.startswith("   "):
            names.append(line.split()[0])
        elif listing and line and not line.startswith(" "):
            listing = False
    return names


def write_help(out: Path, path: list[str], cwd: Path) -> None:
    """``--help`` of a command and, for a group, of each of its subcommands."""
    block = run([*path, "--help"], cwd)
    (out / f"{'-'.join(path) or 'neuron-env'}-help.md").write_text(block, encoding="utf-8")
    for name in subcommands(block):
        write_help(out, [*path, name], cwd)


def generate(out: Path) -> None:
    """Write every generated page into ``out`` (emptied first)."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        shutil.copyfile(SCAN_SAMPLE, cwd / "train.py")
        write_help(out, [], cwd)
        for name, args in EXAMPLES:
            (out / f"{name}.md").write_text(run(args, cwd), encoding="utf-8")
    write_collectives(out, json.loads(COLLECTIVES_CAPTURE.read_text(encoding="utf-8")))


def collectives_result(doc: dict[str, Any]) -> CollectivesResult:
    """The result a ``collectives --format json`` document holds (fields added later ignored)."""

    def build(kind: type[Any], data: dict[str, Any]) -> Any:
        names = {f.name for f in dataclasses.fields(kind)}
        return kind(**{k: v for k, v in data.items() if k in names})

    result: CollectivesResult = build(CollectivesResult, doc)
    result.rows = [build(Row, r) for r in doc["rows"]]
    result.failures = [build(Failure, f) for f in doc["failures"]]
    result.peak = build(Peak, doc["peak"]) if doc.get("peak") else None
    return result


def write_collectives(out: Path, doc: dict[str, Any]) -> None:
    """The captured run's table as the command printed it, and its chart as the HTML page
    draws it (an inline SVG, shown as it is by the site)."""
    result = collectives_result(doc)
    text = COLLECTIVES.to_format(CollectivesFormat.text).render(result).rstrip()
    table = f"```console\n$ neuron-env {' '.join(COLLECTIVES_ARGS)}\n{text}\n```\n"
    (out / "collectives-gloo-table.md").write_text(table, encoding="utf-8")
    svg = f'<div class="collectives-chart">\n{chart(result)}\n</div>\n'
    (out / "collectives-gloo-chart.md").write_text(svg, encoding="utf-8")
    # The same chart as a file of its own, for the README (a page that cannot hold inline SVG).
    standalone = chart(result).replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1)
    (out / "collectives-gloo.svg").write_text(standalone + "\n", encoding="utf-8")


def capture_collectives(torch_python: Path) -> None:
    """Run the sweep once on this machine and keep its JSON report for the pages."""
    args = [*COLLECTIVES_ARGS[:-3], str(torch_python), *COLLECTIVES_ARGS[-2:], "--format", "json"]
    done = subprocess.run([*neuron_env(), *args], capture_output=True, text=True, timeout=600,
                          env=clean_env(), check=False)  # fmt: skip
    if done.returncode != 0:
        sys.exit(f"error: the capture failed (exit {done.returncode}):\n{done.stdout}{done.stderr}")
    COLLECTIVES_CAPTURE.parent.mkdir(parents=True, exist_ok=True)
    COLLECTIVES_CAPTURE.write_text(done.stdout, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help="folder to write")
    parser.add_argument("--capture", action="store_true", help="run collectives' sweep again first")
    parser.add_argument(
        "--torch-python", type=Path, help="with --capture: an interpreter with torch"
    )
    args = parser.parse_args()
    if args.capture:
        if args.torch_python is None:
            parser.error("--capture needs --torch-python PATH (an interpreter with torch)")
        capture_collectives(args.torch_python)
    generate(args.out)


if __name__ == "__main__":
    main()
