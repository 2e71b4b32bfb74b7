"""What does `neuron-env evaluate` cost beyond doing the same comparison by hand?

Evaluates tests/data/evaluate/transformer_block.py on the CPU device of an interpreter with torch,
through the library API that `neuron-env evaluate` uses, and side by side, in the same run:

* by hand: one `python -I` script that imports torch, builds the model from the same entry, runs
  forward + backward on a CPU copy (the reference) and on a second copy 1 + 5 times (the repeats),
  and compares the output with torch.allclose; the least a careful user would write;
* evaluate (eager), and evaluate --compile (adds a torch.compile stage with aot_eager on CPU).

Also splits evaluate's wall time into the worker's start (until "hello"), the stages, and
neuron-env's own share (the rest: spawning, streaming, parsing, models, advice).

Usage: python benchmarks/evaluate.py [--python PATH] [--runs 3]
PATH defaults to $NEURON_ENV_TEST_TORCH_VENV/bin/python, else .venv-torch/bin/python.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time
from pathlib import Path

from neuron_env.evaluate import Progress, Request, evaluate, parse_entry

REPO = Path(__file__).resolve().parents[1]
ENTRY = REPO / "tests" / "data" / "evaluate" / "transformer_block.py"

BY_HAND = """
import copy, runpy, sys, torch
made = runpy.run_path(sys.argv[1])["make"]()
model, x = made
def step(m):
    out = m(x)
    out.backward(torch.ones_like(out))
    return out
want = step(copy.deepcopy(model))
device_model = copy.deepcopy(model)
for _ in range(6):
    got = step(device_model)
assert torch.allclose(got, want, rtol=1e-3, atol=1e-3)
"""


def default_python() -> Path:
    venv = os.environ.get("NEURON_ENV_TEST_TORCH_VENV") or str(REPO / ".venv-torch")
    return Path(venv) / "bin" / "python"


def by_hand_seconds(python: Path) -> float:
    start = time.perf_counter()
    subprocess.run([str(python), "-I", "-c", BY_HAND, str(ENTRY)], check=True, capture_output=True)
    return time.perf_counter() - start


def evaluate_run(python: Path, compile: bool) -> dict[str, float]:
    seen: dict[str, float] = {}

    def progress(event: Progress) -> None:
        now = time.perf_counter()
        if event.kind == "started" or (event.kind == "start" and event.name == "load"):
            seen.setdefault(event.kind, now)
        elif event.kind == "stage":
            seen["last"] = now

    request = Request(python, parse_entry(str(ENTRY) + ":make"), device="cpu", compile=compile)
    start = time.perf_counter()
    result = evaluate(request, progress=progress)
    wall = time.perf_counter() - start
    assert result.ok, result.details
    worker_start = seen["started"] - start
    stages = seen["last"] - seen["start"]  # loading the entry, the reference, each stage
    return {
        "wall": wall,
        "start": worker_start,
        "stages": stages,
        "own": wall - worker_start - stages,
    }


def median(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", type=Path, default=default_python())
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    by_hand = statistics.median(by_hand_seconds(args.python) for _ in range(args.runs))
    eager = [evaluate_run(args.python, compile=False) for _ in range(args.runs)]
    compiled = [evaluate_run(args.python, compile=True) for _ in range(args.runs)]
    print(f"evaluate transformer_block.py --device cpu, median of {args.runs} runs, {args.python}")
    print(f"  by hand (python -I script)            {by_hand:7.2f} s")
    for label, runs in (("evaluate", eager), ("evaluate --compile", compiled)):
        wall, start, stages, own = (median(runs, k) for k in ("wall", "start", "stages", "own"))
        print(f"  {label:<38}{wall:7.2f} s")
        print(f"    worker start (import torch, device) {start:7.2f} s")
        print(f"    load + stages, start to result      {stages:7.2f} s")
        print(f"    neuron-env's own share              {own:7.3f} s  ({own / wall:.1%} of wall)")
    print("ratios:")
    print(f"  evaluate / by hand                    {median(eager, 'wall') / by_hand:7.2f}x")
    print(f"  evaluate --compile / by hand          {median(compiled, 'wall') / by_hand:7.2f}x")


if __name__ == "__main__":
    main()
