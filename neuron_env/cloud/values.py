"""Checks of the values a user passes for AWS resources, before anything is rendered.

Each check returns the value unchanged or raises :class:`BadInput` naming the option, what is wrong
and what a valid value looks like. Values that reach a shell are quoted again when rendered
(:mod:`neuron_env.templating`); these checks catch mistakes early and refuse what can never be
right (a newline in a key-pair name, ``$(...)`` in a subnet id).
"""

from __future__ import annotations

import re

from neuron_env.errors import BadInput

_RESOURCE_ID = {
    "ami": "ami",
    "subnet": "subnet",
    "security-group": "sg",
    "capacity-reservation": "cr",
}
_HEX_ID = "[0-9a-f]{8}(?:[0-9a-f]{9})?"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# CreateLaunchTemplate: 3–128 characters of [a-zA-Z0-9().-/_].
_TEMPLATE_NAME = re.compile(r"[A-Za-z0-9().\-/_]{3,128}")
# IAM names: alphanumerics and +=,.@_- (up to 128); or an instance-profile ARN.
_PROFILE_NAME = re.compile(r"[\w+=,.@-]{1,128}", re.ASCII)
_PROFILE_ARN = re.compile(
    r"arn:aws[a-z-]*:iam::\d{12}:instance-profile/[\w+=,.@/-]{1,512}", re.ASCII
)
# EC2 placement group names: up to 255 ASCII characters.
_PLACEMENT_GROUP = re.compile(r"[ -~]{1,255}")
# A pip requirement or URL for neuron-env itself; no spaces, quotes or shell syntax needed.
_PIP_SPEC = re.compile(r"[A-Za-z0-9._\-\[\],=<>!~+:/@#%?&]{1,500}")


def resource_id(kind: str, value: str, option: str) -> str:
    """``ami-0123456789abcdef0`` for kind ``ami``; 8 or 17 hex digits after the prefix."""
    prefix = _RESOURCE_ID[kind]
    if re.fullmatch(f"{prefix}-{_HEX_ID}", value):
        return value
    raise BadInput(
        f"{option} {_shown(value)} is not a {kind} id: expected '{prefix}-' and 8 or 17 "
        f"lowercase hex digits, e.g. {prefix}-0123456789abcdef0."
    )


def template_name(value: str) -> str:
    """A launch-template name EC2 accepts."""
    if _TEMPLATE_NAME.fullmatch(value):
        return value
    raise BadInput(
        f"--name {_shown(value)} is not a valid launch-template name: use 3–128 characters "
        "from letters, digits and ( ) . - / _."
    )


def key_name(value: str) -> str:
    """An EC2 key-pair name: printable ASCII, up to 255 characters."""
    if 0 < len(value) <= 255 and value.isascii() and not _CONTROL.search(value):
        return value
    raise BadInput(
        f"--key-name {_shown(value)} is not a valid key-pair name: use up to 255 printable "
        "ASCII characters, no newlines or control characters."
    )


def instance_profile(value: str) -> str:
    """An instance-profile name or ARN."""
    if _PROFILE_NAME.fullmatch(value) or _PROFILE_ARN.fullmatch(value):
        return value
    raise BadInput(
        f"--iam-instance-profile {_shown(value)} is neither an instance-profile name (letters, "
        "digits and +=,.@_-) nor an instance-profile ARN."
    )


def placement_group(value: str) -> str:
    """A placement-group name: printable ASCII, up to 255 characters."""
    if _PLACEMENT_GROUP.fullmatch(value):
        return value
    raise BadInput(
        f"--placement-group {_shown(value)} is not a valid placement-group name: use up to 255 "
        "printable ASCII characters."
    )


def pip_spec(value: str) -> str:
    """What the host's pip installs as neuron-env: a requirement or a URL, without spaces."""
    if _PIP_SPEC.fullmatch(value):
        return value
    raise BadInput(
        f"--neuron-env-spec {_shown(value)} is not a pip requirement or URL neuron-env can pass "
        "on safely: use e.g. 'neuron-env==0.1.0' or an https:// wheel URL, without spaces, "
        "quotes or shell syntax."
    )


def volume_size(value: int, minimum: int) -> int:
    """A root volume of at least ``minimum`` GiB (EBS gp3 allows up to 65536)."""
    if minimum <= value <= 65536:
        return value
    raise BadInput(
        f"--volume-size {value} GiB is outside {minimum}–65536 GiB: Neuron needs a root volume "
        f"of at least {minimum} GiB on Trainium instances."
    )


def _shown(value: str) -> str:
    """The value as a repr, so hidden newlines and quotes are visible in the message."""
    return repr(value) if len(value) <= 80 else repr(value[:77] + "...")
