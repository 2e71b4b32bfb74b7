"""Every result type renders in every format its enum declares, and its JSON is the envelope.

The output contracts (:class:`neuron_env.output.emit.Output`) register by result class when their
renderer module loads; this test loads them all, so a new result type without a sample here, or
a format its enum offers but nothing writes, fails.
"""

from __future__ import annotations

import datetime
import importlib
import json
import pkgutil
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import neuron_env
from neuron_env.output.emit import REGISTRY, Output
from tests.support.cli import DATA

SNAPSHOT = DATA / "snapshots" / "torch-2.13-container.json"


def _load_every_contract() -> None:
    """Every command family's output modules (``<family>/output.py``, ``*_output.py``) and the
    output plumbing, where the contracts register themselves."""
    for module in pkgutil.walk_packages(neuron_env.__path__, "neuron_env."):
        leaf = module.name.rsplit(".", 1)[-1]
        if (
            leaf == "output"
            or leaf.endswith("_output")
            or module.name.startswith("neuron_env.output.")
        ):
            importlib.import_module(module.name)


def _doctor_report() -> Any:
    from neuron_env.doctor.workflow import DoctorRequest, run_doctor

    return run_doctor(DoctorRequest(matrix_dirs=[], facts_file=SNAPSHOT))


def _facts() -> Any:
    from neuron_env.facts import read_snapshot

    return read_snapshot(SNAPSHOT)


def _facts_report() -> Any:
    from neuron_env.doctor.output import FactsReport

    return FactsReport(_facts(), "# neuron-env facts\n")


def _check_listing() -> Any:
    from neuron_env.checks.model import CheckListing
    from neuron_env.checks.registry import CHECKS

    return CheckListing(CHECKS)


def _fleet_report(tmp_path: Path) -> Any:
    from neuron_env.fleet.workflow import ReportRequest, report_fleet

    shutil.copy(SNAPSHOT, tmp_path / "i-0123.json")
    return report_fleet(ReportRequest(folder=tmp_path, matrix_dirs=[]))


def _collected() -> Any:
    from neuron_env.fleet.collect import CollectResult

    return CollectResult([], [], [])


def _scan(list_rules: bool) -> Any:
    from neuron_env.scan.workflow import ScanRequest, run_scan

    corpus = DATA / "scan" / "corpus" / "xla_aliases.py"
    return run_scan(ScanRequest(paths=(corpus,), matrix_dirs=[], list_rules=list_rules))


def _matrix(kind: str) -> Any:
    from neuron_env.matrix import Request
    from neuron_env.matrix.commands import workflow as ops
    from neuron_env.resources import shipped_matrix_dir

    plain = ops.MatrixRequest(matrix_dirs=[])
    made: dict[str, Callable[[], Any]] = {
        "list": lambda: ops.list_releases(plain),
        "show": lambda: ops.show_release(plain),
        "resolve": lambda: ops.resolve(ops.ResolveRequest(wanted=Request(torch="2.14"))),
        "diff": lambda: ops.diff(ops.DiffRequest(matrix_dirs=[], old="2.33.0", new="2.33.1")),
        "validate": lambda: ops.validate(
            ops.ValidateRequest(files=(shipped_matrix_dir() / "2.33.0.toml",))
        ),
    }
    return made[kind]()


def _verified() -> Any:
    from neuron_env.matrix.commands.indexcheck.verify import Verification
    from neuron_env.matrix.commands.verify import VerifyResult

    return VerifyResult(Verification("2.34.0", datetime.date(2026, 12, 1), (), ()), None)


def _suite(smoke: bool) -> Any:
    from neuron_env.selftest import SmokeResult, SuiteResult
    from neuron_env.worker.results import Problem

    kind = SmokeResult if smoke else SuiteResult
    problem = Problem(
        "no-torch", "torch is not installed in /venv/bin/python.", "pip install torch"
    )
    return kind("quick", "neuron", "/venv/bin/python", None, (), problem)


def _case_listing() -> Any:
    from neuron_env.selftest.workflow import list_cases

    return list_cases("quick")


def _evaluation() -> Any:
    from neuron_env.evaluate import Evaluation
    from neuron_env.worker.results import Problem

    problem = Problem("entry", "model.py:make raised ValueError.", "Run it on the CPU first.")
    return Evaluation("model.py:make", "neuron", "/venv/bin/python", problem=problem)


def _declined() -> Any:
    from neuron_env.install.outcome import Declined

    return Declined()


def _launch_template() -> Any:
    from neuron_env.cloud.spec import LaunchRequest
    from neuron_env.cloud.workflow import RenderRequest, render_launch_template

    launch = LaunchRequest(instance_type="trn2.48xlarge", torch="2.14", neuron_env_source="pypi")
    request = RenderRequest(launch=launch, matrix_dirs=[])
    return render_launch_template(request, lambda: pytest.fail("no AWS call is needed"))


def _created() -> Any:
    from neuron_env.cloud.launch_templates import ApplyResult
    from neuron_env.cloud.workflow import LaunchTemplateCreated

    applied = ApplyResult("trn2", "created", "lt-0123", 1, 1, "abc", dry_run=False)
    return LaunchTemplateCreated(applied, "us-east-2", ())


