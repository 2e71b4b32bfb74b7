"""What an installed system package is compared with when the judged release lists no version.

Neuron 2.34.0's driver, runtime, collectives and tools versions could not be read, so its matrix
file names no version of them. Comparing nothing must never read as "ok": a package older than
what an *earlier* release shipped is certainly too old for this one, and where no release up to
the judged one lists a version, the check says it compared nothing (a warning the summary counts).
"""

from __future__ import annotations

from packaging.version import Version

from neuron_env.checks.model import Context
from neuron_env.checks.versions import loose_version, older
from neuron_env.frozen import frozen


@frozen
class Baseline:
    """A version some release lists for a package, and which release that is."""

    version: Version
    release: Version


@frozen
class Comparison:
    """An installed package against the judged release's version and the newest earlier one."""

    name: str
    installed: str
    own: Baseline | None
    earlier: Baseline | None

    @property
    def too_old(self) -> bool:
        """Older than an earlier release shipped: certainly too old for the judged one."""
        return self.earlier is not None and _older(self.installed, self.earlier.version)

    @property
    def behind(self) -> bool:
        """Older than the judged release's own version (but not than an earlier release's)."""
        return self.own is not None and _older(self.installed, self.own.version)

    @property
    def compared(self) -> bool:
        return self.own is not None or self.earlier is not None

    def too_old_words(self) -> str:
        """``aws-neuronx-dkms 2.19.64.0 (Neuron 2.33.1 shipped 2.31.8.0)``."""
        assert self.earlier is not None
        return (
            f"{self.name} {self.installed} (Neuron {self.earlier.release} "
            f"shipped {self.earlier.version})"
        )


def compare_system_package(ctx: Context, name: str, installed: str) -> Comparison:
    """``installed`` (a dpkg version) of apt package ``name`` against the judged release."""
    pkg = ctx.release.system_packages.get(name)
    own = Baseline(pkg.version, ctx.release.version) if pkg and pkg.version else None
    return Comparison(name, installed, own, earlier_system_version(ctx, name))


def earlier_system_version(ctx: Context, name: str) -> Baseline | None:
    """The newest release older than the judged one that lists a version of ``name``."""
    earlier = sorted(
        (r for r in ctx.releases if r.version < ctx.release.version),
        key=lambda r: r.version,
        reverse=True,
    )
    for release in earlier:
        pkg = release.system_packages.get(name)
        if pkg is not None and pkg.version is not None:
            return Baseline(pkg.version, release.version)
    return None


def _older(installed: str, wanted: Version) -> bool:
    have = loose_version(installed)
    return have is not None and older(have, wanted)
