"""``launch-template render``/``create`` and ``ami render``: specs from the matrix, rendered.

AWS is reached through a session the caller opens (the CLI, from boto3's standard chain or
--region/--profile), and only after the request has been checked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from neuron_env.cloud.ami import AmiRequest
from neuron_env.cloud.api_errors import aws_call
from neuron_env.cloud.launch_templates import ApplyResult
from neuron_env.cloud.spec import LaunchRequest, LaunchSpec
from neuron_env.errors import BadInput
from neuron_env.frozen import frozen
from neuron_env.matrix import Note

#: Opens the AWS session (a boto3 ``Session``) when the operation first needs it.
SessionFactory = Callable[[], Any]


@frozen(kw_only=True)
class RenderRequest:
    launch: LaunchRequest
    matrix_dirs: Sequence[Path] = ()


@frozen
class LaunchTemplate:
    """The launch template's spec, rendered in a format by :func:`neuron_env.output.emit.emit`
    (:data:`neuron_env.cloud.render.FORMATS`; check the format before this reaches AWS)."""

    spec: LaunchSpec

    @property
    def notes(self) -> Sequence[Note]:
        return self.spec.notes


def render_launch_template(request: RenderRequest, session: SessionFactory) -> LaunchTemplate:
    """The launch template (the DLAMI resolved to an id now if asked)."""
    from neuron_env.cloud.spec import build_launch_spec
    from neuron_env.matrix import load_matrix

    spec = build_launch_spec(load_matrix(list(request.matrix_dirs)), request.launch)
    if request.launch.resolve_ami:
        spec = _resolve_image(spec, session())
    return LaunchTemplate(spec)


@frozen(kw_only=True)
class CreateRequest:
    launch: LaunchRequest
    name: str
    set_default: bool = False
    dry_run: bool = False
    matrix_dirs: Sequence[Path] = ()


@frozen
class LaunchTemplateCreated:
    result: ApplyResult
    region: str | None
    notes: Sequence[Note]


def create_launch_template(
    request: CreateRequest, session: SessionFactory
) -> LaunchTemplateCreated:
    """Create the launch template, or a new version of it when its data changed."""
    from neuron_env.cloud.launch_templates import apply_launch_template
    from neuron_env.cloud.render import launch_template_data, user_data
    from neuron_env.cloud.spec import build_launch_spec
    from neuron_env.cloud.values import template_name
    from neuron_env.matrix import load_matrix

    name = template_name(request.name)
    spec = build_launch_spec(load_matrix(list(request.matrix_dirs)), request.launch)
    opened = session()
    if request.launch.resolve_ami:
        spec = _resolve_image(spec, opened)
    data = launch_template_data(spec, user_data(spec))
    with aws_call("ec2 client"):
        ec2 = opened.client("ec2")
    result = apply_launch_template(
        ec2, name, data, spec.description, set_default=request.set_default, dry_run=request.dry_run
    )
    return LaunchTemplateCreated(result, opened.region_name, spec.notes)


@frozen(kw_only=True)
class AmiRenderRequest:
    ami: AmiRequest
    output: Path
    force: bool = False
    matrix_dirs: Sequence[Path] = ()


@frozen
class RenderedRecipe:
    output: Path  # the recipe's directory
    written: Sequence[Path]
    notes: Sequence[Note]


def render_ami_recipe(request: AmiRenderRequest) -> RenderedRecipe:
    """Write the Packer recipe into ``request.output``."""
    from neuron_env.cloud.ami import build_ami_recipe, write_recipe
    from neuron_env.matrix import load_matrix

    recipe = build_ami_recipe(load_matrix(list(request.matrix_dirs)), request.ami)
    written = write_recipe(recipe, request.output, force=request.force)
    return RenderedRecipe(request.output, tuple(written), recipe.notes)


@frozen
class IamPolicy:
    """The minimal IAM policy document for ``audience`` (cli or instance)."""

    audience: str
    document: dict[str, Any]


def iam_policy_for(audience: str) -> IamPolicy:
    """The IAM policy for who runs neuron-env's AWS commands (cli) or for the instances."""
    from neuron_env.cloud.policy import AUDIENCES, iam_policy

    if audience not in AUDIENCES:
        raise BadInput(f"--for '{audience}' is not one of: {', '.join(AUDIENCES)}.")
    return IamPolicy(audience, iam_policy("cli" if audience == "cli" else "instance"))


def _resolve_image(spec: LaunchSpec, session: Any) -> LaunchSpec:
    from neuron_env.cloud.ssm import resolve_image_parameter

    if spec.image.ssm_parameter is None:
        raise BadInput(
            "--resolve-ami resolves the DLAMI's SSM parameter; it has no use with --ami."
        )
    with aws_call("ssm client"):
        ssm = session.client("ssm")
    image_id = resolve_image_parameter(ssm, spec.image.ssm_parameter, session.region_name)
    return spec.with_image_id(image_id)
