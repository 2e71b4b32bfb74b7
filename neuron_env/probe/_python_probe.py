"""Runs inside the *target* interpreter (stdlib only) and prints its facts as JSON.

Executed as ``python -I _python_probe.py``; it must work on any Python >= 3.8 and import nothing
outside the standard library, because the target may lack neuron-env's dependencies.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import sys

# The probe's run time is mostly its interpreter's start and imports: typing (~4 ms) is for the
# annotations only, configparser only for a pip configuration file that exists, and paths are
# strings (pathlib imports urllib.parse, ipaddress and fnmatch: ~4 ms, and a Path per entry of
# every sys.path folder, the standard library's included, cost as much again).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NEURON_KEYWORDS = ("neuron", "torch", "nki", "xla", "jax")
HEADER = re.compile(
    r"^(Name|Version|Summary|Author|Author-email|Maintainer|Maintainer-email|License|Description)"
    r":[ \t]*(.*?)\s*$",
    re.MULTILINE,
)
REQUIRES_DIST = re.compile(r"^Requires-Dist:[ \t]*(.*?)\s*$", re.MULTILINE)
DESCRIPTION_CHARS = 300
STUB_BYTES = 4096

# importlib.metadata would do, but it parses every METADATA file with the email package, which
# triples this probe's run time; the header fields needed here are simple "Key: value" lines.


def distributions() -> tuple[dict[str, dict[str, Any]], list[str], dict[str, int]]:
    """Installed distributions (first one on sys.path wins, as for imports), torch backends, and
    the index in sys.path of the folder each was found in."""
    found: dict[str, dict[str, Any]] = {}
    backends: list[str] = []
    where: dict[str, int] = {}
    for index, entry in enumerate(sys.path):
        for info in _metadata_dirs(entry):
            dist = _distribution(info)
            if dist is None:
                continue
            if dist["name"] in found:
                if where[dist["name"]] == index:  # a second record in the same folder
                    found[dist["name"]].setdefault("duplicates", []).append(dist["version"])
                continue
            where[dist["name"]] = index
            found[dist.pop("name")] = dist
            backends += _torch_backends(info)
    return found, sorted(set(backends)), where


def _metadata_dirs(entry: str) -> list[str]:
    folder = entry or "."
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    # "~orch-2.5.1.dist-info": what an interrupted pip uninstall leaves (pip ignores it too)
    return [
        _join(folder, n)
        for n in names
        if n.endswith((".dist-info", ".egg-info")) and not n.startswith("~")
    ]


def _join(*parts: str) -> str:
    """``str(Path(*parts))``: an absolute part starts again, and empty and ``.`` parts are left
    out (pathlib's spelling, which the paths reported keep)."""
    path = ""
    for part in parts:
        path = part if part.startswith("/") or not path else path + "/" + part
    stripped = path.lstrip("/")
    root = "//" if len(path) - len(stripped) == 2 else "/" if stripped != path else ""
    return root + "/".join(p for p in stripped.split("/") if p and p != ".") or "."


def _distribution(info: str) -> dict[str, Any] | None:
    metadata = _read(_join(info, "METADATA")) or _read(_join(info, "PKG-INFO"))
    if not metadata:
        return None
    head = metadata.split("\n\n", 1)[0]
    headers = dict(HEADER.findall(head))
    name = headers.get("Name", "").lower().replace("_", "-").replace(".", "-")
    if not name:
        return None
    dist: dict[str, Any] = {"name": name, "version": headers.get("Version", ""), "summary": ""}
    dist["requires_dist"] = REQUIRES_DIST.findall(head) or _egg_requires(info)
    if any(word in name for word in NEURON_KEYWORDS):
        dist.update(_identity(headers, metadata, info))
    installer = _read(_join(info, "INSTALLER"))
    dist["installer"] = installer.strip() if installer else None
    dist["source"] = None
    direct = _read(_join(info, "direct_url.json"))
    if direct:
        try:
            dist["source"] = json.loads(direct).get("url")
        except (ValueError, AttributeError):
            pass
    return dist


def _egg_requires(info: str) -> list[str]:
    """An ``.egg-info``'s ``requires.txt`` as Requires-Dist lines (``[extra:marker]`` sections)."""
    text = _read(_join(info, "requires.txt")) if info.endswith(".egg-info") else None
    found: list[str] = []
    marker = ""
    for line in (text or "").splitlines():
        line = line.strip()
        if line.startswith("[") and line.endswith("]"):
            extra, _, condition = line[1:-1].partition(":")
            parts = [f"({condition})"] if condition else []
            marker = " and ".join([*parts, *([f'extra == "{extra}"'] if extra else [])])
        elif line and not line.startswith("#"):
            found.append(f"{line}; {marker}" if marker else line)
    return found


def _identity(headers: dict[str, str], metadata: str, info: str) -> dict[str, Any]:
    """What tells a placeholder from the real package, read from metadata without importing.

    The default index's placeholders mostly have an empty Summary and say "WRONG PACKAGE" only
    in the description body; many ship a package folder that is not a module name at all.
    """
    people = ("Author", "Author-email", "Maintainer", "Maintainer-email")
    body = metadata.split("\n\n", 1)[1] if "\n\n" in metadata else ""
    body = body.strip() or headers.get("Description", "")
    return {
        "summary": headers.get("Summary", ""),
        "author": ", ".join(headers[k] for k in people if headers.get(k)),
        "license": headers.get("License", ""),
        "description": " ".join(body.split())[:DESCRIPTION_CHARS],
        "stub": _is_stub(info),
    }


def _is_stub(info: str) -> bool:
    """True when the distribution's only file is one small ``__init__.py`` that raises."""
    record = _read(_join(info, "RECORD"))
    own = os.path.basename(info)
    if record is None or not own.endswith(".dist-info"):
        return False
    files: list[str] = []
    for line in record.splitlines():
        name = line.split(",", 1)[0]
        if name and not name.startswith((own + "/", "../")) and "__pycache__" not in name:
            files.append(name)
            if len(files) > 1:  # torch's RECORD has thousands of lines: stop at the second
                return False
    if not files or not files[0].endswith("/__init__.py"):
        return False
    path = _join(os.path.dirname(info), files[0])
    try:
        if os.stat(path).st_size > STUB_BYTES:
            return False
    except OSError:
        return False
    text = _read(path) or ""
    return re.search(r"^\s*raise\b", text, re.MULTILINE) is not None


def _torch_backends(info: str) -> list[str]:
    """Names in the ``[torch.backends]`` entry-point group: what ``import torch`` autoloads."""
    text = _read(_join(info, "entry_points.txt")) or ""
    section = re.search(r"^\[torch\.backends\]\s*$(.*?)(?=^\[|\Z)", text, re.MULTILINE | re.DOTALL)
    if not section:
        return []
    return [line.split("=", 1)[0].strip() for line in section.group(1).splitlines() if "=" in line]


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            return file.read()
    except OSError:
        return None


def _is_file(path: str) -> bool:
    """``Path(path).is_file()``: False where there is nothing to read, an error where the path
    cannot be looked at (a folder on the way that may not be read)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP):
            return False
        raise
    except ValueError:
        return False


def pip_config() -> dict[str, Any]:
    files: list[str] = []
    if os.environ.get("PIP_CONFIG_FILE"):
        files.append(_join(os.environ["PIP_CONFIG_FILE"]))
    else:
        xdg_dirs = os.environ.get("XDG_CONFIG_DIRS", "/etc/xdg").split(":")
        files += [_join(d, "pip", "pip.conf") for d in xdg_dirs] + ["/etc/pip.conf"]
        home = os.path.expanduser("~")
        files += [_join(home, ".pip", "pip.conf"), _join(home, ".config", "pip", "pip.conf")]
        files.append(_join(sys.prefix, "pip.conf"))
    values: dict[str, str] = {}
    used: list[str] = []
    for path in files:
        if path == os.devnull or not _is_file(path):
            continue
        import configparser

        parser = configparser.RawConfigParser()
        try:
            parser.read(path)
        except configparser.Error:
            continue
        used.append(path)
        for section in ("global", "install"):
            if parser.has_section(section):
                values.update(dict(parser.items(section)))
    for key in ("index-url", "extra-index-url", "find-links"):
        env_value = os.environ.get("PIP_" + key.upper().replace("-", "_"))
        if env_value:
            values[key] = env_value
    return {
        "index_url": values.get("index-url"),
        "extra_index_urls": values.get("extra-index-url", "").split(),
        "find_links": values.get("find-links", "").split(),
        "files": used,
    }


def import_path(in_venv: bool, where: dict[str, int]) -> dict[str, Any]:
    """What a plain ``python`` imports from besides this probe's ``sys.path`` (it runs with
    ``-I``): PYTHONPATH's entries, ahead of everything, and the user's site-packages where
    ``site`` puts it: ahead of the system's site-packages, behind a venv's own. The distributions
    recorded are those a plain ``import`` finds there first (``where``: the index in sys.path
    of the folder each of the probe's distributions came from)."""
    pythonpath: list[str] = []
    raw = os.environ.get("PYTHONPATH")  # set but empty: nothing, as for Python itself
    for entry in raw.split(os.pathsep) if raw else []:
        pythonpath.append(os.path.abspath(entry or os.curdir))  # an empty one is here, as in Python
    pythonpath = list(dict.fromkeys(pythonpath))  # each folder once, in order
    on_path = set(pythonpath)
    user_site = _user_site(in_venv)
    found: dict[str, dict[str, str]] = {}
    for folder in [*pythonpath, *([user_site] if user_site else [])]:
        ahead_of = 0 if folder in on_path else _user_site_index(in_venv)
        for info in _metadata_dirs(folder):
            dist = _distribution(info)
            if dist is None or dist["name"] in found:
                continue
            if where.get(dist["name"], len(sys.path)) >= ahead_of:
                found[dist["name"]] = {"version": dist["version"], "folder": folder}
    return {"pythonpath": pythonpath, "user_site": user_site, "distributions": found}


def _user_site_index(in_venv: bool) -> int:
    """Where ``site`` puts the user's site-packages in sys.path: before the first site-packages
    (or Debian's dist-packages) folder that is not the venv's own."""
    prefix = sys.prefix.rstrip("/") + "/"
    for index, entry in enumerate(sys.path):
        if not entry.endswith(("site-packages", "dist-packages")):
            continue
        if not (in_venv and entry.startswith(prefix)):
            return index
    return len(sys.path)


def _venv_version() -> str | None:
    """The Python the venv was made with, as its pyvenv.cfg records it (venv writes ``version``,
    uv and virtualenv ``version_info``): an OS upgrade can swap the interpreter under it."""
    config = _read(_join(sys.prefix, "pyvenv.cfg")) or ""
    found = re.search(r"^\s*version(?:_info)?\s*=\s*(\d+(?:\.\d+){1,2})", config, re.MULTILINE)
    return found.group(1) if found else None


def _user_site(in_venv: bool) -> str | None:
    """The user's site-packages where ``site`` would add it (no ``-s``, no PYTHONNOUSERSITE,
    not a venv without the system's packages) and it exists."""
    if os.environ.get("PYTHONNOUSERSITE"):
        return None
    if in_venv:
        config = _read(_join(sys.prefix, "pyvenv.cfg")) or ""
        setting = re.search(r"^\s*include-system-site-packages\s*=\s*(\S*)", config, re.MULTILINE)
        if not setting or setting.group(1).lower() != "true":
            return None
    import site

    try:
        folder = site.getusersitepackages()
    except (AttributeError, KeyError, RuntimeError):  # no home folder to put it under
        return None
    return folder if os.path.isdir(folder) else None


def main() -> None:
    found, backends, where = distributions()
    in_venv = sys.prefix != getattr(sys, "base_prefix", sys.prefix)
    facts = {
        "executable": sys.executable,
        "version": ".".join(map(str, sys.version_info[:3])),
        "implementation": sys.implementation.name,
        "prefix": sys.prefix,
        "in_venv": in_venv,
        "distributions": found,
        "torch_backends": backends,
        "pip": pip_config(),
        "import_path": import_path(in_venv, where),
        "venv_version": _venv_version() if in_venv else None,
    }
    json.dump(facts, sys.stdout)


main()
