"""The arguments of ``scripts/bootstrap.sh``, the provisioning shared by user data and AMI builds.

The script itself lives once, in ``scripts/bootstrap.sh`` (shipped inside the wheel); the user
data embeds it and the Packer recipe uploads it. This module decides only how it is called.
"""

from __future__ import annotations

from typing import Literal

from neuron_env.cloud.tool_source import ToolSource
from neuron_env.frozen import frozen
from neuron_env.resources import shipped_text

Mode = Literal["auto", "always", "never"]

#: Where boot-time setup builds the Python environment when the image has none.
DEFAULT_VENV = "/opt/neuron-env/venv"
#: Where the script is installed on the host (user data and AMI builds alike).
INSTALLED_PATH = "/usr/local/sbin/neuron-env-bootstrap"
LOG_DIR = "/var/log/neuron-env"
REPORT = f"{LOG_DIR}/doctor.json"
STATUS_FILE = "/var/lib/neuron-env/status"
READY_FILE = "/var/lib/neuron-env/ready"
STATUS_TAG = "neuron-env:status"


@frozen
class BootstrapArgs:
    """How to call the bootstrap script; ``auto`` stages install only what the host lacks."""

    release: str
    torch: str
    tool: ToolSource
    venv: str = DEFAULT_VENV
    system: Mode = "auto"
    efa: Mode = "auto"
    python_env: Mode = "auto"
    level: int = 1
    tag: bool = True
    image_build: bool = False

    def argv(self) -> list[str]:
        """The command-line arguments, one list element per word (quoted when rendered)."""
        args = [
            *("--release", self.release, "--torch", self.torch),
            *self.tool.argv(),
            *("--venv", self.venv),
            *("--system", self.system, "--efa", self.efa, "--python-env", self.python_env),
            *("--level", str(self.level)),
        ]
        if not self.tag:
            args.append("--no-tag")
        if self.image_build:
            args.append("--image-build")
        return args


def bootstrap_script() -> str:
    """The text of the shipped ``scripts/bootstrap.sh``."""
    return shipped_text("scripts", "bootstrap.sh")
