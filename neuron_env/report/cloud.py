"""What the cloud commands say about what they did."""

from __future__ import annotations

from neuron_env.aws.launch_templates import ApplyResult


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
