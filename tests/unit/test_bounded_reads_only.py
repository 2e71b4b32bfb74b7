"""Every read of a file or HTTP body in ``neuron_env/`` goes through the bounded readers.

``neuron_env/input_files.py`` (files: regular files only, a size cap, depth-bounded JSON and TOML)
and ``neuron_env/input_http.py`` (HTTP: a body cap, one deadline per request and per command) are
the only modules that may open, read, fetch or parse what someone else wrote. This test parses
every module of the package and fails on a call that reads past them: ``open``, ``.read*``,
``read_text``, ``read_bytes``, ``urlopen``, ``json.load(s)``, ``tomllib.load(s)``, ``netrc``,
``decompress``, ``recv``. A call that opens for writing only (a literal mode without ``r`` or
``+``) is no read and passes. Everything else that must read directly is listed below, each
entry with the reason it is safe; an entry that no longer matches anything fails the test too,
so the list cannot outlive its reasons.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "neuron_env"
READERS = {"input_files.py", "input_http.py"}
BOUNDED_MODULES = {"neuron_env.input_files", "neuron_env.input_http"}
READ_CALLS = {
    "open", "fdopen", "read", "read1", "readline", "readlines", "read_text", "read_bytes",
    "urlopen", "netrc", "decompress", "recv", "recv_into", "read_file", "pread",
}  # fmt: skip
PARSERS = {"json", "tomllib", "tomli", "pickle", "marshal"}  # their load/loads parse bytes

#: (module under neuron_env/, call) → why that direct read is safe. A module path ending in "/"
#: covers a whole folder.
ALLOWED: dict[tuple[str, str], str] = {
    # Runs inside the target interpreter, stdlib only (the worker contracts): it reads its own
    # request on stdin and its children's pipes, which the harness bounds on the other side.
    ("worker/target/protocol.py", "read"): "a job's own request on stdin (selftest, evaluate)",
    ("worker/target/protocol.py", "json.loads"): "a job's own request on stdin",
    ("selftest/worker/distributed.py", "json.loads"): "rank results from its own children",
    ("collectives/worker/main.py", "json.loads"): "its request (argv) and ranks' records (store)",
    # A line of the ranks' JSON lines, capped by StreamingCommand's max_line.
    ("collectives/workflow.py", "json.loads"): "one line of the ranks' events (max_line)",
    # The harness side: _Reader.read is our own method, reading lines capped by worker/stream.
    ("selftest/harness.py", "read"): "worker/stream.py's line reader (MAX_LINE, MAX_OUTPUT)",
    ("evaluate/harness.py", "read"): "worker/stream.py's line reader (MAX_LINE, MAX_OUTPUT)",
    ("worker/stream.py", "json.loads"): "one worker line, capped at MAX_LINE; RecursionError "
    "is caught",
    # The subprocess gateway: pipes read with select() in 64 KiB chunks, stderr kept to a tail.
    ("command.py", "read"): "select()-driven os.read of a child's pipes, output capped",
    # Output of our own one-line script in the target (run() caps what it keeps).
    ("install/verify.py", "json.loads"): "the last line of our own import-torch script",
    # Bytes already read by input_files.read_bytes; json needs the object_hook for TOML dates.
    ("matrix/parsed.py", "json.loads"): "bytes from read_bytes (16 MiB); RecursionError caught",
    # scan's reader predates input_files and applies the same rules with scan's own messages:
    # O_NONBLOCK open, fstat S_ISREG, a size cap, a file that grows while read is refused.
    ("scan/source.py", "read"): "scan's bounded reader (read_bounded, first_line)",
    ("scan/source.py", "open"): "scan's bounded reader (read_bounded, first_line)",
    ("scan/notebook.py", "json.loads"): "bytes from read_bounded (50 MiB); RecursionError caught",
    ("scan/fix.py", "open"): "the directory, opened for fsync after the rename",
    ("output/closed.py", "open"): "/dev/null, opened for writing in place of a refused stdout",
    ("install/staging.py", "open"): "the directory, opened for fsync after the rename",
    # The -o writer opens for writing only: a stream (/dev/stdout, a pipe) or an append to
    # $GITHUB_STEP_SUMMARY; nothing is read back.
    ("output/files.py", "open"): "opened to write (ab/wb) a stream or the step summary",
    # A path the stdlib parser insists on opening itself; read_text vets it first (a FIFO or a
    # huge file is refused before netrc opens it).
    (
        "matrix/commands/indexcheck/simple.py",
        "netrc",
    ): "checked by read_text(path, 1 MiB) just before",
    # Host files under --sysroot go through probe/sysroot.py's Sysroot.file_bytes/file_text, which
    # resolve as if chrooted and read with input_files.read_bytes; what is left in probe/ reads
    # our own processes' output or a socket with its own cap.
    ("probe/_python_probe.py", "*"): "runs inside the target interpreter (stdlib only); reads "
    "its own dist-info files",
    ("probe/driver.py", "json.loads"): "neuron-ls output captured by command.run (capped); "
    "RecursionError caught",
    ("probe/python_env.py", "json.loads"): "the output of our own probe script, via command.run",
    ("probe/imds.py", "recv"): "IMDS answer read up to MAX_ANSWER within one deadline",
    # Hashing streams the file in 1 MiB blocks after an O_NONBLOCK open and an S_ISREG check:
    # memory is bounded, a FIFO or device is refused.
    ("install/wheelhouse.py", "open"): "sha256_of: O_NONBLOCK open, S_ISREG checked, streamed",
    ("install/wheelhouse.py", "fdopen"): "sha256_of: O_NONBLOCK open, S_ISREG checked, streamed",
    ("install/wheelhouse.py", "read"): "sha256_of: O_NONBLOCK open, S_ISREG checked, streamed",
    # Templates are shipped data, loaded by jinja2's FileSystemLoader from data_dir().
    ("memo.py", "pickle.loads"): "bytes from read_own_bytes (64 MiB): this user's own file, "
    "writable by no other",
}


def _name(func: ast.expr, imported: set[str]) -> str | None:
    """The read a call makes: ``open``, ``read_text``, ``json.loads``...; None for no read."""
    if isinstance(func, ast.Name):  # open(...), or a reader imported by name
        return func.id if func.id in ("open", "urlopen") or func.id in imported else None
    if not isinstance(func, ast.Attribute):
        return None
    if func.attr in ("load", "loads"):
        owner = func.value.id if isinstance(func.value, ast.Name) else None
        return f"{owner}.{func.attr}" if owner in PARSERS else None
    return func.attr if func.attr in READ_CALLS else None


def _imported_readers(tree: ast.Module) -> set[str]:
    """Reading functions imported by name from anywhere but the bounded readers."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module not in BOUNDED_MODULES:
            names |= {a.asname or a.name for a in node.names if a.name in READ_CALLS}
    return names


