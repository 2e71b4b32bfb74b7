"""Where a host or an image gets neuron-env itself, and how it checks what it got.

Boot-time setup runs as root, so what it installs as ``neuron-env`` must be what the user meant:

* a URL or an S3 object, with its sha256 (``--neuron-env-source URL --neuron-env-sha256 HEX``):
  downloaded, checked, then installed; a mismatch installs nothing. A ``.whl`` is neuron-env's
  wheel (its dependencies come from the host's pip configuration); a ``.tar.gz`` is a wheelhouse
  (``pip download neuron-env -d DIR``, tarred) installed with ``--no-index``, so one hash covers
  neuron-env and every dependency;
* ``ami``: the copy an image built by ``neuron-env ami render`` already holds; nothing is fetched;
* ``pypi``: ``pip install SPEC`` from the host's configured index. With a sha256, the wheel is
  downloaded alone and checked before it is installed; without one nothing is verified, so it
  must be asked for by name and is reported as a warning.

There is no default: a launch template or recipe that silently installed an unverified package
as root is what this module exists to prevent.
"""

from __future__ import annotations

import re
from typing import Literal

from neuron_env import __version__
from neuron_env.cloud import values
from neuron_env.errors import BadInput
from neuron_env.frozen import frozen
from neuron_env.matrix import Note

SourceKind = Literal["url", "s3", "pypi", "ami"]
DEFAULT_SPEC = f"neuron-env=={__version__}"

_SHA256 = re.compile(r"[0-9a-f]{64}")
# A URL or S3 key in the characters an object store and pip need; no spaces, quotes or shell.
_URL = re.compile(r"https?://[A-Za-z0-9.\-]+(?::\d{1,5})?/[A-Za-z0-9._\-/~%+=&?#]{1,400}")
_S3 = re.compile(r"s3://([a-z0-9][a-z0-9.\-]{1,61}[a-z0-9])/([A-Za-z0-9._\-/~+=]{1,400})")
# The downloaded file keeps its name: pip reads a wheel's name and version from it.
_FILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+\-]*\.(?:whl|tar\.gz|tgz)")
_EXACT_SPEC = re.compile(r"neuron[-_.]env==[0-9A-Za-z.+!]+", re.IGNORECASE)


def choices(*, ami: bool = True, ami_option: bool = False, s3: bool = True) -> str:
    """The sources a command accepts, as a hint says them: only those (an image build has no AWS
    credentials for s3://, and no neuron-env of its own for ami; where the command has --ami,
    ami goes with an image of ours)."""
    where = "URL or s3://BUCKET/KEY" if s3 else "URL"
    offered = [
        f"--neuron-env-source {where} with --neuron-env-sha256 HEX (checked before it is installed)"
    ]
    if ami or ami_option:
        offered.append(
            f"--neuron-env-source ami{' with --ami AMI_ID' if not ami else ''} (an image built "
            "by 'neuron-env ami render' already holds neuron-env)"
        )
    offered.append(
        "--neuron-env-source pypi (the configured index; add --neuron-env-sha256 to check the "
        "wheel)"
    )
    return ", ".join(offered[:-1]) + ", or " + offered[-1]


@frozen
class ToolSource:
    """neuron-env's own source for a host or image, already checked."""

    kind: SourceKind
    location: str  # the URL, the s3:// URI, or the pip requirement (pypi); "" for ami
    sha256: str | None = None

    @property
    def file_name(self) -> str:
        """The downloaded file's name (URL and S3 sources)."""
        return file_name_of(self.location)

    @property
    def wheelhouse(self) -> bool:
        """A tarball of wheels (neuron-env and its dependencies), installed with --no-index."""
        return self.kind in ("url", "s3") and not self.file_name.endswith(".whl")

    @property
    def spec(self) -> str:
        """What the host's ``neuron-env`` must be able to read (for messages)."""
        return self.location or "the image's neuron-env"

    def argv(self) -> list[str]:
        """The bootstrap script's arguments for this source."""
        source = self.kind if self.kind in ("pypi", "ami") else self.location
        args = ["--neuron-env-source", source]
        if self.sha256 is not None:
            args += ["--neuron-env-sha256", self.sha256]
        if self.kind == "pypi":
            args += ["--neuron-env-spec", self.location]
        return args

    def notes(self, who: str = "The host") -> list[Note]:
        """A warning when nothing will be checked; ``who`` installs it (the host, the build)."""
        if self.kind == "s3":
            bucket, _, key = self.location.removeprefix("s3://").partition("/")
            return [
                Note(
                    "info",
                    "neuron-env.s3",
                    f"The host copies {self.location} with the AWS CLI: its instance profile "
                    f"needs s3:GetObject on arn:aws:s3:::{bucket}/{key}, and the image the AWS "
                    "CLI.",
                )
            ]
        if self.kind == "pypi" and self.sha256 is None:
            return [
                Note(
                    "warning",
                    "neuron-env.unverified",
                    f"{who} installs {self.location} as root from its configured index "
                    "without checking it (--neuron-env-source pypi, no --neuron-env-sha256).",
                )
            ]
        return []


