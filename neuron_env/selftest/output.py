"""``smoke`` and ``selftest``: progress, the text views, and their formats (layout only).

:data:`FORMATS` is a suite result's (and a smoke result's) output formats for
:func:`neuron_env.output.emit.emit`: text, JSON (the versioned envelope) and JUnit XML;
:data:`LIST_FORMATS` those of ``selftest --list``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from neuron_env.errors import EXIT_FAILED
from neuron_env.output.console import new_console, plain_text
from neuron_env.output.device_views import (
    device_rows,
    key_value_grid,
    print_outcome,
    problem_errors,
    status_text,
)
from neuron_env.output.emit import (
    DONE,
    STATUS_ERROR,
    Format,
    Outcome,
    Output,
    document,
    dumps,
    passed,
)
from neuron_env.output.formats import SuiteFormat
from neuron_env.selftest import (
    CaseListing,
    CaseResult,
    Comparison,
    DeviceInfo,
    Progress,
    ProgressCallback,
    SmokeResult,
    SuiteResult,
)
from neuron_env.selftest.report import command_name, junit, payload
from neuron_env.wording import seconds as seconds

# --- progress -----------------------------------------------------------------------------------


@contextmanager
def progress() -> Iterator[ProgressCallback]:
    """Progress on stderr: a live bar on a terminal, one line per case otherwise (CI logs)."""
    err = new_console(stderr=True)
    if err.is_terminal:
        with _live_bar(err) as callback:
            yield callback
    else:
        yield lambda event: _print_line(err, event)


@contextmanager
def _live_bar(err: Console) -> Iterator[ProgressCallback]:
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as Bar

    bar = Bar(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    )
    task = bar.add_task("starting the worker", total=None)

    def update(event: Progress) -> None:
        if event.kind == "case" and event.result is not None:
            bar.update(
                task,
                completed=event.index,
                total=event.total,
                description=Text(event.result.name).markup,
            )
            if event.result.status not in ("pass", "unsupported", "skipped"):
                bar.console.print(_line(event))
        elif event.kind == "restart":
            bar.console.print(
                Text(f"  restarting the worker after a failed case; next {event.name}")
            )
        elif event.kind == "started":
            bar.update(task, total=event.total, description="running")

    with bar:
        yield update


def _print_line(err: Console, event: Progress) -> None:
    if event.kind == "case":
        err.print(_line(event))
    elif event.kind == "restart":
        err.print(Text(f"  restarting the worker; next: {event.name}"))
    elif event.kind == "started" and event.info is not None:
        err.print(Text(f"  worker started: torch {event.info.torch} on {event.info.device}"))


def _line(event: Progress) -> Text:
    result = event.result
    assert result is not None
    width = len(str(event.total))
    line = Text(f"  [{event.index:>{width}}/{event.total}] {result.name}  ")
    line.append_text(status_text(result.status))
    line.append(
        f"  {result.message}" if result.status != "pass" else f"  {seconds(result.steady_s)}"
    )
    return line


# --- reports ------------------------------------------------------------------------------------


def print_suite(out: Console, result: SuiteResult, verbose: bool = False) -> None:
    out.print(
        Text(f"Self-test · level {result.level} · {result.device} · {result.python}", style="bold")
    )
    if result.info is not None:  # else nothing ran, and the problem in the footer says why
        out.print(_header_grid(result, result.info))
        if result.cases:
            out.print(_case_table(result, verbose))
        _print_fallback(out, result)
    _print_footer(out, result)


def print_smoke(out: Console, result: SmokeResult) -> None:
    out.print(Text(f"Smoke test · {result.device} · {result.python}", style="bold"))
    if result.info is not None:
        grid = key_value_grid()
        device_rows(grid, result.info)
        for case in result.cases:
            grid.add_row(f"matmul {case.dtype}", _smoke_case(case))
        grid.add_row("CPU fallback", _fallback_text(result))
        out.print(grid)
    _print_footer(out, result)


def _smoke_case(case: CaseResult) -> Text:
    line = status_text(case.status)
    line.append(f"  {case.message}")
    if case.first_call_s is None and case.steady_s is None:  # it never ran to a timing
        return line
    line.append(
        f"\nfirst call {seconds(case.first_call_s)} (includes any compilation) · "
        f"steady {seconds(case.steady_s)} (median of {case.repeats or 0}, synchronised)",
        style="dim",
    )
    return line


def _header_grid(result: SuiteResult, info: DeviceInfo) -> Table:
    grid = key_value_grid()
    device_rows(grid, info)
    grid.add_row("Compile", Text(f"torch.compile(backend={info.compile_backend!r}, dynamic=False)"))
    if result.peak is not None:
        p = result.peak
        peaks = ", ".join(f"{v:g} {k}" for k, v in p.tflops.items())
        grid.add_row(
            "Peak",
            Text(
                f"{p.chip}: {peaks} TFLOP/s per chip, {p.logical_cores} "
                f"logical cores at LNC={p.lnc} ({p.source})"
            ),
        )
    return grid


def _case_table(result: SuiteResult, verbose: bool) -> Table:
    table = Table(show_edge=False, pad_edge=False, header_style="bold")
    for column in ("Variant", "Result", "Measured", "First call", "Steady"):
        table.add_column(column, overflow="fold")
    for case in result.cases:
        measured = Text(case.message)
        if verbose:
            for c in case.comparisons:
                measured.append(f"\n{_comparison_detail(c)}", style="dim")
        table.add_row(
            case.name,
            status_text(case.status),
            measured,
            seconds(case.first_call_s),
            seconds(case.steady_s),
        )
    return table


def _comparison_detail(c: Comparison) -> str:
    if c.problem:
        return f"  {c.tensor}: {c.problem}"
    share = "" if c.used is None else "<1%" if c.used < 0.01 else f"{c.used:.0%}"
    used = f", {share} of the bound" if share else ""
    return (
        f"  {c.tensor}: {c.mismatched}/{c.total} off, max rel {c.max_rel or 0:.1e}, "
        f"max abs {c.max_abs or 0:.1e}{used}"
    )


def _fallback_text(result: SuiteResult) -> Text:
    if not result.cases:
        return Text("—")
    if all(c.fallback_ops is None for c in result.cases):
        return Text(
            f"not tracked on {result.device} (only torch_neuronx reports CPU fallback)", style="dim"
        )
    ops = sorted({op for c in result.cases for op in (c.fallback_ops or ())})
    if not ops:
        return Text("none (torch_neuronx.get_fallback_ops())", style="green")
    return Text(", ".join(ops), style="red")


def _print_fallback(out: Console, result: SuiteResult) -> None:
    line = Text("CPU fallback: ", style="bold")
    line.append_text(_fallback_text(result))
    out.print(line)
    if any(c.status == "unsupported" for c in result.cases):
        out.print(
            Text(
                "~ by design: a documented limitation of the TorchNeuron beta, behaving as "
                "documented; it does not fail the run.",
                style="dim",
            )
        )


def _print_footer(out: Console, result: SuiteResult) -> None:
    print_outcome(out, result.problem, ok=result.ok, summary=result.summary)


def print_case_list(out: Console, listing: CaseListing) -> None:
    table = Table(show_edge=False, pad_edge=False, header_style="bold")
    for column in ("Case", "Level", "Kind", "dtypes", "Modes", "What it checks"):
        table.add_column(column, overflow="fold")
    for case in listing.cases:
        modes = ", ".join(case.modes)
        table.add_row(case.id, case.level, case.kind, ", ".join(case.dtypes), modes, case.summary)
    out.print(table)
    for higher, ids in listing.added:
        out.print(Text(f"--level {higher} adds: {', '.join(ids)}", style="dim"))


def case_list(listing: CaseListing) -> list[dict[str, object]]:
    return [
        {
            "case": c.id,
            "level": c.level,
            "kind": c.kind,
            "summary": c.summary,
            "dtypes": list(c.dtypes),
            "modes": list(c.modes),
            "backward": c.backward,
            "variants": c.variants(),
            "tolerances": {k: {"rtol": t.rtol, "atol": t.atol} for k, t in c.tolerances.items()},
        }
        for c in listing.cases
    ]


# --- formats (emit) -----------------------------------------------------------------------------


def _print_result(out: Console, result: SuiteResult, *, verbose: bool = False) -> None:
    if isinstance(result, SmokeResult):
        print_smoke(out, result)
    else:
        print_suite(out, result, verbose)


def _text(result: SuiteResult, *, verbose: bool = False) -> str:
    return plain_text(_print_result, result, verbose=verbose)


def outcome(result: SuiteResult) -> Outcome:
    """ok, fail (a case failed) or error (the suite could not run); exit 1 unless ok."""
    if result.problem is not None:
        return Outcome(STATUS_ERROR, EXIT_FAILED)
    return passed(result.ok)


def _json(result: SuiteResult, **_: Any) -> str:
    doc = document(
        command_name(result), payload(result), outcome(result),
        errors=problem_errors(result.problem),
    )  # fmt: skip
    return dumps(doc)


def _junit(result: SuiteResult, **_: Any) -> str:
    return junit(result)


SUITE: Output[SuiteResult, SuiteFormat] = Output(
    SuiteResult,
    SuiteFormat,
    {
        SuiteFormat.text: Format(_text, terminal=_print_result),
        SuiteFormat.json: Format(_json),
        SuiteFormat.junit: Format(_junit),
    },
    outcome,
)


def _list_json(listing: CaseListing) -> str:
    data = {"level": listing.level, "cases": case_list(listing)}
    return dumps(document("selftest-list", data, DONE))


_LIST_TEXT: Format[CaseListing] = Format(
    lambda listing: plain_text(print_case_list, listing), terminal=print_case_list
)
# --list takes selftest's --format; a listing has no JUnit form, so it lists as text then.
CASE_LIST: Output[CaseListing, SuiteFormat] = Output(
    CaseListing,
    SuiteFormat,
    {
        SuiteFormat.text: _LIST_TEXT,
        SuiteFormat.json: Format(_list_json),
        SuiteFormat.junit: _LIST_TEXT,
    },
)
