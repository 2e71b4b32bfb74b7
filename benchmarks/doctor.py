"""How fast is ``neuron-env doctor`` next to ``python -m torch.utils.collect_env``?

Side by side in one run, median of N alternating runs each:

* ``neuron-env doctor`` at level 0 on the healthy Trn2 scenario host of the tests (a sysroot and a
  real target venv) with a local IMDSv2 server answering like EC2 does;
* the same without the results remembered between runs (``NEURON_ENV_NO_MEMO=1``: a first run,
  or one whose matrix files changed, builds the matrix and the variable rules again);
* the same off EC2 (an IMDS endpoint that never answers: the probe's 1 s budget shows);
* ``python -m torch.utils.collect_env`` (facts only, no verdicts) in an interpreter with torch;
* ``neuron-env --help`` (start-up);
* a bare interpreter start (``python -c pass``, neuron-env's interpreter): the floor;

each in a folder without project files, as most projects' are (run from the checkout, doctor
would find and parse its pyproject.toml, which names neuron-env).

Then the imports of a doctor run, from ``python -X importtime`` (median of N): their total, and the
modules that cost most, so that a regression names its module; and the same modules imported
alone by a fresh interpreter: a doctor run probes the host in a thread while it imports, and
``-X importtime`` counts that thread's time in whichever import waits for the interpreter lock.

Usage: python benchmarks/doctor.py [--torch-python PATH] [--runs N]
Targets (issue 37): doctor ≤ 0.08 × collect_env and ≤ 8 × a bare interpreter start; the imports
of a doctor run ≤ 60 ms; --help ≤ 0.1 s.
"""

from __future__ import annotations

import argparse
import os
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
from tests.support.hosts import build_sysroot, build_target, load_scenario  # noqa: E402
from tests.support.imds import imds_server, instance_metadata, silent_endpoint  # noqa: E402

NEURON_ENV = Path(sys.executable).with_name("neuron-env")
BARE = "python -c pass (bare interpreter)"
ON_EC2 = "neuron-env doctor (level 0, on EC2)"
NO_MEMO = "neuron-env doctor (on EC2, no memo)"
HELP = "neuron-env --help"


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system, the command and the processes it waited for).

    On a shared machine the CPU time varies far less than the wall time: a loaded machine stretches
    the wall time of a short process most (the bare interpreter's most of all)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


Medians = dict[str, tuple[float, float]]


def median_of(runs: int, commands: dict[str, tuple[list[str], dict[str, str]]]) -> Medians:
    """Per command, the median wall and the median CPU seconds of ``runs`` alternating runs."""
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for argv, env in commands.values():  # untimed: writes the bytecode an installed package has,
        timed(argv, env)  # and the memos a second doctor run finds
    for _ in range(runs):  # alternate, so background load hits every command alike
        for name, (argv, env) in commands.items():
            samples[name].append(timed(argv, env))
    return {
        name: (statistics.median(w for w, _ in values), statistics.median(c for _, c in values))
        for name, values in samples.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--torch-python", default=sys.executable, help="interpreter with torch")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    check = subprocess.run([args.torch_python, "-c", "import torch"], capture_output=True)
    if check.returncode != 0:
        sys.exit(f"{args.torch_python} cannot import torch: pip install torch==2.13.0 first.")

    # Installed packages carry their bytecode (pip compiles it); an editable checkout does not, and
    # with PYTHONDONTWRITEBYTECODE set every run would compile neuron-env's sources again.
    base_env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("AWS_", "NEURON_")) and k != "PYTHONDONTWRITEBYTECODE"
    }
    scenario = load_scenario("healthy-trn2-ubuntu-26.04")
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        base_env["XDG_CACHE_HOME"] = str(where / "cache")  # this run's memos, none from before
        # Every command runs in a folder without project files, as in most projects: run from
        # the checkout, doctor would find and parse its pyproject.toml, which names neuron-env.
        os.chdir(where)
        sysroot, python = build_sysroot(scenario, where), build_target(scenario, where)
        doctor = [str(NEURON_ENV), "doctor", "--sysroot", str(sysroot), "--python", str(python)]
        with imds_server(instance_metadata("trn2.48xlarge")) as imds, silent_endpoint() as silent:
            on_ec2 = {**base_env, "AWS_EC2_METADATA_SERVICE_ENDPOINT": imds.endpoint}
            off_ec2 = {**base_env, "AWS_EC2_METADATA_SERVICE_ENDPOINT": silent}
            medians = median_of(
                args.runs,
                {
                    ON_EC2: (doctor, on_ec2),
                    NO_MEMO: (doctor, {**on_ec2, "NEURON_ENV_NO_MEMO": "1"}),
                    "neuron-env doctor (level 0, off EC2)": (doctor, off_ec2),
                    "python -m torch.utils.collect_env": (
                        [args.torch_python, "-m", "torch.utils.collect_env"],
                        base_env,
                    ),
                    HELP: ([str(NEURON_ENV), "--help"], base_env),
                    BARE: ([sys.executable, "-c", "pass"], base_env),
                },
            )
            run_argv = [*importtime.script(NEURON_ENV), *doctor[1:]]
            imports, entries = importtime.measure(run_argv, on_ec2, args.runs)
            imports_alone = importtime.alone(entries, run_argv[0], on_ec2, args.runs)
        os.chdir(REPO)
    report(medians, args.runs)
    bare = medians[BARE][0]
    print(
        f"imports of a doctor run = {imports:.1f} ms (median of {args.runs}; target ≤ 60 ms) "
        f"= {imports / 1000 / bare:.2f}× a bare interpreter start (wall)"
    )
    print(
        f"the same modules imported alone (no probe thread beside them) = {imports_alone:.1f} ms "
        f"(median of {args.runs}; target ≤ 60 ms)"
    )
    importtime.report("the doctor run nearest that median", entries)


def report(medians: Medians, runs: int) -> None:
    print(f"median of {runs} runs each, alternating; baseline: python -m torch.utils.collect_env")
    print(f"  {'command':<40} {'wall':>8} {'× baseline':>11} {'CPU':>8} {'× baseline':>11}")
    for i, kind in enumerate(("wall", "CPU")):
        baseline = medians["python -m torch.utils.collect_env"][i]
        bare = medians[BARE][i]
        if i == 0:
            for name, (wall, cpu) in medians.items():
                base_cpu = medians["python -m torch.utils.collect_env"][1]
                print(
                    f"  {name:<40} {wall:6.3f} s {wall / baseline:10.3f}× "
                    f"{cpu:6.3f} s {cpu / base_cpu:10.3f}×"
                )
        doctor, help_, cold = medians[ON_EC2][i], medians[HELP][i], medians[NO_MEMO][i]
        print(
            f"{kind}: doctor / collect_env = {doctor / baseline:.3f} (target ≤ 0.08); "
            f"doctor / bare interpreter start = {doctor / bare:.2f} (target ≤ 8); "
            f"--help = {help_:.3f} s = {help_ / bare:.2f}× a bare start (target ≤ 0.1 s); "
            f"without memos: {cold / baseline:.3f}× collect_env, {cold / bare:.2f}× a bare start"
        )
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average at the end (1, 5, 15 min): {load}")


if __name__ == "__main__":
    main()