def _recipe(tmp_path: Path) -> Any:
    from neuron_env.cloud.ami import AmiRequest
    from neuron_env.cloud.workflow import AmiRenderRequest, render_ami_recipe

    ami = AmiRequest(torch="2.14", neuron_env_source="pypi")
    return render_ami_recipe(AmiRenderRequest(ami=ami, output=tmp_path / "ami", matrix_dirs=[]))


def _policy() -> Any:
    from neuron_env.cloud.workflow import iam_policy_for

    return iam_policy_for("cli")


def _collectives() -> Any:
    from neuron_env.collectives.models import (
        CollectivesResult,
        Failure,
        NccomOp,
        NccomRow,
        Peak,
        Row,
    )

    row = Row("all_reduce", 1024, 256, "float32", "sum", 1e-4, 2e-4, 3e-4, 0.005, 0.005, 1, 0.1)
    failure = Failure("wrong", "all_reduce at 1024 B: rank 1 ...", 1, "all_reduce", 1024)
    nccom = [NccomOp("all_reduce", "ran", "allr", rows=(NccomRow(1024, 1e-4, 0.01, 0.01, 0.5),))]
    return CollectivesResult("gloo", 2, "float32", hosts=["vm"], rows=[row], failures=[failure],
                             peak=Peak(400.0, "EFA"), complete=True, nccom=nccom)  # fmt: skip


def _image() -> Any:
    from neuron_env.image.dockerfile import ImageRequest
    from neuron_env.image.workflow import ImageRenderRequest, render_image

    image = ImageRequest(torch="2.14", neuron_env_source="pypi")
    return render_image(ImageRenderRequest(image=image, matrix_dirs=[]))


# Result class name -> a sample (a callable of tmp_path), and the options its renderers take.
SAMPLES: dict[str, Callable[[Path], Any]] = {
    "DoctorReport": lambda _: _doctor_report(),
    "FactsReport": lambda _: _facts_report(),
    "CheckListing": lambda _: _check_listing(),
    "FleetReport": _fleet_report,
    "CollectResult": lambda _: _collected(),
    "ScanResult": lambda _: _scan(list_rules=False),
    "RuleListing": lambda _: _scan(list_rules=True),
    "ReleaseList": lambda _: _matrix("list"),
    "ReleaseShown": lambda _: _matrix("show"),
    "ResolvedTarget": lambda _: _matrix("resolve"),
    "ReleaseDiff": lambda _: _matrix("diff"),
    "Validation": lambda _: _matrix("validate"),
    "VerifyResult": lambda _: _verified(),
    "SuiteResult": lambda _: _suite(smoke=False),
    "CaseListing": lambda _: _case_listing(),
    "Evaluation": lambda _: _evaluation(),
    "CollectivesResult": lambda _: _collectives(),
    "InstallOutcome": lambda _: _declined(),
    "LaunchTemplate": lambda _: _launch_template(),
    "LaunchTemplateCreated": lambda _: _created(),
    "RenderedRecipe": _recipe,
    "IamPolicy": lambda _: _policy(),
    "RenderedImage": lambda _: _image(),
}
OPTIONS: dict[str, dict[str, Any]] = {"CollectResult": {"directory": Path("snapshots")}}
# JSON that is another tool's input, exactly that tool's format: no envelope.
FOREIGN_JSON = {"LaunchTemplate", "IamPolicy"}


def _contract(name: str) -> Output[Any, Any]:
    _load_every_contract()
    return next(c for c in REGISTRY.values() if c.result.__name__ == name)


def test_every_registered_result_type_has_a_sample() -> None:
    _load_every_contract()
    assert {cls.__name__ for cls in REGISTRY} == set(SAMPLES)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_renders_in_every_declared_format(name: str, tmp_path: Path) -> None:
    contract = _contract(name)
    result = SAMPLES[name](tmp_path)
    outcome = contract.outcome(result)
    for choice in contract.formats:
        text = contract.to_format(choice).render(result, **OPTIONS.get(name, {}))
        assert isinstance(text, str), (name, choice)
        if choice.value != "json":
            continue
        doc = json.loads(text)
        if name in FOREIGN_JSON:
            assert "schema" not in doc
            continue
        assert doc["schema"].startswith("neuron-env/")
        assert (doc["status"], doc["exit_code"]) == (outcome.status, outcome.exit_code)
        assert isinstance(doc["errors"], list) and isinstance(doc["command"], str)


def test_smoke_results_render_as_suites() -> None:
    contract = _contract("SuiteResult")
    smoke = _suite(smoke=True)
    doc = json.loads(contract.to_format(contract.formats("json")).render(smoke))
    assert doc["schema"] == "neuron-env/smoke/v1"
    assert (doc["status"], doc["exit_code"]) == ("error", 1)
    assert doc["errors"] == [
        {"message": "torch is not installed in /venv/bin/python.", "hint": "pip install torch"}
    ]


def test_a_format_without_a_renderer_is_refused_when_the_contract_is_made() -> None:
    from neuron_env.output.emit import Format
    from neuron_env.output.formats import DocumentFormat

    class Orphan:
        pass

    with pytest.raises(TypeError, match="Orphan has no renderer for: json"):
        Output(Orphan, DocumentFormat, {DocumentFormat.text: Format(lambda _: "")})
    assert Orphan not in REGISTRY
