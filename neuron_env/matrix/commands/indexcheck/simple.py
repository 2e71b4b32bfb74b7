"""Reading the "simple" pages of a package index (PEP 503 HTML and PEP 691 JSON), stdlib only.

Every request sends ``Accept: application/vnd.pypi.simple.v1+json, text/html;q=0.1``: an index
that speaks PEP 691 answers JSON, a static tree (``index.html`` files) answers HTML. Credentials
come from the URL (``https://user:token@host/...``) or from netrc, are sent only to that host, and
never appear in a message: every URL shown is :func:`redact`-ed first.
"""

from __future__ import annotations

import base64
import contextlib
import html.parser
import http.client
import netrc
import os
import socket
import ssl
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Literal

from packaging.utils import canonicalize_name

from neuron_env import __version__
from neuron_env.frozen import frozen
from neuron_env.home import home
from neuron_env.input_files import InputRejected, Limits, MiB, parse_json, read_text
from neuron_env.input_http import BodyTooLarge, Deadline, DeadlinePassed, fetch

ACCEPT = "application/vnd.pypi.simple.v1+json, text/html;q=0.1"
JSON_TYPE = "application/vnd.pypi.simple.v1+json"
DEFAULT_TIMEOUT = 15.0
#: The largest simple page read: the default index's page of a project with thousands of files
#: is a few MiB; a page past this is refused, never held whole in memory.
MAX_PAGE_BYTES = 64 * MiB
PAGE_LIMITS = Limits(max_bytes=MAX_PAGE_BYTES, max_string=64 * 1024)
#: How long a whole ``matrix verify`` may spend reading, at least (see :func:`command_deadline`).
COMMAND_SECONDS = 300.0
MAX_NETRC_BYTES = 1 * MiB


class IndexUnreadable(Exception):
    """An index page could not be read; ``url`` is redacted, ``reason`` says why in words."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"{url}: {reason}")
        self.url = url
        self.reason = reason


@frozen
class IndexFile:
    """One file a simple page lists."""

    filename: str
    sha256: str | None = None
    yanked: bool = False


@frozen
class ProjectPage:
    """One project's page: its files, or ``found = False`` when the index answered 404."""

    project: str
    url: str
    format: Literal["json", "html", "none"]
    files: tuple[IndexFile, ...] = ()
    found: bool = True


@frozen
class IndexAccess:
    """How to reach one index: its URL without credentials, and the Authorization header."""

    url: str
    shown: str
    authorization: str | None = None


def redact(url: str) -> str:
    """``url`` with any password (or lone token) replaced by ``****``, as pip shows it."""
    parts = urllib.parse.urlsplit(url)
    if "@" not in parts.netloc:
        return url
    userinfo, _, host = parts.netloc.rpartition("@")
    user, has_password, _ = userinfo.partition(":")
    shown = f"{user}:****" if has_password else "****"
    return urllib.parse.urlunsplit(parts._replace(netloc=f"{shown}@{host}"))


def strip_credentials(url: str) -> str:
    """``url`` without its user-info part: what may be written into a file."""
    parts = urllib.parse.urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urllib.parse.urlunsplit(parts._replace(netloc=host))


def index_access(url: str, netrc_file: Path | None = None) -> IndexAccess:
    """Credentials from the URL itself, else from netrc (``$NETRC`` or ``~/.netrc``).

    Raises ValueError for a URL that is not http(s) with a host.
    """
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"'{redact(url)}' is not an http:// or https:// URL with a host")
    bare = strip_credentials(url)
    user, password = parts.username, parts.password
    if user is None and parts.hostname:
        user, password = _netrc_login(parts.hostname, netrc_file) or (None, None)
    if user is None:
        return IndexAccess(bare, redact(url))
    pair = f"{urllib.parse.unquote(user)}:{urllib.parse.unquote(password or '')}"
    token = base64.b64encode(pair.encode()).decode()
    return IndexAccess(bare, redact(url), f"Basic {token}")


