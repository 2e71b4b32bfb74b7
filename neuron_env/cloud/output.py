"""What the cloud commands write: the launch template in its formats, what ``create`` did, the
Packer recipe's files, the IAM policy. Notes go to stderr; stdout (or ``--output``) holds the
document.
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Callable

from rich.console import Console

from neuron_env.cloud.launch_templates import ApplyResult
from neuron_env.cloud.render import render_format
from neuron_env.cloud.workflow import (
    IamPolicy,
    LaunchTemplate,
    LaunchTemplateCreated,
    RenderedRecipe,
)
from neuron_env.output.console import notes_then_document, print_notes
from neuron_env.output.emit import DONE, Format, Output, document, dumps
from neuron_env.output.formats import DocumentFormat, JsonOnly, LaunchTemplateFormat, TextOnly


def _template_as(output_format: str) -> Callable[[LaunchTemplate], str]:
    return lambda template: render_format(template.spec, output_format)


# ``launch-template render``: json (LaunchTemplateData), cloudformation, terraform, user-data:
# each exactly the format of the tool that takes it, never neuron-env's envelope.
LAUNCH_TEMPLATE: Output[LaunchTemplate, LaunchTemplateFormat] = Output(
    LaunchTemplate,
    LaunchTemplateFormat,
    {
        choice: Format(_template_as(choice.value), deliver=notes_then_document)
        for choice in LaunchTemplateFormat
    },
)


def _created_json(created: LaunchTemplateCreated) -> str:
    payload = {**dataclasses.asdict(created.result), "region": created.region}
    return dumps(document("launch-template-create", {**payload, "notes": created.notes}, DONE))


def _print_created(out: Console, created: LaunchTemplateCreated) -> None:
    print_notes(created.notes)
    out.print(describe_result(created.result, created.region), markup=False)


# ``launch-template create``: a sentence (``--json``: the envelope, the notes in it).
CREATED: Output[LaunchTemplateCreated, DocumentFormat] = Output(
    LaunchTemplateCreated,
    DocumentFormat,
    {
        DocumentFormat.text: Format(
            lambda created: describe_result(created.result, created.region) + "\n",
            terminal=_print_created,
        ),
        DocumentFormat.json: Format(_created_json),
    },
)


def _recipe_lines(recipe: RenderedRecipe) -> list[str]:
    lines = [f"wrote {path}" for path in recipe.written]
    folder = shlex.quote(str(recipe.output))
    return [*lines, f"Build it: cd {folder} && packer init . && packer build ."]


def _print_recipe(out: Console, recipe: RenderedRecipe) -> None:
    print_notes(recipe.notes)
    for line in _recipe_lines(recipe):
        out.print(line, markup=False)


# ``ami render``: the files it wrote, and how to build the image.
RECIPE: Output[RenderedRecipe, TextOnly] = Output(
    RenderedRecipe,
    TextOnly,
    {
        TextOnly.text: Format(
            lambda recipe: "".join(line + "\n" for line in _recipe_lines(recipe)),
            terminal=_print_recipe,
        )
    },
)

# ``launch-template policy`` and ``fleet policy``: the policy document, IAM's own format.
POLICY: Output[IamPolicy, JsonOnly] = Output(
    IamPolicy, JsonOnly, {JsonOnly.json: Format(lambda policy: dumps(policy.document))}
)


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
