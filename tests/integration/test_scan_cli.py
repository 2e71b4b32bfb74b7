"""`neuron-env scan` as a user runs it: the console script in a subprocess."""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest

from neuron_env import __version__
from tests.support.cli import DATA, CliRunner, cli_argv, cli_runner

pytestmark = pytest.mark.integration

SCAN = DATA / "scan"
CORPUS = SCAN / "corpus"
GOLDEN = SCAN / "golden"
FIXABLE = SCAN / "fix" / "xla_device_cases.py"
SARIF_SCHEMA = json.loads((SCAN / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))


def copy_corpus(tmp_path: Path, *names: str) -> Path:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    for name in names:
        shutil.copy(CORPUS / name, project / name)
    return project


def check_golden(name: str, actual: str, tmp_path: Path) -> None:
    """Compare with golden/NAME (the version and the temporary root made stable)."""
    stable = actual.replace(__version__, "VERSION").replace(tmp_path.as_uri(), "file:///TMP")
    stable = stable.replace(str(tmp_path), "/TMP")
    golden = GOLDEN / name
    if os.environ.get("NEURON_ENV_UPDATE_GOLDEN"):
        golden.write_text(stable, encoding="utf-8")
    assert stable == golden.read_text(encoding="utf-8")


# --- output formats -------------------------------------------------------------------------


@pytest.mark.parametrize("output_format", ["text", "json", "sarif"])
def test_the_xla_training_script_report_matches_the_golden_file(
    cli: CliRunner, tmp_path: Path, output_format: str
) -> None:
    copy_corpus(tmp_path, "xla_training_script.py")
    args = ["--release", "2.34.0", "--format", output_format]
    result = cli("scan", "project", *args, "--root", str(tmp_path))
    assert result.returncode == 1, result.stderr
    suffix = {"text": "txt", "json": "json", "sarif": "sarif"}[output_format]
    check_golden(f"xla_training_script.{suffix}", result.stdout, tmp_path)


def test_the_whole_corpus_report_matches_the_golden_file(cli: CliRunner, tmp_path: Path) -> None:
    """Every rule's wording, on Python, shell and notebooks, in one reviewed report."""
    shutil.copytree(CORPUS, tmp_path / "corpus")
    result = cli("scan", "corpus", "--release", "2.34.0", "--fail-on", "note")
    assert result.returncode == 1, result.stderr
    check_golden("corpus.txt", result.stdout, tmp_path)


def test_sarif_for_the_whole_corpus_is_valid_sarif_2_1_0(cli: CliRunner, tmp_path: Path) -> None:
    shutil.copytree(CORPUS, tmp_path / "corpus")
    result = cli("scan", "corpus", "--format", "sarif", "--output", "report.sarif")
    assert result.returncode == 1 and result.stdout == ""
    log = json.loads((tmp_path / "report.sarif").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    (run,) = log["runs"]
    rules = {rule["id"]: rule for rule in run["tool"]["driver"]["rules"]}
    assert rules["xla-device"]["defaultConfiguration"]["level"] == "error"
    assert rules["unsupported-apis"]["properties"]["confirmed"] is False
    assert all(rule["helpUri"].startswith("https://") for rule in rules.values())
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.as_uri() + "/"
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]
    }
    assert "corpus/xla_training_script.py" in uris and "corpus/syntax_error.py" in uris
    assert not any(uri.startswith("corpus/traps") for uri in uris)


def test_sarif_names_files_outside_the_current_folder_relative_to_srcroot(
    cli: CliRunner, tmp_path: Path
) -> None:
    """Code-scanning services place a result by a URI relative to %SRCROOT%; an absolute file
    URI (what a scan of a path outside the current folder used to write) is placed nowhere."""
    result = cli("scan", str(CORPUS / "xla_training_script.py"), str(CORPUS / "xla_launch.sh"),
                 "--format", "sarif")  # fmt: skip
    assert result.returncode == 1, result.stderr
    log = json.loads(result.stdout)
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    (run,) = log["runs"]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == CORPUS.as_uri() + "/"
    locations = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in run["results"]]
    assert {loc["uri"] for loc in locations} == {"xla_training_script.py", "xla_launch.sh"}
    assert all(loc["uriBaseId"] == "%SRCROOT%" for loc in locations)