def _default_netrc() -> Path | None:
    """``$NETRC``, else ``~/.netrc``; None with neither (no home folder: pip reads none)."""
    if os.environ.get("NETRC"):
        return Path(os.environ["NETRC"])
    folder = home()
    return None if folder is None else folder / ".netrc"


def _netrc_login(host: str, netrc_file: Path | None) -> tuple[str, str] | None:
    path = netrc_file or _default_netrc()
    if path is None or not path.is_file():
        return None
    try:
        # Read bounded first (a FIFO or /dev/zero is refused); the stdlib parser takes a path,
        # so it reads the file again: a file swapped in between is the user's own doing.
        read_text(path, MAX_NETRC_BYTES)
        entry = netrc.netrc(str(path)).authenticators(host)
    except (netrc.NetrcParseError, OSError, InputRejected):
        return None  # pip ignores a netrc it cannot read, and so do we
    if entry is None:
        return None
    login, _, password = entry
    return login, password or ""


def tls_context() -> ssl.SSLContext:
    """The system trust store, plus ``$PIP_CERT`` (pip's own CA bundle setting) when set.

    ``$SSL_CERT_FILE`` and ``$SSL_CERT_DIR`` are honoured by OpenSSL itself.
    """
    context = ssl.create_default_context()
    bundle = os.environ.get("PIP_CERT")
    if bundle:
        context.load_verify_locations(cafile=bundle)
    return context


def fetch_project(
    access: IndexAccess,
    project: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    deadline: Deadline | None = None,
    context: ssl.SSLContext | None = None,
) -> ProjectPage:
    """Read ``project``'s simple page; raises :class:`IndexUnreadable` with the reason.

    ``timeout`` bounds the whole request, ``deadline`` (when given) the command's reading."""
    url = f"{access.url.rstrip('/')}/{canonicalize_name(project)}/"
    shown = f"{access.shown.rstrip('/')}/{canonicalize_name(project)}/"
    request = urllib.request.Request(  # noqa: S310 - index_access admits http(s) only
        url, headers={"Accept": ACCEPT, "User-Agent": f"neuron-env/{__version__}"}
    )
    if access.authorization:
        # Not forwarded when the index redirects elsewhere (a CDN): credentials stay on this host.
        request.add_unredirected_header("Authorization", access.authorization)
    try:
        answer = fetch(
            request, timeout=timeout, max_bytes=MAX_PAGE_BYTES, deadline=deadline, context=context
        )
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return ProjectPage(project, shown, "none", found=False)
        raise IndexUnreadable(shown, _http_reason(exc)) from None
    except BodyTooLarge as exc:
        raise IndexUnreadable(shown, f"the page is too large: {exc.problem}") from None
    except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
        raise IndexUnreadable(shown, describe_failure(exc, timeout)) from None
    try:
        return parse_page(project, shown, answer.body, answer.content_type)
    except ValueError as exc:
        raise IndexUnreadable(shown, f"not a simple index page ({exc})") from None


def _http_reason(exc: urllib.error.HTTPError) -> str:
    text = f"HTTP {exc.code} {exc.reason}".rstrip()
    if exc.code in (401, 403):
        text += " (the index wants credentials: put them in ~/.netrc or in the URL)"
    return text


def describe_failure(exc: BaseException, timeout: float) -> str:
    """Why a request failed, in words: DNS, refused, timeout, TLS, cut off."""
    reason: Any = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    if isinstance(reason, socket.gaierror):
        return "the host name does not resolve (DNS)"
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused (nothing listens there)"
    if isinstance(reason, DeadlinePassed):
        return f"{reason}; raise it with --timeout"
    if isinstance(reason, TimeoutError | socket.timeout):
        return f"no answer within {timeout:g} s (timeout; raise it with --timeout)"
    if isinstance(reason, ssl.SSLCertVerificationError):
        why = reason.verify_message
        return f"TLS certificate not trusted ({why}); set PIP_CERT or SSL_CERT_FILE"
    if isinstance(reason, ssl.SSLError):
        return f"TLS failed ({reason.reason or reason})"
    if isinstance(reason, ConnectionResetError | http.client.HTTPException):
        return "the connection was closed before a full answer"
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror.lower()
    return str(reason) or type(reason).__name__


