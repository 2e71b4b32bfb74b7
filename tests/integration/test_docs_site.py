"""The documentation site: it builds strictly, its generated output is the tool's own, and every
help link neuron-env prints or writes is one of its pages (its address set once, DOCS_URL)."""

from __future__ import annotations

import html as html_lib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib
import yaml

from neuron_env.resources import DOCS_URL
from tests.support.cli import CliRunner, cli_runner

ROOT = Path(__file__).resolve().parents[2]
GENERATED = ROOT / "docs" / "_generated"
MISSING_REPOSITORY = "github.com/neuron-env/neuron-env"
DOC_PAGES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md"))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built as the test command builds it: ``mkdocs build --strict``."""
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def page_of(site: Path, url: str) -> str:
    """The text of the page a link names; fails when the page or its anchor is missing."""
    assert url.startswith(DOCS_URL), f"{url} is not a page of {DOCS_URL}"
    path, _, anchor = url[len(DOCS_URL) :].partition("#")
    html = site / path / "index.html"
    assert html.is_file(), f"{url}: the site has no page {path or '/'}"
    text = html.read_text(encoding="utf-8")
    assert not anchor or f'id="{anchor}"' in text, f"{url}: no heading #{anchor} on that page"
    return html_lib.unescape(re.sub(r"<[^>]+>", "", text))


def test_the_site_builds_strictly_with_a_page_per_command(site: Path) -> None:
    for command in ("doctor", "preflight", "install", "smoke", "selftest", "evaluate", "scan"):
        assert f"neuron-env {command} --help" in page_of(site, f"{DOCS_URL}commands/{command}/")
    for command in ("collectives", "fleet", "launch-template", "image", "matrix"):
        assert f"neuron-env {command} --help" in page_of(site, f"{DOCS_URL}commands/{command}/")
    for page in ("support-matrix/", "json-output/", "exit-codes/", "guarantees/"):
        page_of(site, DOCS_URL + page)


def test_the_home_page_and_exit_codes_show_the_readmes_own_text(site: Path) -> None:
    home = page_of(site, DOCS_URL)
    assert "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/neuron-env doctor" in home
    assert "Nagios" in page_of(site, f"{DOCS_URL}exit-codes/")
    assert "--8<--" not in home


def test_generated_output_is_what_the_tool_prints_now(tmp_path: Path) -> None:
    fresh = tmp_path / "generated"
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_docs.py"), "--out", str(fresh)],
        check=True,
        timeout=300,
    )
    names = sorted(p.name for p in fresh.iterdir())
    assert names == sorted(p.name for p in GENERATED.iterdir()), "run scripts/gen_docs.py"
    for name in names:
        assert (fresh / name).read_bytes() == (GENERATED / name).read_bytes(), (
            f"docs/_generated/{name} is stale: run python scripts/gen_docs.py and commit it"
        )


def test_every_generated_file_is_shown_on_a_page() -> None:
    pages = "\n".join(p.read_text() for p in (ROOT / "docs").rglob("*.md"))
    readme = (ROOT / "README.md").read_text()
    for generated in GENERATED.iterdir():
        if generated.suffix == ".svg":  # a picture for the README, which cannot include files
            assert f"(docs/_generated/{generated.name})" in readme, f"{generated.name} unshown"
            continue
        assert f'--8<-- "{generated.name}"' in pages, f"{generated.name} is on no page"


def test_nothing_links_to_the_unpublished_documentation_host() -> None:
    """Nothing is served at DOCS_URL yet: the README, the site's configuration and the project's
    metadata name no page there (the README says how to build and serve the site locally)."""
    host = DOCS_URL.split("/")[2]
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "site_url" not in config
    assert not any(host in url for url in project.get("urls", {}).values())
    for name in ("README.md", "CONTRIBUTING.md", "mkdocs.yml", *DOC_PAGES):
        assert host not in (ROOT / name).read_text(), f"{name} links to {host}"


def test_the_docs_requirements_are_an_extra_and_the_readme_says_how_to_serve_the_site() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert any(req.startswith("mkdocs-material") for req in extras["docs"])
    readme = (ROOT / "README.md").read_text()
    assert "pip install '.[docs]'" in readme and "mkdocs serve" in readme


