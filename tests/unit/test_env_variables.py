"""env.variables on the variables of the XLA era, deprecated ones, and the compiler's LNC flag.

Spellings of the LNC flag: neuronx-cc's --logical-nc-config / --lnc / -lnc
(logical-neuroncore-config.rst; compiler/error-codes/EARG001.rst, whose example passes
compiler_args=['--lnc', '2']). The runtime's default LNC is 2 on Trn2 and Trn3.
"""

from __future__ import annotations

import pytest

from neuron_env.checks.environment import check_variables
from neuron_env.checks.model import Context
from neuron_env.facts import Distribution, Ec2Facts, EnvFacts, HostFacts, PythonFacts
from neuron_env.matrix import load_matrix
from neuron_env.variable_rules import variable_rules

RELEASE = load_matrix().latest()
CTX = Context(RELEASE, "", None, "")


def judged(env: dict[str, str], dists: dict[str, str] | None = None) -> tuple[str, str, str]:
    python = None
    if dists is not None:
        found = {name: Distribution(version) for name, version in dists.items()}
        python = PythonFacts(executable="/venv/bin/python", version="3.12.3", distributions=found)
    facts = HostFacts("", "/", env=EnvFacts(variables=env), python=python)
    verdict = check_variables(facts, CTX)
    return verdict.status, verdict.summary, verdict.fix


@pytest.mark.parametrize(
    "flags", ["--lnc 1", "--lnc=1", "-lnc 1", "--logical-nc-config=1", "-O1 --logical-nc-config 1"]
)
def test_a_compiler_lnc_other_than_the_runtimes_fails_before_the_runtime_does(flags: str) -> None:
    status, summary, fix = judged({"NEURON_CC_FLAGS": flags})
    assert status == "fail"
    assert "compiles for LNC=1" in summary and "default LNC=2" in summary
    assert fix == "export NEURON_LOGICAL_NC_CONFIG=1"


def test_a_compiler_lnc_equal_to_the_runtimes_is_fine() -> None:
    env = {"NEURON_CC_FLAGS": "--lnc 1", "NEURON_LOGICAL_NC_CONFIG": "1"}
    assert judged(env)[0] == "ok"
    assert judged({"NEURON_CC_FLAGS": "--lnc=2"})[0] == "ok"  # the default


def test_flags_that_are_not_shell_words_are_not_guessed_at() -> None:
    assert judged({"NEURON_CC_FLAGS": "--lnc '1"})[0] == "ok"


def test_every_variable_the_shared_list_names_is_flagged_on_a_torchneuron_host() -> None:
    rules = variable_rules()
    for name, rule in rules.names.items():
        value = "/x/libneuronpjrt.so" if name == "NEURON_LIBRARY_PATH" else "1"
        status, summary, fix = judged({name: value})
        assert status == "warn", name
        assert name in summary and fix == f"unset {name}"
        assert ("deprecated" in summary) == rule.deprecated


def test_an_xla_flag_the_list_does_not_spell_out_is_still_the_xla_lines() -> None:
    status, summary, _ = judged({"XLA_USE_SPMD": "1"})
    assert (status, summary.split(" belong")[0]) == ("warn", "XLA_USE_SPMD")


def test_on_the_xla_line_its_own_variables_are_not_flagged_but_deprecated_ones_are() -> None:
    xla = {"torch-neuronx": "2.9.0.2.15.32035", "torch-xla": "2.9.0"}
    assert judged({"XLA_USE_BF16": "1", "NEURON_PJRT_PROCESS_INDEX": "0"}, xla)[0] == "ok"
    status, summary, _ = judged({"NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS": "2"}, xla)
    assert status == "warn" and "deprecated by Neuron" in summary


def test_on_a_trn1_the_trn2_default_lnc_is_not_assumed() -> None:
    # Trn1 has only LNC=1 (compiler/error-codes/EARG001.rst): '--lnc 1' there is right, not a
    # mismatch with Trn2's default of 2.
    trn1 = HostFacts("", "/", env=EnvFacts(variables={"NEURON_CC_FLAGS": "--lnc 1"}),
                     ec2=Ec2Facts(on_ec2=True, instance_type="trn1.32xlarge"))  # fmt: skip
    assert check_variables(trn1, CTX).status == "ok"
    trn2 = HostFacts("", "/", env=EnvFacts(variables={"NEURON_CC_FLAGS": "--lnc 1"}),
                     ec2=Ec2Facts(on_ec2=True, instance_type="trn2.48xlarge"))  # fmt: skip
    assert check_variables(trn2, CTX).status == "fail"