def _writes_only(call: ast.Call, name: str) -> bool:
    """``open(path, "w")``, ``path.open("a")``, ``os.fdopen(fd, "wb")``: a literal write mode."""
    if name not in ("open", "fdopen"):
        return False
    owner = call.func.value if isinstance(call.func, ast.Attribute) else None
    module = owner.id if isinstance(owner, ast.Name) else None
    if module == "os" and name == "open":
        return False  # os.open(path, flags): no mode string to tell
    # open(path, mode), os.fdopen(fd, mode), io.open(path, mode); but Path.open(mode)
    position = 0 if owner is not None and module not in ("os", "io", "builtins") else 1
    mode = next((k.value for k in call.keywords if k.arg == "mode"), None)
    if mode is None and len(call.args) > position:
        mode = call.args[position]
    modes = [mode.body, mode.orelse] if isinstance(mode, ast.IfExp) else [mode]  # "a" if x else "w"
    return all(
        isinstance(m, ast.Constant)
        and isinstance(m.value, str)
        and "r" not in m.value
        and "+" not in m.value
        for m in modes
    )


def _reads(path: Path) -> Iterator[tuple[str, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    imported = _imported_readers(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _name(node.func, imported)
            if name and not _writes_only(node, name):
                yield name, node.lineno


def _allowed(module: str, name: str) -> tuple[str, str] | None:
    for folder_or_file, call in ALLOWED:
        matches_module = module == folder_or_file or (
            folder_or_file.endswith("/") and module.startswith(folder_or_file)
        )
        if matches_module and call in (name, "*"):
            return folder_or_file, call
    return None


def _scan() -> tuple[list[str], set[tuple[str, str]]]:
    unbounded, used = [], set()
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        if module in READERS:
            continue
        for name, line in _reads(path):
            entry = _allowed(module, name)
            if entry is None:
                unbounded.append(f"neuron_env/{module}:{line}: {name}(")
            else:
                used.add(entry)
    return unbounded, used


def test_every_read_in_the_package_goes_through_the_bounded_readers() -> None:
    unbounded, _ = _scan()
    assert not unbounded, (
        "These calls read a file or HTTP body past neuron_env/input_files.py and "
        "input_http.py (use read_bytes/read_text/load_json/parse_json/fetch, or add an entry "
        "to ALLOWED saying why it is safe):\n" + "\n".join(unbounded)
    )


def test_every_allowed_entry_still_matches_a_read() -> None:
    _, used = _scan()
    stale = sorted(set(ALLOWED) - used)
    assert not stale, f"ALLOWED entries that match no read any more (remove them): {stale}"


def test_the_guard_sees_the_reads_it_is_for(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "import json, urllib.request\n"
        "json.loads(open('x').read())\n"
        "urllib.request.urlopen('http://h/')\n"
        "p.read_text(); p.read_bytes(); p.open('rb'); p.open('w')\n"
        "open('y', 'a'); open('z', mode='r+'); p.open('a' if q else 'r')\n"
        "from neuron_env.input_files import read_text\n"
        "read_text(p, 1); read(p)\n"
    )
    found = sorted(name for name, _ in _reads(module))
    expected = ["json.loads", "open", "open", "open", "open", "read", "read_bytes", "read_text"]
    expected.append("urlopen")
    assert found == sorted(expected)
