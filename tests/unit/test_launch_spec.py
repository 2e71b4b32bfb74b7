"""Deciding a launch template from the matrix: image, environment, capacity rules, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from neuron_env import __version__
from neuron_env.cloud.spec import LaunchRequest, build_launch_spec
from neuron_env.errors import BadInput, UnsupportedCombination
from neuron_env.matrix import Matrix, load_matrix
from tests.support.cli import DATA

CR = "cr-0123456789abcdef0"
WHEEL_URL = "https://example.com/neuron_env-0.1.0-py3-none-any.whl"
SHA256 = "ab" * 32


@pytest.fixture(scope="module")
def matrix() -> Matrix:
    return load_matrix()


def request(**options: object) -> LaunchRequest:
    base: dict[str, object] = {
        "instance_type": "trn2.48xlarge",
        "torch": "2.14",
        "release": "2.33.1",
        "neuron_env_source": WHEEL_URL,
        "neuron_env_sha256": SHA256,
    }
    return LaunchRequest(**{**base, **options})  # type: ignore[arg-type]


def test_torch_2_14_uses_the_torchneuron_dlami_and_its_environment(matrix: Matrix) -> None:
    spec = build_launch_spec(matrix, request())
    assert spec.os == "ubuntu-26.04"
    assert spec.image.image_id == (
        "resolve:ssm:/aws/service/neuron/dlami/torch-neuronx-2.14.0/ubuntu-26.04/latest/image_id"
    )
    assert spec.bootstrap.venv == "/opt/aws_neuronx_venv_torch_neuronx_2_14_0"
    assert spec.bootstrap.argv()[:4] == ["--release", "2.33.1", "--torch", "2.14"]


def test_an_unconfirmed_ssm_parameter_is_a_warning_not_a_fact(matrix: Matrix) -> None:
    notes = {n.code: n for n in build_launch_spec(matrix, request()).notes}
    assert notes["image.ssm-unconfirmed"].level == "warning"
    assert (
        "get-parameters-by-path --path /aws/service/neuron"
        in notes["image.ssm-unconfirmed"].message
    )


def test_torch_2_13_has_no_dlami_so_the_base_dlami_and_an_installed_venv(matrix: Matrix) -> None:
    spec = build_launch_spec(matrix, request(torch="2.13"))
    assert spec.image.ssm_parameter == "/aws/service/neuron/dlami/base/ubuntu-26.04/latest/image_id"
    assert spec.bootstrap.venv == "/opt/neuron-env/venv"
    assert spec.bootstrap.python_env == "auto"


def test_no_dlami_and_no_wheels_is_refused_before_anything_is_launched(matrix: Matrix) -> None:
    with pytest.raises(
        UnsupportedCombination, match=r"no torch-neuronx pip wheels for Ubuntu 24\.04"
    ):
        build_launch_spec(matrix, request(torch="2.13", os="ubuntu-24.04"))


def test_a_custom_ami_is_used_as_given(matrix: Matrix) -> None:
    spec = build_launch_spec(matrix, request(ami="ami-0123456789abcdef0"))
    assert spec.image.image_id == "ami-0123456789abcdef0"
    assert spec.image.ssm_parameter is None
    assert spec.bootstrap.venv == "/opt/neuron-env/venv"


def test_containers_raise_the_imds_hop_limit_to_two(matrix: Matrix) -> None:
    assert build_launch_spec(matrix, request()).hop_limit == 1
    assert build_launch_spec(matrix, request(containers=True)).hop_limit == 2


def test_an_unknown_instance_type_fails_and_says_how_to_describe_it(matrix: Matrix) -> None:
    with pytest.raises(UnsupportedCombination) as caught:
        build_launch_spec(matrix, request(instance_type="trn3.48xlarge"))
    assert "not in the instance table" in caught.value.message
    assert "--matrix-dir" in (caught.value.hint or "")


def test_a_trn1_instance_is_refused_with_the_family_reason(matrix: Matrix) -> None:
    with pytest.raises(UnsupportedCombination, match="Trn1 is not supported"):
        build_launch_spec(matrix, request(instance_type="trn1.32xlarge"))


def test_an_instance_type_from_a_user_matrix_file_gets_its_own_layout() -> None:
    matrix = load_matrix([DATA / "matrices" / "cloud-trn3"])
    spec = build_launch_spec(
        matrix, request(instance_type="trn3.example", torch="2.15", release=None)
    )
    assert [n.interface_type for n in spec.interfaces] == [
        "efa",
        "efa-only",
        "efa-only",
        "efa-only",
    ]
    assert "release.not-shipped" in {n.code for n in spec.notes}


def test_a_placement_group_with_a_capacity_block_is_refused(matrix: Matrix) -> None:
    with pytest.raises(BadInput, match="Capacity Blocks are already placed close together"):
        build_launch_spec(matrix, request(capacity_block=CR, placement_group="pg"))


def test_a_placement_group_with_a_targeted_reservation_is_refused(matrix: Matrix) -> None:
    with pytest.raises(BadInput, match="cannot be combined with a targeted reservation"):
        build_launch_spec(matrix, request(capacity_reservation=CR, placement_group="pg"))


def test_a_capacity_block_and_a_reservation_exclude_each_other(matrix: Matrix) -> None:
    with pytest.raises(BadInput, match="exclude each other"):
        build_launch_spec(matrix, request(capacity_block=CR, capacity_reservation=CR))


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("subnet", "subnet-$(id)", "is not a subnet id"),
        ("ami", "ami-XYZ", "is not a ami id"),
        ("capacity_block", "cr-1; reboot", "is not a capacity-reservation id"),
        ("key_name", "key\nname", "not a valid key-pair name"),
        ("iam_instance_profile", "role'; rm -rf /", "neither an instance-profile name"),
        ("neuron_env_spec", "neuron-env; curl evil | sh", "not a pip requirement or URL"),
        ("volume_size", 100, "outside 512–65536 GiB"),
    ],
)
def test_bad_values_are_refused_naming_the_option(
    matrix: Matrix, option: str, value: object, message: str
) -> None:
    with pytest.raises(BadInput, match=message):
        build_launch_spec(matrix, request(**{option: value}))


def test_security_groups_are_checked_one_by_one(matrix: Matrix) -> None:
    with pytest.raises(BadInput, match="'sg-bad' is not a security-group id"):
        build_launch_spec(matrix, request(security_groups=("sg-0123456789abcdef0", "sg-bad")))


# --- where the host gets neuron-env ---------------------------------------------------------------


def test_without_a_neuron_env_source_nothing_is_rendered(matrix: Matrix) -> None:
    with pytest.raises(BadInput, match="Say where neuron-env itself comes from") as caught:
        build_launch_spec(matrix, request(neuron_env_source=None, neuron_env_sha256=None))
    assert "--neuron-env-source pypi" in (caught.value.hint or "")


def test_a_url_source_is_passed_with_its_sha256(matrix: Matrix) -> None:
    argv = build_launch_spec(matrix, request()).bootstrap.argv()
    i = argv.index("--neuron-env-source")
    assert argv[i : i + 4] == ["--neuron-env-source", WHEEL_URL, "--neuron-env-sha256", SHA256]
    assert "--neuron-env-spec" not in argv


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"neuron_env_sha256": None}, "needs --neuron-env-sha256 HEX"),
        ({"neuron_env_sha256": "abc"}, "is not a sha256 digest"),
        ({"neuron_env_source": "https://x/$(id).whl"}, "is not a source neuron-env can use"),
        ({"neuron_env_source": "https://x/get-neuron-env.sh"}, "is not a source"),
        ({"neuron_env_source": "ftp://x/neuron_env-0.1.0-py3-none-any.whl"}, "is not a source"),
        ({"neuron_env_source": "s3://B/neuron_env.whl"}, "is not a source"),
        ({"neuron_env_spec": "neuron-env==0.2.0"}, "with --neuron-env-source pypi only"),
        ({"neuron_env_source": "ami", "ami": None, "neuron_env_sha256": None}, "has none"),
        ({"neuron_env_source": "ami", "ami": "ami-0123456789abcdef0"}, "no use with"),
        ({"neuron_env_source": "pypi", "neuron_env_spec": "neuron-env>=0.1"}, "must name one"),
    ],
)
def test_a_source_that_cannot_be_checked_is_refused(
    matrix: Matrix, options: dict[str, object], message: str
) -> None:
    with pytest.raises(BadInput, match=message):
        build_launch_spec(matrix, request(**options))


def test_the_image_s_copy_is_used_with_a_custom_ami(matrix: Matrix) -> None:
    spec = build_launch_spec(
        matrix,
        request(neuron_env_source="ami", neuron_env_sha256=None, ami="ami-0123456789abcdef0"),
    )
    argv = spec.bootstrap.argv()
    assert argv[argv.index("--neuron-env-source") + 1] == "ami"
    assert "--neuron-env-sha256" not in argv


def test_an_unchecked_install_from_the_index_is_a_warning(matrix: Matrix) -> None:
    spec = build_launch_spec(matrix, request(neuron_env_source="pypi", neuron_env_sha256=None))
    notes = {n.code: n for n in spec.notes}
    assert notes["neuron-env.unverified"].level == "warning"
    argv = spec.bootstrap.argv()
    i = argv.index("--neuron-env-source")
    assert argv[i : i + 4] == [
        "--neuron-env-source", "pypi", "--neuron-env-spec", f"neuron-env=={__version__}",
    ]  # fmt: skip


def test_an_s3_wheelhouse_is_a_source(matrix: Matrix) -> None:
    spec = build_launch_spec(
        matrix, request(neuron_env_source="s3://my-bucket/tools/neuron-env-wheelhouse.tar.gz")
    )
    assert spec.bootstrap.tool.wheelhouse
    notes = {n.code: n.message for n in spec.notes}
    assert "neuron-env.unverified" not in notes
    assert (
        "s3:GetObject on arn:aws:s3:::my-bucket/tools/neuron-env-wheelhouse.tar.gz"
        in (notes["neuron-env.s3"])
    )


@pytest.mark.parametrize("cards", [65, 100_000_000])
def test_a_matrix_with_absurdly_many_network_cards_is_refused_not_rendered(
    tmp_path: Path, cards: int
) -> None:
    text = (DATA / "matrices" / "cloud-trn3" / "2.99.0.toml").read_text()
    assert "network-cards = 4\nmax-efa = 4\n" in text
    text = text.replace(
        "network-cards = 4\nmax-efa = 4\n", f"network-cards = {cards}\nmax-efa = {cards}\n"
    )
    (tmp_path / "2.99.0.toml").write_text(text)
    with pytest.raises(BadInput, match="network-cards"):
        matrix = load_matrix([tmp_path])  # a bound in the loader is as good as one here
        build_launch_spec(matrix, request(instance_type="trn3.example", torch="2.15", release=None))


def test_an_ami_build_cannot_use_the_image_s_own_copy(matrix: Matrix) -> None:
    from neuron_env.cloud.ami import AmiRequest, build_ami_recipe

    with pytest.raises(BadInput, match="has none"):
        build_ami_recipe(matrix, AmiRequest("2.14", "2.33.1", neuron_env_source="ami"))
