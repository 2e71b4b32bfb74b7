"""The work behind ``neuron-env launch-template`` and ``neuron-env ami``.

This is the edge where boto3 clients are created (from the standard credential and region chain,
or ``--profile`` / ``--region``) and handed to :mod:`neuron_env.aws`, and where results are printed.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer

from neuron_env.aws.ami import AmiRequest, build_ami_recipe, write_recipe
from neuron_env.aws.api_errors import aws_call
from neuron_env.aws.launch_templates import ApplyResult, apply_launch_template
from neuron_env.aws.policy import AUDIENCES, iam_policy
from neuron_env.aws.render import FORMATS, launch_template_data, render_format, user_data
from neuron_env.aws.spec import LaunchRequest, LaunchSpec, build_launch_spec
from neuron_env.aws.values import template_name
from neuron_env.cli._common import (
    aws_session,
    check_format,
    console,
    load_matrix,
    print_json,
    print_notes,
    write_output,
)
from neuron_env.errors import BadInput

ToolSourceOptions = tuple[str | None, str | None, str | None]  # source, sha256, spec


@dataclass(frozen=True)
class CreateOptions:
    name: str
    set_default: bool
    dry_run: bool
    json: bool
    resolve_ami: bool


def launch_request(options: Mapping[str, Any]) -> LaunchRequest:
    """The launch-template options of a command line as a :class:`LaunchRequest`."""
    values = {k: v for k, v in options.items() if v is not None}
    values["security_groups"] = tuple(values.pop("security_group", ()))
    return LaunchRequest(**values)


def ami_request(
    torch: str,
    release: str | None,
    os: str | None,
    base: str,
    builder: str,
    level: int,
    volume_size: int,
    source: ToolSourceOptions,
) -> AmiRequest:
    return AmiRequest(torch, release, os, base, builder, level, volume_size, *source)


def render(
    ctx: typer.Context,
    request: LaunchRequest,
    output_format: str,
    output: Path | None,
    resolve_ami: bool,
    region: str | None,
    profile: str | None,
) -> None:
    check_format(output_format, FORMATS)  # before anything reaches AWS
    spec = build_launch_spec(load_matrix(ctx), request)
    if resolve_ami:
        spec = _resolve_image(spec, aws_session(region, profile))
    text = render_format(spec, output_format)
    print_notes(spec.notes)
    write_output(output, text)


def create(
    ctx: typer.Context,
    request: LaunchRequest,
    options: CreateOptions,
    region: str | None,
    profile: str | None,
) -> None:
    name = template_name(options.name)
    spec = build_launch_spec(load_matrix(ctx), request)
    session = aws_session(region, profile)
    if options.resolve_ami:
        spec = _resolve_image(spec, session)
    data = launch_template_data(spec, user_data(spec))
    with aws_call("ec2 client"):
        ec2 = session.client("ec2")
    result = apply_launch_template(
        ec2, name, data, spec.description, set_default=options.set_default, dry_run=options.dry_run
    )
    if options.json:
        payload = {**dataclasses.asdict(result), "region": session.region_name}
        print_json("launch-template-create", {**payload, "notes": spec.notes})
        return
    print_notes(spec.notes)
    console().print(describe_result(result, session.region_name), markup=False)


def print_policy(audience: str) -> None:
    if audience not in AUDIENCES:
        raise BadInput(f"--for '{audience}' is not one of: {', '.join(AUDIENCES)}.")
    policy = iam_policy("cli" if audience == "cli" else "instance")
    sys.stdout.write(json.dumps(policy, indent=2) + "\n")


def render_ami(ctx: typer.Context, request: AmiRequest, output: Path, force: bool) -> None:
    recipe = build_ami_recipe(load_matrix(ctx), request)
    written = write_recipe(recipe, output, force=force)
    print_notes(recipe.notes)
    out = console()
    for path in written:
        out.print(f"wrote {path}", markup=False)
    out.print(f"Build it: cd {output} && packer init . && packer build .", markup=False)


def describe_result(result: ApplyResult, region: str | None) -> str:
    """One sentence saying what happened (or, in a dry run, would happen) to the template."""
    where = f"launch template {result.name}"
    where += f" ({result.template_id})" if result.template_id else ""
    where += f" in {region}" if region else ""
    default = f"default version {result.default_version}"
    if result.action == "unchanged":
        done = f"{where} already holds this data as version {result.version}; {default}."
        return ("Dry run, nothing to change: " if result.dry_run else "Unchanged: ") + done
    if result.dry_run:
        prefix = "Dry run (permissions checked, nothing changed): would "
        if result.action == "created":
            return f"{prefix}create {where} with version {result.version}."
        return f"{prefix}add version {result.version} to {where}; {default}."
    if result.action == "created":
        return f"Created {where}: version {result.version}, {default}."
    return f"Added version {result.version} to {where}; {default}."


def _resolve_image(spec: LaunchSpec, session: Any) -> LaunchSpec:
    from neuron_env.aws.ssm import resolve_image_parameter

    if spec.image.ssm_parameter is None:
        raise BadInput(
            "--resolve-ami resolves the DLAMI's SSM parameter; it has no use with --ami."
        )
    with aws_call("ssm client"):
        ssm = session.client("ssm")
    image_id = resolve_image_parameter(ssm, spec.image.ssm_parameter, session.region_name)
    return spec.with_image_id(image_id)
