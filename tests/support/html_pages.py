"""Reading neuron-env's HTML pages as a browser would: their structure (``html.parser``), every
reference that would make a request, and the page as Debian's headless Chromium renders it.

Chromium is installed by the test command (``scripts/test.sh``), like shellcheck. Each rendered
page leaves a screenshot under ``$NEURON_ENV_TEST_ARTIFACTS/html`` (default
``test-artifacts/html`` in the checkout), so a CI run keeps what the pages looked like.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from tests.support.cli import REPO

ARTIFACTS = Path(os.environ.get("NEURON_ENV_TEST_ARTIFACTS", REPO / "test-artifacts")) / "html"
# Anything that makes a browser fetch: a scheme, or a protocol-relative //host.
_EXTERNAL = re.compile(r"^\s*(?:[a-z][a-z0-9+.-]*:|//)", re.IGNORECASE)
_CSS_URL = re.compile(r"url\(|@import", re.IGNORECASE)
_REFERENCES = {"src", "href", "xlink:href", "action", "srcset", "poster", "data", "formaction"}
_FETCHING_TAGS = {"script", "link", "iframe", "img", "object", "embed", "base", "video", "audio"}


@dataclass
class Section:
    """A ``<section>``: its class, its heading and the items of its lists."""

    css: str
    heading: str = ""
    items: list[str] = field(default_factory=list)


@dataclass
class Page(HTMLParser):
    """The parsed page: tag counts, each element's attributes by tag, text, sections, and every
    reference that would load something."""

    tags: Counter[str] = field(default_factory=Counter)
    attrs: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    text: list[str] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    headings: list[str] = field(default_factory=list)  # the text of each <h1>
    external: list[str] = field(default_factory=list)
    _open: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__(convert_charrefs=True)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        self.tags[tag] += 1
        self.attrs.setdefault(tag, []).append(values)
        self._open.append(tag)
        if tag == "section":
            self.sections.append(Section(values.get("class", "")))
        self._references(tag, values)

    def _references(self, tag: str, values: dict[str, str]) -> None:
        if tag in _FETCHING_TAGS:
            self.external.append(f"<{tag}>")
        self.external += [f"{k}={v}" for k, v in values.items() if _loads(k, v)]

    def handle_endtag(self, tag: str) -> None:
        if tag in self._open:
            del self._open[len(self._open) - 1 - self._open[::-1].index(tag) :]

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._open and self._open[-1] == "h1":
            self.headings.append(data)
        if self._open and self._open[-1] == "style" and _CSS_URL.search(data):
            self.external.append("url() in <style>")
        if self.sections and "section" in self._open:
            if self._open[-1] == "h2":
                self.sections[-1].heading += data
            elif self._open[-1] == "li":
                self.sections[-1].items.append(data)

    def shown(self) -> str:
        return " ".join(" ".join(self.text).split())

    def section(self, heading: str) -> Section:
        return next(s for s in self.sections if s.heading == heading)


def _loads(key: str, value: str) -> bool:
    """Whether an attribute would load or run something: an event handler (a script), a
    reference attribute, a URL with a scheme, or CSS that fetches."""
    if key.startswith("on") or key in _REFERENCES:
        return True
    if key == "style":
        return bool(_CSS_URL.search(value))
    return bool(_EXTERNAL.match(value)) and key not in ("class", "aria-label", "data-series")


def parse(markup: str) -> Page:
    page = Page()
    page.feed(markup)
    page.close()
    return page


def assert_self_contained(markup: str) -> Page:
    """The page loads nothing: no script at all, no reference to another resource."""
    page = parse(markup)
    assert page.external == [], page.external
    assert "script" not in page.tags
    return page


def render_in_chromium(page: Path, tmp_path: Path) -> Page:
    """``page`` as headless Chromium builds it (``--dump-dom``), with no console message, and its
    screenshot kept among the test artifacts."""
    chromium = shutil.which("chromium")
    assert chromium, "the HTML tests need Chromium: apt-get install chromium (scripts/test.sh does)"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    profile = tmp_path / "chromium-profile"
    argv = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
            "--window-size=1200,1600", f"--screenshot={ARTIFACTS / (page.stem + '.png')}",
            "--dump-dom", page.resolve().as_uri()]  # fmt: skip
    env = {**os.environ, "HOME": str(tmp_path)}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    assert console == [], console  # a script error or a blocked load would be said here
    assert (ARTIFACTS / (page.stem + ".png")).stat().st_size > 0
    return parse(done.stdout)
