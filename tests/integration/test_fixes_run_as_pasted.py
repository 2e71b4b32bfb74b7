"""Every fix the doctor prints across its test scenarios runs as pasted into a fresh shell.

The doctor judges each scenario host under ``tests/data/hosts/`` (at ``--level 1``, so the
device smoke test's advice is printed too) once as JSON and once as text. The fixes are the JSON
findings' ``fix`` fields, the commands quoted in their ``detail``, and the text report's
``fix:`` lines and its "Create a TorchNeuron one" line (which the JSON does not carry). Each is
then judged in a shell like a new terminal's: ``PATH`` holds only the system's directories,
``HOME`` and the working directory are empty folders, no virtual environment is active.

Which part of a fix is a command:

* a fix that does not start with a capital letter (after ``on the host: ``) is a shell command
  as a whole; a fix that does is a sentence, and only its ``'single-quoted'`` spans whose first
  word is a program (below) are commands. Commands written unquoted inside a sentence are
  advice for another machine (the node, the container runtime) and are not run;
* neuron-env is never named bare (``neuron-env install``) anywhere in a fix or a quoted command:
  the system PATH does not find the console script these tests run, so it must be named by its
  absolute path, or ``PYTHON -m neuron_env`` with PYTHON absolute.

How each simple command of a command (split at ``&&``, ``||``, ``;``, ``|``) is judged:

* neuron-env (after an optional ``sudo``, whose secure PATH never holds a venv's ``bin``) runs
  for real under ``bash -c``. ``install`` and ``download`` change the host, so they get
  ``--dry-run``; both also get ``--sysroot`` of the scenario, which stands in for "on the host the
  doctor judged". The shell has ``NEURON_ENV_MATRIX_DIR`` set to the scenario's matrix, as the
  doctor had. It must exit 0. Two other answers are allowed: install's exit 2 "No Python X.Y
  found", only when no such Python is on the system PATH of the machine running the tests; and
  its exit 2 refusing an OS the release does not list, only on a host whose ``platform.os``
  failed and only for the command that fix labels as the one to run on a supported host
  ("... there"): the commands for this host carry ``--allow-unlisted-os`` and must run.
  Its output must never say "command not found";
* a program named by an absolute path (the target's own interpreter, ``python -m pip ...``)
  changes that environment and is not run: the path must exist and be executable;
* the shell builtins ``export``, ``unset``, ``kill`` and the host tools in :data:`HOST_TOOLS`
  (apt-get, modprobe, ...) manage the judged host and cannot run here: their names are accepted;
* anything else (``python3.12``, a relative path, an unknown program) fails the test.

Every command must also parse as shell (``bash -n``).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from neuron_env.invocation import SYSTEM_PATH
from tests.support.hosts import load_scenario, scenario_doctor, scenario_names

pytestmark = pytest.mark.integration

BUILTINS = {"export", "unset", "kill"}
HOST_TOOLS = {"apt-get", "modprobe", "rmmod", "modinfo", "dkms", "usermod", "systemctl", "bash"}
CHANGES_HOST = {"install", "download"}
TAKES_SYSROOT = {"install", "download"}
CONTROL = {"&&", "||", ";", "|", "&"}
BARE_NAME = re.compile(r"(?<![\w/.-])neuron-env (?=[a-z-])")
QUOTED = re.compile(r"'([^']+)'")
NO_PYTHON = re.compile(r"No Python ((?:3\.\d+, )*3\.\d+) found")


@dataclass(frozen=True)
class Judged:
    """One scenario host as the doctor judged it, and every fix it printed (source -> text)."""

    name: str
    where: Path
    fixes: tuple[tuple[str, str], ...]
    os_refused: bool
    """platform.os failed: no install can succeed on this host; the fix says to move."""


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Judged]:
    """Every scenario judged once per module (the runs are independent: four at a time)."""
    root = tmp_path_factory.mktemp("hosts")
    with ThreadPoolExecutor(4) as pool:
        hosts = pool.map(lambda name: _judge(name, root / name), scenario_names())
        return {host.name: host for host in hosts}


def _judge(name: str, where: Path) -> Judged:
    where.mkdir()
    with scenario_doctor(load_scenario(name), where) as doctor:
        as_json = doctor("--level", "1", "--format", "json")
        as_text = doctor("--level", "1", env={"COLUMNS": "1000"})
    assert as_json.returncode in (0, 1, 3), as_json.stderr
    findings = json.loads(as_json.stdout)["findings"]
    fixes = [(f"json {f['check']} fix", f["fix"]) for f in findings if f["fix"]]
    fixes += [(f"json {f['check']} detail", q) for f in findings for q in _quoted(f["detail"])]
    fixes += [("text", line) for line in _text_fixes(as_text.stdout)]
    first = {fix: source for source, fix in reversed(fixes)}  # each fix judged once
    fixes = [(source, fix) for fix, source in first.items()]
    os_refused = any(f["check"] == "platform.os" and f["status"] == "fail" for f in findings)
    return Judged(name, where, tuple(fixes), os_refused)


def _quoted(detail: str) -> list[str]:
    return [q for q in QUOTED.findall(detail) if _is_program(_words(q)[0:1])]


def _text_fixes(text: str) -> Iterator[str]:
    """The ``fix:`` lines (joined again where a narrow terminal wrapped them) and the line under
    "Create a TorchNeuron one:"."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.lstrip().startswith("fix: "):
            indent = len(line) - len(line.lstrip()) + len("fix: ")
            parts = [line.lstrip().removeprefix("fix: ")]
            for more in lines[i + 1 :]:
                if not more.startswith(" " * indent) or more[indent : indent + 1] == " ":
                    break
                parts.append(more.strip())
            yield " ".join(parts)
        elif line.endswith("Create a TorchNeuron one:") and i + 1 < len(lines):
            yield lines[i + 1].strip()


