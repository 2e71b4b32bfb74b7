"""How fast is ``neuron-env fleet report`` on 1,000 snapshots?

Generates a fleet of N snapshots from real ``neuron-env facts`` output on four scenario hosts of the
tests (healthy, driver not loaded, placeholders, missing kernel headers), then times, median of R
runs each, side by side:

* ``neuron-env fleet report DIR`` over the N snapshots (text, and JSON);
* the baseline: ``neuron-env doctor --facts ONE.json`` for a single snapshot;
* a bare interpreter start (``python -c pass``, neuron-env's interpreter): the floor.

Then the imports of the fleet report, from ``python -X importtime``, so that a regression names
its module.

Usage: python benchmarks/fleet_report.py [--hosts 1000] [--runs 5]
Target (issue 37): 1,000 snapshots < 1.5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks import importtime  # noqa: E402
from tests.support.hosts import (  # noqa: E402
    build_sysroot,
    build_target,
    imds_environment,
    load_scenario,
    write_matrix,
)

NEURON_ENV = Path(sys.executable).with_name("neuron-env")
SCENARIOS = {  # scenario → share of the fleet
    "healthy-trn2-ubuntu-26.04": 0.85,
    "driver-not-loaded": 0.05,
    "placeholders": 0.05,
    "kernel-headers-missing": 0.05,
}


def snapshot(name: str, where: Path) -> dict[str, object]:
    scenario = load_scenario(name)
    folder = where / name
    folder.mkdir()
    sysroot, python = build_sysroot(scenario, folder), build_target(scenario, folder)
    with imds_environment(scenario) as env:
        out = subprocess.run(
            [str(NEURON_ENV), "facts", "--sysroot", str(sysroot), "--python", str(python)],
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    doc: dict[str, object] = json.loads(out)
    return doc


def make_fleet(where: Path, hosts: int) -> Path:
    templates = {name: snapshot(name, where) for name in SCENARIOS}
    fleet = where / "fleet"
    fleet.mkdir()
    chooser = random.Random(1234)
    for i in range(hosts):
        name = chooser.choices(list(SCENARIOS), weights=list(SCENARIOS.values()))[0]
        doc = json.loads(json.dumps(templates[name]))
        facts = doc["facts"]
        facts["hostname"] = f"trn2-node-{i:04d}"
        facts["ec2"]["instance_id"] = f"i-{i:017x}"
        (fleet / f"i-{i:017x}.json").write_text(json.dumps(doc))
    return fleet


def median_seconds(argv: list[str], runs: int) -> tuple[float, float]:
    """The median wall seconds and the median CPU seconds (user + system, with the processes it
    waited for) of ``runs`` runs; the CPU time varies far less on a shared machine."""
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        fleet = make_fleet(where, args.hosts)
        matrix = write_matrix("allows-test-python", where)
        base = [str(NEURON_ENV), "--matrix-dir", str(matrix)]
        one = next(fleet.glob("*.json"))
        text = median_seconds([*base, "fleet", "report", str(fleet)], args.runs)
        as_json = median_seconds(
            [*base, "fleet", "report", str(fleet), "--format", "json"], args.runs
        )
        single = median_seconds([*base, "doctor", "--facts", str(one)], args.runs)
        bare = median_seconds([sys.executable, "-c", "pass"], args.runs)
        report_argv = [*importtime.script(NEURON_ENV), *base[1:], "fleet", "report", str(fleet)]
        imports, entries = importtime.measure(report_argv, dict(os.environ), args.runs)
    print(f"median of {args.runs} runs; baseline: neuron-env doctor --facts (one snapshot)")
    rows = {
        "doctor --facts, 1 snapshot": single,
        f"fleet report, {args.hosts} snapshots (text)": text,
        f"fleet report, {args.hosts} snapshots (json)": as_json,
        "python -c pass (bare interpreter)": bare,
    }
    print(f"  {'command':<40} {'wall':>8} {'× baseline':>11} {'CPU':>8} {'× baseline':>11}")
    for name, (wall, cpu) in rows.items():
        print(
            f"  {name:<40} {wall:6.3f} s {wall / single[0]:10.2f}× "
            f"{cpu:6.3f} s {cpu / single[1]:10.2f}×"
        )
    per_host = 1000 * (text[1] - single[1]) / args.hosts
    print(f"per host: {per_host:.2f} ms of CPU beyond one doctor run")
    for i, kind in enumerate(("wall", "CPU")):
        print(
            f"{kind}: fleet report, {args.hosts} snapshots = {text[i]:.3f} s (target: 1,000 "
            f"hosts < 1.5 s) = {text[i] / bare[i]:.1f}× a bare interpreter start"
        )
    importtime.report(f"fleet report (median {imports:.1f} ms)", entries)


if __name__ == "__main__":
    main()