def test_sarif_names_a_file_whose_name_is_not_utf8_byte_for_byte(
    cli: CliRunner, tmp_path: Path
) -> None:
    """A Latin-1 file name (an old zip or a Windows share unpacked on Linux) reaches Python as a
    surrogate (PEP 383): SARIF's fingerprint hashed it as UTF-8 and the scan ended in a
    traceback. Its URI is now the name's bytes percent-encoded, as Path.as_uri() writes them."""
    project = tmp_path / "proj"
    project.mkdir()
    latin1 = os.fsdecode(b"caf\xe9.py")
    for name in (latin1, "na\u00efve.py"):
        shutil.copy(CORPUS / "xla_training_script.py", project / name)
    result = cli("scan", "proj", "--format", "sarif")
    assert result.returncode == 1, result.stderr
    log = json.loads(result.stdout)
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    (run,) = log["runs"]
    locations = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in run["results"]]
    assert {loc["uri"] for loc in locations} == {"proj/caf%E9.py", "proj/na%C3%AFve.py"}
    prints = [r["partialFingerprints"] for r in run["results"]]
    assert len({json.dumps(p, sort_keys=True) for p in prints}) == len(prints)
    paths = {
        f["path"] for f in json.loads(cli("scan", "proj", "--format", "json").stdout)["findings"]
    }
    assert paths == {f"proj/{latin1}", "proj/na\u00efve.py"}  # JSON keeps the name as Python has it


@pytest.mark.parametrize("where", ["stdout", "-o"])
def test_the_text_report_writes_a_name_that_is_not_utf8_back_as_its_bytes(
    tmp_path: Path, where: str
) -> None:
    """A strict UTF-8 stdout (LANG=en_US.UTF-8, PYTHONIOENCODING=utf-8: every locale but C's)
    raised UnicodeEncodeError on the surrogate such a name is, and so did -o; the report now
    holds the name's own bytes, as ls and the C locale write them."""
    project = tmp_path / "proj"
    project.mkdir()
    shutil.copy(CORPUS / "xla_training_script.py", project / os.fsdecode(b"caf\xe9.py"))
    out = ["-o", "report.txt"] if where == "-o" else []
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "NO_COLOR": "1"}
    result = subprocess.run(
        cli_argv("scan", "proj", *out), cwd=tmp_path, env=env, capture_output=True, check=False
    )
    assert result.returncode == 1, result.stderr
    assert b"Traceback" not in result.stderr
    report = (tmp_path / "report.txt").read_bytes() if out else result.stdout
    assert b"proj/caf\xe9.py:" in report


def test_a_file_outside_an_explicit_root_is_bad_input(cli: CliRunner, tmp_path: Path) -> None:
    result = cli("scan", str(CORPUS / "xla_training_script.py"), "--root", str(tmp_path),
                 "--format", "sarif")  # fmt: skip
    assert (result.returncode, result.stdout) == (2, "")
    said = " ".join(result.stderr.split())
    assert f"{CORPUS / 'xla_training_script.py'} is outside --root {tmp_path}" in said
    assert "Give a --root that holds every path you scan, or leave --root out." in said
    assert "Traceback" not in result.stderr


def test_the_sarif_schema_rejects_a_result_without_a_message() -> None:
    broken = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{}]}]}
    with pytest.raises(jsonschema.ValidationError, match="'message' is a required property"):
        jsonschema.Draft4Validator(SARIF_SCHEMA).validate(broken)


# --- exit codes ---------------------------------------------------------------------------


def test_clean_code_exits_0_and_says_so(cli: CliRunner, tmp_path: Path) -> None:
    copy_corpus(tmp_path, "traps_no_findings.py")
    result = cli("scan", "project")
    assert result.returncode == 0
    assert "Checked 1 file against the Neuron" in result.stdout
    assert result.stdout.rstrip().endswith("rules: no findings.")


@pytest.mark.parametrize(("fail_on", "expected"), [("error", 0), ("warning", 1), ("note", 1)])
def test_fail_on_sets_the_severity_that_fails(
    cli: CliRunner, tmp_path: Path, fail_on: str, expected: int
) -> None:
    copy_corpus(tmp_path, "cuda_devices.py")  # warnings only
    assert cli("scan", "project", "--fail-on", fail_on).returncode == expected


def test_notes_fail_only_with_fail_on_note(cli: CliRunner, tmp_path: Path) -> None:
    copy_corpus(tmp_path, "float64_tensors.py")  # unconfirmed: notes
    assert cli("scan", "project", "--fail-on", "warning").returncode == 0
    assert cli("scan", "project", "--fail-on", "note").returncode == 1


