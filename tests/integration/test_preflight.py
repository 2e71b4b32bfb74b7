"""``neuron-env preflight``: exit codes, CI defaults, formats, and the Slurm health check."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli import DATA, NEURON_ENV, CliRunner
from tests.support.hosts import Host, scenario_host
from tests.support.junit import assert_valid_junit, totals
from tests.support.validators import assert_shellcheck_clean

pytestmark = pytest.mark.integration


def preflight(host: Host, *extra: str) -> list[str]:
    """``preflight --level 0`` on ``host`` (its matrix from the environment), then ``extra``."""
    return ["preflight", "--level", "0", *host.probe(), *extra]


def failures(path: Path) -> int:
    """The failures a valid JUnit file counts, summed over its suites."""
    return totals(assert_valid_junit(path))["failures"]


@pytest.fixture
def healthy(tmp_path: Path) -> Iterator[Host]:
    yield from scenario_host("healthy-trn2-ubuntu-26.04", tmp_path / "healthy-trn2-ubuntu-26.04")


@pytest.fixture
def warning_host(tmp_path: Path) -> Iterator[Host]:
    yield from scenario_host("kernel-headers-missing", tmp_path / "kernel-headers-missing")


@pytest.fixture
def failing_host(tmp_path: Path) -> Iterator[Host]:
    yield from scenario_host("driver-not-loaded", tmp_path / "driver-not-loaded")


def test_exit_code_contract(
    cli: CliRunner, healthy: Host, warning_host: Host, failing_host: Host
) -> None:
    assert cli(*preflight(healthy), env=healthy.env).returncode == 0
    assert cli(*preflight(warning_host), env=warning_host.env).returncode == 0
    assert cli(*preflight(warning_host, "--strict"), env=warning_host.env).returncode == 1
    assert cli(*preflight(failing_host), env=failing_host.env).returncode == 1
    assert cli(*preflight(failing_host, "--format", "yaml"), env=failing_host.env).returncode == 2


def test_allowed_checks_fail_visibly_without_failing_the_run(
    cli: CliRunner, failing_host: Host
) -> None:
    args = preflight(failing_host, "--allow", "driver.module", "--allow", "driver.devices")
    result = cli(*args, env=failing_host.env)
    assert result.returncode == 0
    assert "✗ driver.module" in result.stdout
    assert "(allowed by --allow: does not fail the run)" in result.stdout
    partly = cli(*preflight(failing_host, "--allow", "driver.module"), env=failing_host.env)
    assert partly.returncode == 1  # driver.devices still fails


def test_the_verdict_says_which_failures_were_allowed(
    cli: CliRunner, failing_host: Host, tmp_path: Path
) -> None:
    args = preflight(failing_host, "--allow", "driver.module", "--allow", "driver.devices")
    last = cli(*args, env=failing_host.env).stdout.rstrip().splitlines()[-1]
    # 2.33-era torch-neuronx carries the known issues 2.34.0 fixes: one warning. The counts are
    # the JSON report's (the allowed failures among them); the note says which were allowed.
    assert last.startswith(
        "Ready, with warnings (2 failures allowed: driver.module, driver.devices): "
        "19 ok, 1 warning, 2 failed in "
    )
    summary = tmp_path / "summary.md"
    cli(*args, "--format", "github", "--output", str(summary), env=failing_host.env)
    counts = "19 ok, 1 warn; 2 fail allowed (`driver.module`, `driver.devices`)"
    assert counts in summary.read_text()


def test_allowing_an_unknown_check_is_bad_input(cli: CliRunner, healthy: Host) -> None:
    result = cli(*preflight(healthy, "--allow", "driver.modul"), env=healthy.env)
    assert result.returncode == 2 and "did you mean 'driver.module'?" in result.stderr


def test_output_directory_gets_the_report_and_json(
    cli: CliRunner, failing_host: Host, tmp_path: Path
) -> None:
    out = tmp_path / "reports"
    result = cli(
        *preflight(failing_host, "--format", "junit", "--output", f"{out}/"), env=failing_host.env
    )
    assert result.returncode == 1
    assert "✗ driver.module" in result.stdout  # the human report still goes to the log
    doc = json.loads((out / "preflight.json").read_text())
    assert doc["schema"] == "neuron-env/preflight/v1" and doc["status"] == "fail"
    assert_valid_junit(out / "preflight.xml")


def test_junit_validates_against_the_schema_with_allowed_and_strict_checks(
    cli: CliRunner, warning_host: Host, failing_host: Host, tmp_path: Path
) -> None:
    strict = tmp_path / "strict.xml"
    cli(
        *preflight(warning_host, "--strict", "--format", "junit", "-o", str(strict)),
        env=warning_host.env,
    )
    assert failures(strict) == 2  # the warnings fail when strict: headers, known issues
    allowed = tmp_path / "allowed.xml"
    args = preflight(
        failing_host, "--allow", "driver.module", "--format", "junit", "-o", str(allowed)
    )
    cli(*args, env=failing_host.env)
    assert failures(allowed) == 1  # driver.devices only


def test_github_actions_defaults(cli: CliRunner, failing_host: Host, tmp_path: Path) -> None:
    summary = tmp_path / "step-summary.md"
    env = {**failing_host.env, "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    result = cli(*preflight(failing_host), env=env)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("::error title=neuron-env driver.module::")
    assert any("✗ driver.module" in line for line in lines)  # and the readable report
    assert summary.read_text().startswith("### neuron-env preflight: FAIL")


def test_gitlab_defaults_write_junit_and_json_for_the_artifacts(
    cli: CliRunner, healthy: Host, tmp_path: Path
) -> None:
    env = {**healthy.env, "GITLAB_CI": "true", "CI_PROJECT_DIR": str(tmp_path)}
    result = cli(*preflight(healthy), env=env)
    assert result.returncode == 0 and "Ready" in result.stdout
    assert_valid_junit(tmp_path / "neuron-env-preflight" / "preflight.xml")
    # ready, with the known issues of its 2.33-era torch-neuronx as a warning
    assert (
        json.loads((tmp_path / "neuron-env-preflight" / "preflight.json").read_text())["status"]
        == "warn"
    )


def test_json_to_stdout_for_machines(cli: CliRunner, healthy: Host) -> None:
    result = cli(*preflight(healthy, "--format", "json"), env=healthy.env)
    doc = json.loads(result.stdout)
    assert doc["schema"] == "neuron-env/preflight/v1" and doc["exit_code"] == 0


# --- Slurm ------------------------------------------------------------------------------------


@pytest.fixture
def stub_bin(tmp_path: Path) -> Path:
    """``scontrol`` and ``logger`` stand-ins that record their arguments."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for name in ("scontrol", "logger"):
        tool = folder / name
        tool.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > "{tmp_path}/{name}.args"\n')
        tool.chmod(0o755)
    return folder


