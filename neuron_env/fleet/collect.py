"""``neuron-env fleet collect``: run ``neuron-env facts`` on many instances through SSM Run Command.

Each snapshot is written (atomically) the moment its instance answers, so an interrupted or
partly failed collection keeps everything that arrived; a re-run asks only the instances that have
no snapshot yet (``refresh`` asks all again). Instances that did not answer, are not managed by
Systems Manager, or lack neuron-env are recorded in ``_not-collected.json`` with the reason.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import json
import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from neuron_env.errors import BadInput, MalformedFile
from neuron_env.facts import facts_from_document
from neuron_env.fleet.model import NOT_COLLECTED, Missing
from neuron_env.fleet.ssm import Invocation, SsmGateway, Throttled, batches
from neuron_env.frozen import frozen
from neuron_env.input_files import SNAPSHOT_LIMITS, InputRejected, gunzip, load_json, parse_json

NOT_INSTALLED_EXIT = 127
TRUNCATED = "---Output truncated---"
Progress = Callable[[str], None]


@frozen
class CollectOptions:
    tags: tuple[tuple[str, tuple[str, ...]], ...] = ()
    instance_ids: tuple[str, ...] = ()
    timeout: int = 120
    concurrency: str = "50"
    max_errors: str = "100%"
    python: str | None = None
    neuron_env: str | None = None
    refresh: bool = False


@dataclass
class CollectResult:
    collected: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    missing: list[Missing] = field(default_factory=list)


# Where scripts/bootstrap.sh puts neuron-env and the Python environment it builds.
BOOTSTRAP_TOOL = "/opt/neuron-env/tool/bin/neuron-env"
BOOTSTRAP_PYTHON = "/opt/neuron-env/venv/bin/python"


def facts_script(options: CollectOptions) -> list[str]:
    """The shell lines each instance runs: ``neuron-env facts``, gzipped and base64-encoded (SSM
    keeps 24,000 characters of output; a compressed snapshot is a few kB).

    Without ``--neuron-env``/``--python`` it uses neuron-env on PATH (else the bootstrap's), and
    the bootstrap's Python environment when it exists.
    """
    tool = shlex.quote(options.neuron_env or "")
    python = shlex.quote(options.python or "")
    missing = f'echo "neuron-env is not installed" >&2; exit {NOT_INSTALLED_EXIT}'
    return [
        "set -o pipefail",
        f"tool={tool}; python={python}",
        f'[ -n "$tool" ] || tool=$(command -v neuron-env || echo {BOOTSTRAP_TOOL})',
        f'[ -n "$python" ] || {{ [ -x {BOOTSTRAP_PYTHON} ] && python={BOOTSTRAP_PYTHON}; }}',
        f'[ -x "$tool" ] || {{ {missing}; }}',
        '"$tool" facts ${python:+--python "$python"} | gzip -c | base64 -w0',
    ]


def _make_folder(folder: Path) -> None:
    """The snapshots' folder, made if it is missing; bad input (exit 2) where it cannot be."""
    if folder.exists() and not folder.is_dir():
        raise BadInput(f"--output {folder} exists and is not a directory.")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadInput(f"--output {folder}: cannot create it ({exc.strerror}).") from None


def collect(
    gateway: SsmGateway,
    options: CollectOptions,
    folder: Path,
    *,
    progress: Progress = lambda _: None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> CollectResult:
    """Collect snapshots into ``folder``; never loses what already arrived."""
    if not options.tags and not options.instance_ids:
        raise BadInput("Name the instances: --targets tag:KEY=VALUE and/or --instance-ids ID...")
    from neuron_env.output.files import refuse_planted_link

    refuse_planted_link(folder)  # never a folder made through a planted link
    _make_folder(folder)
    run = _Run(gateway, options, folder, progress, sleep, clock)
    try:
        run.start()
        run.poll()
    finally:
        _record_missing(folder, run.result)
    return run.result


@dataclass
class _Run:
    """One collection: what was asked, what answered, and the clock it runs on."""

    gateway: SsmGateway
    options: CollectOptions
    folder: Path
    progress: Progress
    sleep: Callable[[float], None]
    clock: Callable[[], float]
    result: CollectResult = field(default_factory=CollectResult)
    pending: dict[str, str] = field(default_factory=dict)  # instance → command id

    def start(self) -> None:
        options = self.options
        instances = self.gateway.instances(options.tags, options.instance_ids)
        if not instances:
            raise BadInput(
                f"No running instance matches {_described(options)}: there is nothing to collect.",
                hint="Check the tag, the instance ids and the region (--region, $AWS_REGION).",
            )
        self.progress(f"{len(instances)} running instances match")
        todo = [i for i in instances if options.refresh or not (self.folder / f"{i}.json").exists()]
        self.result.skipped = [i for i in instances if i not in todo]
        online = self.gateway.managed(todo) if todo else set()
        self.result.missing += [
            Missing(i, "not managed by Systems Manager (no online SSM agent)")
            for i in todo
            if i not in online
        ]
        script = facts_script(options)
        for batch in batches(i for i in todo if i in online):
            command = self.gateway.send(batch, script, timeout=options.timeout,
                                        concurrency=options.concurrency,
                                        max_errors=options.max_errors)  # fmt: skip
            self.pending.update(dict.fromkeys(batch, command))
        self.progress(f"asked {len(self.pending)} instances (command timeout {options.timeout} s)")

    def poll(self) -> None:
        """Ask until every instance answered or the deadline passed, backing off as we go."""
        limit = self.options.timeout + 60  # delivery and upload slack beyond the command's own
        deadline, delay = self.clock() + limit, 1.0
        while self.pending and self.clock() < deadline:
            self.sleep(delay)
            try:
                finished = self.sweep()
            except Throttled:
                delay = min(delay * 2, 30.0)
                continue
            if finished:
                self.progress(
                    f"{len(self.result.collected)} collected, {len(self.pending)} running"
                )
            delay = 1.0 if finished else min(delay * 1.5, 10.0)
        self.result.missing += [Missing(i, f"no answer within {limit} s") for i in self.pending]

    def sweep(self) -> int:
        """Ask every pending instance once; store or record the finished ones."""
        finished = 0
        for instance, command in list(self.pending.items()):
            answer = self.gateway.invocation(command, instance)
            if not answer.finished:
                continue
            del self.pending[instance]
            finished += 1
            ok = answer.status == "Success"
            reason = _store(self.folder, instance, answer) if ok else _failure(answer)
            if reason is None:
                self.result.collected.append(instance)
            else:
                self.result.missing.append(Missing(instance, reason))
        return finished


def _failure(answer: Invocation) -> str:
    if answer.exit_code == NOT_INSTALLED_EXIT:
        return "neuron-env is not installed on the instance"
    tail = " ".join(answer.stderr.split())[-300:]
    return f"command {answer.status.lower()} (exit {answer.exit_code})" + (
        f": {tail}" if tail else ""
    )


def _store(folder: Path, instance: str, answer: Invocation) -> str | None:
    """Decode and check the snapshot, then write it; a reason when it is unusable."""
    if TRUNCATED in answer.stdout:
        return "output truncated by SSM (over 24,000 characters even compressed)"
    try:
        packed = base64.b64decode(answer.stdout.strip(), validate=True)
        text = gunzip(packed, SNAPSHOT_LIMITS.max_bytes).decode()
        doc = parse_json(text, SNAPSHOT_LIMITS)
        facts_from_document(doc, instance)
    except InputRejected as exc:
        return f"unusable output: {exc.problem}"
    except (
        binascii.Error,
        OSError,
        EOFError,
        UnicodeDecodeError,
        ValueError,
        MalformedFile,
    ) as exc:
        return f"unusable output: {getattr(exc, 'message', None) or exc}"
    _write_atomically(folder / f"{instance}.json", json.dumps(doc, indent=1) + "\n")
    return None


def _record_missing(folder: Path, result: CollectResult) -> None:
    """Rewrite the record of missing hosts: earlier ones that were not collected now, plus new."""
    path = folder / NOT_COLLECTED
    earlier: list[dict[str, str]] = []
    if path.exists():
        try:
            earlier = load_json(path, SNAPSHOT_LIMITS).get("hosts", [])
        except (InputRejected, AttributeError):
            earlier = []  # unreadable: rewritten with the hosts missing now
    now = {m.name: m.reason for m in result.missing}
    done = set(result.collected) | set(result.skipped)
    at = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    hosts = [h for h in earlier if h.get("instance") not in now and h.get("instance") not in done]
    hosts += [{"instance": name, "reason": reason, "at": at} for name, reason in now.items()]
    if hosts or path.exists():
        _write_atomically(path, json.dumps({"hosts": hosts}, indent=1) + "\n")


def _write_atomically(path: Path, text: str) -> None:
    """An interrupt (or a full disk) leaves the old file and no partial one; a link at the path
    is replaced, never followed (:mod:`neuron_env.output.files`)."""
    from neuron_env.output.files import write_file

    write_file(path, text.encode("utf-8"))


def _described(options: CollectOptions) -> str:
    tags = [f"tag:{key}={','.join(values)}" for key, values in options.tags]
    ids = list(options.instance_ids)
    shown = ", ".join([*tags, *ids[:5]]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
    return shown


def parse_targets(targets: Sequence[str]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``tag:Cluster=train-a`` (values separated by commas) → (("Cluster", ("train-a",)),)."""
    parsed = []
    for target in targets:
        key, sep, values = target.removeprefix("tag:").partition("=")
        if not target.startswith("tag:") or not sep or not key or not values:
            raise BadInput(f"--targets '{target}' is not tag:KEY=VALUE[,VALUE...].")
        parsed.append((key, tuple(values.split(","))))
    return tuple(parsed)