def test_a_file_that_does_not_parse_is_reported_and_the_rest_still_scanned(
    cli: CliRunner, tmp_path: Path
) -> None:
    copy_corpus(tmp_path, "syntax_error.py", "unsupported_nested.py")
    result = cli("scan", "project", "--fail-on", "warning")
    assert result.returncode == 1
    assert "project/syntax_error.py:3:" in result.stdout and "scan-error" in result.stdout
    assert "project/unsupported_nested.py:3:" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.py"], "error: missing.py: no such file or directory."),
        ([".", "--format", "xml"], "--format 'xml' is not one of: text, json, sarif."),
        ([".", "--fail-on", "info"], "--fail-on 'info' is not one of: error, warning, note."),
        ([".", "--release", "1.0.0"], "No matrix file describes Neuron release '1.0.0'."),
        ([".", "--yes"], "--dry-run and --yes only apply to --fix."),
        ([], "No Python files under . ("),
    ],
)
def test_bad_input_exits_2_with_one_clear_line(
    cli: CliRunner, args: list[str], message: str
) -> None:
    result = cli("scan", *args)
    assert result.returncode == 2
    assert message in " ".join(result.stderr.split())  # the error is wrapped at the width
    assert "Traceback" not in result.stderr


# --- which files ----------------------------------------------------------------------------


