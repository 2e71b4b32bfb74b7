"""Benchmark: ``neuron-env install`` (uv) vs bare ``uv pip install`` vs the documented pip command.

All three install the same pins into a fresh venv from the same three local PEP 503 indexes on
127.0.0.1: the real CPU torch 2.13.0 wheel (PyTorch index), its real dependencies (default index)
and small torch-neuronx / neuronx-cc / nki wheels (Neuron index; the real ones are not public
outside the Neuron index). The real wheels are fetched once with ``pip download`` (the machine's
pip configuration applies to that one fetch) and cached.

Runs are interleaved (each round runs the three in rotated order) and every run starts with empty
uv and pip caches ("cold": a new machine), or, with ``--warm``, with caches filled by an untimed
first round. The ratios are of medians, measured side by side in one run.

With ``--stack`` every tool installs a whole training stack instead: the same pins plus the
companion ``torchtitan-neuron`` (Neuron index) and three user packages (default index; one needs
jinja2 and one filelock, real wheels), as ``neuron-env install --torch 2.13 torchtitan-neuron
user-a user-b user-c`` and the same set given to bare uv and pip.

    python benchmarks/install.py [--runs 3] [--warm] [--stack] [--wheels DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from neuron_env.probe.os_release import probe_os  # noqa: E402
from tests.support.indexes import WheelSpec, build_wheel, write_index  # noqa: E402

NEURON_ENV = Path(sys.executable).with_name("neuron-env")
UV = Path(sys.executable).with_name("uv")
TORCH = "2.13.0"
PINS = ["torch==2.13.0", "torch-neuronx==2.13.3.0.*", "neuronx-cc==2.28.7631.0", "nki==0.7.0"]
DOCUMENTED = ["torch-neuronx==2.13.*", "neuronx-cc==2.*", "nki"]
NEURON_WHEELS = [
    WheelSpec(
        "torch-neuronx", "2.13.3.0.1", requires=("torch==2.13.*", "neuronx-cc==2.*", "nki>=0.7")
    ),
    WheelSpec("neuronx-cc", "2.28.7631.0"),
    WheelSpec("nki", "0.7.0"),
    WheelSpec("torchtitan-neuron", "0.2.2+neuron.1", requires=("torch-neuronx",)),
]
#: --stack: the companion (pinned by the release) and the user's own packages (default index).
COMPANION = "torchtitan-neuron==0.2.2+neuron.1"
USER_WHEELS = [
    WheelSpec("user-a", "1.0", requires=("jinja2",)),
    WheelSpec("user-b", "2.0", requires=("filelock",)),
    WheelSpec("user-c", "0.3"),
]
USER_NAMES = [w.name for w in USER_WHEELS]


def fetch_wheels(cache: Path) -> Path:
    """The real torch wheel and its dependencies, downloaded once."""
    if not any(cache.glob("torch-*.whl")):
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--only-binary=:all:", f"torch=={TORCH}",
             "-d", str(cache)],
            check=True,
        )  # fmt: skip
    return cache


def serve_indexes(root: Path, wheels: Path) -> tuple[dict[str, str], list[subprocess.Popen[bytes]]]:
    """Three static indexes: neuron (built), pytorch (torch) and default (its dependencies)."""
    write_index(root / "neuron", NEURON_WHEELS, [])
    trees = {"pytorch": [w for w in wheels.glob("torch-*.whl")]}
    trees["default"] = [w for w in wheels.glob("*.whl") if not w.name.startswith("torch-")]
    built = root / "built"
    built.mkdir()
    trees["default"] += [build_wheel(built, spec) for spec in USER_WHEELS]
    for name, files in trees.items():
        _copy_index(root / name, files)
    urls, servers = {}, []
    for name in ("neuron", "pytorch", "default"):
        port_file = root / f"{name}.port"
        server = subprocess.Popen(
            [sys.executable, str(REPO / "tests/support/index_server.py"), str(root / name),
             "--port-file", str(port_file), "--access-log", str(root / f"{name}.log")],
        )  # fmt: skip
        servers.append(server)
        while not port_file.exists():
            time.sleep(0.02)
        urls[name] = f"http://127.0.0.1:{port_file.read_text()}/simple"
    return urls, servers


def _copy_index(root: Path, files: list[Path]) -> None:
    import hashlib

    from packaging.utils import canonicalize_name, parse_wheel_filename

    projects: dict[str, list[Path]] = {}
    for wheel in files:
        project = canonicalize_name(parse_wheel_filename(wheel.name)[0])
        directory = root / "simple" / project
        directory.mkdir(parents=True, exist_ok=True)
        target = directory / wheel.name
        os.link(wheel, target) if wheel.stat().st_dev == directory.stat().st_dev else shutil.copy(
            wheel, target
        )
        projects.setdefault(project, []).append(target)
    for project, wheels in projects.items():
        links = "".join(
            f'<a href="{w.name}#sha256={hashlib.sha256(w.read_bytes()).hexdigest()}">{w.name}</a>\n'
            for w in wheels
        )
        (root / "simple" / project / "index.html").write_text(f"<html><body>{links}</body></html>")


def matrix_dir(root: Path) -> Path:
    """The test release (it allows Python 3.11, which the real cp311 torch wheel needs)."""
    text = (REPO / "tests/data/install/matrix/2.90.0.toml").read_text()
    key = probe_os(Path("/")).key
    if key and key != "ubuntu-26.04":
        text += f'\n[os."{key}"]\nname = "Benchmark host"\nsupport = "supported"\nwheels = true\n'
    text = text.replace(
        'torch = ["2.14"]\nfamilies = ["trn2"]', 'torch = ["2.13", "2.14"]\nfamilies = ["trn2"]'
    )
    directory = root / "matrix"
    directory.mkdir()
    (directory / "2.90.0.toml").write_text(text)
    return directory


def isolated_env(root: Path, matrices: Path, caches: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_", "VIRTUAL_ENV"))}
    env.update(
        PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", UV_NO_CONFIG="1",
        UV_CACHE_DIR=str(caches / "uv"), PIP_CACHE_DIR=str(caches / "pip"),
        UV_PYTHON_DOWNLOADS="never", NEURON_ENV_MATRIX_DIR=str(matrices),
        XDG_STATE_HOME=str(root / "state"), PYTHONWARNINGS="ignore",
    )  # fmt: skip
    return env


STACK: list[str] = []  # --stack fills it: the extra requirements every tool installs


def run_neuron_env(
    venv: Path, urls: dict[str, str], env: dict[str, str]
) -> tuple[float, dict[str, float]]:
    argv = [str(NEURON_ENV), "install", "--torch", "2.13", "--venv", str(venv), "--python",
            sys.executable, "--backend", "uv", "--neuron-index", urls["neuron"], "--pytorch-index",
            urls["pytorch"], "--index-url", urls["default"], "--json", "--yes"]  # fmt: skip
    argv += [s.split("==")[0] for s in STACK]  # neuron-env pins the companion itself
    began = time.perf_counter()
    out = subprocess.run(argv, env=env, check=True, capture_output=True, text=True).stdout
    elapsed = time.perf_counter() - began
    timings: dict[str, float] = json.loads(out)["result"]["timings"]
    return elapsed, timings


def run_bare_uv(venv: Path, urls: dict[str, str], env: dict[str, str]) -> float:
    began = time.perf_counter()
    subprocess.run(
        [str(UV), "venv", "-q", "--python", sys.executable, str(venv)], env=env, check=True
    )
    subprocess.run(
        [str(UV), "pip", "install", "-q", "--python", str(venv / "bin" / "python"),
         "--index", f"neuron={urls['neuron']}", "--index", f"pytorch={urls['pytorch']}",
         "--default-index", urls["default"], *PINS, *STACK],
        env=env, check=True,
    )  # fmt: skip
    return time.perf_counter() - began


def run_bare_uv_then_import(venv: Path, urls: dict[str, str], env: dict[str, str]) -> float:
    """Bare uv followed by the check a careful user makes: does ``import torch`` work?"""
    began = time.perf_counter()
    run_bare_uv(venv, urls, env)
    code = "import torch; print(torch.__version__)"
    subprocess.run(
        [str(venv / "bin" / "python"), "-I", "-c", code], check=True, capture_output=True
    )
    return time.perf_counter() - began


def run_documented_pip(venv: Path, urls: dict[str, str], env: dict[str, str]) -> float:
    began = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], env=env, check=True)
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--upgrade", *DOCUMENTED,
         *STACK,
         "--index-url", urls["default"], "--extra-index-url", urls["neuron"],
         "--extra-index-url", urls["pytorch"]],
        env=env, check=True,
    )  # fmt: skip
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--warm", action="store_true", help="fill the caches in an untimed round")
    parser.add_argument(
        "--stack", action="store_true", help="a companion and user packages besides the pins"
    )
    cache_home = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    parser.add_argument("--wheels", type=Path, default=cache_home / "neuron-env" / "bench-wheels")
    args = parser.parse_args()

    if args.stack:
        STACK.extend([COMPANION, *USER_NAMES])
    wheels = fetch_wheels(args.wheels)
    root = Path(tempfile.mkdtemp(prefix="neuron-env-bench-"))
    urls, servers = serve_indexes(root, wheels)
    matrices = matrix_dir(root)
    tools = ["neuron-env", "uv", "uv+import", "pip"]
    results: dict[str, list[float]] = {tool: [] for tool in tools}
    phases: list[dict[str, float]] = []
    try:
        rounds = args.runs + (1 if args.warm else 0)
        for number in range(rounds):
            order = tools[number % len(tools) :] + tools[: number % len(tools)]
            for tool in order:
                caches = root / ("caches" if args.warm else f"caches-{number}-{tool}")
                env = isolated_env(root, matrices, caches)
                venv = root / f"{tool}-{number}"
                if tool == "neuron-env":
                    elapsed, timing = run_neuron_env(venv, urls, env)
                    if not args.warm or number > 0:
                        phases.append(timing)
                elif tool == "uv":
                    elapsed = run_bare_uv(venv, urls, env)
                elif tool == "uv+import":
                    elapsed = run_bare_uv_then_import(venv, urls, env)
                else:
                    elapsed = run_documented_pip(venv, urls, env)
                shutil.rmtree(venv)
                if args.warm and number == 0:
                    continue
                results[tool].append(elapsed)
                print(f"round {number}: {tool:10s} {elapsed:6.2f} s", flush=True)
    finally:
        for server in servers:
            server.kill()
        shutil.rmtree(root, ignore_errors=True)
    report(results, phases, warm=args.warm)


def report(results: dict[str, list[float]], phases: list[dict[str, float]], *, warm: bool) -> None:
    median = {tool: statistics.median(times) for tool, times in results.items()}
    split = {key: statistics.median(p.get(key, 0.0) for p in phases) for key in phases[0]}
    caches = "warm" if warm else "cold"
    stack = f" + {', '.join(STACK)}" if STACK else ""
    print(
        f"\ntorch 2.13.0 (real CPU wheel) + torch-neuronx, neuronx-cc, nki{stack}; {caches} caches;"
    )
    print(f"median of {len(results['uv'])} runs each, into a fresh venv:")
    labels = {
        "neuron-env": "neuron-env install (uv)",
        "uv": "bare uv pip install",
        "uv+import": "bare uv + import torch",
        "pip": "documented pip command",
    }
    for tool, label in labels.items():
        print(f"  {label:28s} {median[tool]:6.2f} s")
    print("  neuron-env phases: " + ", ".join(f"{k} {v:.2f} s" for k, v in split.items()))
    without_verify = median["neuron-env"] - split.get("verify", 0.0)
    print(f"\nneuron-env / bare uv:              {median['neuron-env'] / median['uv']:.2f}x")
    print(f"  without its import-torch check:  {without_verify / median['uv']:.2f}x")
    ratio = median["neuron-env"] / median["uv+import"]
    print(f"neuron-env / (bare uv + import torch): {ratio:.2f}x")
    print(f"documented pip / neuron-env:       {median['pip'] / median['neuron-env']:.2f}x")


if __name__ == "__main__":
    main()
