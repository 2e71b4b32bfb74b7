"""`scan --fix` round trips on small XLA-era programs (tests/data/scan/fix/NAME.py): the result is
NAME.fixed.py byte for byte, parses with Python 3.10's grammar and compiles, every line no fix
touched is still there in order, and a program that can be migrated whole ends with no torch_xla.
"""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest

from tests.support.cli import DATA, CliRunner

pytestmark = pytest.mark.integration

FIX = DATA / "scan" / "fix"
PROGRAMS = sorted(p for p in FIX.glob("*.py") if not p.name.endswith(".fixed.py"))


def fixed_lines(report: dict[str, object]) -> set[int]:
    findings = report["findings"]
    assert isinstance(findings, list)
    return {line for f in findings if f["fix"] for line in range(f["line"], f["end_line"] + 1)}


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.stem)
def test_fix_round_trip(cli: CliRunner, tmp_path: Path, program: Path) -> None:
    target = tmp_path / program.name
    shutil.copy(program, target)
    before = json.loads(cli("scan", program.name, "--format", "json").stdout)
    result = cli("scan", program.name, "--fix", "--yes")
    assert "Traceback" not in result.stderr, result.stderr
    fixed = target.read_text(encoding="utf-8")
    assert fixed == program.with_suffix(".fixed.py").read_text(encoding="utf-8")
    ast.parse(fixed, feature_version=(3, 10))
    compile(fixed, program.name, "exec")
    touched = fixed_lines(before) | {1} if "import torch\n" in fixed else fixed_lines(before)
    untouched = [
        line
        for number, line in enumerate(program.read_text(encoding="utf-8").splitlines(), 1)
        if number not in touched and "torch_xla" not in line
    ]
    remaining = iter(fixed.splitlines())
    assert all(line in remaining for line in untouched)  # a subsequence: same bytes, same order


@pytest.mark.parametrize("program", [p for p in PROGRAMS if p.name.startswith("migratable_")])
def test_a_program_that_can_be_migrated_whole_ends_with_no_torch_xla(
    cli: CliRunner, tmp_path: Path, program: Path
) -> None:
    shutil.copy(program, tmp_path / program.name)
    result = cli("scan", program.name, "--fix", "--yes", "--fail-on", "note")
    assert result.returncode == 0, result.stdout
    assert "rules: no findings." in result.stdout
    assert "torch_xla" not in (tmp_path / program.name).read_text(encoding="utf-8")


def test_what_would_change_behaviour_is_not_rewritten_and_says_what_to_do(
    cli: CliRunner, tmp_path: Path
) -> None:
    shutil.copy(FIX / "partial_migration.py", tmp_path / "train.py")
    cli("scan", "train.py", "--fix", "--yes")
    doc = json.loads(cli("scan", "train.py", "--format", "json").stdout)
    advice = {f["rule"]: f["message"] + " " + f["suggestion"] for f in doc["findings"]}
    assert "optimizer.step() alone would train each replica" in advice["xla-optimizer-step"]
    assert "DistributedDataParallel(model)" in advice["xla-optimizer-step"]
    texts = " ".join(advice.values()) + " ".join(f["suggestion"] for f in doc["findings"])
    assert "launch with torchrun --nproc_per_node=N" in texts
    assert "replace pl.MpDeviceLoader(loader, device) with loader" in texts
    lines = (tmp_path / "train.py").read_text(encoding="utf-8")
    assert "xm.optimizer_step(optimizer)" in lines and "xmp.spawn(" in lines
    assert 'xm.mark_step(); print("step")' in lines  # shares its line: left as it was


def test_a_try_import_of_torch_xla_becomes_pass_when_nothing_uses_it(
    cli: CliRunner, tmp_path: Path
) -> None:
    (tmp_path / "train.py").write_text(
        "import torch\n"
        "try:\n"
        "    import torch_xla.core.xla_model as xm\n"
        "except ImportError:\n"
        "    pass\n"
        "\n"
        "def step():\n"
        "    xm.mark_step()\n"
    )
    cli("scan", "train.py", "--fix", "--yes")
    assert (tmp_path / "train.py").read_text() == (
        "import torch\ntry:\n    pass\nexcept ImportError:\n    pass\n\ndef step():\n    pass\n"
    )