def test_directories_are_walked_without_environments_caches_and_hidden_dirs(
    cli: CliRunner, tmp_path: Path
) -> None:
    project = copy_corpus(tmp_path, "unsupported_nested.py")
    for hidden in ["env/lib/x.py", ".git/hooks/x.py", "__pycache__/x.py", "node_modules/x.py"]:
        (project / hidden).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(CORPUS / "unsupported_nested.py", project / hidden)
    (project / "env" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (project / "notes.txt").write_text("torch.nested\n")
    doc = json.loads(cli("scan", "project", "--format", "json").stdout)
    assert doc["files"] == ["project/unsupported_nested.py"]


def test_exclude_skips_matching_files_and_directories(cli: CliRunner, tmp_path: Path) -> None:
    project = copy_corpus(tmp_path, "unsupported_nested.py", "fft_functions.py")
    (project / "generated").mkdir()
    shutil.copy(CORPUS / "float64_tensors.py", project / "generated" / "model_pb2.py")
    args = ["--exclude", "fft_*.py", "--exclude", "project/generated", "--format", "json"]
    doc = json.loads(cli("scan", "project", *args).stdout)
    assert doc["files"] == ["project/unsupported_nested.py"]


# --- --fix ------------------------------------------------------------------------------------


def test_fix_shows_the_diff_then_rewrites_only_the_safe_cases(
    cli: CliRunner, tmp_path: Path
) -> None:
    target = tmp_path / "train.py"
    shutil.copy(FIXABLE, target)
    result = cli("scan", "train.py", "--fix", "--yes")
    applied = result.stdout.index("Applied 6 fixes to 1 file (")
    assert result.stdout.index("--- a/train.py") < applied
    assert "-device = xm.xla_device()  # the accelerator" in result.stdout
    assert '+device = torch.device("neuron")  # the accelerator' in result.stdout
    expected = FIXABLE.with_name("xla_device_cases.fixed.py").read_bytes()
    assert target.read_bytes() == expected  # every byte outside the fixed spans is unchanged
    after = json.loads(cli("scan", "train.py", "--format", "json").stdout)
    remaining = [(f["rule"], f["line"]) for f in after["findings"]]
    assert remaining == [("xla-import", 3), ("xla-device", 13), ("xla-device-string", 14)]
    assert not any(f["fix"] for f in after["findings"])


def test_fix_keeps_windows_line_endings(cli: CliRunner, tmp_path: Path) -> None:
    target = tmp_path / "train.py"
    target.write_bytes(FIXABLE.read_bytes().replace(b"\n", b"\r\n"))
    assert cli("scan", "train.py", "--fix", "--yes").returncode == 1
    expected = FIXABLE.with_name("xla_device_cases.fixed.py").read_bytes()
    assert target.read_bytes() == expected.replace(b"\n", b"\r\n")


def test_fix_dry_run_shows_the_diff_and_writes_nothing(cli: CliRunner, tmp_path: Path) -> None:
    target = tmp_path / "train.py"
    shutil.copy(FIXABLE, target)
    result = cli("scan", "train.py", "--fix", "--dry-run")
    assert '+model = torch.nn.Linear(4,4).to( "neuron" )' in result.stdout
    assert "Dry run: nothing was written." in result.stdout
    assert target.read_bytes() == FIXABLE.read_bytes()
    assert result.returncode == 1


def test_fix_without_a_terminal_or_yes_writes_nothing(cli: CliRunner, tmp_path: Path) -> None:
    target = tmp_path / "train.py"
    shutil.copy(FIXABLE, target)
    result = cli("scan", "train.py", "--fix")
    assert "Not written: no terminal to confirm on. Pass --yes" in result.stdout
    assert target.read_bytes() == FIXABLE.read_bytes()


def test_fix_with_a_json_report_keeps_stdout_json(cli: CliRunner, tmp_path: Path) -> None:
    shutil.copy(FIXABLE, tmp_path / "train.py")
    result = cli("scan", "train.py", "--fix", "--yes", "--format", "json")
    assert "--- a/train.py" in result.stderr and "Applied 6 fixes" in result.stderr
    assert json.loads(result.stdout)["counts"] == {"error": 3, "warning": 0, "note": 0}


# --- rules per release --------------------------------------------------------------------


def test_list_rules_shows_the_chosen_release(cli: CliRunner) -> None:
    old = cli("scan", "--list-rules", "--release", "2.33.0")
    new = cli("scan", "--list-rules", "--release", "2.34.0")
    assert old.returncode == new.returncode == 0
    assert "torchao " in old.stdout and "torchao-trn3-only" not in old.stdout
    assert "torchao-trn3-only" in new.stdout
    assert "(unconfirmed)" in new.stdout


def test_list_rules_goes_to_the_output_file(cli: CliRunner, tmp_path: Path) -> None:
    result = cli("scan", "--list-rules", "--format", "json", "-o", "rules.json")
    assert result.returncode == 0 and result.stdout == ""
    document = json.loads((tmp_path / "rules.json").read_text(encoding="utf-8"))
    assert document["schema"] == "neuron-env/scan-rules/v1" and document["rules"]
    result = cli("scan", "--list-rules", "-o", "rules.txt")
    assert result.returncode == 0 and result.stdout == ""
    assert "Rules of neuron-env scan" in (tmp_path / "rules.txt").read_text(encoding="utf-8")


def test_a_newer_matrix_directory_brings_its_own_limitations(
    cli: CliRunner, tmp_path: Path
) -> None:
    copy_corpus(tmp_path, "unsupported_nested.py", "xla_aliases.py")
    newer = str(DATA / "matrices" / "newer")
    doc = json.loads(cli("--matrix-dir", newer, "scan", "project", "--format", "json").stdout)
    assert doc["release"] == "2.99.0"  # the newest release is the default
    rules = {f["rule"] for f in doc["findings"]}
    assert "unsupported-apis" not in rules  # 2.99.0 lists no limitations
    assert "xla-device" in rules  # neuron-env's own rules still apply


@pytest.mark.parametrize(("answer", "written"), [("y", True), ("n", False)])
def test_fix_asks_on_a_terminal_and_writes_only_on_yes(
    tmp_path: Path, answer: str, written: bool
) -> None:
    target = tmp_path / "train.py"
    shutil.copy(FIXABLE, target)
    controller, terminal = pty.openpty()
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "160"}
    with subprocess.Popen(
        cli_argv("scan", "train.py", "--fix"),
        stdin=terminal,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env=env,
        text=True,
    ) as proc:
        os.write(controller, f"{answer}\n".encode())
        stdout, _ = proc.communicate(timeout=60)
    os.close(controller)
    os.close(terminal)
    assert "Apply 6 fixes to 1 file (" in stdout and "removed)? [y/N]" in stdout
    fixed = FIXABLE.with_name("xla_device_cases.fixed.py").read_bytes()
    assert (target.read_bytes() == fixed) is written
    assert ("Nothing was written." in stdout) is not written


# --- notebooks and shell scripts -----------------------------------------------------------


def test_a_notebook_is_scanned_by_its_code_cells_with_cell_relative_places(
    cli: CliRunner, tmp_path: Path
) -> None:
    copy_corpus(tmp_path, "xla_notebook.ipynb")
    text = cli("scan", "project/xla_notebook.ipynb")
    assert "project/xla_notebook.ipynb:cell 3:1:10: error xla-device" in text.stdout
    doc = json.loads(cli("scan", "project/xla_notebook.ipynb", "--format", "json").stdout)
    places = [(f["cell"], f["line"], f["rule"]) for f in doc["findings"]]
    assert places == [
        (2, 3, "xla-import"),
        (3, 1, "xla-device"),
        (5, 4, "xla-mark-step"),
        (6, 1, "xla-parallel-compile"),
        (7, 2, "xla-env"),
    ]  # nothing from the markdown cell, the JSON strings or the `%pip` line
    assert not any(f["fix"] for f in doc["findings"])  # notebooks are never rewritten


