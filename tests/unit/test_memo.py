"""Results remembered between runs (``neuron_env/memo.py``): the same result as building it, never
a stale one, never one read from a file someone else could have written."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from neuron_env.errors import MatrixError
from neuron_env.matrix import load_matrix
from neuron_env.memo import memo_folder, remembered
from tests.support.cli import DATA, REPO


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("NEURON_ENV_NO_MEMO", raising=False)
    monkeypatch.delenv("NEURON_ENV_MATRIX_DIR", raising=False)
    return tmp_path / "cache" / "neuron-env"


def test_the_matrix_comes_back_equal_from_a_private_file(cache: Path) -> None:
    first = load_matrix()
    assert (cache / "matrix.pickle").is_file()
    assert load_matrix() == first
    assert cache.stat().st_mode & 0o777 == 0o700
    assert (cache / "matrix.pickle").stat().st_mode & 0o777 == 0o600


def test_an_edited_release_file_is_read_again_and_a_broken_one_is_still_an_error(
    cache: Path, tmp_path: Path
) -> None:
    shipped = load_matrix().latest()
    extra = tmp_path / "extra"
    extra.mkdir()
    release_file = extra / f"{shipped.version}.toml"
    assert shipped.origin is not None
    text = shipped.origin.read_text(encoding="utf-8")
    release_file.write_text(text, encoding="utf-8")
    assert load_matrix([extra]).latest().origin == release_file
    release_file.write_text(text.replace("[release]", "[release]\nbogus-key = 1", 1), "utf-8")
    with pytest.raises(MatrixError):
        load_matrix([extra])
    release_file.write_text(text, encoding="utf-8")
    assert load_matrix([extra]).latest().origin == release_file
    release_file.write_text(text + "\n# edited\n", encoding="utf-8")
    assert load_matrix([extra]).latest().origin == release_file  # read again: a new key


def plant(cache: Path, name: str, value: object, mode: int) -> Path:
    """A memo file holding ``value`` under the key the real one holds."""
    path = cache / f"{name}.pickle"
    key, _ = pickle.loads(path.read_bytes())
    path.write_bytes(pickle.dumps((key, value)))
    path.chmod(mode)
    return path


def test_only_a_file_no_one_else_may_write_is_read(cache: Path) -> None:
    assert remembered("probe", [b"inputs"], lambda: "built") == "built"
    plant(cache, "probe", "planted", 0o600)
    assert remembered("probe", [b"inputs"], lambda: "built") == "planted"  # a trusted file
    plant(cache, "probe", "planted", 0o666)
    assert remembered("probe", [b"inputs"], lambda: "built") == "built"
    plant(cache, "probe", "planted", 0o620)
    assert remembered("probe", [b"inputs"], lambda: "built") == "built"
    cache.chmod(0o777)
    assert memo_folder() is None  # a folder others may write: nothing is read or written
    assert remembered("probe", [b"inputs"], lambda: "built") == "built"


def test_a_symlink_damaged_or_foreign_file_is_a_miss(cache: Path, tmp_path: Path) -> None:
    assert remembered("probe", [b"a"], lambda: 1) == 1
    elsewhere = plant(cache, "probe", 2, 0o600).rename(tmp_path / "elsewhere.pickle")
    (cache / "probe.pickle").symlink_to(elsewhere)
    assert remembered("probe", [b"a"], lambda: 1) == 1
    (cache / "probe.pickle").write_bytes(b"\x80\x05not a pickle")
    assert remembered("probe", [b"a"], lambda: 3) == 3
    assert remembered("probe", [b"a"], lambda: 4) == 3  # rewritten whole by the miss
    assert remembered("probe", [b"other inputs"], lambda: 5) == 5


def test_no_folder_to_write_or_memos_turned_off_build_every_time(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert remembered("probe", [b"a"], lambda: 1) == 1
    assert remembered("probe", [b"a"], lambda: 2) == 2
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("NEURON_ENV_NO_MEMO", "1")
    assert remembered("probe", [b"a"], lambda: 1) == 1
    assert remembered("probe", [b"a"], lambda: 2) == 2
    assert not cache.exists()


def test_a_doctor_run_from_memos_reports_what_a_fresh_run_reports(tmp_path: Path) -> None:
    """A release file in --matrix-dir is TOML, parsed unless the run takes the memo."""
    snapshot = DATA / "snapshots" / "torch-2.13-container.json"
    extra = tmp_path / "extra"
    extra.mkdir()
    latest = load_matrix().latest().origin
    assert latest is not None
    (extra / latest.name).write_bytes(latest.read_bytes())
    code = (
        "import sys; from neuron_env.cli import main; sys.argv[0] = 'neuron-env'\n"
        "try:\n    main()\nfinally:\n"
        "    print('PARSED', 'tomllib' in sys.modules, file=sys.stderr)"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("NEURON_ENV_NO_MEMO", None)
    args = [sys.executable, "-c", code, "--matrix-dir", str(extra), "doctor"]
    args += ["--facts", str(snapshot), "--format", "json"]
    runs = [  # in a folder without project files (a pyproject.toml is parsed on every run)
        subprocess.run(args, capture_output=True, text=True, env=run_env, check=False, cwd=extra)
        for run_env in (env, env, {**env, "NEURON_ENV_NO_MEMO": "1"})
    ]
    assert [r.stderr.splitlines()[-1] for r in runs] == [
        "PARSED True",
        "PARSED False",
        "PARSED True",
    ]
    assert runs[0].stdout == runs[1].stdout == runs[2].stdout
    assert json.loads(runs[1].stdout)["release"] == latest.stem  # the --matrix-dir file's
    assert runs[0].returncode == runs[1].returncode == runs[2].returncode


def test_requirements_judged_from_memos_are_judged_as_fresh(tmp_path: Path) -> None:
    """python.requirements: all met (the run from memos skips packaging's requirement parser)
    and not met, each the same three ways: first run, from memos, memos off."""
    from tests.support.dists import add_distribution, site_packages
    from tests.support.hosts import build_sysroot, build_target, load_scenario

    scenario = load_scenario("healthy-trn2-ubuntu-26.04")
    sysroot, python = build_sysroot(scenario, tmp_path), build_target(scenario, tmp_path)
    env = {**os.environ, "PYTHONPATH": str(REPO), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("NEURON_ENV_NO_MEMO", None)
    code = (
        "import sys; from neuron_env.cli import main; sys.argv[0] = 'neuron-env'\n"
        "try:\n    main()\nfinally:\n"
        "    print('PARSER', 'packaging.requirements' in sys.modules, file=sys.stderr)"
    )

    def judged(snapshot: Path) -> list[subprocess.CompletedProcess[str]]:
        args = [sys.executable, "-c", code, "doctor", "--facts", str(snapshot), "--check"]
        args += ["python.requirements", "--format", "json"]
        return [
            subprocess.run(args, capture_output=True, text=True, env=e, check=False, cwd=tmp_path)
            for e in (env, env, {**env, "NEURON_ENV_NO_MEMO": "1"})
        ]

    def snapshot(name: str) -> Path:
        path = tmp_path / f"{name}.json"
        facts = [sys.executable, "-m", "neuron_env", "facts", "--python", str(python)]
        facts += ["--sysroot", str(sysroot), "-o", str(path)]
        subprocess.run(facts, env=env, check=True, capture_output=True, cwd=tmp_path)
        return path

    met = judged(snapshot("met"))
    assert [r.stderr.splitlines()[-1] for r in met] == [
        "PARSER True",
        "PARSER False",
        "PARSER True",
    ]
    assert met[0].stdout == met[1].stdout == met[2].stdout
    assert '"status": "ok"' in met[1].stdout
    add_distribution(python.parent.parent, "needs-more", "1.0")
    info = site_packages(python.parent.parent) / "needs_more-1.0.dist-info" / "METADATA"
    info.write_text(info.read_text() + "Requires-Dist: not-installed>=2\n")
    unmet = judged(snapshot("unmet"))
    assert unmet[0].stdout == unmet[1].stdout == unmet[2].stdout
    assert "needs-more 1.0 needs not-installed>=2, but it is not installed" in unmet[1].stdout
    assert unmet[0].returncode == unmet[1].returncode == unmet[2].returncode == 1
