"""``neuron-env preflight``: the doctor for CI and schedulers — where reports go, CI defaults,
and the Slurm health-check script.

Exit codes (a public contract): 0 ready (warnings allowed unless ``--strict``; ``--allow``-ed checks
never fail the run), 1 not ready (a check failed), 2 preflight was misused, 3 could not judge
(nothing failed, but a check's probe could not run).
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from neuron_env.errors import BadInput
from neuron_env.frozen import frozen
from neuron_env.resources import shipped_text

if TYPE_CHECKING:
    from neuron_env.matrix import Matrix

CiSystem = Literal["github", "gitlab", "none"]
EXTENSIONS = {"text": "txt", "json": "json", "junit": "xml", "github": "md"}
REPORT_NAME = "preflight"
SLURM_SCRIPT = "slurm-healthcheck.sh"
EMITTABLE = ("slurm-healthcheck",)


@frozen
class CiContext:
    system: CiSystem
    step_summary: Path | None = None
    project_dir: Path | None = None


def detect_ci(environ: Mapping[str, str]) -> CiContext:
    """GitHub Actions (``GITHUB_ACTIONS``) or GitLab CI (``GITLAB_CI``), else none."""
    if environ.get("GITHUB_ACTIONS") == "true":
        summary = environ.get("GITHUB_STEP_SUMMARY")
        return CiContext("github", step_summary=Path(summary) if summary else None)
    if environ.get("GITLAB_CI") == "true":
        return CiContext("gitlab", project_dir=Path(environ.get("CI_PROJECT_DIR") or "."))
    return CiContext("none")


@frozen
class OutputPlan:
    """What goes where: ``stdout`` is the format printed to the log; ``files`` are written."""

    stdout: str
    files: tuple[tuple[Path, str], ...] = ()
    annotations: bool = False
    step_summary: Path | None = None


def plan_outputs(output_format: str | None, output: str | None, ci: CiContext) -> OutputPlan:
    """Decide the outputs; explicit options win over the CI system's defaults.

    ``output`` is kept as typed: a trailing ``/`` (or an existing directory) means a directory.
    """
    chosen = output_format or {"github": "github", "gitlab": "junit"}.get(ci.system, "text")
    if output is None and ci.system == "gitlab" and output_format is None:
        output = f"{ci.project_dir or Path()}/neuron-env-preflight/"
    github = chosen == "github"
    summary = ci.step_summary if github else None
    if output is None:
        stdout = "text" if github else chosen
        return OutputPlan(stdout, annotations=github, step_summary=summary)
    if output.endswith("/") or Path(output).is_dir():
        folder = Path(output)
        files = [(folder / f"{REPORT_NAME}.json", "json")]
        if chosen != "json":
            files.append((folder / f"{REPORT_NAME}.{EXTENSIONS[chosen]}", chosen))
        return OutputPlan("text", tuple(files), github, summary)
    return OutputPlan("text", ((Path(output), chosen),), github, summary)


def check_healthcheck_settings(
    matrix: Matrix, release: str | None, torch: str | None, allow: Sequence[str], timeout: float
) -> None:
    """What the health-check script embeds must work on every node: else it drains them all.

    ``--allow`` names real check ids, ``--release`` a known release, ``--torch`` a PyTorch that
    release (or, without one, some known release) pairs, ``--timeout`` a positive number.
    """
    from neuron_env.checks.registry import select_checks
    from neuron_env.doctor.diagnose import check_request

    select_checks(allow=allow)  # unknown ids are bad input, with a "did you mean"
    if not (math.isfinite(timeout) and timeout >= 1):
        raise BadInput(f"--timeout {timeout:g} is not a number of seconds (1 or more).")
    check_request(matrix, release, torch)


def render_slurm_healthcheck(
    neuron_env: str, python: str, timeout: float, preflight_args: Sequence[str]
) -> str:
    """The Slurm health-check script with this installation's settings written in, quoted."""
    template = shipped_text("scripts", SLURM_SCRIPT)
    begin = "# --- settings (written by `neuron-env preflight --emit slurm-healthcheck`) ---\n"
    end = "# --- end of settings ---\n"
    if begin not in template or end not in template:
        raise BadInput(f"{SLURM_SCRIPT} lacks its settings block; reinstall neuron-env.")
    settings = "".join(
        [
            f"NEURON_ENV=${{NEURON_ENV:-{shlex.quote(neuron_env)}}}\n",
            f"PYTHON=${{PYTHON:-{shlex.quote(python)}}}\n",
            f"TIMEOUT=${{TIMEOUT:-{int(timeout)}}}\n",
            f"PREFLIGHT_ARGS=({' '.join(shlex.quote(a) for a in preflight_args)})\n",
        ]
    )
    head, rest = template.split(begin, 1)
    return head + begin + settings + end + rest.split(end, 1)[1]


@frozen(kw_only=True)
class HealthcheckRequest:
    """What ``preflight --emit slurm-healthcheck`` writes into the script for every node."""

    matrix_dirs: Sequence[Path] = ()
    torch: str | None = None
    release: str | None = None
    level: int = 0
    python: Path | None = None
    sysroot: Path = Path("/")
    strict: bool = False
    allow: Sequence[str] = ()
    timeout: float = 120.0


def _require_target(python: Path | None) -> None:
    """Without --python the script would judge neuron-env's own environment on every node, which
    has no torch-neuronx: each node would fail and be drained."""
    if python is None:
        raise BadInput(
            "preflight --emit slurm-healthcheck needs the environment each node should run: "
            "without --python it would judge neuron-env's own, fail and drain every node.",
            hint="Add --python PATH, the interpreter of the TorchNeuron environment on the "
            "nodes (e.g. --python /opt/venv/bin/python).",
        )


def slurm_healthcheck(request: HealthcheckRequest) -> str:
    """The Slurm health-check script running this installation's neuron-env preflight with the
    request's settings; settings that would fail on every node are bad input first."""
    import sys

    from neuron_env.matrix import load_matrix

    matrix = load_matrix(list(request.matrix_dirs))
    check_healthcheck_settings(
        matrix, request.release, request.torch, request.allow, request.timeout
    )
    _require_target(request.python)  # after the values given: they are fixed in the same edit
    args = ["--level", str(request.level)]
    args += ["--torch", request.torch] if request.torch else []
    args += ["--release", request.release] if request.release else []
    args += ["--python", str(request.python)] if request.python else []
    args += ["--sysroot", str(request.sysroot)] if request.sysroot != Path("/") else []
    args += ["--strict"] if request.strict else []
    for check in request.allow:
        args += ["--allow", check]
    script = Path(sys.executable).with_name("neuron-env")  # this installation's console script
    tool = str(script) if script.exists() else "neuron-env"
    return render_slurm_healthcheck(tool, sys.executable, request.timeout, args)
