"""Helpers for the install tests: run an install, fingerprint an environment, find leftovers."""

from __future__ import annotations

import ctypes
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.support.cli import Result, cli_argv, cli_runner
from tests.support.indexes import Indexes

NeuronEnv = Callable[..., Result]
StartIndexes = Callable[..., Indexes]


def isolated_environment(tmp_path: Path, install_matrix_dir: Path) -> dict[str, str]:
    """The isolated environment of the install tests (no pip/uv configuration of this machine)."""
    dropped = ("PIP_", "UV_", "NEURON_ENV_", "VIRTUAL_ENV")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    env.update(
        PIP_CONFIG_FILE=os.devnull,
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_RETRIES="0",
        PIP_DEFAULT_TIMEOUT="20",
        PIP_CACHE_DIR=str(tmp_path / "pip-cache"),
        UV_NO_CONFIG="1",
        UV_CACHE_DIR=str(tmp_path / "uv-cache"),
        UV_HTTP_RETRIES="0",
        UV_PYTHON_DOWNLOADS="never",
        XDG_STATE_HOME=str(tmp_path / "state"),
        NEURON_ENV_MATRIX_DIR=str(install_matrix_dir),
        NO_COLOR="1",
        COLUMNS="200",
    )
    return env


def installed(venv: Path) -> dict[str, str]:
    """Distribution name → version in ``venv``, read by its own interpreter."""
    code = (
        "import json; from importlib import metadata; print(json.dumps("
        "{d.metadata['Name'].lower(): d.version for d in metadata.distributions()}))"
    )
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-I", "-c", code], capture_output=True, text=True, check=True
    ).stdout
    versions: dict[str, str] = json.loads(out)
    return versions


def python_here() -> str:
    """The interpreter running the tests: the base for the environments the tests create."""
    return sys.executable


def install(
    neuron_env: NeuronEnv, venv: Path, urls: list[str], *extra: str, torch: str = "2.14"
) -> Result:
    """``neuron-env install`` into ``venv``, created from the interpreter running the tests."""
    return neuron_env(
        "install", "--torch", torch, "--venv", str(venv), "--python", python_here(), *urls, *extra
    )


def start_install(
    env: dict[str, str], venv: Path, urls: list[str], *extra: str, torch: str = "2.14"
) -> subprocess.Popen[str]:
    """The same install in the background, for tests that interrupt it."""
    argv = cli_argv("install", "--torch", torch, "--venv", str(venv))
    argv += ["--python", python_here(), *urls, *extra]
    return subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def fingerprint(venv: Path) -> dict[str, str]:
    """Every file and link under ``venv`` with its content hash or link target."""
    found = {}
    for root, dirs, files in os.walk(venv):
        for name in sorted(dirs + files):
            path = Path(root) / name
            rel = str(path.relative_to(venv))
            if path.is_symlink():
                found[rel] = "-> " + os.readlink(path)
            elif path.is_file():
                found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def leftovers(parent: Path) -> list[str]:
    """Staging directories (or anything else neuron-env names) left beside the target."""
    return sorted(p.name for p in parent.iterdir() if "neuron-env" in p.name)


