"""The user's pip ``index-url``: where their default index (or its mirror) is.

pip's own order: ``$PIP_CONFIG_FILE`` alone when set (``os.devnull`` turns files off), else the
global, user and site files, later ones winning; then ``$PIP_INDEX_URL`` over all of them.
(The host probe has its own copy of this reader: it runs as a stdlib-only script in the target.)
"""

from __future__ import annotations

import configparser
import os
import sys
from pathlib import Path

from neuron_env.home import home
from neuron_env.input_files import InputRejected, MiB, read_text

MAX_CONFIG_BYTES = 1 * MiB


def configured_index_url() -> tuple[str, str] | None:
    """``(url, where it was set)`` or None when pip's configuration names no index-url."""
    from_env = os.environ.get("PIP_INDEX_URL")
    if from_env:
        return from_env, "PIP_INDEX_URL"
    found: tuple[str, str] | None = None
    for path in _config_files():
        parser = configparser.RawConfigParser()
        try:
            parser.read_string(read_text(path, MAX_CONFIG_BYTES), str(path))
        except (configparser.Error, InputRejected):
            continue  # pip, too, goes on without a file it cannot read
        for section in ("global", "install"):
            if parser.has_option(section, "index-url"):
                found = parser.get(section, "index-url").strip(), str(path)
    return found


def _config_files() -> list[Path]:
    explicit = os.environ.get("PIP_CONFIG_FILE")
    if explicit:
        return [] if explicit == os.devnull else [Path(explicit)]
    xdg = os.environ.get("XDG_CONFIG_DIRS", "/etc/xdg").split(":")
    files = [Path(d, "pip", "pip.conf") for d in xdg if d] + [Path("/etc/pip.conf")]
    folder = home()  # none (a container's arbitrary uid): pip reads no file under it either
    config_home = os.environ.get("XDG_CONFIG_HOME") or (folder and folder / ".config")
    files += [folder / ".pip" / "pip.conf"] if folder else []
    files += [Path(config_home, "pip", "pip.conf")] if config_home else []
    virtual_env = os.environ.get("VIRTUAL_ENV")
    files.append(Path(virtual_env or sys.prefix, "pip.conf"))
    return [f for f in files if f.is_file()]