@pytest.mark.parametrize("name", scenario_names())
def test_every_printed_fix_runs_in_a_fresh_shell(name: str, judged: dict[str, Judged]) -> None:
    host = judged[name]
    problems = [
        f"{source}: {fix!r}: {problem}"
        for source, fix in host.fixes
        for problem in _problems(fix, host)
    ]
    assert not problems, "\n".join(problems)


def _problems(fix: str, host: Judged) -> Iterator[str]:
    if BARE_NAME.search(fix):
        yield "names neuron-env bare; a fresh shell's PATH does not find it"
    for command in _commands(fix):
        parsed = subprocess.run(["bash", "-n", "-c", command], capture_output=True, text=True)
        if parsed.returncode != 0:
            yield f"does not parse as shell: {parsed.stderr.strip()}"
            continue
        for words in _simple_commands(command):
            yield from _judge_simple(words, host)


def _commands(fix: str) -> list[str]:
    command = fix.removeprefix("on the host: ")
    if command and not command[0].isupper():
        return [command]
    return [q for q in QUOTED.findall(fix) if _is_program(_words(q)[0:1])]


def _words(command: str) -> list[str]:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    return list(lexer)


def _simple_commands(command: str) -> Iterator[list[str]]:
    words: list[str] = []
    for word in [*_words(command), ";"]:
        if word in CONTROL:
            if words:
                yield words
            words = []
        else:
            words.append(word)


def _is_program(words: list[str]) -> bool:
    first = words[0] if words else ""
    return first in BUILTINS | HOST_TOOLS | {"sudo"} or "neuron-env" in first or first[:1] == "/"


def _judge_simple(words: list[str], host: Judged) -> Iterator[str]:
    sudo = words[0] == "sudo"
    words = words[1:] if sudo else words
    program = words[0]
    if _is_neuron_env(words):
        yield from _run_neuron_env(words, host)
    elif program.startswith("/"):
        if not os.access(program, os.X_OK):
            yield f"{program} does not exist or is not executable"
    elif program in HOST_TOOLS or (program in BUILTINS and not sudo):
        return
    elif program == "neuron-env" or program.endswith("/neuron-env"):
        yield f"{program}: not a path to this neuron-env"
    else:
        yield f"{program!r} is not a program a fresh shell finds"