def render_healthcheck(cli: CliRunner, host: Host, path: Path, *extra: str) -> Path:
    result = cli("preflight", "--emit", "slurm-healthcheck", "--sysroot", str(host.sysroot),
                 "--python", str(host.python), *extra)  # fmt: skip
    assert result.returncode == 0, result.stderr
    path.write_text(result.stdout)
    return path


def no_home(stub_bin: Path) -> dict[str, str]:
    """A health check's PATH (the stand-ins first), and a home folder of the test's own: what
    neuron-env remembers between runs goes there, not into the home of whoever runs the tests."""
    return {"PATH": f"{stub_bin}:/usr/bin:/bin", "HOME": str(stub_bin.parent)}


def run_healthcheck(script: Path, host: Host, stub_bin: Path, **env: str) -> int:
    full = {**no_home(stub_bin), "SLURMD_NODENAME": "trn-node-7", **host.env, **env}
    return subprocess.run(["bash", str(script)], env=full, timeout=120, check=False).returncode


def test_healthcheck_drains_a_broken_node_naming_the_failing_checks(
    cli: CliRunner, failing_host: Host, stub_bin: Path, tmp_path: Path
) -> None:
    script = render_healthcheck(cli, failing_host, tmp_path / "healthcheck.sh")
    assert run_healthcheck(script, failing_host, stub_bin) == 1
    args = (tmp_path / "scontrol.args").read_text().splitlines()
    assert args == [
        "update",
        "nodename=trn-node-7",
        "state=drain",
        "reason=neuron-env: driver.module,driver.devices",
    ]


