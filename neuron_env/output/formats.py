"""Each result type's output formats, as enums: what ``--format`` (or ``--json``) may name.

Standard library only, so that a command's options can be declared without loading a renderer.
What each format *does* lives in the result type's :class:`~neuron_env.output.emit.Output`, next
to its renderers; a test renders every result type in every format its enum declares.
"""

from __future__ import annotations

import enum


class OutputFormat(str, enum.Enum):
    """The base of every formats enum (its values are what the command line takes)."""

    def __str__(self) -> str:
        return str(self.value)

    @classmethod
    def json_is_envelope(cls) -> bool:
        """Whether ``json`` is neuron-env's envelope (else another tool's input: a failure then
        prints no envelope into it)."""
        return True


class DocumentFormat(OutputFormat):
    """A document of neuron-env's own that has a readable form and the JSON envelope."""

    text = "text"
    json = "json"


class JsonOnly(OutputFormat):
    """A document that is JSON alone: the facts snapshot, an IAM policy."""

    json = "json"


class FactsFormat(OutputFormat):
    """The facts snapshot (JSON, what doctor reads back) or a Markdown bug report."""

    json = "json"
    text = "text"


class TextOnly(OutputFormat):
    """A report that is text alone: a Packer recipe written to a directory."""

    text = "text"


class ReportFormat(OutputFormat):
    """doctor, preflight and fleet reports."""

    text = "text"
    json = "json"
    junit = "junit"
    github = "github"


class SuiteFormat(OutputFormat):
    """smoke and selftest results."""

    text = "text"
    json = "json"
    junit = "junit"


class EvaluationFormat(OutputFormat):
    """evaluate's report."""

    text = "text"
    json = "json"
    html = "html"


class ScanFormat(OutputFormat):
    """scan's findings (SARIF is the code-scanning tools' own format)."""

    text = "text"
    json = "json"
    sarif = "sarif"


class LaunchTemplateFormat(OutputFormat):
    """A launch template, in the format of the tool that takes it."""

    @classmethod
    def json_is_envelope(cls) -> bool:
        return False  # json is EC2's LaunchTemplateData

    json = "json"
    cloudformation = "cloudformation"
    terraform = "terraform"
    user_data = "user-data"


class CollectivesFormat(OutputFormat):
    """collectives' sweep: nccl-tests' table, the JSON envelope, JUnit for CI, an HTML page."""

    text = "text"
    json = "json"
    junit = "junit"
    html = "html"


class FleetFormat(OutputFormat):
    """The fleet report: doctor's report formats, and an HTML page of hosts by failing check."""

    text = "text"
    json = "json"
    junit = "junit"
    github = "github"
    html = "html"
