"""`neuron-env scan` on notebooks as they really are, and `--fix` on files as they really are.

Real ``.ipynb`` files written in the test's folder, scanned by the real console script: valid
nbformat that is not a list of lines (a plain string source), malformed cells (a number, null),
IPython escapes continued over lines, cell magics, help; findings that never promise a ``--fix``
that does not rewrite notebooks. Then ``--fix`` on a hard-linked file, and its count.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import CliRunner, cli_runner
from tests.support.hosts import DROP_ROOT_OVERRIDE

pytestmark = pytest.mark.integration


def notebook(path: Path, *sources: Any) -> Path:
    cells = [
        {"cell_type": "code", "source": s, "metadata": {}, "outputs": [], "execution_count": None}
        for s in sources
    ]
    document = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def findings(cli: CliRunner, *args: str) -> tuple[int, list[dict[str, Any]]]:
    result = cli("scan", "--format", "json", *args)
    assert "Traceback" not in result.stderr
    return result.returncode, json.loads(result.stdout)["findings"]


def where(items: list[dict[str, Any]]) -> list[tuple[str, int, int]]:
    return [(f["rule"], f["cell"], f["line"]) for f in items]


def test_a_plain_string_source_is_scanned(cli: CliRunner, tmp_path: Path) -> None:
    notebook(tmp_path / "nb.ipynb", "import torch\n\nx = torch.ones(2, device='cuda')\n")
    code, found = findings(cli, "nb.ipynb")
    assert code == 0  # a warning only
    assert where(found) == [("cuda-device-string", 1, 3)]


@pytest.mark.parametrize(
    ("source", "said"),
    [
        (5, "its source is a number, not text"),
        (None, "its source is missing or null"),
        (["import torch\n", 3], "its source is a list holding something other than text"),
    ],
    ids=["number", "null", "list-with-a-number"],
)
def test_a_malformed_cell_is_a_scan_error_never_a_silent_skip(
    cli: CliRunner, tmp_path: Path, source: object, said: str
) -> None:
    notebook(tmp_path / "nb.ipynb", "import torch\n", source)
    code, found = findings(cli, "nb.ipynb")
    assert code == 1
    assert where(found) == [("scan-error", 2, 1)]
    assert found[0]["message"] == f"not a valid notebook cell: {said}"


def test_a_shell_escape_continued_over_lines_is_shell_and_the_lines_stay_right(
    cli: CliRunner, tmp_path: Path
) -> None:
    notebook(
        tmp_path / "nb.ipynb",
        [
            "!PJRT_DEVICE=NEURON torchrun --nproc_per_node=2 train.py \\\n",
            "    --lr 5e-5 \\\n",
            "    --epochs 3\n",
            "import torch\n",
            "y = torch.ones(1, device='cuda')\n",
        ],
    )
    _, found = findings(cli, "nb.ipynb")
    assert "scan-error" not in [f["rule"] for f in found]
    assert [f for f in where(found) if f[0] == "cuda-device-string"] == [
        ("cuda-device-string", 1, 5)
    ]
    assert any(f["cell"] == 1 and f["line"] == 1 and "PJRT_DEVICE" in f["message"] for f in found)


def test_escapes_help_and_cell_magics_are_masked_the_way_ipython_reads_them(
    cli: CliRunner, tmp_path: Path
) -> None:
    notebook(
        tmp_path / "nb.ipynb",
        "import torch\nfor i in range(2):\n    !echo $i \\\n        more\nfiles = !ls\n"
        "env = %env\ntorch.ones?\n?torch\ntorch.ones??\n!!ls\n%matplotlib inline\n"
        "x = torch.ones(1, device='cuda')\n",
        "%%bash\nexport XLA_USE_BF16=1\n",
        "%%html\n<b>not ( python\n",
        "%%time\nimport torch_xla\n",
    )
    _, found = findings(cli, "nb.ipynb")
    assert "scan-error" not in [f["rule"] for f in found]
    assert ("cuda-device-string", 1, 12) in where(found)
    assert ("xla-import", 4, 2) in where(found)
    assert any(f["cell"] == 2 and f["line"] == 2 and "XLA_USE_BF16" in f["message"] for f in found)


def test_notebook_findings_do_not_promise_a_fix_in_any_format(
    cli: CliRunner, tmp_path: Path
) -> None:
    source = "import torch_xla.core.xla_model as xm\ndevice = xm.xla_device()\n"
    notebook(tmp_path / "nb.ipynb", source)
    (tmp_path / "train.py").write_text(source)
    _, found = findings(cli, "nb.ipynb")
    device = next(f for f in found if f["rule"] == "xla-device")
    assert "--fix does this" not in device["suggestion"]
    assert "scan --fix does not rewrite notebooks" in device["suggestion"]
    text = cli("scan", "nb.ipynb").stdout
    assert "--fix does this" not in text and "fixable" not in text
    sarif = cli("scan", "--format", "sarif", "nb.ipynb").stdout
    results = json.loads(sarif)["runs"][0]["results"]
    assert all("--fix does this" not in r["message"]["text"] for r in results)
    plain = cli("scan", "train.py").stdout  # a .py file still offers it
    assert "--fix does this" in plain and "1 fixable with --fix" in plain


# --- --fix on files as they really are ---------------------------------------------------------

MIGRATABLE = Path(__file__).parents[1] / "data" / "scan" / "fix" / "migratable_training.py"


def test_fix_refuses_a_hard_linked_file_and_says_why_instead_of_splitting_the_link(
    cli: CliRunner, tmp_path: Path
) -> None:
    original = MIGRATABLE.read_bytes()
    (tmp_path / "train.py").write_bytes(original)
    (tmp_path / "shared.py").hardlink_to(tmp_path / "train.py")
    result = cli("scan", "train.py", "--fix", "--yes")
    assert "Not fixed: train.py: it has 2 hard links" in " ".join(result.stdout.split())
    assert (tmp_path / "train.py").read_bytes() == original
    assert (tmp_path / "train.py").stat().st_ino == (tmp_path / "shared.py").stat().st_ino


def test_fix_leaves_a_read_only_file_as_it_is_and_says_why(tmp_path: Path) -> None:
    """A read-only file (a Perforce checkout before 'p4 edit'): --fix renamed a new file over
    it, which its mode does not stop, and the file changed behind the version control's back.
    As an editor does, --fix now leaves it and says so; the writable file beside it is fixed.
    Root runs it without the capability that lets root write anything."""
    original = MIGRATABLE.read_bytes()
    for name in ("locked.py", "open.py"):
        (tmp_path / name).write_bytes(original)
    (tmp_path / "locked.py").chmod(0o444)
    prefix = DROP_ROOT_OVERRIDE if os.geteuid() == 0 else []
    result = cli_runner(tmp_path, prefix=prefix)("scan", ".", "--fix", "--yes")
    said = " ".join(result.stdout.split())
    assert "Not fixed: locked.py: it is read-only (mode 444" in said
    assert "make it writable (chmod u+w) and run --fix again" in said
    assert (tmp_path / "locked.py").read_bytes() == original
    assert (tmp_path / "open.py").read_bytes() != original


def test_fix_counts_the_lines_it_changed_as_the_diff_does(cli: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "train.py").write_bytes(MIGRATABLE.read_bytes())
    result = cli("scan", "train.py", "--fix", "--yes")
    diff = result.stdout[result.stdout.index("--- a/train.py") :].split("\n\n", 1)[0]
    added = sum(1 for line in diff.splitlines() if line[:1] == "+" and line[:3] != "+++")
    removed = sum(1 for line in diff.splitlines() if line[:1] == "-" and line[:3] != "---")
    assert f"Applied 15 fixes to 1 file ({added} lines added, {removed} removed)." in result.stdout