def test_healthcheck_that_cannot_drain_says_so_with_scontrol_s_reason_and_still_fails(
    cli: CliRunner, failing_host: Host, stub_bin: Path, tmp_path: Path
) -> None:
    denied = stub_bin / "scontrol"  # what scontrol prints to a user who is not an operator
    denied.write_text("#!/bin/sh\necho 'slurm_update error: Invalid user id' >&2\nexit 1\n")
    script = render_healthcheck(cli, failing_host, tmp_path / "healthcheck.sh")
    full = {
        **no_home(stub_bin),
        "SLURMD_NODENAME": "trn-node-7",
        **failing_host.env,
    }
    done = subprocess.run(["bash", str(script)], env=full, capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "neuron-env-healthcheck: could not drain trn-node-7: scontrol said: slurm_update error: "
        "Invalid user id; the node failed: neuron-env: driver.module,driver.devices"
    )


def test_healthcheck_leaves_a_healthy_node_alone(
    cli: CliRunner, healthy: Host, stub_bin: Path, tmp_path: Path
) -> None:
    script = render_healthcheck(cli, healthy, tmp_path / "healthcheck.sh")
    assert run_healthcheck(script, healthy, stub_bin) == 0
    assert not (tmp_path / "scontrol.args").exists()


def test_healthcheck_allowed_checks_do_not_drain(
    cli: CliRunner, failing_host: Host, stub_bin: Path, tmp_path: Path
) -> None:
    script = render_healthcheck(cli, failing_host, tmp_path / "hc.sh", "--allow", "driver.module",
                                "--allow", "driver.devices")  # fmt: skip
    assert run_healthcheck(script, failing_host, stub_bin) == 0


def test_healthcheck_drains_when_preflight_hangs(
    cli: CliRunner, healthy: Host, stub_bin: Path, tmp_path: Path
) -> None:
    hung = stub_bin / "hung-neuron-env"
    hung.write_text("#!/bin/sh\nexec sleep 60\n")
    hung.chmod(0o755)
    script = render_healthcheck(cli, healthy, tmp_path / "hc.sh")
    assert run_healthcheck(script, healthy, stub_bin, NEURON_ENV=str(hung), TIMEOUT="1") == 1
    reason = (tmp_path / "scontrol.args").read_text().splitlines()[-1]
    assert reason == "reason=neuron-env preflight did not finish within 1s"


def test_slurm_healthcheck_refuses_to_run_without_a_target_environment(
    cli: CliRunner, healthy: Host
) -> None:
    result = cli("preflight", "--emit", "slurm-healthcheck", "--sysroot", str(healthy.sysroot))
    assert result.returncode == 2
    assert result.stdout == ""  # no script to install by mistake
    said = " ".join(result.stderr.split())
    assert "without --python it would judge neuron-env's own, fail and drain every node" in said
    assert "Add --python PATH" in said
    assert "Traceback" not in result.stderr


def test_rendered_scripts_pass_shellcheck(cli: CliRunner, healthy: Host, tmp_path: Path) -> None:
    script = render_healthcheck(cli, healthy, tmp_path / "hc.sh", "--allow", "env.cache")
    repo = DATA.parents[1]
    scripts = (
        script,
        repo / "scripts" / "github-action.sh",
        repo / "scripts" / "slurm-healthcheck.sh",
    )
    for path in scripts:
        subprocess.run(["bash", "-n", str(path)], check=True)
    assert_shellcheck_clean(*scripts)


