"""Facts of the release file that no cited source holds: reported by ``matrix verify``, which
no index can confirm either (an instance type's EFA count is not on a package index)."""

from __future__ import annotations

from neuron_env.matrix import Release
from neuron_env.matrix.commands.indexcheck.facts import Fact
from neuron_env.schema import format_path

UNSOURCED = (
    "no source cited for this value: name the sources that hold it under 'cites', or list it "
    "in 'unconfirmed'"
)


def unsourced_facts(release: Release) -> list[Fact]:
    """One ``unknown`` fact for each instance-type value that cites no source and is not
    marked unconfirmed."""
    found = []
    for name, itype in release.instance_types.items():
        for key in itype.unsourced():
            value = getattr(itype, key.replace("-", "_"))
            shown = ", ".join(value) if isinstance(value, tuple) else str(value)
            found.append(
                Fact(
                    f"instance-types.{name}.{key}",
                    format_path(["instance-types", name, key]),
                    f"{name} {key} = {shown} (unsourced)",
                    "unknown",
                    shown,
                    UNSOURCED,
                    None,
                )
            )
    return found
