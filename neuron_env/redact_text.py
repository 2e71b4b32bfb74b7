"""The patterns of ``--redact`` and the :class:`Redactor` that applies them: what identifies a
host or a person goes, what judges it stays. Standard library only, so every command that writes
a report a user may paste (``scan`` included, which may import nothing that probes a host) uses
the same patterns; :mod:`neuron_env.redact` builds a redactor from a host's facts.

:func:`redact_object` redacts a command's result (any tree of dataclasses, tuples, lists, dicts
and strings) before it is rendered, so every format (text, JSON, SARIF, JUnit, HTML) is laid out
from redacted strings and a wrapped line cannot split a secret out of a pattern's reach.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Iterable
from enum import Enum
from pathlib import PurePath
from typing import Any, TypeVar

T = TypeVar("T")

HOST = "<host>"
USER = "<user>"
INSTANCE = "i-<redacted>"
ACCOUNT = "<account>"
ADDRESS = "<ip>"
MAC = "<mac>"
CREDENTIALS = "<credentials>"
SECRET = "<secret>"  # noqa: S105 - the placeholder, not a secret
KEY_ID = "<access-key-id>"
PORT = "<port>"
HOME = "<home>"

# Fields whose values are versions: addresses are never looked for there (2.14.3.1 is a version).
VERSION_KEYS = frozenset(
    {"version", "version_id", "module_version", "kernel", "glibc", "requires_dist", "packages"}
)
_HOME = re.compile(r"(?<=/)(home|Users)/([^/\s:;\"']+)")
_PATH_TOKEN = re.compile(r"[^\s\"'<>]*/[^\s\"'<>]*")
"""A word holding a slash: where a user name is looked for (only there: a user named like a
word of the report, ``ubuntu`` or ``neuron``, never changes the report's prose)."""
_IPV4 = r"(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)"
_SECRET_WORDS = (
    r"secret|passw(?:or)?d|token|api[_-]?key|access[_-]?key|credential|signature|private[_-]?key"  # noqa: S105
)
_SECRET_NAME = re.compile(rf"(?i)[\w.-]*(?:{_SECRET_WORDS})[\w.-]*")
"""A variable or field whose value is a secret (AWS_SESSION_TOKEN, HF_TOKEN, DB_PASSWORD)."""

# Applied everywhere, version fields too: none of these spells a version.
_SECRET_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    # presigned URLs (S3 SigV4 and SigV2, CloudFront, Azure SAS) and tokens in query strings
    (
        re.compile(
            r"(?i)([?&;](?:x-amz-security-token|x-amz-signature|x-amz-credential|signature"
            r"|awsaccesskeyid|key-pair-id|policy|sig|token|access_token|api_key|apikey"
            r"|password|secret)=)[^&\s\"'#<>]+"
        ),
        r"\1" + SECRET,
    ),
    (
        re.compile(r"(?i)\b((?:proxy-)?authorization)(\"?\s*[:=]\s*\"?)[^\n\"']+"),
        r"\1\2" + CREDENTIALS,
    ),
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/-]{6,}=*"), r"\1 " + SECRET),
    (re.compile(r"\b(?:AKIA|ASIA|AIDA|AROA|AGPA|ANPA|ANVA|ABIA|ACCA)[A-Z0-9]{16}\b"), KEY_ID),
    # NAME=value, NAME: value where the name says secret (never NAME==version: a requirement)
    (
        re.compile(
            rf"(?i)(\b[\w.-]*(?:{_SECRET_WORDS})[\w.-]*)(\"?\s*(?:=|:\s)\s*\"?)(?![=<>~<])"
            r"[^\s\"',;&<]+"
        ),
        r"\1\2" + SECRET,
    ),
    # a 40-character AWS secret access key: base64 of mixed case (a SHA-1 in hex is not one)
    (
        re.compile(
            r"(?<![A-Za-z0-9/+])(?=[A-Za-z0-9/+]{0,39}[A-Z])(?=[A-Za-z0-9/+]{0,39}[a-z])"
            r"(?=[A-Za-z0-9/+]{0,39}[0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"
        ),
        SECRET,
    ),
    (re.compile(r"(\barn:aws[\w-]*:[\w-]*:[\w-]*:)\d{12}(?=:)"), r"\1" + ACCOUNT),
    # an address with a port, or in a URL, is never a version: 2.14.3.1:8080, http://10.1.2.3/
    (re.compile(rf"(?<![\w.]){_IPV4}:\d{{1,5}}\b"), ADDRESS + ":" + PORT),
    (re.compile(rf"(?<=://){_IPV4}(?![\w.])"), ADDRESS),
    (re.compile(r"\[[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*\](?::\d{1,5})?"), f"[{ADDRESS}]:{PORT}"),
    # host:port, a dotted name ending in letters: mirror.corp.example:8443
    (re.compile(r"(?<![\w.@-])(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}:\d{1,5}\b"), HOST + ":" + PORT),
]
_PATTERNS = [
    (re.compile(r"(?<=://)[^/@\s]+@"), CREDENTIALS + "@"),
    (re.compile(r"\bi-(?:[0-9a-f]{17}|[0-9a-f]{8})\b"), INSTANCE),
    (re.compile(r"\bip-\d{1,3}-\d{1,3}-\d{1,3}-\d{1,3}\b"), "ip-" + ADDRESS),
    (re.compile(r"(?<![\w:-])(?:[0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}(?![\w:-])"), MAC),
    # IPv6 (never a version: versions hold no colon): eight groups, or a compressed form with
    # "::" (a time such as 10:11:12 is neither)
    (re.compile(r"(?<![\w:.])(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}(?![\w:])"), ADDRESS),
    (
        re.compile(
            r"(?<![\w:.])(?=[0-9A-Fa-f:]*[0-9A-Fa-f])(?:[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{1,4})*)?::(?:[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{1,4})*)?(?![\w:])"
        ),
        ADDRESS,
    ),
]
_ADDRESS_PATTERNS = [
    (re.compile(rf"(?<![\w.]){_IPV4}(?![\w.])"), ADDRESS),
    (re.compile(r"(?<!\d)\d{12}(?!\d)"), ACCOUNT),
]


