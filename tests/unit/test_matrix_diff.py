"""``matrix diff``: what changed between two releases, as facts a person can act on."""

from __future__ import annotations

import dataclasses

from neuron_env.matrix import diff_releases, load_matrix

MATRIX = load_matrix()


def changes(old: str, new: str, prose: bool = False) -> dict[str, tuple[str | None, str | None]]:
    diff = diff_releases(MATRIX.get(old), MATRIX.get(new), prose=prose)
    return {c.key: (c.before, c.after) for c in diff}


def test_patch_release_shows_the_new_driver_and_runtime_and_nothing_about_torch() -> None:
    diff = changes("2.33.0", "2.33.1")
    assert diff["system-packages.aws-neuronx-dkms.version"] == ("2.31.7.0", "2.31.8.0")
    assert diff["system-packages.aws-neuronx-runtime-lib.version"] == ("2.35.30.0", "2.35.33.0")
    assert not [key for key in diff if key.startswith("pairings")]


def test_a_removed_pairing_is_one_change_not_one_per_field() -> None:
    newest = MATRIX.get("2.34.0")  # it pairs 2.13 and 2.14; a copy without 2.13 removes one
    only_2_14 = tuple(p for p in newest.pairings if not str(p.torch).startswith("2.13"))
    removed = dataclasses.replace(newest, pairings=only_2_14)
    diff = {c.key: (c.before, c.after) for c in diff_releases(MATRIX.get("2.33.1"), removed)}
    assert diff['pairings."torch-2.13"'][1] is None
    assert not [key for key in diff if key.startswith('pairings."torch-2.13".')]
    assert diff['pairings."torch-2.14".torch-neuronx'] == ("2.14.3.0", "2.14.3.1")


def test_notes_are_compared_only_on_request() -> None:
    assert "release.summary" not in changes("2.33.0", "2.33.1")
    assert "release.summary" in changes("2.33.0", "2.33.1", prose=True)


def test_a_release_has_no_changes_against_itself() -> None:
    assert changes("2.34.0", "2.34.0", prose=True) == {}
