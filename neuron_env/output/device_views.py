"""Views the device commands share (``smoke``, ``selftest``, ``evaluate``): status marks, the
device header block, a worker run's last line and its problem as the envelope's ``errors``."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from neuron_env.output.emit import Error
from neuron_env.worker.results import DeviceInfo, Problem

STATUS_STYLE = {
    "pass": ("✓ pass", "green"),
    "fail": ("✗ fail", "red bold"),
    "fallback": ("✗ CPU fallback", "red"),
    "unsupported": ("~ by design", "cyan"),
    "skipped": ("- skipped", "dim"),
    "error": ("✗ error", "red bold"),
    "timeout": ("✗ timeout", "red bold"),
}


def status_text(status: str) -> Text:
    label, style = STATUS_STYLE.get(status, (status, ""))
    return Text(label, style=style)


def key_value_grid() -> Table:
    """Two columns, bold keys: the header block of a device report."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    return grid


def device_rows(grid: Table, info: DeviceInfo) -> None:
    """The device found and the versions it was measured with."""
    found = Text(f"{info.device}: available, {info.count} device(s)")
    if info.name:
        found.append(f" ({info.name})")
    if info.accelerator is not None:
        found.append(f"; torch.accelerator: {info.accelerator} ({info.accelerator_count})")
    grid.add_row("Device", found)
    versions = f"torch {info.torch}, torch-neuronx {info.torch_neuronx or 'not installed'}, "
    grid.add_row("Environment", Text(versions + f"Python {info.python}"))


def print_outcome(out: Console, problem: Problem | None, *, ok: bool, summary: str) -> None:
    """A worker run's last line: what stopped it (and the hint), else ✓/✗ and its summary."""
    if problem is not None:
        out.print(Text(f"✗ {problem.message}", style="red bold"))
        if problem.hint:  # wrapped between words, never inside a quoted command: it is pasted
            from neuron_env.wording import wrap_words

            for line in wrap_words(problem.hint, out.width):
                out.print(Text(line), soft_wrap=True)
        return
    style = "green bold" if ok else "red bold"
    out.print(Text(("✓ " if ok else "✗ ") + summary, style=style))


def problem_errors(problem: Problem | None) -> list[Error]:
    """A worker's problem as the envelope's ``errors``."""
    return [] if problem is None else [(problem.message, problem.hint or None)]
