"""Backend failures become one sentence; the outputs are real pip and uv runs (tests/data)."""

from __future__ import annotations

from pathlib import Path

import pytest

from neuron_env.install.diagnose import explain
from neuron_env.install.plan import Mirrors
from tests.support.install_fixtures import plan_for

OUTPUTS = Path(__file__).resolve().parents[1] / "data" / "install" / "backend-output"
LOCAL_NEURON = Mirrors(neuron_index="http://127.0.0.1:8101/simple")


@pytest.mark.parametrize(
    ("output", "code"),
    [
        ("uv-unreachable", "unreachable"),
        ("uv-hash-mismatch", "hash-mismatch"),
        ("pip-hash-mismatch", "hash-mismatch"),
        ("uv-corrupt-wheel", "corrupt-wheel"),
        ("pip-corrupt-wheel", "corrupt-wheel"),
        ("uv-download-cut", "download-cut"),
        ("pip-download-cut", "hash-mismatch"),  # pip notices a short file by its hash
        ("pip-no-match", "no-match"),
        ("pip-read-timeout", "stalled"),
        ("pip-dns-retry", "dns"),
        ("pip-refused-retry", "unreachable"),  # "after connection broken by NewConnectionError"
    ],
)
def test_known_failures_are_recognised(output: str, code: str) -> None:
    text = (OUTPUTS / f"{output}.txt").read_text()
    assert explain(text, plan_for(mirrors=LOCAL_NEURON)).code == code


def test_the_index_involved_is_named() -> None:
    text = (OUTPUTS / "uv-unreachable.txt").read_text()
    cause = explain(text, plan_for(mirrors=LOCAL_NEURON))
    assert cause.message == "the neuron index at http://127.0.0.1:8101/simple could not be reached."
    assert "--neuron-index" in cause.hint


def test_a_dns_failure_names_the_host_not_a_cut_download() -> None:
    text = (OUTPUTS / "pip-dns-retry.txt").read_text()
    cause = explain(
        text, plan_for(mirrors=Mirrors(neuron_index="https://neuron-index.invalid/simple"))
    )
    assert cause.message.startswith("cannot resolve host neuron-index.invalid (DNS lookup failed)")


def test_a_refused_connection_that_pip_retried_is_an_index_not_reached_not_a_cut_download() -> None:
    # pip download from an index on a port nothing listens on (neuron-env download, 2.34.0)
    text = (OUTPUTS / "pip-refused-retry.txt").read_text()
    refused = Mirrors(
        neuron_index="http://127.0.0.1:9/simple", pytorch_index="http://127.0.0.1:9/simple"
    )
    cause = explain(text, plan_for(mirrors=refused))
    assert cause.code == "unreachable"
    assert cause.message.endswith("at http://127.0.0.1:9/simple could not be reached.")


def test_unknown_output_says_to_read_the_log() -> None:
    cause = explain("segmentation fault", plan_for())
    assert cause.code == "unknown"
    assert "last lines below" in cause.message