def tool_source(
    source: str | None,
    sha256: str | None,
    spec: str | None,
    *,
    allow_ami: bool = True,
    ami_option: bool = False,
    allow_s3: bool = True,
) -> ToolSource:
    """Check ``--neuron-env-source``, ``--neuron-env-sha256`` and ``--neuron-env-spec``;
    ``allow_ami`` is false where the image cannot hold neuron-env yet (a DLAMI, an AMI build);
    ``ami_option`` says whether the command has an ``--ami`` option a hint may offer;
    ``allow_s3`` is false where nothing could fetch from S3 (a container image build): the hints
    then offer only what the command accepts (the caller refuses an s3:// source itself)."""
    if spec is not None:
        values.pip_spec(spec)
    if source is None:
        raise BadInput(
            "Say where neuron-env itself comes from: it is installed as root, so the source "
            "must be one you chose.",
            hint=f"Pass {choices(ami=allow_ami, ami_option=ami_option, s3=allow_s3)}.",
        )
    digest = _digest(sha256)
    if spec is not None and source != "pypi":
        raise BadInput("--neuron-env-spec is what pip installs with --neuron-env-source pypi only.")
    if source == "ami":
        if not allow_ami:
            raise BadInput(
                "--neuron-env-source ami names the copy of neuron-env that an image built by "
                "'neuron-env ami render' holds; this image has none (a Neuron DLAMI, or the "
                "build that is to put it there).",
                hint=("Give --ami with such an image, or a" if ami_option else "Give a")
                + (" URL or s3:// object" if allow_s3 else " URL")
                + " with --neuron-env-sha256, or pypi.",
            )
        if digest is not None:
            raise BadInput("--neuron-env-sha256 has no use with --neuron-env-source ami.")
        return ToolSource("ami", "")
    if source == "pypi":
        return ToolSource("pypi", _pypi_spec(spec or DEFAULT_SPEC, digest), digest)
    kind: SourceKind = "s3" if source.startswith("s3://") else "url"
    if not (_S3 if kind == "s3" else _URL).fullmatch(source) or not _FILE_NAME.fullmatch(
        file_name_of(source)
    ):
        raise BadInput(
            f"--neuron-env-source {_shown(source)} is not a source neuron-env can use: give "
            "https://HOST/PATH/FILE or s3://BUCKET/KEY ending in a wheel (.whl) or a wheelhouse "
            "(.tar.gz), without spaces, quotes or shell syntax; or ami, or pypi."
        )
    if digest is None:
        raise BadInput(
            f"--neuron-env-source {source} needs --neuron-env-sha256 HEX: the host installs it "
            "as root, and checks it against that digest first.",
            hint=f"Compute it with: sha256sum {file_name_of(source)}",
        )
    return ToolSource(kind, source, digest)


def file_name_of(location: str) -> str:
    """The last path segment of a URL or S3 key, without its query or fragment."""
    return re.split(r"[?#]", location, maxsplit=1)[0].rsplit("/", 1)[-1]


def _digest(value: str | None) -> str | None:
    if value is None:
        return None
    digest = value.strip().lower().removeprefix("sha256:")
    if _SHA256.fullmatch(digest):
        return digest
    raise BadInput(
        f"--neuron-env-sha256 {_shown(value)} is not a sha256 digest: expected 64 hex digits, "
        "as 'sha256sum FILE' prints them."
    )


def _pypi_spec(spec: str, digest: str | None) -> str:
    if digest is not None and not _EXACT_SPEC.fullmatch(spec):
        raise BadInput(
            f"--neuron-env-sha256 checks one wheel, so --neuron-env-spec must name one version "
            f"(neuron-env==X.Y.Z), not {_shown(spec)}."
        )
    return spec


def _shown(value: str) -> str:
    return repr(value) if len(value) <= 80 else repr(value[:77] + "...")
