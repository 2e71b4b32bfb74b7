"""The top-level group builds only the command that runs, and its help table never drifts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from neuron_env.cli import COMMANDS, load_command


@pytest.mark.parametrize("name", list(COMMANDS))
def test_the_help_line_is_the_commands_own(name: str) -> None:
    command = load_command(name)
    assert command.name == name
    assert (command.help or "").split("\n\n")[0].strip() == COMMANDS[name].help


# A command's module is its package's cli.py; cli/ itself holds the registry and the shared flags.
COMMAND_MODULE = 'm.startswith("neuron_env.") and m.endswith(".cli") and m != "neuron_env.cli"'
CHECK_LOADED = f"""
import sys
from neuron_env.cli import main
sys.argv = ["neuron-env", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
loaded = sorted(m for m in sys.modules if {COMMAND_MODULE})
print("LOADED", ",".join(loaded), file=sys.stderr)
"""


def loaded_modules(*args: str) -> tuple[str, list[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", CHECK_LOADED, *args], capture_output=True, text=True, check=False
    )
    line = next(x for x in proc.stderr.splitlines() if x.startswith("LOADED"))
    names = line.removeprefix("LOADED").strip()
    return proc.stdout, [n for n in names.split(",") if n]


def test_top_level_help_and_version_load_no_command_module() -> None:
    out, loaded = loaded_modules("--help")
    assert loaded == []
    for name in COMMANDS:  # every command is still listed, with its help line
        assert f"  {name} " in out
    out, loaded = loaded_modules("--version")
    assert loaded == [] and out.startswith("neuron-env ")


def test_a_commands_help_loads_only_that_command() -> None:
    out, loaded = loaded_modules("doctor", "--help")
    assert "--probe-timeout" in out
    assert loaded == ["neuron_env.doctor.cli"]
    out, loaded = loaded_modules("matrix", "--help")
    assert "resolve" in out
    assert "neuron_env.doctor.cli" not in loaded and "neuron_env.matrix.cli" in loaded


def test_the_matrix_package_exports_each_name_from_its_submodule() -> None:
    """``neuron_env.matrix`` loads a submodule when one of its names is first used."""
    import neuron_env.matrix as matrix

    for name in matrix.__all__:
        value = getattr(matrix, name)
        assert getattr(value, "__module__", "").startswith("neuron_env.matrix."), name
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        matrix.nope  # noqa: B018


def test_a_doctor_run_loads_neither_resolution_nor_diffs() -> None:
    from tests.support.cli import DATA

    snapshot = str(DATA / "snapshots" / "torch-2.13-container.json")
    code = CHECK_LOADED.replace(COMMAND_MODULE, 'm.startswith("neuron_env.matrix")')
    proc = subprocess.run(
        [sys.executable, "-c", code, "doctor", "--facts", snapshot],
        capture_output=True,
        text=True,
        check=False,
    )
    assert "Judged against Neuron" in proc.stdout
    line = next(x for x in proc.stderr.splitlines() if x.startswith("LOADED"))
    # names: the one Neuron-name rule, which doctor judges by too
    loaded = "neuron_env.matrix,neuron_env.matrix.load,neuron_env.matrix.model,"
    loaded += "neuron_env.matrix.names,neuron_env.matrix.parsed"
    assert line.split() == ["LOADED", loaded]


def test_a_doctor_run_parses_no_toml_unless_a_user_directory_has_some(tmp_path: Path) -> None:
    """The shipped files come parsed ahead (matrices/parsed.json); a user's are parsed. Run in a
    folder of the user's without project settings: this checkout's own pyproject.toml names
    neuron-env, so doctor rightly reads it for a [tool.neuron-env] table when run here."""
    from tests.support.cli import DATA

    snapshot = str(DATA / "snapshots" / "torch-2.13-container.json")
    code = CHECK_LOADED.replace(COMMAND_MODULE, 'm.startswith("tomllib")')
    newer = ("--matrix-dir", str(DATA / "matrices" / "newer"))
    for extra, parsed in (((), False), (newer, True)):
        proc = subprocess.run(
            [sys.executable, "-c", code, *extra, "doctor", "--facts", snapshot],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=False,
        )
        assert "Judged against Neuron" in proc.stdout
        line = next(x for x in proc.stderr.splitlines() if x.startswith("LOADED"))
        assert ("tomllib" in line.removeprefix("LOADED").strip().split(",")) is parsed
