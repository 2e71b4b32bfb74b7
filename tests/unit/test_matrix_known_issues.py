"""Known issues and instance facts of the shipped matrix: each says where it comes from.

Sources: the torch-neuronx v2.34.0 GitHub release ("Public issues on cross-device copies, SDPA
dropout gradients, and cache reuse are fixed"; torch-neuronx 2.13.3.1 and 2.14.3.1), and for the
EFA counts Neuron's collectives page (trn2: "16 Trainium2 chips, each connected to a 200Gbps
EFA"), its Trn1 multi-node guide (8 EFA devices) and EC2 instance data (trn1n: 16); EC2's data
has no trn2u.48xlarge entry (reference torchneuron.md §12a).
"""

from __future__ import annotations

import dataclasses

import pytest
from packaging.version import Version

from neuron_env.matrix import load_matrix
from neuron_env.matrix.model import INSTANCE_FACTS, InstanceType
from neuron_env.schema import toml_key

MATRIX = load_matrix()
FIXES = "https://github.com/aws-neuron/torch-neuronx/releases/tag/v2.34.0"
NOT_FACTS = {"family", "confirmed", "note", "sources", "cites", "unconfirmed"}


@pytest.mark.parametrize("version", ["2.33.0", "2.33.1"])
def test_2_33_releases_carry_the_three_bugs_2_34_0_fixes(version: str) -> None:
    release = MATRIX.get(version)
    issues = {issue.id: issue for issue in release.known_issues}
    assert set(issues) == {"cross-device-copies", "sdpa-dropout-gradients", "compile-cache-reuse"}
    fixer = MATRIX.get("2.34.0")
    for issue in issues.values():
        assert issue.package == "torch-neuronx"
        assert issue.fixed_in == Version("2.34.0")
        assert [release.sources[s] for s in issue.sources] == [FIXES]
        # every family the release ships is affected, and fixed by what 2.34.0 pairs
        assert set(issue.affects) == {p.torch_neuronx for p in release.pairings}
        assert set(issue.fixed_by) == {p.torch_neuronx for p in fixer.pairings}
        assert issue.fix_for(Version("2.13.3.0.2187")) == Version("2.13.3.1")
        assert issue.fix_for(Version("2.14.3.0.2187")) == Version("2.14.3.1")
        assert issue.affected(Version("2.14.3.0.2187"))
        assert not issue.affected(Version("2.14.3.1.3021"))


def test_the_release_that_fixes_them_records_none_against_its_own_builds() -> None:
    assert MATRIX.get("2.34.0").known_issues == ()


def test_every_instance_type_field_is_walked() -> None:
    """A new field of InstanceType is either a fact that needs a source or bookkeeping."""
    keys = {toml_key(f) for f in dataclasses.fields(InstanceType)}
    assert keys - NOT_FACTS == set(INSTANCE_FACTS)


@pytest.mark.parametrize("version", [str(r.version) for r in MATRIX.releases])
def test_every_instance_fact_is_sourced_or_marked_unconfirmed(version: str) -> None:
    release = MATRIX.get(version)
    for name, itype in release.instance_types.items():
        for key in INSTANCE_FACTS:
            cited = itype.cites.get(key, ())
            assert cited or key in itype.unconfirmed, f"{version} {name} {key}: unsourced"
            assert all(source in release.sources for source in cited), (name, key)
        assert itype.unsourced() == []


@pytest.mark.parametrize("version", [str(r.version) for r in MATRIX.releases])
def test_trn2u_cites_no_data_set_that_lacks_it(version: str) -> None:
    trn2u = MATRIX.get(version).instance_types["trn2u.48xlarge"]
    assert trn2u.max_efa == 16 and trn2u.is_confirmed("max-efa")
    cited = {s for sources in trn2u.cites.values() for s in sources} | set(trn2u.sources)
    assert "ec2-instance-types" not in cited
    assert {"network-cards", "enis-per-card", "usage-classes"} <= set(trn2u.unconfirmed)


@pytest.mark.parametrize("version", [str(r.version) for r in MATRIX.releases])
def test_trn1_sizes_are_instance_types_with_their_efa_counts(version: str) -> None:
    release = MATRIX.get(version)
    trn1, trn1n = release.instance_types["trn1.32xlarge"], release.instance_types["trn1n.32xlarge"]
    assert (trn1.family, trn1.max_efa, trn1n.family, trn1n.max_efa) == ("trn1", 8, "trn1n", 16)
    assert trn1.is_confirmed("max-efa") and trn1n.is_confirmed("max-efa")
    assert not release.families["trn1"].native and not release.families["trn1n"].native