class Redactor:
    """Redacts strings and JSON-like documents for one host.

    ``literals`` (the host name, the addresses found in the facts) are replaced wherever they
    appear, versions included; the address patterns only where no version is expected, so a
    finding that says "torch-neuronx 2.14.3.1" keeps it while one quoting a variable's address
    loses that address. Secrets, IPv6 addresses and addresses with a port go everywhere.
    """

    def __init__(
        self, literals: dict[str, str], users: Iterable[str], home: str | None = None
    ) -> None:
        self._literals = sorted(literals.items(), key=lambda item: len(item[0]), reverse=True)
        self._users = sorted({u for u in users if u and u != USER}, key=len, reverse=True)
        self._home = home if home and len(home) > 1 else None

    def text(self, value: str, *, version: bool = False) -> str:
        """``value`` redacted; a ``version`` field keeps its dotted numbers."""
        for pattern, replacement in _SECRET_PATTERNS:
            value = pattern.sub(replacement, value)
        for literal, replacement in self._literals:
            value = re.sub(rf"(?<![\w.:-]){re.escape(literal)}(?![\w:-])", replacement, value)
        if self._home:  # the running user's home folder, wherever it is
            value = re.sub(rf"{re.escape(self._home)}(?=/|$|[\s:;\"'])", HOME, value)
        value = _HOME.sub(lambda m: f"{m.group(1)}/{USER}", value)
        if self._users:  # the user's other folders: /scratch/alice/cache, /tmp/pytest-of-alice
            value = _PATH_TOKEN.sub(lambda path: self._users_in(path.group()), value)
        patterns = _PATTERNS if version else [*_PATTERNS, *_ADDRESS_PATTERNS]
        for pattern, replacement in patterns:
            value = pattern.sub(replacement, value)
        return value

    def _users_in(self, path: str) -> str:
        """The user names in one path, as whole words (never inside a longer name)."""
        for user in self._users:
            path = re.sub(rf"(?<![A-Za-z0-9]){re.escape(user)}(?![A-Za-z0-9])", USER, path)
        return path

    def document(self, doc: Any, *, version: bool = False) -> Any:
        """A decoded JSON document with every string (keys of variables too) redacted; the
        value of a key named like a secret (``AWS_SESSION_TOKEN``) goes whole."""
        if isinstance(doc, str):
            return self.text(doc, version=version)
        if isinstance(doc, list):
            return [self.document(v, version=version) for v in doc]
        if isinstance(doc, dict):
            return {
                self.text(str(k), version=True): SECRET
                if isinstance(v, str) and v and _SECRET_NAME.fullmatch(str(k))
                else self.document(v, version=version or _holds_versions(k))
                for k, v in doc.items()
            }
        return doc


