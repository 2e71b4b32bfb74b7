"""Creating a launch template, or a new version of it, idempotently.

The rendered data's fingerprint (a sha256 of its canonical JSON) is stored in each version's
description. Applying the same data again finds it on the latest version and creates nothing,
whatever EC2 does to the stored document. The caller passes a boto3 EC2 client.

Nothing is left half-done: every permission a run needs is checked with EC2's ``DryRun`` before
the first change, and ``--dry-run`` stops after those checks.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from neuron_env import __version__
from neuron_env.cloud.api_errors import aws_call, cause_code
from neuron_env.errors import OperationFailed
from neuron_env.frozen import frozen

Action = Literal["created", "new-version", "unchanged"]
NOT_FOUND = "InvalidLaunchTemplateName.NotFoundException"
DESCRIPTION_LIMIT = 255


@frozen
class ApplyResult:
    """What happened (or, with ``dry_run``, would happen) to the launch template."""

    name: str
    action: Action
    template_id: str | None
    version: int | None
    default_version: int | None
    fingerprint: str
    dry_run: bool


def fingerprint(data: dict[str, Any]) -> str:
    """A short, stable hash of LaunchTemplateData (key order and whitespace do not matter)."""
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def version_description(summary: str, data_fingerprint: str) -> str:
    """The version description: the summary, then neuron-env's version and the fingerprint."""
    suffix = f" [neuron-env {__version__}; data {data_fingerprint}]"
    return summary[: DESCRIPTION_LIMIT - len(suffix)] + suffix


def apply_launch_template(
    ec2: Any,
    name: str,
    data: dict[str, Any],
    summary: str,
    *,
    set_default: bool = False,
    dry_run: bool = False,
) -> ApplyResult:
    """Create template ``name`` with ``data``, or add a version when the data changed."""
    change = _Change(ec2, name, data, fingerprint(data), set_default, dry_run)
    description = version_description(summary, change.mark)
    existing = describe_template(ec2, name)
    if existing is None:
        return change.create(description)
    latest = _latest_version(ec2, name)
    if f"data {change.mark}]" in str(latest.get("VersionDescription", "")):
        return change.keep(existing, int(latest["VersionNumber"]))
    return change.add_version(existing, description)


def describe_template(ec2: Any, name: str) -> dict[str, Any] | None:
    """The template called ``name``, or None when there is none."""
    try:
        with aws_call("ec2:DescribeLaunchTemplates"):
            found = ec2.describe_launch_templates(LaunchTemplateNames=[name])
    except OperationFailed as exc:
        if cause_code(exc) == NOT_FOUND:
            return None
        raise
    templates: list[dict[str, Any]] = found.get("LaunchTemplates", [])
    return templates[0] if templates else None


def _latest_version(ec2: Any, name: str) -> dict[str, Any]:
    with aws_call("ec2:DescribeLaunchTemplateVersions"):
        found = ec2.describe_launch_template_versions(LaunchTemplateName=name, Versions=["$Latest"])
    versions: list[dict[str, Any]] = found["LaunchTemplateVersions"]
    return versions[0]


@frozen
class _Change:
    """One run's change to one template: each step checks permissions first in a dry run."""

    ec2: Any
    name: str
    data: dict[str, Any]
    mark: str
    set_default: bool
    dry_run: bool

    def create(self, description: str) -> ApplyResult:
        request = {"LaunchTemplateName": self.name, "VersionDescription": description}
        if self.dry_run:
            _permitted(
                self.ec2.create_launch_template, "ec2:CreateLaunchTemplate", request, self.data
            )
            return self._result("created", None, 1, 1)
        with aws_call("ec2:CreateLaunchTemplate"):
            created = self.ec2.create_launch_template(**request, LaunchTemplateData=self.data)
        template = created["LaunchTemplate"]
        return self._result(
            "created",
            template["LaunchTemplateId"],
            int(template["LatestVersionNumber"]),
            int(template["DefaultVersionNumber"]),
        )

    def keep(self, template: dict[str, Any], version: int) -> ApplyResult:
        default = int(template["DefaultVersionNumber"])
        if self.set_default and default != version:
            self._make_default(version)
            default = version
        return self._result("unchanged", template["LaunchTemplateId"], version, default)

    def add_version(self, template: dict[str, Any], description: str) -> ApplyResult:
        default = int(template["DefaultVersionNumber"])
        if self.set_default:  # checked before anything is created: a denial leaves no version
            request = {"LaunchTemplateName": self.name, "DefaultVersion": str(default)}
            _permitted(self.ec2.modify_launch_template, "ec2:ModifyLaunchTemplate", request)
        request = {"LaunchTemplateName": self.name, "VersionDescription": description}
        if self.dry_run:
            call = self.ec2.create_launch_template_version
            _permitted(call, "ec2:CreateLaunchTemplateVersion", request, self.data)
            version = int(template["LatestVersionNumber"]) + 1
        else:
            with aws_call("ec2:CreateLaunchTemplateVersion"):
                created = self.ec2.create_launch_template_version(
                    **request, LaunchTemplateData=self.data
                )
            version = int(created["LaunchTemplateVersion"]["VersionNumber"])
            if self.set_default:
                self._make_default(version)
        default = version if self.set_default else default
        return self._result("new-version", template["LaunchTemplateId"], version, default)

    def _make_default(self, version: int) -> None:
        request = {"LaunchTemplateName": self.name, "DefaultVersion": str(version)}
        if self.dry_run:
            _permitted(self.ec2.modify_launch_template, "ec2:ModifyLaunchTemplate", request)
            return
        with aws_call("ec2:ModifyLaunchTemplate"):
            self.ec2.modify_launch_template(**request)

    def _result(
        self, action: Action, template_id: str | None, version: int, default: int
    ) -> ApplyResult:
        return ApplyResult(
            self.name, action, template_id, version, default, self.mark, self.dry_run
        )


def _permitted(
    call: Any, action: str, request: dict[str, Any], data: dict[str, Any] | None = None
) -> None:
    """Ask EC2 whether ``call`` would be allowed (``DryRun``); raise if it would not."""
    extra = {} if data is None else {"LaunchTemplateData": data}
    try:
        with aws_call(action):
            call(**request, **extra, DryRun=True)
    except OperationFailed as exc:
        if cause_code(exc) != "DryRunOperation":  # EC2's answer for "would have succeeded"
            raise