def test_tables_render_without_stray_backslashes(site: Path) -> None:
    """A ``\\|`` in a table's code span shows as a backslash and a pipe in the built page."""
    for page in site.rglob("*.html"):
        cells = re.findall(r"<td>(.*?)</td>", page.read_text(encoding="utf-8"), re.DOTALL)
        stray = [cell for cell in cells if "\\|" in cell]
        assert not stray, f"{page.relative_to(site)}: {stray[0]}"


def test_sarif_and_scan_rule_links_are_pages_of_the_site(site: Path, tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("def f(:\n")
    result = cli_runner(tmp_path)("scan", "broken.py", "--format", "sarif")
    assert result.returncode == 1, result.stderr
    driver = json.loads(result.stdout)["runs"][0]["tool"]["driver"]
    page_of(site, driver["informationUri"])
    rules = {rule["id"]: rule for rule in driver["rules"]}
    assert "scan" in page_of(site, rules["scan-error"]["helpUri"])


def test_the_project_file_hint_names_a_page_of_the_site(site: Path, tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.neuron-env]\nrelaese = "2.34.0"\n')
    run: CliRunner = cli_runner(tmp_path)
    result = run("doctor")
    assert result.returncode == 2
    links = re.findall(r"https://\S+?(?=\)|\s|$)", result.stderr.replace("\n", ""))
    assert links, result.stderr
    assert "Project defaults" in page_of(site, links[0])


def test_readme_links_are_pages_of_the_site(site: Path) -> None:
    """Each README link into docs/ is a file there (read on a forge) and a page of the built
    site, anchor included (read with mkdocs serve)."""
    readme = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\((docs/[^)\s]+\.md(?:#[^)\s]*)?)\)", readme)
    assert len(links) > 12
    for link in links:
        path, _, anchor = link.partition("#")
        assert (ROOT / path).is_file(), f"README links to {path}, which does not exist"
        page = path.removeprefix("docs/").removesuffix(".md").removesuffix("index")
        page_of(site, DOCS_URL + (page + "/" if page else "") + (f"#{anchor}" if anchor else ""))


def test_no_link_names_a_repository_that_does_not_exist() -> None:
    files = [ROOT / "pyproject.toml", ROOT / "README.md", ROOT / "CONTRIBUTING.md"]
    files += [*(ROOT / "neuron_env").rglob("*.py"), *(ROOT / "rules").glob("*.toml")]
    files += [*(ROOT / "docs").rglob("*.md")]
    named = [str(f.relative_to(ROOT)) for f in files if MISSING_REPOSITORY in f.read_text()]
    assert named == []


def test_the_readme_is_a_short_users_page_with_the_two_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) < 200
    assert (
        "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/neuron-env doctor" in readme
    )
    assert "\nbash scripts/test.sh\n" in readme


def test_the_collectives_page_shows_the_captured_runs_chart_and_table(site: Path) -> None:
    page = (site / "commands" / "collectives" / "index.html").read_text(encoding="utf-8")
    captured = json.loads((ROOT / "docs" / "_captured" / "collectives-gloo.json").read_text())
    ops = list(dict.fromkeys(row["op"] for row in captured["rows"]))
    assert re.findall(r'data-series="([a-z_]+)"', page) == ops  # the chart: a line per op
    assert page.count("<polyline") == len(ops)
    shown = html_lib.unescape(re.sub(r"<[^>]+>", "", page))
    for row in captured["rows"]:  # the table: the same run's figures
        assert f"{row['size']:>13} {row['count']:>12}" in shown
        assert f"{row['time_s'] * 1e6:>10.1f} {row['algbw']:>8.2f} {row['busbw']:>8.2f}" in shown


def test_the_readme_shows_the_captured_runs_table_and_chart() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    generated = (GENERATED / "collectives-gloo-table.md").read_text(encoding="utf-8").splitlines()
    start = readme.index("$ neuron-env collectives ")
    shown = readme[start : readme.index("```", start)].splitlines()
    real = [line for line in shown if not line.startswith("# ... ")]
    assert len(real) > 15
    assert all(line in generated for line in real)  # every figure is the captured run's
    rows = [line for line in real if line.strip()[:1].isdigit()]
    assert [generated.index(line) for line in rows] == sorted(generated.index(r) for r in rows)
    chart = re.search(r"!\[[^\]]+\]\((docs/_generated/[^)]+\.svg)\)", readme)
    assert chart is not None
    svg = (ROOT / chart.group(1)).read_text(encoding="utf-8")
    assert svg.startswith('<svg xmlns="http://www.w3.org/2000/svg" ')
    assert svg.count("<polyline") == 5  # a line per op
