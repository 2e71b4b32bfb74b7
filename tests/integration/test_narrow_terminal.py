"""At 80 columns, a check id is never broken across lines: users copy it into --allow, --skip
and --check, and into project defaults."""

from __future__ import annotations

import json
import re

import pytest

from tests.support.cli import CliRunner

pytestmark = pytest.mark.integration

EIGHTY = {"COLUMNS": "80", "NO_COLOR": "1"}
TERMINAL = {"COLUMNS": "80", "FORCE_COLOR": "1", "TERM": "xterm-256color"}
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.mark.parametrize("env", [EIGHTY, TERMINAL], ids=["piped", "terminal"])
def test_every_check_id_is_whole_in_the_list_and_the_report_at_80_columns(
    cli: CliRunner, env: dict[str, str]
) -> None:
    ids = [f["check"] for f in json.loads(cli("doctor", "--format", "json").stdout)["findings"]]
    assert len(ids) > 15
    for args in (("doctor", "--list-checks"), ("doctor",)):
        shown = ANSI.sub("", cli(*args, env=env).stdout)
        words = set(re.findall(r"[\w.\-]+", shown))
        missing = [i for i in ids if i not in words]
        assert not missing, f"{' '.join(args)}: {missing} broken across lines\n{shown}"