def parse_page(project: str, url: str, body: bytes, content_type: str) -> ProjectPage:
    """A page's files, from PEP 691 JSON or PEP 503 HTML (by its content type)."""
    if content_type == JSON_TYPE or content_type.endswith("json"):
        return ProjectPage(project, url, "json", _json_files(body))
    return ProjectPage(project, url, "html", _html_files(body))


def _json_files(body: bytes) -> tuple[IndexFile, ...]:
    try:
        doc = parse_json(body.decode("utf-8"), PAGE_LIMITS)
    except UnicodeDecodeError as exc:
        raise ValueError(f"invalid JSON: {exc}") from None
    except InputRejected as exc:
        raise ValueError(f"invalid JSON: {exc.problem}") from None
    entries = doc.get("files") if isinstance(doc, dict) else None
    if not isinstance(entries, list):
        raise ValueError("JSON without a 'files' list")
    files = []
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("filename"), str):
            raise ValueError("a 'files' entry without a 'filename'")
        hashes = entry.get("hashes")
        sha256 = hashes.get("sha256") if isinstance(hashes, dict) else None
        yanked = entry.get("yanked", False) not in (False, None)
        files.append(
            IndexFile(entry["filename"], sha256 if isinstance(sha256, str) else None, yanked)
        )
    return tuple(files)


class _Anchors(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.files: list[IndexFile] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag != "a":
            return
        attributes = dict(attrs)
        href = attributes.get("href")
        if not href:
            return
        parts = urllib.parse.urlsplit(href)
        filename = urllib.parse.unquote(parts.path.rsplit("/", 1)[-1])
        if not filename:
            return
        algorithm, _, digest = parts.fragment.partition("=")
        sha256 = digest if algorithm == "sha256" and digest else None
        self.files.append(IndexFile(filename, sha256, "data-yanked" in attributes))


def _html_files(body: bytes) -> tuple[IndexFile, ...]:
    parser = _Anchors()
    with contextlib.suppress(AssertionError):  # html.parser on hopeless markup
        parser.feed(body.decode("utf-8", errors="replace"))
        parser.close()
    return tuple(parser.files)


@frozen
class IndexReadout:
    """What one index answered for the projects asked of it, or why it could not be read."""

    name: str
    url: str
    pages: dict[str, ProjectPage]
    failed_url: str | None = None
    reason: str | None = None
    seconds: float = 0.0

    @property
    def readable(self) -> bool:
        return self.reason is None

    def page(self, project: str) -> ProjectPage | None:
        return self.pages.get(canonicalize_name(project))


def read_index(
    name: str,
    access: IndexAccess,
    projects: list[str],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    deadline: Deadline | None = None,
    context: ssl.SSLContext | None = None,
) -> IndexReadout:
    """Every page of ``projects``, stopping at the first failure (the rest would fail alike)."""
    import time

    started = time.monotonic()
    pages: dict[str, ProjectPage] = {}
    for project in projects:
        try:
            pages[canonicalize_name(project)] = fetch_project(
                access, project, timeout=timeout, deadline=deadline, context=context
            )
        except IndexUnreadable as exc:
            elapsed = time.monotonic() - started
            return IndexReadout(name, access.shown, pages, exc.url, exc.reason, elapsed)
    return IndexReadout(name, access.shown, pages, seconds=time.monotonic() - started)


def command_deadline(timeout: float) -> Deadline:
    """The one deadline of a command's reading: every page it reads, together, by then."""
    return Deadline.after(max(COMMAND_SECONDS, 4 * timeout))
