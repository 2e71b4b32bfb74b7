"""What to change, from what an evaluation measured (pure: no I/O, no decisions about status)."""

from __future__ import annotations

from neuron_env.evaluate.models import Evaluation, StageResult

BUCKETING = (
    "Pad inputs to a few fixed sizes (bucketing: round the batch and sequence length up to, say, "
    "a multiple of 64 or a power of two, and mask the padding) so that a handful of compiled "
    "graphs serve every input."
)


def advise(evaluation: Evaluation, dynamic_shapes: str | None = None) -> tuple[str, ...]:
    """Advice lines; ``dynamic_shapes`` is the support matrix's text for the limitation."""
    lines = list(evaluation.model.warnings) if evaluation.model is not None else []
    compiled = evaluation.stage("compile")
    if compiled is not None:
        lines += _compile_advice(compiled)
    lines += _shape_advice(evaluation, dynamic_shapes)
    if evaluation.fallback_ops:
        lines.append(
            f"{', '.join(evaluation.fallback_ops)} ran on the CPU instead of the device (each call "
            "copies its inputs to the host and the result back). Look for a supported "
            "replacement in the TorchNeuron operator list, or pass --allow-fallback to accept it."
        )
    return tuple(lines)


def _compile_advice(stage: StageResult) -> list[str]:
    lines = []
    breaks = sum(b.count for b in stage.graph_breaks)
    if breaks:
        lines.append(
            f"torch.compile split the model at {breaks} graph break(s) (first: "
            f"{stage.graph_breaks[0].reason}); each part compiles on its own and Python runs "
            "between them. Remove the break, or compile with fullgraph=True to make breaks errors."
        )
    if stage.failed_ops:
        ops = ", ".join(f.op for f in stage.failed_ops)
        lines.append(
            f"The compiler rejects {ops}: keep it out of the compiled region "
            "(torch.compiler.disable on the code that calls it) or replace it; eager mode runs it."
        )
    elif stage.error is not None and stage.graphs:
        lines.append("No single op of the rejected graph fails alone: the combination does.")
    if not stage.isolation_complete:
        lines.append("Not every op of the rejected graph was tried alone in time: raise --timeout.")
    return lines


def _shape_advice(evaluation: Evaluation, dynamic_shapes: str | None) -> list[str]:
    shapes = evaluation.shapes
    if evaluation.recompiles == 0:
        return []
    firsts = [s.first_call_s for s in shapes if s.graphs and s.first_call_s is not None]
    cost = f"; their first calls took {sum(firsts):.3g} s in all" if firsts else ""
    line = (
        f"{evaluation.recompiles + 1} of {len(shapes)} input shapes compiled a graph of their own "
        f"(torch.compile(dynamic=False) compiles again for every new shape{cost}). " + BUCKETING
    )
    if dynamic_shapes:
        line += f" Support matrix: {dynamic_shapes}"
    return [line]
