"""matrix verify on companions: the index confirms or contradicts each companion's pin."""

from __future__ import annotations

from neuron_env.matrix import load_matrix
from neuron_env.matrix.commands.indexcheck.compare import verify_release
from neuron_env.matrix.commands.indexcheck.simple import IndexFile, IndexReadout, ProjectPage

MATRIX = load_matrix()
RELEASE = MATRIX.get("2.34.0")


def neuron_index(**projects: tuple[str, ...]) -> dict[str, IndexReadout]:
    pages = {
        name: ProjectPage(name, f"https://index.example/simple/{name}/", "html",
                          tuple(IndexFile(f) for f in files))
        for name, files in projects.items()
    }  # fmt: skip
    return {"neuron": IndexReadout("neuron", "https://index.example/simple", pages)}


def companions(readouts: dict[str, IndexReadout]) -> dict[str, tuple[str, str]]:
    facts = verify_release(RELEASE, MATRIX, readouts)
    return {f.key: (f.status, f.index_shows) for f in facts if f.id.startswith("companion.")}


def test_a_companion_version_on_its_index_is_confirmed_and_a_missing_one_contradicted() -> None:
    found = companions(
        neuron_index(
            **{
                "torchao-neuron": ("torchao_neuron-0.18.0+neuron.1-py3-none-any.whl",),
                "torchtitan-neuron": ("torchtitan_neuron-0.2.2+neuron.1-py3-none-any.whl",),
            }
        )
    )
    assert found["companions.torchao-neuron"] == ("confirmed", "0.18.0+neuron.1")
    status, shows = found["companions.torchtitan-neuron"]
    assert status == "contradicted" and "0.2.2+neuron.1" in shows  # the file pins +neuron.2


def test_an_unread_index_leaves_companions_unknown() -> None:
    down = {"neuron": IndexReadout("neuron", "https://index.example", {}, reason="refused")}
    assert {status for status, _ in companions(down).values()} == {"unknown"}


def test_an_overlay_confirms_a_companion_and_takes_in_what_the_index_shows() -> None:
    import datetime

    from neuron_env.matrix.commands.indexcheck.overlay import corrected_release
    from neuron_env.matrix.commands.indexcheck.verify import IndexResult, Verification

    readouts = neuron_index(
        **{
            "torchao-neuron": ("torchao_neuron-0.18.0+neuron.2-py3-none-any.whl",),
            "torchtitan-neuron": ("torchtitan_neuron-0.2.2+neuron.2-py3-none-any.whl",),
        }
    )
    facts = tuple(f for f in verify_release(RELEASE, MATRIX, readouts) if f.key.startswith("comp"))
    index = IndexResult("neuron", "https://index.example/simple", "matrix", True, (), ("html",),
                        None, None, 0.1)  # fmt: skip
    result = Verification("2.34.0", datetime.date(2026, 12, 3), (index,), facts)
    corrected = corrected_release(RELEASE, result).companions
    assert corrected["torchtitan-neuron"].confirmed  # the unconfirmed pin is on the index
    assert "index-neuron" in corrected["torchtitan-neuron"].sources
    torchao = corrected["torchao-neuron"]
    assert (str(torchao.version), torchao.confirmed) == ("0.18.0+neuron.2", False)
    assert "index check 2026-12-03" in torchao.note
