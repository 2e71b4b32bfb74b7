"""``matrix verify --write`` never pins a "WRONG PACKAGE" placeholder version.

A Neuron index (real HTTP on 127.0.0.1) that shows only a placeholder version of a pinned package
or a companion contradicts the pin, and the overlay keeps the pin with a note saying so: it never
takes the placeholder in its place, even from a release file that lacks the placeholder row
another release has, and it never ends in a traceback.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import tomllib

from neuron_env.matrix import load_release_file
from tests.support.cli import DATA, CliRunner, Result, cli_runner
from tests.support.page_indexes import Server, serve, write_tree

pytestmark = pytest.mark.integration

SHIPPED = Path(__file__).resolve().parents[2] / "matrices" / "2.34.0.toml"
PLACEHOLDER_ONLY = {
    "torchtitan-neuron": "torchtitan_neuron-0.0.1-py3-none-any.whl",
    "nki": "nki-0.0.1-py3-none-any.whl",
}


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The indexes that agree with 2.34.0, but for nki and torchtitan-neuron: placeholders only."""
    root = tmp_path_factory.mktemp("names-verify") / "tree"
    doc = tomllib.loads((DATA / "verify" / "agree.toml").read_text())
    neuron = [e for e in doc["neuron"] if e["name"] not in PLACEHOLDER_ONLY]
    neuron += [{"name": name, "files": [file]} for name, file in PLACEHOLDER_ONLY.items()]
    write_tree(root / "neuron", neuron)
    write_tree(root / "pytorch", doc["pytorch"])
    server = serve(root)
    yield server
    server.process.kill()
    server.process.wait()


@pytest.fixture
def cli(tmp_path: Path) -> CliRunner:
    return cli_runner(tmp_path)


def verify_write(cli: CliRunner, index: Server, out: Path, *first: str) -> Result:
    args = ["--neuron-index", f"{index.url}/neuron/simple"]
    args += ["--pytorch-index", f"{index.url}/pytorch/simple", "--write", str(out)]
    quiet = {"PIP_CONFIG_FILE": "/dev/null", "PIP_INDEX_URL": ""}
    result = cli(*first, "matrix", "verify", "--release", "2.34.0", *args, env=quiet)
    assert "Traceback" not in result.stderr
    return result


def test_an_index_with_only_placeholders_leaves_the_pins_as_they_were(
    cli: CliRunner, index: Server, tmp_path: Path
) -> None:
    out = tmp_path / "overlay"
    result = verify_write(cli, index, out)
    assert result.returncode == 1, result.stderr  # contradicted, said, not a crash
    said = " ".join(result.stdout.split())
    assert "lists only 'WRONG PACKAGE' placeholders of torchtitan-neuron" in said
    assert "lists only 'WRONG PACKAGE' placeholders of nki" in said
    written = load_release_file(out / "2.34.0.toml")
    assert str(written.companions["torchtitan-neuron"].version) == "0.2.2+neuron.2"
    assert str(written.packages["nki"].version) == "0.8.0"


def test_a_release_file_without_the_placeholder_row_does_not_pin_the_placeholder(
    cli: CliRunner, index: Server, tmp_path: Path
) -> None:
    mine = tmp_path / "team"
    mine.mkdir()
    text = SHIPPED.read_text()
    start = text.index("[placeholders.torchtitan-neuron]")
    end = text.index("[placeholders.transformers-neuronx]")
    (mine / "2.34.0.toml").write_text(text[:start] + text[end:])
    out = tmp_path / "overlay"
    result = verify_write(cli, index, out, "--matrix-dir", str(mine))
    assert result.returncode == 1, result.stderr
    written = load_release_file(out / "2.34.0.toml")
    assert "torchtitan-neuron" not in written.placeholders
    assert str(written.companions["torchtitan-neuron"].version) == "0.2.2+neuron.2"
