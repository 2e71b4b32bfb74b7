"""Usage errors stay machine-readable and look like every other error (issue 38 §5, issue 41 §3).

A CI script that runs ``neuron-env ... --format json`` parses stdout whatever happens: an unknown
option, an option missing its value, a bad value, a missing option or argument all print the JSON
envelope there (exit 2, ``status: error``, the message in ``errors``), never usage text, even when
click stops before it reads ``--format``. On stderr every usage error is neuron-env's own
``error:`` line and the next step, not click's ``Usage:`` block with an ``Error:`` line.
"""

from __future__ import annotations

import json

import pytest

from tests.support.cli import CliRunner

pytestmark = pytest.mark.integration

# (command line, the message's words, the command as the envelope names it)
USAGE_ERRORS = [
    (["doctor", "--format", "json", "--bogus"], "No such option: --bogus", "doctor"),
    (["doctor", "--bogus", "--format", "json"], "No such option: --bogus", "doctor"),
    (["doctor", "--format=json", "--level"], "Option '--level' requires an argument", "doctor"),
    (["doctor", "--format", "json", "--level", "9"], "9 is not in the range", "doctor"),
    (["facts", "--format", "json", "--level", "x"], "'x' is not a valid", "facts"),
    (["matrix", "resolve", "--json"], "Missing option '--torch'", "matrix resolve"),
    (
        ["matrix", "resolve", "--json", "--torch"],
        "'--torch' requires an argument",
        "matrix resolve",
    ),
    (["fleet", "report", "--format", "json"], "Missing argument 'DIR'", "fleet report"),
    (["preflight", "--format", "json", "--nope"], "No such option: --nope", "preflight"),
    (["scan", "--format", "json", "--nope"], "No such option: --nope", "scan"),
    (["install", "--json", "--torch", "2.14", "--frob"], "No such option: --frob", "install"),
    (["--matrix-dir", ".", "doctor", "--format", "json", "--x"], "No such option: --x", "doctor"),
]


@pytest.mark.parametrize(("args", "said", "command"), USAGE_ERRORS, ids=lambda v: str(v))
def test_a_usage_error_under_json_is_the_envelope_on_stdout(
    cli: CliRunner, args: list[str], said: str, command: str
) -> None:
    result = cli(*args)
    assert result.returncode == 2, result.stderr
    doc = json.loads(result.stdout)  # the whole of stdout is the envelope: no usage text
    assert doc["command"] == command
    assert (doc["status"], doc["exit_code"]) == ("error", 2)
    assert said in doc["errors"][0]["message"]
    assert doc["errors"][0]["hint"].startswith("Try 'neuron-env ")
    assert_our_style(result.stderr, said)


@pytest.mark.parametrize(
    "args",
    [
        ["doctor", "--bogus"],
        ["doctor", "--level"],
        ["matrix", "resolve"],
        ["matrix", "frob"],
        ["launch-template", "render", "--format", "json"],  # json there is EC2's, not ours
    ],
    ids=" ".join,
)
def test_every_usage_error_is_exit_2_in_one_style(cli: CliRunner, args: list[str]) -> None:
    result = cli(*args)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert_our_style(result.stderr, "")


def assert_our_style(stderr: str, said: str) -> None:
    lines = stderr.splitlines()
    assert lines[0].startswith("error: ") and said in " ".join(stderr.split()), stderr
    assert "Usage:" not in stderr and "Error:" not in stderr, stderr  # not click's block
    assert lines[-1].startswith(("Try 'neuron-env ", "Global options go before")), stderr
