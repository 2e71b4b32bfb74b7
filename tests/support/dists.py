"""Real virtual environments holding small generated distributions with real names and versions.

A distribution here is what pip leaves behind: a ``<name>-<version>.dist-info`` directory with
METADATA, INSTALLER and RECORD, which ``importlib.metadata`` (and so neuron-env's probe) reads.
"""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path

WRONG_PACKAGE = (
    "WRONG PACKAGE. Please install the package from Neuron Repository"
    " - pip.repos.neuron.amazonaws.com"
)


def make_venv(path: Path, python: str = sys.executable) -> Path:
    """A venv without pip (fast); returns its interpreter."""
    subprocess.run([python, "-m", "venv", "--without-pip", str(path)], check=True)
    return path / "bin" / "python"


def site_packages(venv: Path) -> Path:
    (found,) = (venv / "lib").glob("python3.*/site-packages")
    return found


def add_distribution(venv: Path, name: str, version: str, summary: str = "") -> None:
    write_dist_info(site_packages(venv), name, version, summary)


def write_dist_info(folder: Path, name: str, version: str, summary: str = "") -> None:
    """The ``.dist-info`` pip leaves in ``folder`` (site-packages, or a folder on PYTHONPATH)."""
    info = folder / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    if summary:
        metadata += f"Summary: {summary}\n"
    (info / "METADATA").write_text(metadata)
    (info / "INSTALLER").write_text("pip\n")
    (info / "RECORD").write_text("")


AMAZON = "Amazon Web Services, Inc."
AMAZON_EMAIL = "aws-neuron-support@amazon.com"


def placeholder_wheel(
    dest: Path,
    name: str,
    version: str,
    *,
    folder: str | None = None,
    text: str = WRONG_PACKAGE,
    module: str | None = None,
    extra_files: dict[str, str] | None = None,
) -> Path:
    """A wheel shaped like the default index's placeholders (section 10c of the reference).

    Empty Summary, Amazon as author, "Proprietary" license, the text only in the description
    body, and one ``<folder>/__init__.py`` that raises; ``folder`` defaults to the name itself,
    hyphens and all (not importable), as most real placeholders ship. ``module=""`` leaves the
    module out (nki-library holds none); ``extra_files`` makes a real-looking package.
    """
    folder = folder if folder is not None else name
    files: dict[str, bytes] = {}
    if module != "":
        source = module if module is not None else f"raise ImportError({text!r})\n"
        files[f"{folder}/__init__.py"] = source.encode()
    files.update({path: body.encode() for path, body in (extra_files or {}).items()})
    info = f"{name.replace('-', '_')}-{version}.dist-info"
    files[f"{info}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nSummary: \n"
        f"Author: {AMAZON}\nAuthor-email: {AMAZON_EMAIL}\nLicense: Proprietary\n"
        f"Platform: UNKNOWN\n\n{text}\n\n\n"
    ).encode()
    return _write_wheel(dest, name, version, files)


def plain_wheel(dest: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> Path:
    """A tiny real wheel: one module and a METADATA with ``requires`` as ``Requires-Dist`` lines."""
    info = f"{name.replace('-', '_')}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    metadata += "".join(f"Requires-Dist: {line}\n" for line in requires)
    files = {
        f"{name.replace('-', '_')}/__init__.py": b"",
        f"{info}/METADATA": metadata.encode(),
    }
    return _write_wheel(dest, name, version, files)


def _write_wheel(dest: Path, name: str, version: str, files: dict[str, bytes]) -> Path:
    """``files`` (with the dist-info's METADATA) as a py3-none-any wheel, WHEEL and RECORD added."""
    info = f"{name.replace('-', '_')}-{version}.dist-info"
    files = {
        **files,
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: neuron-env-tests\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
    }
    record = [f"{p},{_record_hash(d)},{len(d)}" for p, d in files.items()]
    files[f"{info}/RECORD"] = ("\n".join([*record, f"{info}/RECORD,,"]) + "\n").encode()
    path = dest / f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for member, data in files.items():
            archive.writestr(member, data)
    return path


def install_wheels(python: Path, wheels: list[Path]) -> None:
    """Install ``wheels`` into ``python``'s environment with the real pip, offline."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--no-index", "--no-cache-dir", "-q", *map(str, wheels)],
        check=True, env=env, timeout=300,
    )  # fmt: skip


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"