def _is_neuron_env(words: list[str]) -> bool:
    return Path(words[0]).name == "neuron-env" or words[1:3] == ["-m", "neuron_env"]


def _run_neuron_env(words: list[str], host: Judged) -> Iterator[str]:
    program = words[0]
    if not program.startswith("/") or not os.access(program, os.X_OK):
        yield f"{program}: neuron-env must be named by an absolute path that exists"
        return
    command = words[3:] if words[1:3] == ["-m", "neuron_env"] else words[1:]
    args = _subcommand_args(command, host)
    result = _fresh_shell(shlex.join([*words[: len(words) - len(command)], *args]), host)
    output = result.stdout + result.stderr
    if "command not found" in output or result.returncode == 127:
        yield f"command not found: {output.strip()}"
    elif result.returncode != 0 and not _expected_refusal(result, host, command):
        yield f"exit {result.returncode} as pasted (with {args[len(command) :]}): {output.strip()}"


def _subcommand_args(command: list[str], host: Judged) -> list[str]:
    """``command`` with ``--dry-run`` where it would change the host, and the scenario's root."""
    words = iter(command)
    subcommand = ""
    for word in words:
        if word == "--matrix-dir":  # a global option carried from doctor's own command line
            next(words, None)
        elif not word.startswith("-"):
            subcommand = word
            break
    extra: list[str] = []
    if subcommand in CHANGES_HOST and "--dry-run" not in command:
        extra.append("--dry-run")
    if subcommand in TAKES_SYSROOT and "--sysroot" not in command:
        extra += ["--sysroot", str(host.where / "sysroot")]
    return [*command, *extra]


def _fresh_shell(command: str, host: Judged) -> subprocess.CompletedProcess[str]:
    home, cwd = host.where / "home", host.where / "cwd"
    shutil.rmtree(cwd, ignore_errors=True)  # each fix starts in an empty folder
    home.mkdir(exist_ok=True)
    cwd.mkdir()
    matrix = next(host.where.glob("matrix-*"))
    env = {
        "PATH": SYSTEM_PATH,
        "HOME": str(home),
        "NEURON_ENV_MATRIX_DIR": str(matrix),
        "NO_COLOR": "1",
        "PIP_CONFIG_FILE": os.devnull,
        "UV_NO_CONFIG": "1",
        "AWS_EC2_METADATA_DISABLED": "true",
        # a worktree's checkout put first on the import path (unset in CI: the installed one)
        **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}),
    }
    return subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, env=env, cwd=cwd, timeout=120
    )


def _expected_refusal(
    result: subprocess.CompletedProcess[str], host: Judged, command: list[str]
) -> bool:
    """The two answers other than 0 that a pasted fix may give: see the module's docstring."""
    refuses_os = result.returncode == 2 and UNLISTED_OS.search(" ".join(result.stderr.split()))
    # only the command platform.os labels as the one for a supported host ("... there")
    for_another_host = "--allow-unlisted-os" not in command
    return (host.os_refused and bool(refuses_os) and for_another_host) or _host_lacks_python(result)


UNLISTED_OS = re.compile(r"does not list OS|This host runs .+, which Neuron \S+ does not list")


def _host_lacks_python(result: subprocess.CompletedProcess[str]) -> bool:
    """install's answer when this machine has none of the Pythons the pairing supports: exit 2,
    "No Python 3.12, 3.13 found" -- true only when the system PATH indeed has none of them."""
    found = NO_PYTHON.search(result.stderr)
    if result.returncode != 2 or found is None:
        return False
    versions = found.group(1).split(", ")
    return not any(shutil.which(f"python{v}", path=SYSTEM_PATH) for v in versions)