def test_emit_quotes_hostile_values(cli: CliRunner, healthy: Host, tmp_path: Path) -> None:
    # A hostile --torch is no longer written at all (it names no pairing: exit 2); a path still is.
    refused = cli("preflight", "--emit", "slurm-healthcheck", "--torch", "2.14'; touch /tmp/pwned")
    assert refused.returncode == 2 and refused.stdout == ""
    hostile = "/opt/venv'; touch /tmp/pwned; echo '/bin/python"
    result = cli("preflight", "--emit", "slurm-healthcheck", "--python", hostile)
    assert result.returncode == 0
    script = tmp_path / "hc.sh"
    script.write_text(result.stdout)
    assert_shellcheck_clean(script)
    # The value survives as one argument, exactly as given.
    probe = subprocess.run(
        ["bash", "-c", f'source <(sed -n "/^# --- settings/,/^# --- end/p" {script}); '
         'printf "%s\\n" "${PREFLIGHT_ARGS[@]}"'],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert probe.stdout.splitlines() == ["--level", "0", "--python", hostile]


# --- the GitHub Action's steps, run locally -------------------------------------------------------


def test_github_action_steps_run_locally(healthy: Host, tmp_path: Path) -> None:
    repo = DATA.parents[1]
    action = tmp_path / "action"  # what GitHub checks out at the action's ref
    shutil.copytree(  # links kept as links, as a checkout has them (host trees hold some)
        repo,
        action,
        symlinks=True,
        ignore=shutil.ignore_patterns(".venv*", ".git", "*.egg-info", "__pycache__"),
    )
    outputs, summary = tmp_path / "github-output", tmp_path / "summary.md"
    env = {
        **healthy.env,
        "PATH": f"{NEURON_ENV.parent}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "GITHUB_ACTIONS": "true",
        "GITHUB_ACTION_PATH": str(action),
        "RUNNER_TEMP": str(tmp_path / "runner-temp"),
        "GITHUB_OUTPUT": str(outputs),
        "GITHUB_STEP_SUMMARY": str(summary),
        "INPUT_TORCH": "2.14",
        "INPUT_LEVEL": "0",
        "INPUT_PYTHON": str(healthy.python),
        "INPUT_ALLOW": "env.cache",
        "INPUT_ARGS": f"--sysroot {healthy.sysroot}",
    }
    result = subprocess.run(["bash", str(action / "scripts" / "github-action.sh")], env=env,
                            capture_output=True, text=True, timeout=600, check=False)  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    published = dict(line.split("=", 1) for line in outputs.read_text().splitlines())
    assert published["status"] == "warn"  # the known issues of its 2.33-era torch-neuronx
    assert json.loads(Path(published["report-path"]).read_text())["torch"] == "2.14.0"
    assert summary.read_text().startswith("### neuron-env preflight: WARN")


def test_action_and_examples_are_well_formed() -> None:
    import yaml

    repo = DATA.parents[1]
    action = yaml.safe_load((repo / "action.yml").read_text())
    assert set(action["inputs"]) >= {"torch", "release", "level", "python", "strict"}
    assert set(action["outputs"]) == {"status", "report-path"}
    (step,) = action["runs"]["steps"]
    assert action["runs"]["using"] == "composite"
    assert "${{" not in step["run"]  # inputs arrive as environment variables only
    assert step["run"] == 'bash "$GITHUB_ACTION_PATH/scripts/github-action.sh"'
    for manifest in sorted((repo / "examples" / "kubernetes").glob("*.yaml")):
        if manifest.name == "collectives-job.yaml":
            continue  # no preflight: tests/integration/test_cluster_examples.py checks it
        doc = yaml.safe_load(manifest.read_text())
        spec = doc["spec"]["template"]["spec"] if "template" in doc["spec"] else doc["spec"]
        commands = [
            " ".join(c["command"]) for c in spec.get("initContainers", []) + spec["containers"]
        ]
        if manifest.name == "image-job.yaml":  # the image's own preflight, inside the container
            init = " ".join(spec["initContainers"][0]["command"])
            assert init.startswith("neuron-env preflight --level 0") and "/opt/venv" in init
            assert all("hostPath" not in volume for volume in spec["volumes"]), manifest
            continue
        assert any("neuron-env" in cmd and "--sysroot /host" in cmd for cmd in commands), manifest
        assert {"hostPath": {"path": "/"}, "name": "host-root"} in spec["volumes"]
    workflow = yaml.safe_load((repo / "examples" / "github-workflow.yml").read_text())
    assert workflow["jobs"]["train"]["steps"][1]["with"]["torch"] == "2.14"