def _holds_versions(key: object) -> bool:
    return str(key) in VERSION_KEYS or str(key).endswith("_version")


def running_user() -> str:
    """The name of the user running neuron-env (their folders elsewhere are theirs too)."""
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return ""


def running_home() -> str | None:
    """The running user's home folder; not ``/`` (nor a root's ``/root``, which names nobody)."""
    from neuron_env.home import home

    folder = home()
    return None if folder is None or str(folder) in ("/", "/root") else str(folder)


def host_names(hostname: str | None) -> list[str]:
    """The name and, for a fully qualified one, its first label (at least two characters)."""
    if not hostname or len(hostname) < 2:
        return []
    short = hostname.split(".")[0]
    return [hostname, short] if len(short) > 1 else [hostname]


def local_redactor(hosts: Iterable[str] = ()) -> Redactor:
    """The redactor for a report of this machine's own run (``scan``, ``evaluate``,
    ``collectives``): the running user's name and home folder, and ``hosts`` (the ranks' host
    names) as ``host-N``, the same host the same number."""
    literals: dict[str, str] = {}
    for number, name in enumerate(dict.fromkeys(h for h in hosts if h), 1):
        literals.update({n: f"host-{number}" for n in host_names(name)})
    return Redactor(literals, [running_user()], running_home())


def redact_object(value: T, redactor: Redactor) -> T:
    """``value`` with every string in it redacted (``version=True``: a dotted version, a count
    or a size is never read as an address); dataclasses are copied, never changed in place.

    An absolute path stays absolute (``/home/alice/p`` becomes ``/home/<user>/p``, the home
    folder itself ``/<home>``), so a renderer that makes a URI of it still can."""
    result: Any
    if isinstance(value, Enum) or value is None or isinstance(value, (bool, int, float, bytes)):
        result = value
    elif isinstance(value, str):
        result = _redact_str(value, redactor)
    elif isinstance(value, PurePath):
        result = type(value)(_redact_str(str(value), redactor))
    elif isinstance(value, (tuple, list, set, frozenset)) and not hasattr(value, "_fields"):
        result = type(value)(redact_object(v, redactor) for v in value)
    elif isinstance(value, dict):
        result = type(value)(
            (redact_object(k, redactor), redact_object(v, redactor)) for k, v in value.items()
        )
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        result = copy.copy(value)
        for f in dataclasses.fields(value):
            object.__setattr__(result, f.name, redact_object(getattr(value, f.name), redactor))
    else:
        result = value  # a pattern, a function: nothing the user typed or the run printed
    return result  # type: ignore[no-any-return]


def _redact_str(text: str, redactor: Redactor) -> str:
    said = redactor.text(text, version=True)
    if text.startswith("/") and not said.startswith("/"):
        said = "/" + said  # the home folder at the start: still an absolute path
    return said