def run_in(venv: Path, program: str, *args: str) -> str:
    return subprocess.run(
        [str(venv / "bin" / program), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def flat(text: str) -> str:
    """``text`` with its line wrapping undone, for matching sentences of wrapped messages."""
    return " ".join(text.split())


def install_env(tmp: Path, matrix_dir: Path) -> dict[str, str]:
    """The isolated environment of the install tests (no pip/uv configuration of this machine)."""
    return isolated_environment(tmp, matrix_dir)


def write_install_matrix(directory: Path) -> Path:
    """The install tests' release file, listing this host's OS (see ``install_matrix_dir``)."""
    from neuron_env.probe.os_release import probe_os
    from tests.support.indexes import DATA

    text = (DATA / "matrix" / "2.90.0.toml").read_text()
    key = probe_os(Path("/")).key
    if key and key != "ubuntu-26.04":
        text += f'\n[os."{key}"]\nname = "The test host"\nsupport = "supported"\nwheels = true\n'
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "2.90.0.toml").write_text(text)
    return directory


def run_cli(
    env: dict[str, str],
    *args: str,
    timeout: float = 300,
    preexec_fn: Callable[[], None] | None = None,
) -> Result:
    """The real console script with ``env``, as a user would run it."""
    return cli_runner(base_env=env, timeout=timeout)(*args, preexec_fn=preexec_fn)


def obeying_permissions() -> Callable[[], None] | None:
    """A ``preexec_fn`` under which root obeys file permissions (None when not root).

    Root bypasses them through CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH; dropping both from the
    bounding set before exec gives the command what any user would see for an unreadable or
    unwritable directory.
    """
    if os.geteuid() != 0:
        return None

    def drop() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        for capability in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
            if libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")

    return drop


_PR_CAPBSET_DROP = 24
_CAP_DAC_OVERRIDE = 1
_CAP_DAC_READ_SEARCH = 2


class PrebuiltEnvs:
    """Environments that tests start from ("an environment with 2.13", a fresh ``python -m venv``),
    each made once per test run and copied to where a test wants it.

    ``root`` is shared by the pytest-xdist workers of a run: the first worker to need an
    environment makes it under a lock, the others wait for it and copy it. The copy is moved the
    way ``neuron-env install`` moves its staging venv into place: every file (other than compiled
    ones) that names the source path is rewritten to name the copy.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.built: dict[tuple[str, ...], tuple[Path, list[Path]]] = {}

    def copy(self, venv: Path, *extra: str, torch: str) -> None:
        """``venv`` as ``install --torch TORCH EXTRA...`` from the standard indexes makes it."""
        self._copy(("install", torch, *extra), venv)

    def plain_venv(self, venv: Path) -> None:
        """``venv`` as ``python -m venv`` (pip included) makes it from the tests' interpreter, for
        tests whose subject is not how a venv is created."""
        self._copy(("venv",), venv)

    def _copy(self, key: tuple[str, ...], venv: Path) -> None:
        if key not in self.built:
            self.built[key] = self._shared(key)
        source, naming = self.built[key]
        shutil.copytree(source, venv, symlinks=True)
        old, new = os.fsencode(source), os.fsencode(venv)
        for relative in naming:
            path = venv / relative
            path.write_bytes(path.read_bytes().replace(old, new))

    def _shared(self, key: tuple[str, ...]) -> tuple[Path, list[Path]]:
        """The environment for ``key`` under ``root`` and its files that name its path, made by
        whichever process asks first (the others wait on the lock, then read what it wrote)."""
        name = hashlib.sha256("\0".join(key).encode()).hexdigest()[:12]
        home, ready = self.root / name, self.root / f"{name}.json"
        self.root.mkdir(parents=True, exist_ok=True)
        with (self.root / f"{name}.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not ready.exists():
                shutil.rmtree(home, ignore_errors=True)
                venv = self._build(home, key)
                ready.write_text(json.dumps([str(p) for p in _naming(venv)]))
        return home / "env", [Path(p) for p in json.loads(ready.read_text())]

    def _build(self, tmp: Path, key: tuple[str, ...]) -> Path:
        venv = tmp / "env"
        if key == ("venv",):
            subprocess.run([python_here(), "-m", "venv", str(venv)], check=True, timeout=300)
            return venv
        from tests.support.indexes import start_indexes

        running = start_indexes(tmp / "indexes")
        try:
            env = install_env(tmp, write_install_matrix(tmp / "matrix"))
            args = ["install", "--torch", key[1], "--venv", str(venv), "--python", python_here()]
            result = run_cli(env, *args, *running.args(), *key[2:])
        finally:
            running.stop()
        assert result.returncode == 0, result.stderr
        return venv


def _naming(venv: Path) -> list[Path]:
    """The files under ``venv`` that name its path (compiled files, which hold it only as the
    source file name of their tracebacks, left out)."""
    needle = os.fsencode(venv)
    found = []
    for root, _, files in os.walk(venv):
        for name in files:
            path = Path(root) / name
            if path.is_symlink() or path.suffix == ".pyc":
                continue
            data = path.read_bytes()
            if needle in data and b"\0" not in data:
                found.append(path.relative_to(venv))
    return found
