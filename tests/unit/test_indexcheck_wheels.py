"""What matrix verify reads from a wheel's file name: version, CPython versions, glibc floor."""

from __future__ import annotations

import json

from packaging.version import Version

from neuron_env.matrix.commands.indexcheck.simple import IndexFile, ProjectPage, parse_page, redact
from neuron_env.matrix.commands.indexcheck.wheels import listed_versions, wheels_for


def page(*names: str, project: str = "torch-neuronx") -> ProjectPage:
    return ProjectPage(
        project, "https://index.example/simple/x/", "html", tuple(map(IndexFile, names))
    )


def test_cpython_tags_and_the_manylinux_glibc_floor_are_read_per_wheel() -> None:
    (wheel,) = wheels_for(
        page("torch_neuronx-2.14.3.1.2041-cp312-cp312-manylinux_2_35_x86_64.whl"), "x86_64"
    )
    assert wheel.version == Version("2.14.3.1.2041")
    assert wheel.pythons == frozenset({"3.12"}) and wheel.glibc == (2, 35)


def test_legacy_manylinux_names_abi3_and_pure_wheels() -> None:
    old, abi3, pure = wheels_for(
        page(
            "torch_neuronx-2.9.0-cp310-cp310-manylinux2014_x86_64.whl",
            "torch_neuronx-2.9.1-cp312-abi3-manylinux_2_28_x86_64.whl",
            "torch_neuronx-1.0-py3-none-any.whl",
        ),
        "x86_64",
    )
    assert old.glibc == (2, 17)
    assert (
        abi3.pythons is not None and {"3.12", "3.14"} <= abi3.pythons and "3.11" not in abi3.pythons
    )
    assert pure.pythons is None and pure.glibc is None


def test_other_architectures_free_threaded_builds_sdists_and_other_projects_are_left_out() -> None:
    found = wheels_for(
        page(
            "torch_neuronx-2.14.3.1-cp312-cp312-manylinux_2_35_aarch64.whl",
            "torch_neuronx-2.14.3.1-cp313-cp313t-manylinux_2_35_x86_64.whl",
            "torch_neuronx-2.14.3.1.tar.gz",
            "torch-2.14.0-cp312-cp312-manylinux_2_35_x86_64.whl",
        ),
        "x86_64",
    )
    assert [w.pythons for w in found] == [frozenset()]  # only the free-threaded one, with no Python
    assert listed_versions(
        page("nki-0.0.1-py3-none-any.whl", "nki-99.0.tar.gz", project="nki")
    ) == [
        Version("99.0"),
        Version("0.0.1"),
    ]


def test_both_page_formats_give_the_same_files() -> None:
    html = b'<a href="../../f/nki-0.8.0-py3-none-any.whl#sha256=ab12" data-yanked="">x</a>'
    entry = {"filename": "nki-0.8.0-py3-none-any.whl", "hashes": {"sha256": "ab12"}, "yanked": True}
    json_page = json.dumps({"files": [entry]}).encode()
    from_html = parse_page("nki", "u", html, "text/html")
    from_json = parse_page("nki", "u", json_page, "application/vnd.pypi.simple.v1+json")
    assert (
        from_html.files
        == from_json.files
        == (IndexFile("nki-0.8.0-py3-none-any.whl", "ab12", True),)
    )


def test_credentials_never_show_in_a_url() -> None:
    assert (
        redact("https://alice:t0k3n@mirror.example/simple")
        == "https://alice:****@mirror.example/simple"
    )
    assert redact("https://t0k3n@mirror.example/simple") == "https://****@mirror.example/simple"
    assert redact("https://mirror.example/simple") == "https://mirror.example/simple"
