"""Runs inside the *target* interpreter (stdlib only) and prints its facts as JSON.

Executed as ``python -I _python_probe.py``; it must work on any Python >= 3.8 and import nothing
outside the standard library, because the target may lack neuron-env's dependencies.
"""

from __future__ import annotations

import configparser
import contextlib
import json
import os
import platform
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

NEURON_KEYWORDS = ("neuron", "torch", "nki", "xla", "jax")


def distributions() -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for dist in metadata.distributions():
        name = (dist.metadata["Name"] or "").lower().replace("_", "-").replace(".", "-")
        if not name or name in found:
            continue
        entry: dict[str, Any] = {
            "version": dist.version or "",
            "installer": None,
            "source": None,
            "summary": "",
        }
        installer = dist.read_text("INSTALLER")
        entry["installer"] = installer.strip() if installer else None
        direct = dist.read_text("direct_url.json")
        if direct:
            with contextlib.suppress(ValueError, AttributeError):
                entry["source"] = json.loads(direct).get("url")
        if any(word in name for word in NEURON_KEYWORDS):
            entry["summary"] = dist.metadata["Summary"] or ""
        found[name] = entry
    return found


def torch_backends() -> list[str]:
    try:
        eps = metadata.entry_points()
        group = (
            eps.select(group="torch.backends")
            if hasattr(eps, "select")
            else eps.get("torch.backends", [])  # type: ignore[arg-type]  # Python < 3.10
        )
        return sorted(ep.name for ep in group)
    except Exception:  # a broken entry point must not hide the other facts
        return []


def pip_config() -> dict[str, Any]:
    files: list[Path] = []
    if os.environ.get("PIP_CONFIG_FILE"):
        files.append(Path(os.environ["PIP_CONFIG_FILE"]))
    else:
        xdg_dirs = os.environ.get("XDG_CONFIG_DIRS", "/etc/xdg").split(":")
        files += [Path(d, "pip", "pip.conf") for d in xdg_dirs] + [Path("/etc/pip.conf")]
        home = Path.home()
        files += [home / ".pip" / "pip.conf", home / ".config" / "pip" / "pip.conf"]
        files.append(Path(sys.prefix, "pip.conf"))
    values: dict[str, str] = {}
    used: list[str] = []
    for path in files:
        if str(path) == os.devnull or not path.is_file():
            continue
        parser = configparser.RawConfigParser()
        try:
            parser.read(path)
        except configparser.Error:
            continue
        used.append(str(path))
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


def main() -> None:
    facts = {
        "executable": sys.executable,
        "version": platform.python_version(),
        "implementation": sys.implementation.name,
        "prefix": sys.prefix,
        "in_venv": sys.prefix != getattr(sys, "base_prefix", sys.prefix),
        "distributions": distributions(),
        "torch_backends": torch_backends(),
        "pip": pip_config(),
    }
    json.dump(facts, sys.stdout)


main()
