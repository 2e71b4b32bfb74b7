"""What a command imports, from ``python -X importtime``: the total and the modules that cost most.

Shared by the benchmarks, so each prints beside its ratios the modules a regression would show up
in: the top-level imports by cumulative time (what the command asked for) and the single modules
by their own time (where the time is spent).
"""

from __future__ import annotations

import statistics
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Entry:
    """One line of ``-X importtime``: a module, its own and its cumulative microseconds."""

    module: str
    self_us: int
    cumulative_us: int
    depth: int


def parse(stderr: str) -> list[Entry]:
    """The entries of ``-X importtime`` output (other stderr lines are skipped)."""
    entries = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, cumulative, name = line.removeprefix("import time:").split("|")
        depth = (len(name) - len(name.lstrip(" "))) // 2
        entries.append(Entry(name.strip(), int(own), int(cumulative), depth))
    return entries


def total_ms(entries: list[Entry]) -> float:
    """All the run's import time: the sum of the top-level imports' cumulative times."""
    return sum(e.cumulative_us for e in entries if e.depth == 0) / 1000


def measure(argv: list[str], env: dict[str, str], runs: int) -> tuple[float, list[Entry]]:
    """The median import total of ``runs`` runs of ``argv`` (a Python script and its arguments,
    run by ``python -X importtime``), and the entries of the run nearest that median."""
    samples = []
    for _ in range(runs):
        proc = subprocess.run(
            [argv[0], "-X", "importtime", *argv[1:]],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
        entries = parse(proc.stderr)
        samples.append((total_ms(entries), entries))
    median = statistics.median(total for total, _ in samples)
    return median, min(samples, key=lambda s: abs(s[0] - median))[1]


def alone(entries: list[Entry], python: str, env: dict[str, str], runs: int) -> float:
    """The median import total of the same top-level modules as ``entries``, in the same order,
    imported by a fresh ``python`` that does nothing else.

    A command that starts work in a thread while it imports (doctor probes the host beside its
    imports) has that thread's time counted in the imports that wait for the interpreter lock;
    this is the imports' own cost."""
    modules = [e.module for e in entries if e.depth == 0]
    code = "\n".join(f"import {name}" for name in modules if name.isidentifier() or "." in name)
    samples = []
    for _ in range(runs):
        proc = subprocess.run(
            [python, "-X", "importtime", "-c", code],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            check=True,
        )
        samples.append(total_ms(parse(proc.stderr)))
    return statistics.median(samples)


def report(title: str, entries: list[Entry], top: int = 10, prefix: str = "") -> None:
    """Print the top-level imports by cumulative time and the modules by their own time."""
    print(f"{title}: {total_ms(entries):.1f} ms of imports (python -X importtime)")
    print("  top-level imports, cumulative:")
    for e in sorted((e for e in entries if e.depth == 0), key=lambda e: -e.cumulative_us)[:top]:
        print(f"    {e.cumulative_us / 1000:7.1f} ms  {e.module}")
    print("  modules by their own time:")
    own = [e for e in entries if e.module.startswith(prefix)] if prefix else entries
    for e in sorted(own, key=lambda e: -e.self_us)[:top]:
        print(f"    {e.self_us / 1000:7.1f} ms  {e.module}")


def script(path: Path) -> list[str]:
    """How to run a console script under ``-X importtime``: its interpreter, then the script."""
    first = path.read_text(encoding="utf-8").splitlines()[0]
    return [first.removeprefix("#!").strip(), str(path)] if first.startswith("#!") else [str(path)]
