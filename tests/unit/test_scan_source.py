"""Exact positions, encodings, line endings and files that cannot be scanned."""

from __future__ import annotations

from pathlib import Path

import pytest

from neuron_env.matrix import load_matrix
from neuron_env.scan import Finding, plan_fixes, rules_for, scan_file

RULES = rules_for(load_matrix().get("2.34.0"))


def scan_text(tmp_path: Path, data: bytes, name: str = "user.py") -> list[Finding]:
    path = tmp_path / name
    path.write_bytes(data)
    return scan_file(path, name, RULES)


def test_columns_count_characters_not_utf8_bytes(tmp_path: Path) -> None:
    (found,) = scan_text(tmp_path, "import torch\nnaïve = 'é'; s = torch.sparse.mm(1)\n".encode())
    assert (found.span.line, found.span.column) == (2, 18)
    assert (found.span.end_line, found.span.end_column) == (2, 33)  # end is exclusive


def test_a_syntax_error_is_a_scan_error_finding_at_its_place(tmp_path: Path) -> None:
    (found,) = scan_text(tmp_path, b"import torch\n\ndef broken(:\n    pass\n")
    assert found.rule.id == "scan-error" and found.severity == "error"
    assert found.span.line == 3
    assert found.message.startswith("not valid Python 3.")


def test_undecodable_bytes_are_a_scan_error(tmp_path: Path) -> None:
    (found,) = scan_text(tmp_path, b"x = 1\ny = 2\nz = '\xff'\n")
    assert found.rule.id == "scan-error"
    assert "not valid utf-8 text at byte 17" in found.message


def test_nul_bytes_are_a_scan_error(tmp_path: Path) -> None:
    (found,) = scan_text(tmp_path, b"x = 1\x00\n")
    assert found.rule.id == "scan-error"


def test_a_dangling_link_is_a_scan_error(tmp_path: Path) -> None:
    link = tmp_path / "gone.py"
    link.symlink_to(tmp_path / "missing.py")
    (found,) = scan_file(link, "gone.py", RULES)
    assert found.rule.id == "scan-error"
    assert "cannot read the file: No such file or directory" in found.message


def test_the_device_fix_uses_the_name_torch_is_imported_as(tmp_path: Path) -> None:
    source = b"import torch as T\nimport torch_xla.core.xla_model as xm\nd = xm.xla_device()\n"
    (device,) = [f for f in scan_text(tmp_path, source) if f.rule.id == "xla-device"]
    assert device.fix is not None and device.fix.new == 'T.device("neuron")'


def test_where_torch_is_not_imported_the_device_fix_adds_the_import(tmp_path: Path) -> None:
    source = b"import torch_xla.core.xla_model as xm\nd = xm.xla_device()\n"
    (patch,) = plan_fixes(scan_text(tmp_path, source))
    assert patch.new == 'import torch\nd = torch.device("neuron")\n'  # and the unused import goes


def test_no_device_fix_where_torch_names_something_else(tmp_path: Path) -> None:
    source = b"import torch_xla.core.xla_model as xm\ntorch = None\nd = xm.xla_device()\n"
    (device,) = [f for f in scan_text(tmp_path, source) if f.rule.id == "xla-device"]
    assert device.fix is None


@pytest.mark.parametrize(
    ("encoding", "header"),
    [
        ("latin-1", b"# -*- coding: latin-1 -*-\n"),
        ("utf-8-sig", b""),
    ],
)
def test_fixes_keep_the_encoding_and_the_line_endings(
    tmp_path: Path, encoding: str, header: bytes
) -> None:
    body = "import torch\r\nd = torch.ones(1).to('xla')  # café\r\n"
    path = tmp_path / "user.py"
    path.write_bytes(header + body.encode(encoding))
    (patch,) = plan_fixes(scan_file(path, "user.py", RULES))
    patch.write()
    expected = body.replace("'xla'", "'neuron'")
    assert path.read_bytes() == header + expected.encode(encoding)
    assert patch.diff().splitlines()[-2:] == [
        "-d = torch.ones(1).to('xla')  # café",
        "+d = torch.ones(1).to('neuron')  # café",
    ]
