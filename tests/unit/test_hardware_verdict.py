"""The verdict on a host without Trainium hardware, and how sentences holding commands wrap."""

from __future__ import annotations

from neuron_env.checks.model import Finding, Status, summarize
from neuron_env.wording import wrap_words


def finding(check: str, status: Status) -> Finding:
    return Finding(check, check.split(".")[0], check, status, "")


ENVIRONMENT_OK = [finding("python.torch", "ok"), finding("platform.os", "ok")]
NO_DRIVER = [finding("driver.module", "fail"), finding("driver.devices", "fail")]
NO_DRIVER_IDS = ("driver.module", "driver.devices")
HARDWARE = (*NO_DRIVER_IDS, "driver.cores-held")


def test_only_hardware_checks_failing_without_a_device_is_unknown_not_failed() -> None:
    summary = summarize([*ENVIRONMENT_OK, *NO_DRIVER], hardware=HARDWARE)
    assert (summary.status, summary.exit_code) == ("unknown", 3)
    assert summary.needs_hardware == ("driver.module", "driver.devices")


def test_without_the_hardware_excuse_a_missing_driver_fails() -> None:
    summary = summarize([*ENVIRONMENT_OK, *NO_DRIVER])
    assert (summary.status, summary.exit_code, summary.needs_hardware) == ("fail", 1, ())


def test_a_failure_hardware_would_not_fix_still_fails() -> None:
    findings = [*NO_DRIVER, finding("python.torch", "fail")]
    summary = summarize(findings, hardware=HARDWARE)
    assert (summary.status, summary.exit_code) == ("fail", 1)
    assert summary.needs_hardware == ("driver.module", "driver.devices")


def test_an_allowed_hardware_check_is_allowed_not_waiting() -> None:
    summary = summarize([*ENVIRONMENT_OK, *NO_DRIVER], hardware=HARDWARE, allow=NO_DRIVER_IDS)
    assert (summary.status, summary.exit_code, summary.needs_hardware) == ("ok", 0, ())


def test_a_quoted_command_in_a_sentence_is_never_split() -> None:
    text = "'/opt/venv/bin/neuron-env install --system --torch 2.13' prints every apt step."
    lines = wrap_words(text, 20)
    assert lines[0] == "'/opt/venv/bin/neuron-env install --system --torch 2.13'"
    assert " ".join(lines) == text


def test_apostrophes_are_not_quotes() -> None:
    text = "neuron-env's own environment isn't one to install into"
    assert wrap_words(text, 20) == ["neuron-env's own", "environment isn't", "one to install into"]
