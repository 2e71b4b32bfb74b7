"""``scan``'s output: the report as text, JSON or SARIF, the rules listing, and ``--fix``'s diffs.

The layouts themselves are :mod:`neuron_env.scan.render_text` and
:mod:`neuron_env.scan.render_json`; this module is their format tables (for :func:`emit`) and
:class:`FixConsole`, what ``--fix`` shows on a console while it works.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from neuron_env.output.console import new_console
from neuron_env.output.emit import (
    DONE,
    Format,
    Outcome,
    Output,
    by_exit_code,
    document,
    dumps,
    write_text,
)
from neuron_env.output.formats import ScanFormat
from neuron_env.scan.fix import FilePatch
from neuron_env.scan.render_json import (
    SARIF_RESULT_LIMIT,
    fold,
    rules_json,
    sarif_document,
    scan_payload,
)
from neuron_env.scan.render_text import print_report, print_rules, render_report
from neuron_env.scan.workflow import FixOutcome, FixPlan, RuleListing, ScanResult
from neuron_env.wording import plural


def outcome(result: ScanResult) -> Outcome:
    """ok, or fail (exit 1) when a finding is at or above ``--fail-on``."""
    return by_exit_code(result.exit_code)


def _json(result: ScanResult) -> str:
    return dumps(document("scan", scan_payload(result.report, result.fail_on), outcome(result)))


def _sarif(result: ScanResult) -> str:
    return json.dumps(sarif_document(result.report), indent=2) + "\n"


def _deliver_sarif(result: ScanResult, text: str, output: Path | None) -> None:
    """Say on stderr how many findings were folded to stay under GitHub's limit, then write."""
    _, folded = fold(result.report.findings, SARIF_RESULT_LIMIT)
    count = sum(n for _, n in folded.values())
    if count:
        new_console(stderr=True).print(
            f"SARIF: {count:,} findings were folded into one result per rule to keep the run "
            f"under GitHub's {SARIF_RESULT_LIMIT:,}-result limit (properties.folded counts them; "
            "--format json lists them all).",
            soft_wrap=True,
        )
    write_text(output, text)


def _print_text(out: Console, result: ScanResult) -> None:
    print_report(out, result.report)  # straight to the terminal, in colour


SCAN: Output[ScanResult, ScanFormat] = Output(
    ScanResult,
    ScanFormat,
    {
        ScanFormat.text: Format(lambda result: render_report(result.report), terminal=_print_text),
        ScanFormat.json: Format(_json),
        ScanFormat.sarif: Format(_sarif, deliver=_deliver_sarif),
    },
    outcome,
)


def _rules_document(listing: RuleListing) -> str:
    payload = {"release": listing.rules.release, "rules": rules_json(listing.rules)}
    return dumps(document("scan-rules", payload, DONE))


def _rules_text(listing: RuleListing) -> str:
    buffer = io.StringIO()
    print_rules(new_console(file=buffer), listing.rules)
    return buffer.getvalue()


# ``scan --list-rules``: a table as text, the JSON listing for json and sarif alike.
RULES: Output[RuleListing, ScanFormat] = Output(
    RuleListing,
    ScanFormat,
    {
        ScanFormat.text: Format(
            _rules_text, terminal=lambda out, listing: print_rules(out, listing.rules)
        ),
        ScanFormat.json: Format(_rules_document),
        ScanFormat.sarif: Format(_rules_document),
    },
)


class FixConsole:
    """What ``scan --fix`` shows while it works (an :class:`~neuron_env.scan.workflow.FixReview`).

    ``ask(question)`` puts the question to the person: True or False for their answer, None when
    there is no terminal to ask on.
    """

    def __init__(self, out: Console, ask: Callable[[str], bool | None]) -> None:
        self.out = out
        self.ask = ask

    def planned(self, plan: FixPlan) -> None:
        for refused in plan.refused:
            what = f"Not fixed: {refused.display}: {refused.problem}."
            self.out.print(escape(what), soft_wrap=True)
        if not plan.patches:
            self.out.print("Nothing to fix: no finding has an automatic fix.\n")
            return
        for patch in plan.patches:
            self._diff(patch.diff())
        if plan.dry_run:
            self.out.print("Dry run: nothing was written.\n")

    def confirm(self, plan: FixPlan) -> bool:
        answer = self.ask(f"Apply {fixes_to_files(plan.patches)}?")
        if answer is None:
            self.out.print(
                "Not written: no terminal to confirm on. Pass --yes to write the changes.\n"
            )
        elif not answer:
            self.out.print("Nothing was written.\n")
        return bool(answer)

    def written(self, outcome: FixOutcome) -> None:
        for exc in outcome.not_written:
            self.out.print(
                f"Not written: {escape(exc.message)} {escape(exc.hint or '')}", soft_wrap=True
            )
        if outcome.written:
            self.out.print(f"Applied {fixes_to_files(outcome.written)}.\n")

    def _diff(self, diff: str) -> None:
        for line in diff.splitlines():
            style = "bold" if line.startswith(("---", "+++")) else ""
            style = style or {"+": "green", "-": "red", "@": "cyan"}.get(line[:1], "")
            self.out.print(Text(line, style=style), soft_wrap=True)
        self.out.print()


def fixes_to_files(patches: Sequence[FilePatch]) -> str:
    """``6 fixes to 1 file (4 lines added, 7 removed)``: the findings fixed, and the lines as the
    diff counts them (imports added or dropped with the fixes), so the two never seem to clash."""
    fixes = sum(len(p.fixed) for p in patches)
    counts = [p.changed_lines for p in patches]  # each a diff: counted once
    added, removed = sum(a for a, _ in counts), sum(r for _, r in counts)
    fixed = f"{fixes} fix{'' if fixes == 1 else 'es'} to {plural(len(patches), 'file')}"
    return f"{fixed} ({plural(added, 'line')} added, {removed} removed)"
