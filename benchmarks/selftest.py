"""How much does the self-test harness add to the cases' own time? And how long is `quick` on CPU?

Runs the quick level on the CPU device of an interpreter with torch, through the library API that
`neuron-env selftest` uses, and splits the suite's wall time into:

* worker start: spawning `python -I <worker>`, `import torch`, the device check (until "hello");
  baseline: `python -I -c "import torch"` alone, measured in the same run;
* cases: from each case's "start" to its "result" event, as neuron-env sees them; of which the
  measured runs (first call + repeats x steady) and the steady-state times alone;
* neuron-env's own share: the rest (streaming, parsing, models).

Usage: python benchmarks/selftest.py [--python PATH] [--runs 3]
PATH defaults to $NEURON_ENV_TEST_TORCH_VENV/bin/python, else .venv-torch/bin/python.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time
from pathlib import Path

from neuron_env.selftest import Progress, run_suite

REPO = Path(__file__).resolve().parents[1]


def default_python() -> Path:
    venv = os.environ.get("NEURON_ENV_TEST_TORCH_VENV") or str(REPO / ".venv-torch")
    return Path(venv) / "bin" / "python"


def import_torch_seconds(python: Path) -> float:
    """Until `import torch` has finished, as the worker's "hello" is (not until exit)."""
    start = time.perf_counter()
    code = "import torch; print('imported', flush=True)"
    argv = [str(python), "-I", "-c", code]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as proc:
        assert proc.stdout is not None
        proc.stdout.readline()
        elapsed = time.perf_counter() - start
        proc.wait()
    return elapsed


def one_run(python: Path) -> dict[str, float]:
    started: list[float] = []

    def progress(event: Progress) -> None:
        if event.kind == "started" and not started:
            started.append(time.perf_counter())

    start = time.perf_counter()
    result = run_suite(python, level="quick", device="cpu", progress=progress)
    wall = time.perf_counter() - start
    assert result.ok, result.details
    cases = result.cases
    case_wall = sum(c.wall_s or 0.0 for c in cases)
    measured = sum((c.first_call_s or 0.0) + (c.repeats or 0) * (c.steady_s or 0.0) for c in cases)
    return {
        "wall": wall,
        "start": started[0] - start,
        "cases": case_wall,
        "measured": measured,
        "steady": sum(c.steady_s or 0.0 for c in cases),
        "variants": len(cases),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", type=Path, default=default_python())
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    baseline = statistics.median(import_torch_seconds(args.python) for _ in range(args.runs + 1))
    runs = [one_run(args.python) for _ in range(args.runs)]
    m = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
    own = m["wall"] - m["start"] - m["cases"]
    print(
        f"selftest --level quick --device cpu: {int(m['variants'])} variants, "
        f"median of {args.runs} runs, {args.python}"
    )
    print(f"  suite wall time                  {m['wall']:7.2f} s")
    print(
        f"  worker start (import torch, ...)  {m['start']:7.2f} s"
        f"   baseline python -I -c 'import torch': {baseline:.2f} s"
    )
    print(f"  cases, start to result           {m['cases']:7.2f} s")
    print(f"    measured runs (first + repeats){m['measured']:7.2f} s")
    print(f"    steady-state times alone       {m['steady']:7.3f} s")
    print(f"  neuron-env's own share           {own:7.3f} s  ({own / m['wall']:.1%} of wall)")
    print("ratios:")
    print(f"  wall / sum of steady times       {m['wall'] / m['steady']:7.0f}x")
    print(f"  wall / measured runs             {m['wall'] / m['measured']:7.1f}x")
    print(f"  worker start / import torch      {m['start'] / baseline:7.2f}x")


if __name__ == "__main__":
    main()