def test_a_directory_walk_reads_notebooks_and_shell_scripts(cli: CliRunner, tmp_path: Path) -> None:
    copy_corpus(tmp_path, "xla_notebook.ipynb", "xla_launch.sh", "launch_by_shebang")
    (tmp_path / "project" / "NOTES").write_text("neuron_parallel_compile python train.py\n")
    doc = json.loads(cli("scan", "project", "--format", "json").stdout)
    assert doc["files"] == [
        "project/launch_by_shebang",
        "project/xla_launch.sh",
        "project/xla_notebook.ipynb",
    ]
    rules = {(f["path"], f["rule"]) for f in doc["findings"]}
    assert ("project/launch_by_shebang", "xla-parallel-compile") in rules
    assert ("project/xla_launch.sh", "xla-env") in rules


def test_a_broken_notebook_is_a_scan_error(cli: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "bad.ipynb").write_text('{"cells": [')
    (finding,) = json.loads(cli("scan", "bad.ipynb", "--format", "json").stdout)["findings"]
    assert finding["rule"] == "scan-error"
    assert finding["message"].startswith("not a notebook: not valid JSON")


# --- SARIF at scale -------------------------------------------------------------------------


def test_sarif_with_5100_findings_stays_under_5000_results_and_says_what_was_folded(
    cli: CliRunner, tmp_path: Path
) -> None:
    lines = ["import torch"] + [f"x{i} = torch.ones(1).to('xla')" for i in range(5100)]
    (tmp_path / "many.py").write_text("\n".join(lines) + "\nimport torch_xla\n")
    result = cli("scan", "many.py", "--format", "sarif", "--output", "many.sarif")
    assert "SARIF: 103 findings were folded" in result.stderr  # 4,997 + 1 + 1 summary kept
    log = json.loads((tmp_path / "many.sarif").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    (run,) = log["runs"]
    assert len(run["results"]) < 5000
    assert run["properties"]["folded"] == {"xla-device-string": run["properties"]["foldedResults"]}
    assert any(r["ruleId"] == "xla-import" for r in run["results"])  # the rare rule keeps its own
    summary = next(r for r in run["results"] if "folded" in r["properties"])
    count = summary["properties"]["folded"]
    assert summary["message"]["text"].startswith(f"{count:,} more 'xla-device-string' findings")
    kept = sum(1 for r in run["results"] if r["ruleId"] == "xla-device-string") - 1
    assert kept + count == 5100


def test_sarif_fingerprints_survive_code_moving_above_the_finding(
    cli: CliRunner, tmp_path: Path
) -> None:
    body = (
        "import torch\nimport torch_xla\nd = torch.ones(1).to('xla')\ne = torch.ones(1).to('xla')\n"
    )

    def fingerprints() -> list[str]:
        log = json.loads(cli("scan", "train.py", "--format", "sarif").stdout)
        return [r["partialFingerprints"]["neuronEnvFinding/v1"] for r in log["runs"][0]["results"]]

    (tmp_path / "train.py").write_text(body)
    before = fingerprints()
    (tmp_path / "train.py").write_text("# a new header line\n\n" + body)
    assert fingerprints() == before
    assert len(set(before)) == len(before)  # the two identical findings are told apart


def test_scan_defaults_to_the_current_folder(tmp_path: Path) -> None:
    # A note, not a failure (float64 is noted where it reaches the device: issue 40).
    code = 'import torch\nx = torch.zeros(2, dtype=torch.float64, device="neuron")\n'
    (tmp_path / "train.py").write_text(code)
    result = cli_runner(tmp_path)("scan", "--format", "json")
    doc = json.loads(result.stdout)
    assert doc["files"] == ["train.py"], doc
    assert result.returncode == 0 and doc["findings"], result.stderr


@pytest.mark.parametrize("output_format", ["text", "json"])
def test_scan_of_a_folder_without_python_files_says_so_and_exits_2(
    cli: CliRunner, tmp_path: Path, output_format: str
) -> None:
    empty = tmp_path / "docs"
    empty.mkdir()
    (empty / "README.md").write_text("no code here\n")
    result = cli("scan", str(empty), "--format", output_format)
    assert result.returncode == 2
    assert f"error: No Python files under {empty}." in " ".join(result.stderr.split())
    assert "Checked 0 files" not in result.stdout and "Traceback" not in result.stderr
